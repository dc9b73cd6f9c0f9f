"""The seams between the table and its components: small role Protocols, and the few
concrete objects behind them that the table builds.

The table (controller/play/table.py) is assembled from components that each own their state —
wagering, dealing, deciding, settling, floor actions, faults, the linked wager — and each is
given roles, each a ``typing.Protocol`` here (most of them as one bundle, controller/play/bundles.py
``Shared``):

==================  ==============================================================================
role                what it is
==================  ==============================================================================
:class:`Books`      the ledger: ``commit`` records (``then`` runs once durable), ``rec`` a record of
                    the round in play, the meters kept in step (:class:`TableBooks`)
:data:`RaiseTilt`   the single latched fault path, ``raise_tilt(source, reason)`` (controller/play/faults.py)
:class:`Emit`       ``emit(what, **data)`` to the table's listeners (the HIL rig, the simulator, bench/)
:class:`Machine`    the round machine: its ``state``, the procedure's ``phase()``, ``trigger(name)``,
                    ``advance()`` to the procedure's next phase
:class:`Deadline`   the one device response deadline (controller/play/timers.py ``DeviceTimer``)
:class:`Game`       the game as now configured: profile, procedure, progressive (the table changes
                    them between rounds, controller/play/table.py ``apply_profile``)
:class:`Rounds`     the round in play, read-only (controller/games/round.py), or None
:data:`ShowMeters`  show the progressive meter on the sign (:class:`MeterSign`)
:class:`Link`       what the table tells its LAP: :class:`~controller.play.linked.Linkage` for a linked
                    table, :class:`NullLink` for one that is not
:class:`Log`        a structlog logger bound to the table
==================  ==============================================================================

Everything here runs on the reactor thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from controller.books import meters as M
from controller.books.ledger import Ledger, Record, StoredEvent
from controller.core.records import Kind
from controller.games.base import Phase, Procedure
from controller.games.round import Round
from controller.play.machine import Trigger
from controller.play.progressive import LEVEL, ProgressiveSystem
from controller.settings.config import TableProfile
from drivers.sign import Sign

Then = Callable[[list[StoredEvent]], None]

LINK_RECORDS = (Kind.LINK_CONTRIBUTION, Kind.LINK_VOID, Kind.LINK_HIT, Kind.LINK_PAID)

#: the single latched fault path: ``raise_tilt(source, reason)``
RaiseTilt = Callable[[str, str], None]
#: show the progressive meter on the sign (the LAP's on a linked table)
ShowMeters = Callable[[], None]


# ---- what the table is given ------------------------------------------------------------------
class Writer(Protocol):
    """The ledger writer (controller/books/ledgerwriter.py ``LedgerWriter``): ``done`` runs on the
    reactor thread once the records are durable."""

    def submit(self, records: Iterable[Record], done: Then | None = None, *, hand_over: bool = False) -> None: ...


class LedgerWriterLike(Writer, Protocol):
    """A writer with the ledger it writes to (read at start-up: meters, last round,
    recovery); ``LedgerWriter``, or the tests' synchronous writer."""

    @property
    def ledger(self) -> Ledger: ...


class Journal(Protocol):
    """The lock-out journal (controller/books/lockjournal.py ``LockoutJournal``)."""

    def block(self, round_no: int, records: Sequence[Record]) -> bytes | None: ...

    def write(self, block: bytes) -> None: ...


# ---- the roles the components are given ------------------------------------------------------
class Log(Protocol):
    """A structlog logger (controller/core/log.py ``LogContext.logger``)."""

    def info(self, event: str, /, **kw: object) -> object: ...

    def warning(self, event: str, /, **kw: object) -> object: ...

    def error(self, event: str, /, **kw: object) -> object: ...


class Books(Protocol):
    """The ledger as a component writes it."""

    @property
    def round_no(self) -> int: ...

    @property
    def meter(self) -> M.Meter | None: ...

    def rec(self, kind: Kind, **data: Any) -> Record: ...

    def commit(self, records: Sequence[Record], then: Then | None = None, *, hand_over: bool = False) -> None: ...


class Emit(Protocol):
    def __call__(self, what: str, /, **data: Any) -> None: ...


class Machine(Protocol):
    """The table's round machine as a component drives it."""

    @property
    def state(self) -> str: ...

    def phase(self) -> Phase | None: ...

    def trigger(self, name: Trigger) -> object: ...

    def advance(self) -> None: ...


class Deadline(Protocol):
    def set(self, seconds: float, device: str, what: str) -> None: ...

    def cancel(self) -> None: ...


class Game(Protocol):
    """The game as now configured (read-only: the table changes it between rounds)."""

    @property
    def profile(self) -> TableProfile: ...

    @property
    def proc(self) -> Procedure: ...

    @property
    def progressive(self) -> ProgressiveSystem | None: ...


class Rounds(Protocol):
    """The round in play, if any."""

    @property
    def round(self) -> Round | None: ...


class Link(Protocol):
    """What the table tells its LAP and reads of it (controller/play/linked.py ``Linkage``)."""

    @property
    def open(self) -> bool | None: ...

    @property
    def answers(self) -> Mapping[int, tuple[int, int]]: ...

    @property
    def proofs(self) -> Mapping[int, str]: ...

    @property
    def rate_versions(self) -> Mapping[str, int]: ...

    def closed_text(self) -> str: ...

    def committed(self, seq: int) -> None: ...

    def report(self, force: bool = False) -> None: ...

    def snapshot(self) -> dict[str, Any] | None: ...


class NullLink:
    """The link of a table that is not linked: always open, never answers, tells nobody."""

    open: bool | None = True

    @property
    def answers(self) -> Mapping[int, tuple[int, int]]:
        return {}

    @property
    def proofs(self) -> Mapping[int, str]:
        return {}

    @property
    def rate_versions(self) -> Mapping[str, int]:
        return {}  # an unlinked meter has no LAP rate versions

    def closed_text(self) -> str:
        return "LINKED PROGRESSIVE CLOSED"  # never shown: an unlinked table is always open

    def committed(self, seq: int) -> None:
        pass

    def report(self, force: bool = False) -> None:
        pass

    def snapshot(self) -> dict[str, Any] | None:
        return None


# ---- the concrete seams the table builds --------------------------------------------------------
@dataclass(eq=False)
class TableGame:
    """The game as now configured; only the table writes it (``Table.apply_profile``)."""

    profile: TableProfile
    proc: Procedure
    progressive: ProgressiveSystem | None


class TableBooks:
    """The ledger seam: records of the round in play committed through the writer, the meters
    kept in step in the same order as the ledger applies them, a linked table's uplink woken
    once its link records are durable (the outbox), and the status published after each
    durable callback.  The table opens each round here (``open_round``)."""

    def __init__(
        self,
        writer: Writer,
        meters: Mapping[str, M.Meter],
        round_no: int,
        link: Link,
        publish: Callable[[], None],
    ):
        self._writer = writer
        self._link = link
        self._publish = publish
        self.meters: dict[str, M.Meter] = dict(meters)
        self._round_no = round_no

    @property
    def round_no(self) -> int:
        return self._round_no

    def open_round(self) -> int:
        """A new round: its number."""
        self._round_no += 1
        return self._round_no

    @property
    def meter(self) -> M.Meter | None:
        """The progressive meter, if the table has one."""
        return self.meters.get(LEVEL)

    def rec(self, kind: Kind, **data: Any) -> Record:
        """A record of the current round."""
        return Record(kind, self._round_no, data)

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
        if any(r.kind in LINK_RECORDS for r in records):
            then = self._outbox(then)
        self._writer.submit(
            records, None if then is None else (lambda evs: self._durable(then, evs)), hand_over=hand_over
        )

    def _outbox(self, inner: Then | None) -> Then:
        """Once durable, the uplink is woken to send the link records."""
        link = self._link

        def then(evs: list[StoredEvent]) -> None:
            link.committed(max(e.seq for e in evs if e.kind in LINK_RECORDS))
            if inner is not None:
                inner(evs)

        return then

    def _durable(self, then: Then, events: list[StoredEvent]) -> None:
        then(events)
        self._publish()


class MeterSign:
    """The progressive meter on the sign: the table's own, or the LAP's as it last pushed it
    (``source`` says which: the cents to show, or None for nothing)."""

    def __init__(self, sign: Sign, source: Callable[[], int | None]):
        self._sign = sign
        self._source = source

    def show(self) -> None:
        cents = self._source()
        if cents is not None:
            self._sign.show_meters([(1, cents)])


def carry_records(books: Books, proc: Procedure) -> list[Record]:
    """What the game carries into the next round (e.g. the tiles bank rotation,
    § 621a.9), written with the round's close."""
    state = proc.carry()
    return [] if state is None else [books.rec(Kind.GAME_CARRY, game=proc.game, state=state)]


class RoundSlot:
    """The round in play (None between a tilt's clearing and the next round): the table
    writes it (controller/play/table.py), the components read it (:class:`Rounds`)."""

    def __init__(self) -> None:
        self.round: Round | None = None
