"""Dice and the dice wagers: Sum, Match, Beat It (§ 621a.2(f)(1), § 621a.5(e)(2)-(4), § 621a.6(b), § 621a.11(c)-(e))."""

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from controller.rules.dice import Dice, DiceError, all_rolls, parse_dice
from controller.rules.paytables import get_paytable
from controller.rules.settlement import table_net
from controller.rules.tiles_dice import beat_it_keys, match_keys, settle_beat_it, settle_match, settle_sum, sum_keys
from tests.controller.rules._payback import pay_line


def test_parse_dice_with_red():
    d = parse_dice("3 5 R6")
    assert d.values == (3, 5, 6) and d.red == 2 and d.red_value == 6 and d.blue_values == (3, 5)
    assert parse_dice("r6,b3,B5") == Dice((6, 3, 5), red=0) == Dice.of(red=6, blue=(3, 5))
    assert parse_dice("1 2 3").red is None and str(parse_dice("3 5 R6")) == "3 5 R6"


@pytest.mark.parametrize(
    "text,token", [("3 5 7", "7"), ("3 5", None), ("R3 R5 6", "R5"), ("3 x 6", "x"), ("0 1 2", "0"), ("3 5 6 1", None)]
)
def test_parse_dice_errors_name_the_token(text, token):
    """§ 621a.2(d): three dice of 1..6 (two or four dice, a 7 or a 0 refused, naming the token)."""
    with pytest.raises(DiceError) as e:
        parse_dice(text)
    assert e.value.token == token


def test_dice_model_errors():
    """§ 621a.2(d): a Pai Gow roll is three dice, each 1..6; anything else is refused."""
    with pytest.raises(DiceError):
        Dice((1, 2, 7))
    with pytest.raises(DiceError):
        Dice((1, 2))  # type: ignore[arg-type]
    with pytest.raises(DiceError):
        _ = Dice((1, 2, 3)).red_value


def test_sum_keys_621a_5_e_2():
    assert sum_keys(parse_dice("6 6 5")) == ("total-17", "two-match")
    assert sum_keys(parse_dice("2 3 4")) == ("total-9", "series")
    assert sum_keys(parse_dice("1 1 1")) == ("total-3", "three-match")


def test_sum_settlement_paytables_621a_11_c():
    d = parse_dice("6 6 5")
    assert settle_sum(1, 500, d, "Tiles Sum A").net == 12500  # 17 pays 25 to 1
    assert settle_sum(1, 500, d, "Tiles Sum B").outcome == "lose"
    assert settle_sum(1, 500, d, "Tiles Sum C").net == 500  # any two match 1 to 1
    assert settle_sum(1, 500, parse_dice("5 5 5"), "Tiles Sum C").net == 1500  # three match 3 to 1, not both
    assert settle_sum(1, 200, parse_dice("4 6 5"), "Tiles Sum D").net == 1500  # series 15 to 2
    assert settle_sum(1, 500, parse_dice("1 1 1"), "Tiles Sum B").net == 12500  # total 3
    with pytest.raises(ValueError, match="whole number of cents"):
        settle_sum(1, 101, parse_dice("4 6 5"), "Tiles Sum D")  # 15/2 of 101 cents
    with pytest.raises(ValueError):
        settle_sum(1, 500, d, "Tiles Match")  # wrong wager's paytable


def test_match_621a_5_e_3_and_11_d():
    d = parse_dice("1 1 4")  # the regulation's example: a Match Wager on the 1 wins on two 1s
    assert match_keys(d, 1) == ("double-match",) and match_keys(d, 4) == ()
    assert settle_match(2, 100, d, 1).net == 600
    assert settle_match(2, 100, parse_dice("1 1 1"), 1).net == 10000
    assert settle_match(2, 100, d, 4).net == -100
    with pytest.raises(DiceError):
        settle_match(2, 100, d, 7)


def test_beat_it_examples_621a_5_e_4():
    d = parse_dice("R6 2 1")  # (4)(i): red 6 against 2 + 1 = 3 wins
    assert "red-by-3" in beat_it_keys(d)
    assert settle_beat_it(3, 100, d, "Tiles Beat It A").net == 1000
    d = parse_dice("5 1 R1")  # (4)(ii): 5 - (1 + 1) = 3
    assert "any-by-3" in beat_it_keys(d)
    assert settle_beat_it(3, 200, d, "Tiles Beat It C").net == 500  # 5 to 2
    assert settle_beat_it(3, 100, d, "Tiles Beat It A").outcome == "lose"  # red 1 < 6
    assert settle_beat_it(3, 100, parse_dice("R4 2 2"), "Tiles Beat It B").net == 100  # tie
    assert settle_beat_it(3, 100, parse_dice("R6 1 1"), "Tiles Beat It B").net == 6000  # by 4
    with pytest.raises(DiceError):
        settle_beat_it(3, 100, parse_dice("6 1 1"), "Tiles Beat It A")  # red die required
    assert settle_beat_it(3, 100, parse_dice("6 1 1"), "Tiles Beat It C").net == 250


def test_paytables_transcribed_621a_11():
    pt = get_paytable("Tiles Sum A")
    assert [(h, p.text) for h, p in pt.pays] == [("total-17", "25 to 1"), ("total-16", "6 to 1"), ("total-8", "3 to 1")]
    assert pay_line(get_paytable("Tiles Sum D"), "series").net_win(2) == 15
    assert pay_line(get_paytable("Tiles Beat It B"), "red-by-4").text == "60 to 1"
    assert pay_line(get_paytable("Tiles Match"), "triple-match").text == "100 to 1"


def _counts(pt_name, keyfn):
    from controller.rules.tiles_dice import best_row

    pt = get_paytable(pt_name)
    return Counter(best_row(keyfn(d), pt) for d in all_rolls())


def test_exact_counts_over_216_rolls():
    assert _counts("Tiles Sum A", sum_keys) == {"total-17": 3, "total-16": 6, "total-8": 21, None: 186}
    assert _counts("Tiles Sum B", sum_keys) == {"total-3": 1, "total-8": 21, "total-9": 25, None: 169}
    assert _counts("Tiles Sum C", sum_keys) == {"three-match": 6, "two-match": 90, None: 120}
    assert _counts("Tiles Sum D", sum_keys) == {"series": 24, None: 192}
    assert _counts("Tiles Beat It A", beat_it_keys) == {
        "red-by-4": 1,
        "red-by-3": 3,
        "red-by-2": 6,
        "red-by-1": 10,
        "red-tie": 15,
        None: 181,
    }
    assert _counts("Tiles Beat It C", beat_it_keys) == {
        "any-by-4": 3,
        "any-by-3": 9,
        "any-by-2": 18,
        "any-by-1": 30,
        None: 156,
    }
    for v in range(1, 7):
        assert _counts("Tiles Match", lambda d, v=v: match_keys(d, v)) == {
            "triple-match": 1,
            "double-match": 15,
            None: 200,
        }


@hsettings(max_examples=200)
@given(
    st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6)),
    st.integers(0, 2),
    st.integers(1, 500).map(lambda k: 100 * k),
)
def test_dice_settlement_conserves_money(values, red, amount):
    d = Dice(values, red=red)
    rs = [settle_sum(1, amount, d, f"Tiles Sum {x}") for x in "ABCD"]
    rs += [settle_beat_it(2, amount, d, f"Tiles Beat It {x}") for x in "ABC"]
    rs += [settle_match(3, amount, d, v) for v in range(1, 7)]
    for r in rs:
        assert (r.outcome == "win") == (r.net > 0) and (r.outcome != "lose" or r.net == -amount)
    assert table_net(rs) == -sum(r.net for r in rs)
    # a win pays exactly the printed odds
    for r in rs:
        if r.outcome == "win":
            assert r.paytable is not None and r.hand is not None
            assert Fraction(r.net, amount) == pay_line(get_paytable(r.paytable), r.hand).net_win(1)
