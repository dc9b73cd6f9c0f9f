"""Exact analyses of the 621a optional wagers (§ 621a.11(b)-(e)): every roll / every four-tile hand counted."""

from fractions import Fraction

import pytest

from controller.analysis import ANALYZERS, DEFAULT_PAYTABLE, format_result, load_all


@pytest.fixture(scope="module", autouse=True)
def _load():
    load_all()


@pytest.mark.parametrize(
    "wager,paytable,payback",
    [
        ("sum", "Tiles Sum A", Fraction(204, 216)),
        ("sum", "Tiles Sum B", Fraction(206, 216)),
        ("sum", "Tiles Sum C", Fraction(204, 216)),
        ("sum", "Tiles Sum D", Fraction(204, 216)),
        ("match", "Tiles Match", Fraction(206, 216)),
        ("beat-it", "Tiles Beat It A", Fraction(200, 216)),
        ("beat-it", "Tiles Beat It B", Fraction(210, 216)),
        ("beat-it", "Tiles Beat It C", Fraction(210, 216)),
        # 1*301 + 119*26 + 420*9 + 1680*5 + 4620*4 returned over 35,960 hands
        ("pair-fortunes", "Tiles Pair Fortunes", Fraction(34055, 35960)),
    ],
)
def test_paybacks_exact(wager, paytable, payback):
    res = ANALYZERS[("pai-gow-tiles", wager)](paytable, {})
    assert res.payback == payback
    assert res.total == sum(r.count for r in res.rows)
    assert format_result(res).splitlines()[-1] == f"payback: {float(payback) * 100:.4f}%"


def test_pair_fortunes_counts_over_c_32_4():
    res = ANALYZERS[("pai-gow-tiles", "pair-fortunes")](None, {})
    assert res.total == 35960
    assert {r.outcome: r.count for r in res.rows} == {
        "gee-joon-and-heaven": 1,
        "two-pair": 119,
        "gee-joon-pair": 420,
        "mixed-pair": 1680,
        "identical-pair": 4620,
        "lose": 29120,
    }


def test_defaults_and_errors():
    assert DEFAULT_PAYTABLE[("pai-gow-tiles", "sum")] == "Tiles Sum A"
    assert DEFAULT_PAYTABLE[("pai-gow-tiles", "beat-it")] == "Tiles Beat It A"
    with pytest.raises(ValueError):
        ANALYZERS[("pai-gow-tiles", "sum")]("Tiles Match", {})
    with pytest.raises(ValueError):
        ANALYZERS[("pai-gow-tiles", "match")](None, {"value": "7"})
    assert ANALYZERS[("pai-gow-tiles", "match")](None, {"value": "6"}).payback == Fraction(206, 216)
