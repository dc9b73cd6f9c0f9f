"""No more than six betting positions: § 687a.2(a) DJ Wild Stud Poker, § 688a.2(a) Face Up Pai
Gow Poker, § 670a.2(a) Six-Card Fortune Pai Gow Poker.  A table profile of seven was accepted
for these three games (Fortune Asia, Over/Under and tiles refused it)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from controller.games import procedure_for
from controller.settings.config import parse_profile
from tests.integration.games.test_djwild import _harness, _key

TABLES = Path(__file__).resolve().parents[2] / "config" / "tables"


def test_687a_2_a_a_wager_at_a_seventh_position_is_refused(tmp_path):
    h = _harness(tmp_path)
    h.shuffled()
    assert _key(h, "BET 7 ante 10").startswith("ERROR")
    assert _key(h, "BET 0 ante 10").startswith("ERROR")
    assert not _key(h, "BET 6 ante 10").startswith("ERROR")
    assert {s for s, _w in h.rnd.keyed} == {6}
    h.close()


@pytest.mark.parametrize(
    "table,section",
    [("dj-wild", "§ 687a.2(a)"), ("face-up", "§ 688a.2(a)"), ("six-card-fortune", "§ 670a.2(a)")],
)
def test_687a_2_a_688a_2_a_670a_2_a_a_profile_of_seven_positions_is_refused(table, section):
    doc = tomllib.loads((TABLES / f"{table}.toml").read_text(encoding="utf-8"))
    prof = parse_profile(doc, f"{table}.toml")
    assert procedure_for(prof.game, prof) is not None  # six: accepted
    doc["game"]["seats"] = 7
    prof = parse_profile(doc, f"{table}.toml")
    with pytest.raises(ValueError, match="no more than six betting positions") as e:
        procedure_for(prof.game, prof)
    assert section in str(e.value) and f"{table}.toml" in str(e.value)
