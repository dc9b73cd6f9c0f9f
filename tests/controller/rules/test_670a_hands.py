"""Six-Card Fortune Pai Gow Poker hands: low hands, fouls, comparison (§§ 670a.1, 670a.6, 670a.11(b), (f), (g))."""

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from controller.rules.cards import JOKER, parse_cards
from controller.rules.sixcard import (
    Setting,
    SettingError,
    SixCardError,
    check_six,
    compare_hands,
    compare_high,
    compare_low,
    dealer_qualifies_double_down,
    hand_key,
    is_foul,
    low_rank,
    make_setting,
    six_card_rank,
)


def C(text):
    return parse_cards(text)


def c(text):
    return parse_cards(text)[0]


def S(high, low):
    return Setting(C(high), c(low))


# ---------------------------------------------------------------- low hands, § 670a.6(a), (c)


def test_low_rank_ace_high_deuce_low_670a_6_a():
    assert [low_rank(c(x)) for x in ("2c", "9d", "Th", "Ks", "Ac")] == [2, 9, 10, 13, 14]


def test_joker_alone_ranks_as_an_ace_670a_6_a():
    assert low_rank(JOKER) == 14


def test_low_higher_rank_wins_identical_goes_to_dealer_670a_6_c():
    assert compare_low(c("Kd"), c("Qs")) == 1
    assert compare_low(c("Qd"), c("Ks")) == -1
    assert compare_low(c("Qd"), c("Qs")) == -1  # identical: the dealer's hand is higher


def test_player_joker_low_beats_dealer_ace_670a_6_c_and_11_f_2_ii():
    """ "If a player uses a joker as the low hand, the player's hand shall be considered the higher ranking hand.\""""
    assert compare_low(JOKER, c("As")) == 1
    assert compare_low(JOKER, c("2s")) == 1


def test_dealer_joker_low_is_an_ace_and_takes_a_player_ace_670a_6_c():
    assert compare_low(c("Ah"), JOKER) == -1
    assert compare_low(c("Kh"), JOKER) == -1


# ---------------------------------------------------------------- fouls, § 670a.11(b), (f)(1)(v)


@pytest.mark.parametrize(
    "high,low,foul",
    [
        ("Kc 9d 7h 5s 3c", "Ad", True),  # king-high high hand under an ace low hand
        ("Ac 9d 7h 5s 3c", "Kd", False),
        ("Kc 9d 7h 5s 3c", "Qd", False),
        ("2c 2d 7h 5s 3c", "Ad", False),  # any pair outranks one card
        ("Jk 9d 7h 5s 3c", "Ad", False),  # joker = ace: ace-high vs ace, high hand has more cards (§ 670a.6(c))
        ("Ac 9d 7h 5s 3c", "Jk", False),  # ace-high vs the joker-ace low: equal top, still not a foul
        ("Kc Qd 7h 5s 3c", "Jk", True),  # the joker low is an ace
        ("4c 5d 6h 7s 8c", "Ad", False),  # a straight
    ],
)
def test_foul_high_must_rank_at_least_low_670a_11_b(high, low, foul):
    assert is_foul(C(high), c(low)) is foul


def test_foul_loses_670a_11_f_1_v():
    dealer = S("2c 3d 4h 5s 7c", "8d")  # the weakest kind of dealer hands
    r = compare_hands(S("Kc 9d 7h 5s 3c", "Ad"), dealer)
    assert (r.outcome, r.foul) == ("lose", True)


# ---------------------------------------------------------------- comparison, § 670a.11(f)

DEALER = S("Tc Td 9h 6s 3c", "Qd")


@pytest.mark.parametrize(
    "player,outcome,section",
    [
        (S("Jc Jd 9d 6h 3d", "Kh"), "win", "(f)(3)"),  # both higher
        (S("Jc Jd 9d 6h 3d", "Jh"), "push", "(f)(2)"),  # high higher, low lower: (f)(2)(i)
        (S("Jc Jd 9d 6h 3d", "Qh"), "push", "(f)(2)"),  # low identical goes to the dealer: a tie
        (S("9c 9d 8d 6h 3d", "Kh"), "push", "(f)(2)"),  # (f)(2)(ii)
        (S("9c 9d 8d 6h 3d", "Qh"), "lose", "(f)(1)"),  # (f)(1)(ii): high lower, low identical
        (S("9c 9d 8d 6h 3d", "2h"), "lose", "(f)(1)"),  # (f)(1)(i)
        (S("Th Ts 9s 6d 3d", "2h"), "lose", "(f)(1)"),  # (f)(1)(iii): high identical, low lower
        (S("Th Ts 9s 6d 3d", "Qh"), "lose", "(f)(1)"),  # (f)(1)(iv): both identical
        (S("Th Ts 9s 6d 3d", "Kh"), "push", "(f)(2)"),  # identical high is the dealer's, low higher
    ],
)
def test_base_wager_outcomes_670a_11_f(player, outcome, section):
    r = compare_hands(player, DEALER)
    assert r.outcome == outcome and section in r.section


def test_player_joker_low_wins_against_ace_low_670a_11_f_3():
    dealer = S("Tc Td 9h 6s 3c", "Ad")
    assert compare_hands(S("Jc Jd 9d 6h 3d", "Jk"), dealer).outcome == "win"
    assert compare_hands(S("9c 9d 8d 6h 3d", "Jk"), dealer).outcome == "push"  # (f)(2)(ii)
    assert compare_hands(S("Jc Jd 9d 6h 3d", "As"), dealer).outcome == "push"  # a natural ace: identical


def test_identical_high_hands_go_to_the_dealer_670a_6_c():
    assert compare_high(C("Ac Kd 9h 5s 3c"), C("As Kh 9c 5d 3d")) == -1
    # a joker used as an ace ties a natural ace: the dealer's
    assert compare_high(C("Jk Kd 9h 5s 3c"), C("As Kh 9c 5d 3d")) == -1
    assert compare_high(C("Ac Kd 9h 5s 4c"), C("As Kh 9c 5d 3d")) == 1


# ---------------------------------------------------------------- Double Down qualifier, § 670a.11(g)


@pytest.mark.parametrize(
    "high,low,qualifies",
    [
        ("8c 8d 4h 3s 2c", "Kd", True),  # the lowest pair of eights
        ("8c 8d Ah Ks Qc", "Jd", True),
        ("7c 7d Ah Ks Qc", "Jd", False),  # a pair of sevens, even with an ace kicker
        ("Ac Kd 9h 5s 3c", "2d", False),  # no pair
        ("2c 2d 3h 3s Kc", "Kd", True),  # two pair ranks above any pair (§ 670a.6(b)(9))
        ("Jk Ad 9h 5s 3c", "2d", True),  # the joker pairs the ace
        ("Jk 2d 3h 4s 5c", "Kd", True),  # the joker completes a straight
    ],
)
def test_double_down_needs_dealer_pair_of_eights_or_better_670a_11_g(high, low, qualifies):
    assert dealer_qualifies_double_down(S(high, low)) is qualifies


# ---------------------------------------------------------------- hand keys, § 670a.12(c), § 670a.11(h)


@pytest.mark.parametrize(
    "cards,key",
    [
        ("2c 3d 4h 5s 7c 8d", "eight-high"),
        ("2c 3d 4h 5s 7c 9d", "nine-high"),
        ("Kc 3d 4h 5s 7c 9d", "king-high"),
        ("Ac 3d 4h 5s 7c 9d", "ace-high"),
        ("Jk 3d 4h 8s Tc Qd", "ace-high"),  # the joker is an ace: better than king-high
        ("Jk 2d 3h 4s 5c 9d", "straight"),
        ("Ac Ad Ah As Jk 2c", "five-aces"),
        ("Jk Kc Qc Jc Tc 2d", "royal-flush"),
        ("Jk 2c 4c 6c 8c Kd", "flush"),
        ("Jk Ac 2d 5h 8s Td", "pair"),
    ],
)
def test_six_card_hand_key_best_five_670a_11_h(cards, key):
    assert hand_key(six_card_rank(C(cards))) == key


# ---------------------------------------------------------------- bad input


def test_six_cards_required_and_no_duplicates():
    """§ 670a.8(d): six cards to each hand, none twice; anything else refused, naming the card."""
    with pytest.raises(SixCardError, match="got 5 cards"):
        check_six(C("2c 3d 4h 5s 7c"))
    with pytest.raises(SixCardError, match="duplicate card 2c") as e:
        check_six((0, 5, 10, 15, 20, 0))
    assert e.value.token == "2c"
    with pytest.raises(SixCardError, match="not a card"):
        check_six("2c 3d 4h 5s 7c Xx")
    with pytest.raises(SixCardError, match="not a card number"):
        check_six((0, 1, 2, 3, 4, 53))


def test_setting_must_split_the_dealt_six_670a_11_b():
    dealt = "2c 3d 4h 5s 7c 8d"
    s = make_setting(dealt, "2c 3d 4h 5s 7c", "8d")
    assert s == Setting(C("2c 3d 4h 5s 7c"), c("8d"))
    with pytest.raises(SettingError, match="9d was not dealt"):
        make_setting(dealt, "2c 3d 4h 5s 7c", "9d")
    with pytest.raises(SettingError, match="five cards"):
        make_setting(dealt, "2c 3d 4h 5s", "8d")
    with pytest.raises(SettingError, match="twice"):
        make_setting(dealt, "2c 3d 4h 5s 8d", "8d")
    with pytest.raises(SettingError, match="one card"):
        make_setting(dealt, "2c 3d 4h 5s 7c", "8d 9d")
    assert issubclass(SettingError, ValueError)


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 52), min_size=6, max_size=6, unique=True))
def test_double_down_high_hand_reading_equals_six_card_reading_670a_11_g(cards):
    """Reading 670a-DD-1: "the dealer's hand contains a pair of eights or better" -- judged on the
    high hand the house way sets, which always agrees with judging the best five of the six cards."""
    from controller.rules.poker import compare
    from controller.rules.sixcard import _pair_of_eights, house_way

    high, low = house_way(cards)
    six = compare(six_card_rank(cards), _pair_of_eights()) >= 0
    assert dealer_qualifies_double_down(Setting(high, low)) is six
