"""The ledger's vocabulary is spelt in one place (controller/core/records.py) and its
values never change: they are stored in the ledger and hashed into its chain.
The machine's triggers are a closed set, checked against every game's machine."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from controller.books.ledger import Ledger, Record
from controller.core.records import Kind, PhaseKind
from tests.conftest import TEST_KEY

ROOT = Path(__file__).resolve().parents[2]

#: the ledger's record kinds as written before they became a StrEnum: a
#: changed value would be a changed ledger format, so this list is spelt out here
LEDGER_KINDS = """
power.up selfcheck config.loaded config.applied ledger.acknowledged ledger.keyed ledger.restored
game.carry game.carry_refused
round.open round.settled round.complete round.void round.recovered
lockout lockout.recovered wager.accepted wager.rejected wager.removed wager.returned wager.keyed
count.confirmed count.mismatch
dice dice.no_roll rng.draw deal deal.manual card.burned stub.verified stub.skipped shuffle.failed
shoe.shuffled shoe.cover hands.entered decision decisions.none keypad.rejected keypad.rejected.summary
wager.result payout hit.pending hit.validated hit.awaiting_lap meter.init meter.increment meter.void meter.fixed_paid
meter.payout meter.reseed meter.adjust
link.contribution link.void link.hit link.paid link.state
tilt.raised tilt.cleared tilt.clear_refused
device.out_of_order device.in_service shoe.reshuffle_ordered dealer.changed
console.login console.logout console.locked console.unlocked console.command console.pins
""".split()


def test_kind_values_are_the_ledger_format():
    assert sorted(k.value for k in Kind) == sorted(LEDGER_KINDS)
    assert len(set(LEDGER_KINDS)) == len(LEDGER_KINDS)


def test_phase_kinds():
    assert [k.value for k in PhaseKind] == ["start", "dice_wagers", "deal", "stub", "decide", "settle"]


def test_a_kind_is_its_string_in_the_ledger(tmp_path):
    """Stored, hashed and read back exactly as the plain string was."""
    a, b = Ledger(tmp_path / "a.sqlite3", "T", key=TEST_KEY), Ledger(tmp_path / "b.sqlite3", "T", key=TEST_KEY)
    try:
        a.append([Record(Kind.TILT_RAISED, 3, {"source": "shoe", "reason": "jam", "kind": Kind.DECISION})])
        b.append([Record("tilt.raised", 3, {"source": "shoe", "reason": "jam", "kind": "decision"})])
        ea, eb = next(a.events()), next(b.events())
        assert (ea.kind, ea.data, ea.prev) == (eb.kind, eb.data, eb.prev) == (ea.kind, ea.data, ea.prev)
        assert type(ea.kind) is str and ea.kind == Kind.TILT_RAISED
        assert json.dumps(Kind.METER_INIT) == '"meter.init"' and f"{Kind.ROUND_VOID}" == "round.void"
        # the hashes differ only by the timestamp: recompute b's with a's
        assert a.verify() == [] and b.verify() == []
    finally:
        a.close()
        b.close()


def test_every_kind_is_used_and_no_literal_is_left_at_a_call_site():
    """Each Kind is written or read somewhere in controller/; no record is made from a
    string literal there any more (rec("x") / Record("x") / log("x"))."""
    sources = {p: p.read_text() for p in (ROOT / "controller").rglob("*.py") if p.name != "records.py"}
    text = "\n".join(sources.values())
    unused = [k.name for k in Kind if f"Kind.{k.name}" not in text]
    assert not unused, f"kinds nothing uses: {unused}"
    literal = re.compile(r"""\b(rec|Record)\(\s*["']""")
    left = [
        f"{p.relative_to(ROOT)}:{i}"
        for p, s in sources.items()
        for i, line in enumerate(s.splitlines(), 1)
        if literal.search(line)
    ]
    assert not left, f"record kinds still spelt as literals: {left}"


def test_triggers_are_every_games_machine_triggers():
    from controller.gamedefs import games
    from controller.games import procedure_for
    from controller.play.machine import TRIGGERS, build
    from controller.settings.config import parse_profile

    used: set[str] = set()
    for game in games():
        profile = parse_profile(tomllib.loads((ROOT / "config" / "tables" / f"{game}.toml").read_text()), game)
        _states, transitions = build(procedure_for(game, profile).phases)
        used |= {t["trigger"] for t in transitions}
    assert used == set(TRIGGERS)


@pytest.mark.parametrize("bad", ["started", "Deal", ""])
def test_a_phase_of_an_unknown_kind_is_refused(bad):
    from controller.games.base import Phase

    with pytest.raises(ValueError, match="is not one of"):
        Phase("x", bad, "§ 0")


def test_a_phase_given_a_string_kind_holds_the_enum():
    from controller.games.base import Phase

    p = Phase("dispensing", "deal", "§ 670a.10(c)", "main")  # type: ignore[arg-type]
    assert p.kind is PhaseKind.DEAL
