"""``tablectl analyze`` usability: short paytable names, a clear answer for a
wager with no analysis, and the progressive figures (--rate, --seed, --meter) it used."""

from __future__ import annotations

import pytest

from controller.cli import main
from controller.commands.analyze import resolve_paytable


@pytest.mark.parametrize(
    "game,wager,text,want",
    [
        ("face-up", "ace-high", "1", "Ace High 1"),
        ("face-up", "fortune", "3", "Face Up Fortune 3"),
        ("dj-wild", "trips", "DJWT-04", "DJWT-04"),
        ("dj-wild", "trips", "djwt-04", "DJWT-04"),
        ("fortune-asia", "fortune", "A", "Fortune Asia Fortune A"),
        ("fortune-asia", "insurance", "b", "Fortune Asia Insurance B"),
        ("face-up", None, "Face Up Fortune 2", "Face Up Fortune 2"),
    ],
)
def test_short_paytable_names_unambiguous_within_game_and_wager(game, wager, text, want):
    """`--paytable 1` for "Ace High 1" used to fail."""
    assert resolve_paytable(game, wager, text)[0] == want


@pytest.mark.parametrize(
    "game,wager,text,match",
    [
        ("face-up", None, "1", "ambiguous within face-up: Ace High 1, Face Up Fortune 1"),
        ("face-up", "ace-high", "9", "no paytable '9' within face-up ace-high"),
        ("dj-wild", "trips", "DJ Wild Ante", "paytable of the ante wager, not of 'trips'"),
        ("nope", None, "1", "no paytables for game 'nope'"),
    ],
)
def test_paytable_names_that_do_not_resolve_say_why(game, wager, text, match):
    with pytest.raises(ValueError, match=match):
        resolve_paytable(game, wager, text)


@pytest.mark.slow
def test_analyze_short_paytable_runs_the_analysis(capsys):
    assert main(["analyze", "--game", "face-up", "--wager", "ace-high", "--paytable", "1"]) == 0
    out = capsys.readouterr().out
    assert "Ace High 1" in out and "payback: 96.4102%" in out


def test_analyze_wager_without_analysis_names_those_with_one(capsys):
    """A paytable whose wager has no analysis: say which wagers of the game have one."""
    assert main(["analyze", "--game", "dj-wild", "--paytable", "DJ Wild Raise"]) == 2
    err = capsys.readouterr().err
    assert "no analysis for game 'dj-wild' paytable 'DJ Wild Raise' (raise wager)" in err
    assert "wagers of dj-wild with one: bad-beat, blind, progressive, trips" in err
    # the Ante analysis plays the whole game and takes no paytable: "DJ Wild Ante" has none
    assert main(["analyze", "--game", "dj-wild", "--paytable", "DJ Wild Ante"]) == 2
    err = capsys.readouterr().err
    assert "paytable 'DJ Wild Ante' (ante wager; --wager ante analyses the whole game without a paytable)" in err
    assert "wagers of dj-wild with one: bad-beat, blind, progressive, trips" in err


def test_analyze_progressive_options_only_for_a_progressive(capsys):
    assert main(["analyze", "--game", "over-under", "--wager", "bonus", "--rate", "5%"]) == 2
    assert "--rate applies to a progressive wager" in capsys.readouterr().err
    args = ["analyze", "--game", "over-under", "--wager", "bonus", "-o", "meter=$5", "--meter", "$6"]
    assert main(args) == 2


def test_meter_values_say_which_figures_were_used():
    """§ 687a and § 659a print no rate of progression; an analysis uses one only
    when given (--rate), and says where each figure came from."""
    from fractions import Fraction

    from controller.analysis import meter_values

    mv = meter_values({}, (200_000, "§ 687a.12(c)"))
    assert (mv.seed, mv.rate, mv.meter) == (200_000, None, 200_000)
    assert "rate - (none given" in mv.note and "seed $2,000.00 (§ 687a.12(c))" in mv.note
    mv = meter_values({"rate": "20.5%", "meter": "$3,000"}, (200_000, "§ 687a.12(c)"))
    assert (mv.rate, mv.meter) == (Fraction(41, 200), 300_000)
    assert "meter $3,000.00 (--meter)" in mv.note and "rate 20.5% (--rate)" in mv.note
    with pytest.raises(ValueError, match="give --meter"):
        meter_values({})
    with pytest.raises(ValueError, match="--rate"):
        meter_values({"rate": "lots"}, (100, "x"))


@pytest.mark.slow
def test_analyze_face_up_progressive_prints_the_values_used(capsys):
    args = ["analyze", "--game", "face-up", "--wager", "progressive", "--paytable", "4"]
    assert main([*args, "--rate", "2%", "--seed", "$5,000", "--meter", "$20,000"]) == 0
    out = capsys.readouterr().out
    assert "values used: meter $20,000.00 (--meter); seed $5,000.00 (--seed); rate 2% (--rate)" in out
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "rate 1% (§ 688a.12(d) Face Up Progressive 4)" in out and "payback: 86.5386%" in out


@pytest.mark.slow
def test_analyze_face_up_fortune_1_prints_the_best_pay_figure(capsys):
    """`tablectl analyze --game face-up --wager fortune --paytable "Face Up Fortune 1"`
    prints the best-pay figure (91.8683% under the old ranking default)."""
    assert main(["analyze", "--game", "face-up", "--wager", "fortune", "--paytable", "Face Up Fortune 1"]) == 0
    out = capsys.readouterr().out
    assert "payback: 91.9992%" in out and "straight-and-three-of-a-kind" in out
