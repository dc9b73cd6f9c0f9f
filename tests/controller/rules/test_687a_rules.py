"""DJ Wild Stud Poker rules, 58 Pa. Code Chapter 687a (controller/rules/djwild.py)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules import poker
from controller.rules.cards import JOKER, CardError, parse_card, parse_cards
from controller.rules.djwild import (
    DJRound,
    DJSeat,
    DJWildConfig,
    DJWildError,
    evaluate,
    is_natural,
    progressive_cards,
    progressive_rank,
    settle_round,
    trips_key,
    void_exposed,
    void_round,
)
from controller.rules.settlement import table_net


def c(text: str) -> int:
    return parse_card(text)


def by_wager(results, seat=1):
    return {r.wager: r for r in results if r.seat == seat}


# ---------------------------------------------------------------- § 687a.6 rankings via the shared evaluator


def test_687a_6_b_deuces_and_joker_wild():
    """§ 687a.6(b): four deuces and the joker are wild."""
    assert evaluate("2c 2d 2h 2s Jk").category is poker.Category.FIVE_WILDS  # § 687a.6(c)(1)
    assert evaluate("Ah Kh Qh Jh 2c").category is poker.Category.ROYAL_FLUSH  # § 687a.6(c)(2)
    assert evaluate("9c 9d 9h 2s Jk").category is poker.Category.FIVE_OF_A_KIND
    assert evaluate("Kc Kd 7h 4s Jk").category is poker.Category.THREE_OF_A_KIND


def test_687a_6_c_order_five_wilds_royal_five_kind_straight_flush():
    """§ 687a.6(c) with § 687a.12: five wilds > royal flush > five of a kind > straight flush."""
    ranks = [evaluate(h).score for h in ("2c 2d 2h 2s Jk", "Ah Kh Qh Jh Th", "9c 9d 9h 2s Jk", "9h 8h 7h 6h 5h")]
    assert ranks == sorted(ranks, reverse=True) and len(set(ranks)) == 4


# ---------------------------------------------------------------- reading 687a-1: natural for Trips


@pytest.mark.parametrize(
    "hand,key",
    [
        ("2c 5c 8c Jc Kc", "natural-flush"),  # the deuce plays as the 2 of clubs
        ("2h 3c 4d 5s 6c", "natural-straight"),  # a natural 6-high straight (wild 7-high is the same category)
        ("2c 3c 4c 5c 6c", "natural-straight-flush"),
        ("Ah Ac Ad 5c 9d", "natural-three-of-a-kind"),
        ("Ah Ac 2d 5c 9d", "wild-three-of-a-kind"),
        ("Kh Kd Kc 2s 7d", "wild-four-of-a-kind"),
        ("Jk Ac Kc Qc Jc", "wild-royal-flush"),
        ("As Ks Qs Js Ts", "natural-royal-flush"),
        ("2c 2d 2h 2s Jk", "wild-five-wilds"),
        ("7c 7d 7h 2s Jk", "wild-five-of-a-kind"),
        ("2c 2d 5h 5s 9c", "wild-four-of-a-kind"),  # two pair naturally, quads with the deuces wild
        ("Jk 3h 4h 5h 6h", "wild-straight-flush"),  # the joker is never natural
    ],
)
def test_687a_12_d_natural_column_reading(hand, key):
    """§ 687a.12(d) "Natural" vs "With Wild" (reading 687a-1): natural when the category stands with the
    deuces as deuces."""
    assert trips_key(hand) == key


def _natural_by_definition(hand) -> bool:
    """Reading 687a-1 spelled out: no joker, and the same category with the deuces at face value."""
    if JOKER in hand:
        return False
    return poker.eval_five(hand, rules="natural").category is evaluate(hand).category


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 52), min_size=5, max_size=5, unique=True))
def test_687a_natural_flag_matches_reading(hand):
    """HandRank.natural (used by djwild.is_natural) equals reading 687a-1 on random hands."""
    assert is_natural(hand) == _natural_by_definition(tuple(hand))


# ---------------------------------------------------------------- § 687a.11(b),(e), § 687a.12(a),(b)

DEALER_PAIR = "Kh Kd 8c 4d 3s"  # pair of kings


def _round(*seats, dealer=DEALER_PAIR, replacement=None, **cfg):
    return settle_round(DJRound(tuple(seats), dealer, replacement, DJWildConfig(**cfg)))


def test_687a_11_b_fold_forfeits_ante_and_blind():
    res = by_wager(_round(DJSeat(1, 500, "Ah 9c 7d 5s 3h", raised=False)))
    assert {w: (r.outcome, r.net) for w, r in res.items()} == {"ante": ("lose", -500), "blind": ("lose", -500)}


def test_687a_11_e_1_win_with_straight_blind_pays_1_to_1():
    """§ 687a.11(e)(1), § 687a.12(a),(b): Ante 1 to 1, Raise (2x Ante) 1 to 1, Blind per paytable (straight 1 to 1)."""
    res = by_wager(_round(DJSeat(1, 500, "9h 8s 7d 6s 5h", raised=True)))
    assert [(w, r.outcome, r.amount, r.net) for w, r in res.items()] == [
        ("ante", "win", 500, 500),
        ("blind", "win", 500, 500),
        ("raise", "win", 1000, 1000),
    ]


def test_687a_12_b_blind_pushes_on_three_of_a_kind_or_less():
    res = by_wager(_round(DJSeat(1, 500, "Ah Ac Ad 6s 5h", raised=True)))
    assert (res["ante"].net, res["blind"].outcome, res["blind"].net, res["raise"].net) == (500, "push", 0, 1000)


@pytest.mark.parametrize(
    "hand,odds",
    [
        ("2c 2d 2h 2s Jk", 1000),
        ("As Ks Qs Js Ts", 50),
        ("9c 9d 9h 2s Jk", 10),
        ("9h 8h 7h 6h 5h", 9),
        ("Qh Qc Qd Qs 5h", 4),
        ("Qh Qc Qd 5s 5h", 3),
        ("Ah Th 8h 6h 4h", 2),
    ],
)
def test_687a_12_b_blind_paytable(hand, odds):
    res = by_wager(_round(DJSeat(1, 100, hand, raised=True)))
    assert (res["blind"].outcome, res["blind"].net) == ("win", 100 * odds)


def test_687a_11_e_2_tie_pushes_everything():
    """§ 687a.11(e)(2): equal hands push Ante, Blind and Raise."""
    res = by_wager(_round(DJSeat(1, 500, "Ks Kc 8h 4c 3h", raised=True)))
    assert all(r.outcome == "push" and r.net == 0 for r in res.values()) and res["raise"].amount == 1000


def test_687a_11_e_3_lose_everything_no_dealer_qualification():
    """§ 687a.11(e)(3): a lower hand loses all three; the dealer needs no qualifying hand (none in § 687a.11)."""
    res = by_wager(_round(DJSeat(1, 500, "Qs 9c 7d 5s 3h", raised=True), dealer="Kh 9d 6c 4h 3c"))
    assert [(r.outcome, r.net) for r in res.values()] == [("lose", -500), ("lose", -500), ("lose", -1000)]
    res = by_wager(_round(DJSeat(1, 500, "Qh 9c 7d 5s 3h", raised=True), dealer="Ah 9d 6c 4h 3c"))
    assert res["ante"].outcome == "lose"  # dealer's ace-high beats the player's queen-high


# ---------------------------------------------------------------- Trips § 687a.11(f)(2), § 687a.12(d)


def test_687a_11_b_1_trips_settled_after_fold():
    res = by_wager(_round(DJSeat(1, 500, "Ah Ac Ad 6s 5h", raised=False, trips=100)))
    assert (res["trips"].outcome, res["trips"].net, res["trips"].hand) == ("win", 600, "natural-three-of-a-kind")


@pytest.mark.parametrize(
    "table,hand,odds",
    [
        ("DJWT-04", "Jk Ac Kc Qc Jc", 90),
        ("DJWT-05", "Jk Ac Kc Qc Jc", 70),
        ("DJWT-07", "Jk Ac Kc Qc Jc", 60),
        ("DJWT-06", "2c 2d 2h 2s Jk", 500),
        ("DJWT-05", "2c 5c 9c Jc Kc", 25),
        ("DJWT-05", "Ah Ac 2d 5c 9d", 1),
    ],
)
def test_687a_12_d_trips_paytables(table, hand, odds):
    res = by_wager(_round(DJSeat(1, 500, hand, raised=True, trips=200), trips_paytable=table))
    assert (res["trips"].outcome, res["trips"].net, res["trips"].paytable) == ("win", 200 * odds, table)


def test_687a_6_e_trips_loses_below_three_of_a_kind():
    res = by_wager(_round(DJSeat(1, 500, "Ah Ac Qd Qs 5h", raised=True, trips=200)))
    assert (res["trips"].outcome, res["trips"].net) == ("lose", -200)


# ---------------------------------------------------------------- Two-Way Bad Beat § 687a.11(f)(3), reading 687a-4


def test_687a_11_f_3_player_trips_loses_to_dealer_pays():
    res = by_wager(_round(DJSeat(1, 500, "Ah Ac Ad 6s 5h", raised=True, bad_beat=100), dealer="Kc Kd Kh Ks 3c"))
    assert (res["bad-beat"].outcome, res["bad-beat"].net, res["bad-beat"].hand) == ("win", 900, "three-of-a-kind")


def test_687a_reading_4_dealer_trips_loses_pays_two_way():
    """Reading 687a-4: the dealer's losing straight pays the player 100 to 1 (DJWBB-01); literal one-way does not."""
    seat = DJSeat(1, 500, "Qh Qc Qd Qs 5h", raised=True, bad_beat=100)
    res = by_wager(_round(seat, dealer="9c 8d 7h 6s 5c"))
    assert (res["bad-beat"].outcome, res["bad-beat"].net, res["bad-beat"].pays) == ("win", 10000, "100 to 1")
    res = by_wager(_round(seat, dealer="9c 8d 7h 6s 5c", bad_beat_two_way=False))
    assert (res["bad-beat"].outcome, res["bad-beat"].net) == ("lose", -100)


def test_687a_11_b_2_bad_beat_forfeited_on_fold():
    res = by_wager(_round(DJSeat(1, 500, "Ah Ac Ad 6s 5h", raised=False, bad_beat=100), dealer="Kc Kd Kh Ks 3c"))
    assert (res["bad-beat"].outcome, res["bad-beat"].net) == ("lose", -100)


def test_687a_11_f_3_i_no_bad_beat_on_tie_or_small_hands():
    res = by_wager(_round(DJSeat(1, 500, "Ks Kc 8h 4c 3h", raised=True, bad_beat=100)))  # tie, pairs
    assert res["bad-beat"].outcome == "lose"
    res = by_wager(_round(DJSeat(1, 500, "Ah Ac Jd Js 5h", raised=True, bad_beat=100), dealer="Qc Qd Qh 8s 3c"))
    assert res["bad-beat"].outcome == "lose"  # player's two pair loses: below three-of-a-kind


# ---------------------------------------------------------------- Progressive § 687a.11(f)(1), reading 687a-3


def test_687a_11_f_1_joker_replaced_by_set_aside_card():
    """§ 687a.8(f), § 687a.9(e): the card placed in the layout's area replaces the joker for the
    Progressive; none placed, or one already in the hand, is refused."""
    hand = parse_cards("Jk Ah Ad Ac Ks")
    assert progressive_cards(hand, c("As")) == (c("As"), c("Ah"), c("Ad"), c("Ac"), c("Ks"))
    assert progressive_rank(hand, c("As")).category is poker.Category.FOUR_OF_A_KIND
    assert progressive_cards("Ah Ad Ac Ks 9s", None) == parse_cards("Ah Ad Ac Ks 9s")
    with pytest.raises(DJWildError, match="687a.11"):
        progressive_cards(hand, None)
    with pytest.raises(CardError):
        progressive_cards(hand, c("Ah"))
    with pytest.raises(CardError):
        progressive_cards(hand, JOKER)


def test_687a_reading_3_progressive_ranked_without_wild_cards():
    """Reading 687a-3: deuces are not wild for the Progressive (2-2-2-K-K is a full house, not five kings)."""
    assert progressive_rank("2c 2d 2h Kc Ks", None).category is poker.Category.FULL_HOUSE
    assert progressive_rank("2c 7d 9h Kc Ks", None).category is poker.Category.PAIR


def test_687a_12_c_progressive_pays_and_meter():
    res = by_wager(_round(DJSeat(1, 500, "Ah Ac Ad 6s 5h", raised=True, progressive=100)))
    assert (res["progressive"].outcome, res["progressive"].net) == ("win", 900)
    res = by_wager(_round(DJSeat(1, 500, "As Ks Qs Js Ts", raised=True, progressive=100)))
    assert (res["progressive"].net, res["progressive"].meter_fraction) == (0, Fraction(1))
    res = by_wager(
        _round(
            DJSeat(1, 500, "9s 8s 7s 6s 5s", raised=True, progressive=500),
            progressive_paytable="DJ Wild Progressive 2",
            progressive_envy_paytable="DJ Wild Progressive 2 Envy",
        )
    )
    assert res["progressive"].meter_fraction == Fraction(1, 10)


def test_687a_12_c_progressive_wager_amount_fixed():
    with pytest.raises(DJWildError, match="100-cent"):
        _round(DJSeat(1, 500, "Ah Ac Ad 6s 5h", raised=True, progressive=500))


def test_687a_11_b_3_folded_progressive_per_option():
    seat = DJSeat(1, 500, "Ah Ac Ad 6s 5h", raised=False, progressive=100)
    assert by_wager(_round(seat))["progressive"].outcome == "lose"
    assert by_wager(_round(seat, progressive_on_fold=True))["progressive"].net == 900


def test_687a_12_c_envy_paid_to_other_progressive_seats_only():
    """Envy column (reading 687a-5): $1,000 to every *other* seat with a Progressive wager for a royal flush."""
    res = _round(
        DJSeat(1, 500, "As Ks Qs Js Ts", raised=True, progressive=100),
        DJSeat(2, 500, "Ah 9c 7d 5h 3h", raised=False, progressive=100),
        DJSeat(3, 500, "Qh 9d 7c 5d 3c", raised=False),
    )
    envy = [r for r in res if r.wager == "progressive-envy"]
    assert [(r.seat, r.net, r.amount) for r in envy] == [(2, 100000, 0)]


# ---------------------------------------------------------------- round structure and validation


def test_687a_11_settlement_order():
    """§ 687a.11(e),(f): per seat Ante, Blind, Raise, then Progressive, Trips, Two-Way Bad Beat; seats in the
    order given."""
    res = _round(
        DJSeat(3, 500, "Ah Ac Ad 6s 5h", raised=True, trips=100, bad_beat=100, progressive=100),
        DJSeat(1, 500, "Qh 9d 7c 5d 3c", raised=False, trips=100),
    )
    assert [(r.seat, r.wager) for r in res] == [
        (3, "ante"),
        (3, "blind"),
        (3, "raise"),
        (3, "progressive"),
        (3, "trips"),
        (3, "bad-beat"),
        (1, "ante"),
        (1, "blind"),
        (1, "trips"),
    ]


@pytest.mark.parametrize(
    "seats,dealer,repl,err",
    [
        (
            (DJSeat(1, 500, "Ah Ac Ad 6s 5h", True), DJSeat(2, 500, "Ah 9c 7d 5s 3h", True)),
            DEALER_PAIR,
            None,
            CardError,
        ),
        ((DJSeat(1, 500, "Ah Ac Ad 6s 5h", True),), "Ah 9c 7d 5s 3h", None, CardError),
        ((DJSeat(1, 500, "Ah Ac Ad 6s", True),), DEALER_PAIR, None, CardError),
        ((DJSeat(1, 500, "Ah Ac Ad 6s Xx", True),), DEALER_PAIR, None, CardError),
        ((DJSeat(1, 0, "Ah Ac Ad 6s 5h", True),), DEALER_PAIR, None, DJWildError),
        ((DJSeat(1, 500, "Ah Ac Ad 6s 5h", 1),), DEALER_PAIR, None, DJWildError),  # type: ignore[arg-type]  # not a bool
        ((DJSeat(1, 500, "Ah Ac Ad 6s 5h", True, trips=-1),), DEALER_PAIR, None, DJWildError),
        (
            (DJSeat(1, 500, "Ah Ac Ad 6s 5h", True), DJSeat(1, 500, "Qh 9d 7c 5d 3c", True)),
            DEALER_PAIR,
            None,
            DJWildError,
        ),
        ((DJSeat(1, 500, "Ah Ac Ad 6s 5h", True),), DEALER_PAIR, "Kh", CardError),
        ((DJSeat(1, 500, "Jk Ac Ad 6s 5h", True, progressive=100),), DEALER_PAIR, None, DJWildError),
    ],
)
def test_687a_bad_input_rejected(seats, dealer, repl, err):
    """§ 687a.3(a): one 53-card deck — no card twice; five cards each; whole-cent wagers; a decision per seat."""
    with pytest.raises(err):
        settle_round(DJRound(seats, dealer, c(repl) if isinstance(repl, str) else repl))


def test_687a_13_void_returns_every_wager():
    """§ 687a.8(i): a stub count that shows a wrong deck voids the round, every wager returned."""
    seats = [DJSeat(1, 500, "Ah Ac Ad 6s 5h", True, trips=100, bad_beat=100, progressive=100)]
    res = void_round(seats)
    assert {r.wager for r in res} == {"ante", "blind", "raise", "progressive", "trips", "bad-beat"}
    assert all(r.outcome == "returned" and r.net == 0 for r in res)


def test_687a_13_d_exposed_card_settles_trips_and_progressive_only():
    rnd = DJRound((DJSeat(1, 500, "Ah Ac Ad 6s 5h", False, trips=100, bad_beat=100, progressive=100),), DEALER_PAIR)
    res = by_wager(void_exposed(rnd))
    assert {w: r.outcome for w, r in res.items()} == {
        "ante": "returned",
        "blind": "returned",
        "bad-beat": "returned",
        "progressive": "win",
        "trips": "win",
    }


# ---------------------------------------------------------------- hypothesis: money


@settings(max_examples=150, deadline=None)
@given(
    st.permutations(range(53)),
    st.lists(
        st.tuples(st.booleans(), st.integers(1, 50000), st.integers(0, 3000), st.integers(0, 3000), st.booleans()),
        min_size=1,
        max_size=6,
    ),
)
def test_687a_settlement_money_properties(deck, seats):
    """Whole-cent nets; the table's net is minus the players'; each wager nets -amount, 0 or a whole multiple;
    the Ante/Blind/Raise closed form of § 687a.11(e) holds against the dealer comparison."""
    plays = []
    for i, (raised, ante, trips, bb, prog) in enumerate(seats):
        plays.append(DJSeat(i + 1, ante, tuple(deck[5 * i : 5 * i + 5]), raised, trips, bb, 100 if prog else 0))
    k = 5 * len(plays)
    dealer = tuple(deck[k : k + 5])
    res = settle_round(DJRound(tuple(plays), dealer, deck[k + 5] if deck[k + 5] != JOKER else deck[k + 6]))
    assert all(isinstance(r.net, int) for r in res)
    assert table_net(res) == -sum(r.net for r in res)
    d = evaluate(dealer)
    for p in plays:
        mine = by_wager(res, p.seat)
        for r in mine.values():
            assert r.net == -r.amount or r.net == 0 or (r.amount and r.net % r.amount == 0) or r.amount == 0
        cmp = poker.compare(evaluate(p.cards), d)
        main = mine["ante"].net + mine["blind"].net + mine.get("raise", mine["ante"]).net * (1 if p.raised else 0)
        if not p.raised:
            assert main == -2 * p.ante and "raise" not in mine
        elif cmp < 0:
            assert main == -4 * p.ante
        elif cmp == 0:
            assert main == 0
        else:
            assert mine["ante"].net == p.ante and mine["raise"].net == 2 * p.ante and mine["blind"].net >= 0
