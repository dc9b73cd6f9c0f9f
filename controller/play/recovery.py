"""Start-up recovery from the ledger: what the table was doing when it stopped.

The ledger is the truth (controller/books/ledger.py).  At start-up, before the first
round opens, :func:`recover` reads it and says:

* which tilts were raised and not cleared (they survive restarts, SPEC § 5);
* which self-check problems a technician already acknowledged (a clear with the
  damaged ledger's problems, ``ledger.acknowledged``): they do not tilt again;
* which devices are marked out of order (§ 670a.13(n));
* what the game carried from its last round (``game.carry``, § 621a.9(b)-(d)),
  handed back to the procedure (``Procedure.restore``);
* the round interrupted by the power loss, if any: voided with every unsettled
  wager (and meter contribution) returned as *new* records, unless it was already
  settled and only waited for a floorperson's validation — then that wait resumes
  (§ 670a.11(h)(3)(i)(B)(III)) with the round's data rebuilt, and a linked hit the
  floorperson already validated while the table waited for the LAP's answer
  (``hit.awaiting_lap``) stays validated.

No I/O beyond reading ledger events (through :class:`EventSource`): the records
to write are returned, the table commits them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.books.ledger import Record, StoredEvent
from controller.books.standing import EventSource, acknowledged_problems, active_tilts, out_of_order
from controller.core.records import Kind

if TYPE_CHECKING:  # (imported where used: ``tablectl status`` and ``history`` read tilts here, not rounds)
    from controller.games.base import Procedure
    from controller.games.round import Key
    from controller.play.progressive import ProgressiveSystem
    from controller.rules.settlement import WagerResult


@dataclass(frozen=True)
class RecoveredRound:
    """A settled round still owing validated hits, as the ledger says: its wagers go back to
    wagering, its results, hits and validation to settling (controller/play/table.py)."""

    number: int
    wagers: dict[Key, int]
    results: list[WagerResult]
    pending_hits: list[WagerResult]
    validated_by: str | None = None


@dataclass
class Recovered:
    """What the table takes back at start-up."""

    records: list[Record] = field(default_factory=list)  # to write now (void, close, carry refusal)
    round: RecoveredRound | None = None  # a settled round still owing validated hits
    tilts: dict[str, str] = field(default_factory=dict)  # source -> reason, raised and not cleared
    acknowledged: set[str] = field(default_factory=set)  # ledger problems a technician acknowledged
    out_of_order: dict[str, str] = field(default_factory=dict)  # device -> alternative


def recover(events: EventSource, round_no: int, proc: Procedure, progressive: ProgressiveSystem | None) -> Recovered:
    """Everything the table recovers from the ledger; ``round_no`` is the last round recorded."""
    out = Recovered()
    out.records, out.round = open_round(events, round_no, progressive)
    refused = restore_carry(events, proc, round_no)
    if refused is not None:
        out.records.append(refused)
    out.out_of_order = out_of_order(events)
    out.tilts = active_tilts(events)
    out.acknowledged = acknowledged_problems(events)
    return out


def restore_carry(events: EventSource, proc: Procedure, round_no: int) -> Record | None:
    """Give the procedure back what it carried before the restart.  A carried state
    this table cannot take (another game, fewer seats) is refused, recorded
    (``game.carry_refused``, returned) and the game starts afresh, as a new game does."""
    ev = next(events.events(kinds=(Kind.GAME_CARRY,), newest_first=True, limit=1), None)
    if ev is None or ev.data.get("game") != proc.game:
        return None
    try:
        proc.restore(ev.data["state"])
    except (KeyError, TypeError, ValueError) as e:
        return Record(Kind.GAME_CARRY_REFUSED, round_no, {"seq": ev.seq, "error": str(e)})
    return None


def open_round(
    events: EventSource, round_no: int, progressive: ProgressiveSystem | None
) -> tuple[list[Record], RecoveredRound | None]:
    """A round interrupted by power loss: void it and return every wager, unless it
    had already been settled and only waits for a validation (then resume that: the
    round is returned with its wagers, results and pending hits)."""
    from controller.play.progressive import pending_from_events
    from controller.play.wagering import void_records

    if round_no == 0:
        return [], None
    evs = list(events.events(round_no=round_no))
    kinds = {e.kind for e in evs}
    if kinds & {Kind.ROUND_COMPLETE, Kind.ROUND_VOID}:
        return [], None
    wagers, results = _wagers_and_results(evs)
    if Kind.ROUND_SETTLED in kinds:
        pending = pending_from_events(evs)
        if pending:
            by = validated_awaiting_lap(evs, pending[0])
            data: dict[str, Any] = {"pending_hits": len(pending)}
            if by is not None:
                data["validated_by"] = by
            rnd = RecoveredRound(round_no, wagers, results, pending, by)
            return [Record(Kind.ROUND_RECOVERED, round_no, data)], rnd
        return [Record(Kind.ROUND_COMPLETE, round_no, {"recovered": True})], None
    reason = "power lost during the round (recovered at start-up)"
    return void_records(round_no, wagers, results, reason, Kind.COUNT_CONFIRMED in kinds, progressive), None


def _wagers_and_results(evs: list[StoredEvent]) -> tuple[dict[Key, int], list[WagerResult]]:
    """The round's accepted wagers and the results recorded for them."""
    from controller.rules.settlement import WagerResult

    wagers: dict[Key, int] = {}
    results: list[WagerResult] = []
    for e in evs:
        if e.kind == Kind.WAGER_ACCEPTED:
            wagers[(e.data["seat"], e.data.get("spot", "progressive"))] = e.data["cents"]
        elif e.kind == Kind.WAGER_RESULT:
            d = e.data
            results.append(WagerResult(d["seat"], d["wager"], d["cents"], d["outcome"], d["net"], d.get("hand")))
    return wagers, results


def validated_awaiting_lap(evs: list[StoredEvent], hit: WagerResult) -> str | None:
    """Who validated the first pending (linked) hit while the table waited for the LAP's answer
    (``hit.awaiting_lap``), if anyone: that validation stands after a restart
    (§ 670a.11(h)(3)(i)(B)(III)), the hit is paid once the LAP answers."""
    by = None
    for e in evs:
        if e.kind == Kind.HIT_AWAITING_LAP and (e.data["seat"], e.data["hand"]) == (hit.seat, hit.hand):
            by = str(e.data["by"])
    return by
