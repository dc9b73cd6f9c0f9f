"""What the table gives each of its components: :class:`TableContext`.

The table (controller/table.py) is assembled from components that each own
their state — wagering, dealing, deciding, settling, floor actions, faults — and talk to
one another only through references handed over at construction.  What they
all need comes in one small, typed context:

* the ledger: :meth:`TableContext.commit` (write records; run ``then`` on the
  reactor once they are durable) and :meth:`TableContext.rec` (a record of the
  current round), with the meters kept in step with what is committed;
* the single latched fault path, ``raise_tilt(source, reason)``;
* ``emit(what, **data)`` to the table's listeners (the HIL rig, the simulator's
  reporter, the crash bench's witness);
* the state machine: ``state``, ``trigger(name)`` and ``advance()`` (enter the
  procedure's next phase, dispatched by the table);
* the devices (controller/devices.py), the device deadline timer
  (controller/timers.py) and the game's procedure;
* the current round (:class:`~controller.round.RoundData`) and its number.

Only the table writes ``proc``, ``profile``, ``progressive``, ``round`` and
``round_no``; components read them (and fill in the round's data).  Everything
here runs on the reactor thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from controller import meters as M
from controller.config import TableProfile
from controller.devices import Devices
from controller.games.base import Phase, Procedure
from controller.ledger import Ledger, Record, StoredEvent
from controller.linked import Linkage
from controller.machine import Trigger
from controller.progressive import LEVEL, ProgressiveSystem
from controller.records import Kind
from controller.round import RoundData
from controller.timers import DeviceTimer

Then = Callable[[list[StoredEvent]], None]

LINK_RECORDS = (Kind.LINK_CONTRIBUTION, Kind.LINK_VOID, Kind.LINK_HIT, Kind.LINK_PAID)


class Writer(Protocol):
    """The ledger writer (controller/ledger.py ``LedgerWriter``): ``done`` runs on the
    reactor thread once the records are durable."""

    def submit(self, records: Iterable[Record], done: Then | None = None, *, hand_over: bool = False) -> None: ...


class LedgerWriterLike(Writer, Protocol):
    """A writer with the ledger it writes to (read at start-up: meters, last round,
    recovery); ``LedgerWriter``, or the tests' synchronous writer."""

    @property
    def ledger(self) -> Ledger: ...


class Journal(Protocol):
    """The lock-out journal (controller/lockjournal.py ``LockoutJournal``)."""

    def block(self, round_no: int, records: Sequence[Record]) -> bytes | None: ...

    def write(self, block: bytes) -> None: ...


class Emit(Protocol):
    def __call__(self, what: str, /, **data: Any) -> None: ...


@dataclass(eq=False)
class TableContext:
    profile: TableProfile
    proc: Procedure
    dev: Devices
    timer: DeviceTimer
    log: Any  # a structlog logger bound to the table (controller/log.py)
    writer: Writer
    raise_tilt: Callable[[str, str], None]
    emit: Emit
    trigger: Callable[[Trigger], object]
    advance: Callable[[], None]
    get_state: Callable[[], str]
    publish: Callable[[], None]
    progressive: ProgressiveSystem | None = None
    meters: dict[str, M.Meter] = field(default_factory=dict)
    round: RoundData | None = None
    round_no: int = 0
    link: Linkage | None = None  # a linked progressive's view of its LAP (controller/linked.py)
    #: the lock-out journal (controller/lockjournal.py): the service's; None (tests' harness):
    #: the lock-out's count is shown once the ledger has its records
    journal: Journal | None = None

    # ---- the state machine ----------------------------------------------------------
    @property
    def state(self) -> str:
        return self.get_state()

    def phase(self) -> Phase | None:
        """The procedure's phase the machine is in, if any."""
        return self.proc.phase(self.state)

    # ---- the ledger -----------------------------------------------------------------
    def rec(self, kind: Kind, **data: Any) -> Record:
        """A record of the current round."""
        return Record(kind, self.round_no, data)

    def commit(self, records: Sequence[Record], then: Then | None = None, *, hand_over: bool = False) -> None:
        """Write records; run ``then`` on the reactor thread once they are durable (and
        publish the status after it).  Meters are updated in memory in the same order
        as the ledger applies them.  ``hand_over``: the writer starts on these at once,
        before the caller's next work (``LedgerWriter.submit``): for a commit whose
        durable callback is awaited (the lock-out's count), made before the handler's
        other work; records committed right after it then go in a commit of their own."""
        for r in records:
            if r.kind.startswith("meter."):
                self.meters = M.apply(self.meters, r.kind, r.data, round_no=r.round)
        link = self.link
        if link is not None and any(r.kind in LINK_RECORDS for r in records):
            # the outbox: once durable, the uplink is woken to send them
            inner = then

            def then(evs: list[StoredEvent]) -> None:
                link.committed(max(e.seq for e in evs if e.kind in LINK_RECORDS))
                if inner is not None:
                    inner(evs)

        self.writer.submit(
            records, None if then is None else (lambda evs: self._durable(then, evs)), hand_over=hand_over
        )

    def _durable(self, then: Then, events: list[StoredEvent]) -> None:
        then(events)
        self.publish()

    def carry_records(self) -> list[Record]:
        """What the game carries into the next round (e.g. the tiles bank rotation,
        § 621a.9), written with the round's close."""
        state = self.proc.carry()
        return [] if state is None else [self.rec(Kind.GAME_CARRY, game=self.proc.game, state=state)]

    # ---- shown on the sign ----------------------------------------------------------
    @property
    def meter(self) -> M.Meter | None:
        """The progressive meter, if the table has one."""
        return self.meters.get(LEVEL)

    def show_meters(self) -> None:
        if self.link is not None:  # the linked meter, as the LAP last pushed it
            if LEVEL in self.link.meters:
                self.dev.sign.show_meters([(1, self.link.meters[LEVEL])])
            return
        if LEVEL in self.meters:
            self.dev.sign.show_meters([(1, self.meters[LEVEL].cents)])
