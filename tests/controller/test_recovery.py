"""Start-up recovery (controller/play/recovery.py) reads ledger events and nothing else:
fed a list of events, it says what the table takes back and which records to write."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

from controller.books.ledger import StoredEvent
from controller.core.records import Kind
from controller.games import procedure_for
from controller.play.progressive import ProgressiveSystem
from controller.play.recovery import recover
from controller.settings.config import parse_profile
from tests.integration.harness import profile_doc


class Events:
    """An events source over a list (what ``Ledger.events`` answers)."""

    def __init__(self, rows: Sequence[tuple[int, str, Mapping[str, Any]]]):
        self.evs = [StoredEvent(i, "ts", "T", r, k, dict(d), "", "") for i, (r, k, d) in enumerate(rows, 1)]

    def events(
        self,
        since: int = 0,
        kinds: Iterable[str] | None = None,
        round_no: int | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> Iterator[StoredEvent]:
        want = None if kinds is None else set(kinds)
        out = [
            e
            for e in self.evs
            if e.seq > since and (want is None or e.kind in want) and (round_no is None or e.round == round_no)
        ]
        if newest_first:
            out.reverse()
        return iter(out[:limit] if limit is not None else out)


def _table():
    profile = parse_profile(profile_doc(), "<test>")
    assert profile.progressive is not None
    return procedure_for(profile.game, profile), ProgressiveSystem(profile.progressive)


def test_an_interrupted_credited_round_is_voided_with_wagers_and_meter_returned():
    proc, prog = _table()
    src = Events(
        [
            (3, "round.open", {}),
            (3, "wager.accepted", {"seat": 2, "spot": "progressive", "cents": 100}),
            (3, "wager.accepted", {"seat": 5, "spot": "progressive", "cents": 100}),
            (3, "count.confirmed", {"count": 2}),
            (3, "meter.increment", {"level": "primary", "wager": 100, "rate": "21/100", "seat": 2}),
        ]
    )
    got = recover(src, 3, proc, prog)
    assert got.round is None
    kinds = [r.kind for r in got.records]
    assert kinds == [Kind.ROUND_VOID, Kind.WAGER_RETURNED, Kind.WAGER_RETURNED, Kind.METER_VOID, Kind.METER_VOID]
    assert all(r.round == 3 for r in got.records)
    assert [r.data["seat"] for r in got.records if r.kind == Kind.WAGER_RETURNED] == [2, 5]


def test_a_round_not_yet_counted_returns_wagers_but_no_meter():
    proc, prog = _table()
    src = Events([(1, "round.open", {}), (1, "wager.accepted", {"seat": 1, "spot": "progressive", "cents": 100})])
    kinds = [r.kind for r in recover(src, 1, proc, prog).records]
    assert kinds == [Kind.ROUND_VOID, Kind.WAGER_RETURNED]


def test_a_settled_round_owing_a_hit_resumes_the_validation_670a_11_h_3():
    proc, prog = _table()
    src = Events(
        [
            (4, "wager.accepted", {"seat": 3, "spot": "progressive", "cents": 100}),
            (4, "wager.result", {"seat": 3, "wager": "progressive", "cents": 100, "outcome": "win", "net": 0}),
            (4, "hit.pending", {"seat": 3, "hand": "five aces", "fraction": "1", "cents": 100}),
            (4, "round.settled", {"results": 1}),
        ]
    )
    got = recover(src, 4, proc, prog)
    assert got.round is not None and got.round.number == 4
    assert [(h.seat, h.hand, h.meter_fraction) for h in got.round.pending_hits] == [(3, "five aces", Fraction(1))]
    assert [r.kind for r in got.records] == [Kind.ROUND_RECOVERED]


def test_a_linked_hit_validated_while_awaiting_the_lap_stays_validated_670a_11_h_3():
    proc, prog = _table()
    rows: list[tuple[int, str, Mapping[str, Any]]] = [
        (4, "wager.accepted", {"seat": 3, "spot": "progressive", "cents": 100}),
        (4, "wager.accepted", {"seat": 5, "spot": "progressive", "cents": 100}),
        (4, "hit.pending", {"seat": 3, "hand": "five aces", "fraction": "1", "cents": 100}),
        (4, "hit.pending", {"seat": 5, "hand": "royal flush", "fraction": "1/10", "cents": 100}),
        (4, "link.hit", {"level": "primary", "fraction": "1", "seat": 3, "hand": "five aces"}),
        (4, "link.hit", {"level": "primary", "fraction": "1/10", "seat": 5, "hand": "royal flush"}),
        (4, "round.settled", {"results": 2}),
        (4, "hit.awaiting_lap", {"seat": 3, "hand": "five aces", "by": "floor 17", "hit_seq": 5}),
    ]
    got = recover(Events(rows), 4, proc, prog)
    assert got.round is not None and got.round.validated_by == "floor 17"
    assert got.records[0].data == {"pending_hits": 2, "validated_by": "floor 17"}
    # the first hit paid: the second's validation is not the first's
    rows.append((4, "link.paid", {"seat": 3, "hand": "five aces", "hit_seq": 5, "cents": 100}))
    got = recover(Events(rows), 4, proc, prog)
    assert got.round is not None and [h.seat for h in got.round.pending_hits] == [5]
    assert got.round.validated_by is None and got.records[0].data == {"pending_hits": 1}


def test_a_closed_round_needs_nothing():
    proc, prog = _table()
    src = Events([(2, "round.open", {}), (2, "round.complete", {})])
    got = recover(src, 2, proc, prog)
    assert got.records == [] and got.round is None


def test_tilts_out_of_order_and_acknowledged_problems():
    proc, prog = _table()
    src = Events(
        [
            (1, "tilt.raised", {"source": "shoe", "reason": "jam"}),
            (1, "tilt.cleared", {"reason": "fixed"}),
            (1, "ledger.acknowledged", {"problems": ["event 7: hash does not match its contents"]}),
            (1, "device.out_of_order", {"device": "shaker", "alternative": "rng"}),
            (1, "device.out_of_order", {"device": "shoe", "alternative": "manual"}),
            (1, "device.in_service", {"device": "shoe"}),
            (1, "tilt.raised", {"source": "door", "reason": "cabinet door opened"}),
            (1, "round.void", {}),
        ]
    )
    got = recover(src, 1, proc, prog)
    assert got.tilts == {"door": "cabinet door opened"}
    assert got.out_of_order == {"shaker": "rng"}
    assert got.acknowledged == {"event 7: hash does not match its contents"}
