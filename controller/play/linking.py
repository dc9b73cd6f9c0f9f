"""The table's linked-progressive component (docs/linked.md): it applies the LAP's messages
(through :class:`controller.play.linked.Linkage`), opens and closes the linked wager — its sensors,
its lights, the sign, and a ``link.state`` record each time — and hands the LAP's hit answers
to settlement (controller/play/settling.py).  Reactor thread only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from controller.core.reactor import Reactor
from controller.core.records import Kind
from controller.play import linkmsg
from controller.play.bundles import Shared
from controller.play.devices import SignLine
from controller.play.linked import Linkage
from controller.play.machine import TableState
from drivers.sign import Sign

WAGER = "progressive"
TICK_S = 0.25  # how often the heartbeat's age is looked at (the timeout itself is the profile's)


class Spots(Protocol):
    """The linked wager's spots on the bet board (controller/play/wagering.py)."""

    def set_closed(self, wager: str, closed: bool) -> None: ...

    def placed(self, wager: str) -> list[int]: ...


class Answers(Protocol):
    """Settlement told the LAP answered a hit claim (controller/play/settling.py)."""

    def on_answer(self) -> None: ...


class LinkedWager:
    def __init__(
        self,
        shared: Shared,
        *,
        spots: Spots,
        answers: Answers,
        sign: Sign,
        reactor: Reactor,
        link: Linkage,
    ):
        self.books, self.machine, self.rounds = shared.books, shared.machine, shared.rounds
        self.spots = spots
        self.answers = answers
        self.sign = sign
        self.reactor = reactor
        self.link = link
        self.raise_tilt = shared.raise_tilt
        self.emit, self.show_meters, self.log = shared.emit, shared.show_meters, shared.log
        self.spots.set_closed(WAGER, True)  # closed until the LAP is heard and has reconciled us
        self._announced = ("", "")  # the last linked hit shown on the sign, and the line beside it

    @staticmethod
    def make(
        group: str,
        timeout_s: float,
        last_outbox: int,
        *,
        send: Callable[[dict[str, Any]], None] | None = None,
        status_source: Callable[[], dict[str, Any]] | None = None,
    ) -> Linkage:
        # the link is judged in real time (the LAP's heartbeat is), whatever the game clock does
        return Linkage(group, timeout_s, time.monotonic, last_outbox, send=send, status_source=status_source)

    def start(self) -> None:
        self.reactor.call_later(TICK_S, self._tick)
        self.check()  # the closed state at start-up, recorded and shown

    def _tick(self) -> None:
        self.check()
        if not self.reactor.stopped:
            self.reactor.call_later(TICK_S, self._tick)

    def on_message(self, msg: dict[str, Any]) -> None:
        problem = linkmsg.problem(msg)  # LinkPort drops such a line first; nothing else reaches here
        if problem is not None:
            self.log.warning("link.bad_message", problem=problem)
            return
        what = self.link.on_message(msg)
        if what == "meter":
            self.show_meters()
        elif what == "answer":
            self.answers.on_answer()
        elif what == "won":
            self.announce()
        elif what == "unverified":
            # the uplink found a record of this ledger whose MAC or place in the chain does not
            # verify (docs/security.md): the ledger's own latched tilt; nothing from it on is sent
            self.raise_tilt("ledger", f"the uplink cannot verify a ledger record: {self.link.closures.unverified}")
        self.check()

    def announce(self) -> None:
        """A hit on the link, at whichever table: the sign shows the winning table's id and asset
        number and the amount (docs/linked.md: § 688a.2(d) sends a linked progressive to
        § 605a.8, whose text is not in the regulations we hold; no section there is cited for
        it), beside what its message line said — a pending hit's line, the count, a tilt, the
        linked wager closed — never instead of it."""
        link = self.link
        text = link.won_text()
        if text is None:
            return
        line = self.sign
        was = line.text if isinstance(line, SignLine) else ""
        if was == self._announced[0]:  # the previous announcement: beside what that was beside
            was = self._announced[1]
        shown = f"{text} / {was}" if was else text
        self._announced = (shown, was)
        self.log.info("link.won", **(link.won or {}))
        line.message(shown)

    def check(self) -> None:
        """Open or close the linked wager if the link's state calls for it (recorded)."""
        was_open = self.link.open
        change = self.link.change()
        if change is None:
            return
        is_open, reason = change
        books = self.books
        self.spots.set_closed(WAGER, not is_open)
        recs = [books.rec(Kind.LINK_STATE, open=is_open, reason=reason, group=self.link.group)]
        if (
            not is_open
            and was_open is not False
            and self.machine.state == TableState.OPEN
            and self.rounds.round is not None
        ):
            # chips already on a linked spot are no wagers now: recorded as rejected
            for seat in self.spots.placed(WAGER):
                recs.append(books.rec(Kind.WAGER_REJECTED, seat=seat, spot=WAGER, reason="linked progressive closed"))
        (self.log.info if is_open else self.log.warning)("link.state", open=is_open, reason=reason)
        books.commit(recs, lambda _e: self._show(is_open))

    def _show(self, is_open: bool) -> None:
        if is_open:
            if self.machine.state == TableState.OPEN:
                self.sign.message("PLACE YOUR BETS")
            self.show_meters()
        else:
            self.sign.message(self.link.closed_text())
        self.emit("link", open=is_open, reason=self.link.reason)
