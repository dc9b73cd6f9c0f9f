"""Each of the table's components built alone, with fakes implementing the roles it is
given (controller/play/context.py), no Table, no ledger, no reactor: what it records, what it
triggers, what it shows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from controller.books.ledger import Record, StoredEvent
from controller.core.reactor import Reactor
from controller.core.records import Kind, PhaseKind
from controller.games import procedure_for
from controller.games.base import Phase
from controller.games.round import Round
from controller.play.betting import BetBoard
from controller.play.bundles import Shared, Wiring
from controller.play.context import NullLink, RoundSlot, TableGame, Then
from controller.play.dealing import Dealing, Deck
from controller.play.deciding import Deciding
from controller.play.devices import DeviceRegistry, Devices
from controller.play.faults import Faults
from controller.play.floor import Floor, OutOfOrder
from controller.play.machine import Trigger
from controller.play.progressive import ProgressiveSystem
from controller.play.settling import Settling
from controller.play.wagering import Wagering
from controller.rules.settlement import WagerResult
from controller.settings.config import FloodLimits, parse_profile
from tests.conftest import ManualClock
from tests.integration.harness import FakeInputs, FakeKeypad, FakeLights, FakeShaker, FakeShoe, FakeSign, profile_doc


class Books:
    """The ledger role: records kept, ``then`` run at once (as durable)."""

    def __init__(self, round_no: int = 1):
        self.round_no = round_no
        self.meter = None
        self.records: list[Record] = []

    def rec(self, kind: Kind, **data: Any) -> Record:
        return Record(kind, self.round_no, data)

    def commit(self, records: Sequence[Record], then: Then | None = None, *, hand_over: bool = False) -> None:
        self.records += records
        if then is not None:
            then([StoredEvent(i, "", "T", r.round, r.kind, dict(r.data), "", "") for i, r in enumerate(records, 1)])

    def kinds(self) -> list[str]:
        return [r.kind for r in self.records]


class Machine:
    """The round machine role: a state, the triggers pulled, the advances asked for."""

    def __init__(self, state: str, proc: Any = None):
        self.state = state
        self.proc = proc
        self.triggers: list[str] = []
        self.advances = 0

    def phase(self) -> Phase | None:
        return self.proc.phase(self.state) if self.proc is not None else None

    def trigger(self, name: Trigger) -> bool:
        self.triggers.append(name)
        return True

    def advance(self) -> None:
        self.advances += 1


class Timer:
    def __init__(self) -> None:
        self.set_for: list[str] = []
        self.cancelled = 0

    def set(self, seconds: float, device: str, what: str) -> None:
        self.set_for.append(device)

    def cancel(self) -> None:
        self.cancelled += 1


class Log:
    def __init__(self) -> None:
        self.events: list[str] = []

    def info(self, event: str, /, **kw: object) -> None:
        self.events.append(event)

    warning = error = info


class Calls:
    """Records what a role was called with (tilts, emits, meters shown)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any, **kw: Any) -> None:
        self.calls.append(args + tuple(sorted(kw.items())))


def _shared(books: Any, machine: Any, game: TableGame, rounds: RoundSlot, raise_tilt: Any = None) -> Shared:
    """The shared roles, fakes where the test does not look."""
    return Shared(
        books=books,
        machine=machine,
        game=game,
        rounds=rounds,
        timer=Timer(),
        raise_tilt=raise_tilt if raise_tilt is not None else Calls(),
        emit=Calls(),
        show_meters=Calls(),
        log=Log(),
    )


def _devices(**parts: Any) -> Devices:
    """The harness's fake devices (no RNG, no keypad unless given)."""
    return Devices(FakeShoe("shoe"), FakeShaker("shaker"), FakeSign("sign"), FakeLights(), FakeInputs([]), **parts)


@pytest.fixture
def game() -> TableGame:
    profile = parse_profile(profile_doc(), "<t>")
    assert profile.progressive is not None
    return TableGame(profile, procedure_for(profile.game, profile), ProgressiveSystem(profile.progressive))


def _wagering(game: TableGame, state: str, journal: Any = None) -> tuple[Wagering, Books, Machine, Deck, Calls]:
    books, machine, deck, tilt = Books(), Machine(state, game.proc), Deck(), Calls()
    slot = RoundSlot()
    board = BetBoard(game.profile.sensed, game.profile.seats, FakeLights())
    w = Wagering(
        _shared(books, machine, game, slot, tilt),
        board=board,
        deck=deck,
        sign=FakeSign("sign"),
        link=NullLink(),
        journal=journal,
    )
    slot.round = Round(1, w.new_round())
    return w, books, machine, deck, tilt


def test_wagering_alone_freezes_the_sensed_wagers_at_the_lockout(game: TableGame) -> None:
    w, books, machine, _deck, _tilt = _wagering(game, "open_for_wagers")
    w.open_board()
    w.board.sensor("progressive", 2, True, 0.0)
    w.on_lockout(1.0)
    assert dict(w.record.wagers) == {(2, "progressive"): 100}
    assert books.kinds() == [Kind.LOCKOUT, Kind.WAGER_ACCEPTED] and machine.triggers == ["lock_out"]
    w.on_sensor("progressive", 3, True, 2.0)  # a late chip: recorded, never a wager (§ 670a.7(c))
    assert books.kinds()[-1] == Kind.WAGER_REJECTED and list(w.record.rejected) == [3]
    assert dict(w.record.wagers) == {(2, "progressive"): 100}


def test_wagering_alone_voids_and_spends_the_deck(game: TableGame) -> None:
    w, books, machine, deck, _tilt = _wagering(game, "no_more_bets")
    w.accept_late(4, "progressive", 100)
    deck.shuffled(True)
    w.void("shoe jam")
    assert machine.triggers == ["void_round"] and not deck.ready and w.record.void_reason == "shoe jam"
    assert [(r.kind, r.data.get("seat")) for r in books.records[:2]] == [
        (Kind.ROUND_VOID, None),
        (Kind.WAGER_RETURNED, 4),
    ]


def test_wagering_alone_tilts_when_the_journal_cannot_be_written(game: TableGame) -> None:
    class Broken:
        def block(self, round_no: int, records: Sequence[Record]) -> bytes:
            return b"x"

        def write(self, block: bytes) -> None:
            raise OSError("disk gone")

    w, books, machine, _deck, tilt = _wagering(game, "open_for_wagers", Broken())
    w.on_lockout(1.0)
    assert books.kinds()[0] == Kind.LOCKOUT and machine.triggers == ["lock_out"]
    assert tilt.calls == [("ledger", "the lock-out journal could not be written: disk gone")]


def _dealing(game: TableGame, state: str) -> tuple[Dealing, Books, Machine, Calls, Calls, Deck]:
    books, machine, tilt, voids, deck = Books(), Machine(state, game.proc), Calls(), Calls(), Deck()
    slot = RoundSlot()
    d = Dealing(
        _shared(books, machine, game, slot, tilt),
        deck=deck,
        devices=_devices(keypad=FakeKeypad("keypad")),
        marks=OutOfOrder(),
        void=voids,
    )
    slot.round = Round(1, dealt=d.new_round())
    return d, books, machine, tilt, voids, deck


def test_dealing_alone_takes_the_dice_and_advances(game: TableGame) -> None:
    d, books, machine, tilt, _voids, _deck = _dealing(game, "starting_position")
    d.on_shaker(_ev("shaker", msg="RESULT", d1=1, d2=2, d3=4, red=0, shake_ms=5000))
    assert d.record.dice == (1, 2, 4) and d.record.start is not None
    assert books.kinds() == [Kind.DICE] and machine.advances == 1 and tilt.calls == []
    d.on_shaker(_ev("shaker", msg="NO_ROLL", reason=1, shake_ms=4000))  # § 670a.13(a): reshake
    assert d.record.no_rolls == 1 and machine.triggers == ["no_roll"]


def test_dealing_alone_tilts_on_the_third_failed_shuffle(game: TableGame) -> None:
    d, books, _machine, tilt, _voids, deck = _dealing(game, "open_for_wagers")
    for _ in range(3):
        d.on_shoe(_ev("shoe", msg="SHUFFLE_FAILED", code=1))
    assert deck.shuffle_failures == 3 and not deck.ready
    assert books.kinds() == [Kind.SHUFFLE_FAILED] * 3 and [c[0] for c in tilt.calls] == ["shoe"]


def test_dealing_alone_voids_a_misdealt_stack(game: TableGame) -> None:
    d, _books, _machine, _tilt, voids, _deck = _dealing(game, "dispensing")
    d.on_shoe(_ev("shoe", msg="STACK", stack=2, count=6, cards=[0, 1, 2, 3, 4, 5]))
    assert len(voids.calls) == 1 and "misdeal" in voids.calls[0][0]


def _ev(kind: str, **data: Any) -> Any:
    from controller.core.reactor import Event

    return Event(kind, kind, data, t=0.0)


class Bets:
    def __init__(self) -> None:
        self.late: list[tuple[int, str, int]] = []

    def bet_entry(self, text: str) -> str:
        return "OK"

    def accept_late(self, seat: int, wager: str, cents: int) -> None:
        self.late.append((seat, wager, cents))


class Hands:
    def hand_entry(self, rnd: Round, text: str) -> bool:
        return False


def test_deciding_alone_takes_an_answer_and_a_late_wager() -> None:
    doc = {"game": {"id": "over-under", "seats": 6, "positions": 6, "start_method": "none"}}
    profile = parse_profile(doc, "<t>")
    game = TableGame(profile, procedure_for("over-under", profile), None)
    from controller.games.round import Wagered

    books, machine, bets, keypad = Books(), Machine("over_under_decisions", game.proc), Bets(), FakeKeypad("keypad")
    slot = RoundSlot()
    assert game.profile.keypad == FloodLimits()  # the rejected entries' limits are the profile's
    d = Deciding(_shared(books, machine, game, slot), keypad=keypad, bets=bets, hands=Hands(), settle=Calls())
    slot.round = rnd = Round(1, Wagered(wagers={(1, "ante"): 500}), decided=d.new_round())
    d.state_entered()
    d.phase_decide(rnd, "over-under")
    assert keypad.calls[-1][0] == "prompt"
    d.on_keypad(_ev("keypad", msg="ENTRY", text="OVER 1", prompt=keypad.prompt_id))
    assert dict(d.record.decisions["over-under"].answers) == {1: "over-23"}
    assert bets.late == [(1, "over-23", 500)] and machine.advances == 1
    assert books.kinds() == [Kind.DECISION, Kind.WAGER_ACCEPTED]


def test_settling_alone_pays_a_meter_hit_after_validation(game: TableGame) -> None:
    import controller.books.meters as M

    books, machine, lights = Books(), Machine("floor_validation", game.proc), Calls()
    from fractions import Fraction

    books.meter = M.Meter("progressive", 500_000, Fraction(21, 100), Fraction(600_000))  # type: ignore[assignment]
    slot = RoundSlot()

    class Lights:
        def light_wins(self, results: Sequence[WagerResult]) -> None:
            lights(len(results))

    s = Settling(
        _shared(books, machine, game, slot),
        sign=FakeSign("sign"),
        lights=Lights(),
        devices=OutOfOrder(),
        link=NullLink(),
        linked=False,
    )
    hit = WagerResult(3, "progressive", 100, "win", 0, "five aces", meter_fraction=1)  # type: ignore[arg-type]
    slot.round = rnd = Round(1, settled=s.restore([hit], [hit], None))
    assert s.validate_hit("floor 7")
    assert s.record.pending_hits == [] and [p.seat for p in s.record.payouts] == [3]
    assert machine.triggers[:2] == ["hit_validated", "settled"] and Kind.ROUND_COMPLETE in books.kinds()
    assert rnd.payouts[0]["order"] == 1


def test_floor_alone_marks_a_device_only_between_rounds(game: TableGame) -> None:
    books, machine, marks, reshuffles = Books(), Machine("dispensing"), OutOfOrder(), Calls()
    floor = Floor(books=books, machine=machine, game=game, marks=marks, reshuffle=reshuffles)
    with pytest.raises(ValueError, match="between rounds"):
        floor.mark_out_of_order("shaker", "floor 1", "rng")
    assert marks.marks == {} and books.records == []
    machine.state = "open_for_wagers"
    floor.mark_out_of_order("shoe", "floor 1", "manual")
    assert marks.alternative("shoe") == "manual" and books.kinds() == [Kind.DEVICE_OUT_OF_ORDER]
    floor.mark_in_service("shoe", "tech 2")
    assert marks.marks == {} and len(reshuffles.calls) == 1  # the shoe shuffles before it deals again


def test_faults_alone_latch_and_refuse_a_clear_while_a_device_is_down(game: TableGame) -> None:
    books, machine, registry = Books(), Machine("dispensing"), DeviceRegistry()
    devices = _devices()

    class Voids:
        def void_records(self, rnd: Round, reason: str) -> list[Record]:
            return [Record(Kind.ROUND_VOID, 1, {"reason": reason})]

    class Hits:
        def next_hit_or_complete(self, rnd: Round) -> None:
            raise AssertionError("no hit is pending")

    slot = RoundSlot()
    slot.round = Round(1)
    dropped = Calls()
    wiring = Wiring(
        reactor=Reactor(ManualClock()),
        marks=OutOfOrder(),
        registry=registry,
        link=NullLink(),
        lap=None,
        journal=None,
        drop_round=dropped,
        publish=Calls(),
    )
    faults = Faults(_shared(books, machine, game, slot), devices=devices, wiring=wiring, voids=Voids(), hits=Hits())
    registry.link_event("shoe", "gave-up")
    faults.raise_tilt("shoe", "shoe link gave-up")
    assert faults.tilts == {"shoe": "shoe link gave-up"} and machine.triggers == ["fault"]
    machine.state = "tilt"
    assert not faults.clear("fixed", "tech 1") and devices.shoe.calls == [("restart", ())]  # type: ignore[attr-defined]
    assert books.kinds() == [Kind.TILT_RAISED, Kind.TILT_CLEAR_REFUSED]
    registry.link_event("shoe", "restored")
    assert faults.clear("fixed", "tech 1")
    assert books.kinds()[-2:] == [Kind.TILT_CLEARED, Kind.ROUND_VOID]  # cut short mid-deal: voided
    assert machine.triggers[-1] == "clear" and len(dropped.calls) == 1


def test_phase_kinds_are_the_records_vocabulary() -> None:
    assert {
        p.kind
        for p in procedure_for(
            "over-under",
            parse_profile({"game": {"id": "over-under", "seats": 6, "positions": 6, "start_method": "none"}}, "<t>"),
        ).phases
    } <= set(PhaseKind)
