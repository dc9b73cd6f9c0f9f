"""Between-rounds actions of the floorperson, the technician and the dealer: a
device marked out of order and back in service (§ 670a.13(n)), a reshuffle
ordered by a floorperson (§ 670a.5(a), § 686a.5(a),(f)) and a new dealer at the
table (§ 686a.7(c)).  Each is recorded before it takes effect; each is refused,
changing nothing, once wagers are locked out.

:class:`Floor` is a component of :class:`controller.play.table.Table`.  It owns which
devices are out of order (:class:`OutOfOrder`: marked and put back here only,
restored at start-up from the ledger, controller/play/recovery.py; the others read it
as :class:`~controller.play.dealing.Alternatives`) and asks dealing
(controller/play/dealing.py) for a shuffle before the next deal.  Runs on the reactor
thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from controller.core.records import Kind
from controller.play.context import Books, Game, Machine
from controller.play.machine import between_rounds
from drivers.devicedefs import out_of_order


class OutOfOrder:
    """Devices marked out of order, and the alternative used instead (§ 670a.13(n));
    written by :class:`Floor` only."""

    def __init__(self) -> None:
        self._marks: dict[str, str] = {}  # device -> alternative

    @property
    def marks(self) -> Mapping[str, str]:
        return self._marks

    def alternative(self, device: str) -> str | None:
        """The alternative in use for ``device``, or None when it is in service."""
        return self._marks.get(device)

    def _mark(self, device: str, alternative: str) -> None:
        self._marks[device] = alternative

    def _unmark(self, device: str) -> None:
        del self._marks[device]

    def _restore(self, marks: Mapping[str, str]) -> None:
        self._marks.update(marks)


class Floor:
    def __init__(self, *, books: Books, machine: Machine, game: Game, marks: OutOfOrder, reshuffle: Callable[[], None]):
        self.books, self.machine, self.game = books, machine, game
        self.marks = marks
        #: the shoe shuffles before it deals again (controller/play/dealing.py)
        self.reshuffle = reshuffle

    def restore(self, marks: Mapping[str, str]) -> None:
        """The devices out of order at start-up, as the ledger says (controller/play/recovery.py)."""
        self.marks._restore(marks)

    def mark_out_of_order(self, device: str, by: str, alternative: str, reason: str = "") -> None:
        """§ 670a.13(n): a device that cannot be used is marked out of order before any
        other method is used; the alternative is recorded (e.g. the RNG for the shaker,
        § 670a.5(i)(2))."""
        alternatives = out_of_order()  # the devices and their alternatives, § 670a.13(n)
        if device not in alternatives:
            raise ValueError(f"{device!r} is not a device that can be marked out of order ({', '.join(alternatives)})")
        if alternative not in alternatives[device]:
            raise ValueError(
                f"{alternative!r} is not an alternative for the {device} ({', '.join(alternatives[device])})"
            )
        between_rounds(self.machine.state, "a device is marked out of order")
        self.marks._mark(device, alternative)
        rec = self.books.rec(Kind.DEVICE_OUT_OF_ORDER, device=device, alternative=alternative, by=by, reason=reason)
        self.books.commit([rec])

    def mark_in_service(self, device: str, by: str) -> None:
        """A repaired device is put back in service (recorded); its alternative ends."""
        if device not in self.marks.marks:
            raise ValueError(f"the {device} is not out of order")
        between_rounds(self.machine.state, "a device is put back in service")
        self.marks._unmark(device)
        self.books.commit(
            [self.books.rec(Kind.DEVICE_IN_SERVICE, device=device, by=by)],
            (lambda _e: self.reshuffle()) if device == "shoe" else None,
        )

    def floor_reshuffle(self, by: str) -> None:
        """A floorperson (or above) directs a reshuffle (§ 670a.5(a); § 686a.5(a),(f)): before
        the next deal the shoe shuffles, and a multi-deck shoe burns its first card
        (§ 686a.7(c)).  Between rounds only."""
        between_rounds(self.machine.state, "a reshuffle is ordered")
        manual = self.marks.alternative("shoe") == "manual"
        self.books.commit(
            [self.books.rec(Kind.SHOE_RESHUFFLE_ORDERED, by=by, manual=manual)],
            None if manual else (lambda _e: self.reshuffle()),
        )

    def new_dealer(self, by: str) -> str | None:
        """A new dealer comes to the table: recorded, and the procedure told (Over/Under's
        new dealer burns one card before dealing, § 686a.7(c)).  Between rounds only."""
        between_rounds(self.machine.state, "a new dealer is recorded")
        note = self.game.proc.new_dealer()
        self.books.commit([self.books.rec(Kind.DEALER_CHANGED, by=by, **({"note": note} if note else {}))])
        return note
