"""Face Up Pai Gow Poker settlement of a round (§ 688a.11(d)-(h), § 688a.12)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.cards import parse_cards
from controller.rules.faceup import FaceUpError, SettingError
from controller.rules.faceup_houseway import house_way
from controller.rules.faceup_settle import FaceUpOptions, SeatWagers, settle_round
from controller.rules.settlement import table_net


def P(text: str) -> tuple[int, ...]:
    return parse_cards(text)


DEALER_KING_HIGH = P("Kd 9d 7c 5s 3c 2h Jd")  # king high: no Ace High Pai Gow
DEALER_ACE_HIGH = P("Ad 9d 7c 5s 3c 2h Jd")  # § 688a.1 Ace High Pai Gow, natural
DEALER_ACE_HIGH_JK = P("Jk 9d 7c 5s 3c 2h Jd")  # ... with the joker
FIVE_ACES = P("As Ah Ac Ad Jk 8c 4c")
QUADS = P("Ts Th Td Tc 8s 6c 4s")
NOTHING = P("Qs Js 8d 6s 4h 3d 2d")


def _by(results, seat, wager):
    return [r for r in results if r.seat == seat and r.wager == wager]


def _hw(seats):
    return {s: house_way(w.cards) for s, w in seats.items() if not w.surrender}


def test_688a_11_f_base_wager_win_and_12_a_even_money():
    seats = {1: SeatWagers(P("As Ad Ah Kc 9h 4h 3d"), 2500)}
    r = settle_round(DEALER_KING_HIGH, seats, {1: (P("As Ad Ah 4h 3d"), P("Kc 9h"))})
    assert [(x.wager, x.outcome, x.net) for x in r] == [("base", "win", 2500)]
    assert r[0].pays == "1 to 1" and r[0].commission == 0  # § 688a.12(a): no commission


def test_688a_11_f_1_iii_foul_loses():
    seats = {1: SeatWagers(P("As Ad Ah Kc 9h 4h 3d"), 2500)}
    r = settle_round(DEALER_KING_HIGH, seats, {1: (P("Ah Kc 9h 4h 3d"), P("As Ad"))})
    assert (r[0].outcome, r[0].net) == ("lose", -2500)
    assert "§ 688a.11(f)(1)(iii)" in r[0].detail


def test_688a_11_f_2_iii_dealer_ace_high_pushes_without_settings():
    seats = {1: SeatWagers(QUADS, 1000), 2: SeatWagers(NOTHING, 500)}
    r = settle_round(DEALER_ACE_HIGH, seats, {})
    # § 688a.11(e): from the player farthest to the dealer's right (the higher seat) first
    assert [(x.seat, x.outcome, x.net) for x in r] == [(2, "push", 0), (1, "push", 0)]
    with pytest.raises(SettingError):
        settle_round(DEALER_KING_HIGH, seats, {})


@pytest.mark.parametrize(
    "dealer,player,key,net",
    [
        (DEALER_KING_HIGH, NOTHING, "dealer-not-ace-high", -500),
        (DEALER_ACE_HIGH, NOTHING, "dealer-ace-high-natural", 500 * 8),  # Paytable 1: 8 to 1
        (DEALER_ACE_HIGH_JK, NOTHING, "dealer-ace-high-joker", 500 * 10),  # 10 to 1
        (DEALER_ACE_HIGH, P("As Ks 8c 6h 4c 3s 2s"), "both-ace-high", 500 * 20),  # 20 to 1
    ],
)
def test_688a_11_h_1_ace_high_bonus(dealer, player, key, net):
    seats = {1: SeatWagers(player, 1000, ace_high=500)}
    r = _by(settle_round(dealer, seats, _hw(seats)), 1, "ace-high")
    assert len(r) == 1 and r[0].hand == key and r[0].net == net


def test_688a_11_h_2_fortune_and_envy_stack_never_own_hand():
    """Seat 1 five aces and seat 2 four tens; $5 Fortune wagers qualify for envy (§ 688a.1);
    each gets the other's envy, never its own; seat 3 ($1 fortune) gets none."""
    seats = {
        1: SeatWagers(FIVE_ACES, 1000, fortune=500),
        2: SeatWagers(QUADS, 1000, fortune=1000),
        3: SeatWagers(NOTHING, 1000, fortune=100),
    }
    r = settle_round(DEALER_KING_HIGH, seats, _hw(seats))
    f = {x.seat: x for x in r if x.wager == "fortune"}
    assert (f[1].hand, f[1].net) == ("five-aces", 500 * 250)
    assert (f[2].hand, f[2].net) == ("four-of-a-kind", 1000 * 20)
    assert (f[3].outcome, f[3].net) == ("lose", -100)
    envy = sorted((x.seat, x.hand, x.net) for x in r if x.wager == "fortune-envy")
    assert envy == [(1, "four-of-a-kind", 500), (2, "five-aces", 5000)]
    # all Fortune wagers settle before any envy (§ 688a.11(h)(2)(ii))
    kinds = [x.wager for x in r if x.wager.startswith("fortune")]
    assert kinds == ["fortune"] * 3 + ["fortune-envy"] * 2


def test_688a_11_h_2_i_c_envy_for_a_hand_without_fortune_wager():
    """§ 688a.11(h)(2)(i)(C): a qualifying hand pays envy even when its holder placed no
    Fortune Bonus Wager — and a surrendered seat's cards still count (§ 688a.11(d))."""
    seats = {1: SeatWagers(QUADS, 1000, surrender=True), 2: SeatWagers(NOTHING, 1000, fortune=500)}
    r = settle_round(DEALER_KING_HIGH, seats, _hw(seats))
    assert [(x.seat, x.wager, x.outcome, x.net) for x in r if x.seat == 1] == [(1, "base", "surrender", -1000)]
    envy = [x for x in r if x.wager == "fortune-envy"]
    assert [(x.seat, x.net) for x in envy] == [(2, 500)]


def test_688a_11_h_2_ii_envy_to_every_envy_lammer():
    """§ 688a.8(b)(1): an Envy lammer beside any Qualifying Wager (§ 688a.1: a Progressive
    or Fortune wager of at least $5); § 688a.11(h)(2)(ii): the § 688a.12(c) envy to each
    player with a lammer.  So a seat holding only a $5 Progressive is paid the Fortune envy
    (the old default 'same-wager' paid it nothing); 'same-wager' remains the alternative."""
    seats = {1: SeatWagers(QUADS, 1000, fortune=100), 2: SeatWagers(NOTHING, 1000, progressive=500)}
    opt = FaceUpOptions(progressive_paytable="Face Up Progressive 4")
    r = settle_round(DEALER_KING_HIGH, seats, _hw(seats), opt)
    assert [(x.seat, x.net) for x in r if x.wager == "fortune-envy"] == [(2, 500)]
    assert [(x.seat, x.net) for x in r if x.wager == "progressive-envy"] == [(2, 2500)]  # $25 for 4 of a kind
    r2 = settle_round(
        DEALER_KING_HIGH,
        seats,
        _hw(seats),
        FaceUpOptions(progressive_paytable="Face Up Progressive 4", envy_receivers="same-wager"),
    )
    assert [(x.seat, x.net) for x in r2 if x.wager == "fortune-envy"] == []
    with pytest.raises(FaceUpError):
        settle_round(DEALER_KING_HIGH, seats, _hw(seats), FaceUpOptions(envy_receivers="maybe"))


def test_688a_11_h_2_ii_fortune_envy_without_any_fortune_wager():
    """A round where nobody bet the Fortune: a $5 Progressive (Paytable 4) still holds a
    lammer and is paid the Fortune envy (§ 688a.11(h)(2)(ii)) when the table offers the
    Fortune Bonus; not when it does not."""
    seats = {1: SeatWagers(QUADS, 1000), 2: SeatWagers(NOTHING, 1000, progressive=500)}
    opt = FaceUpOptions(progressive_paytable="Face Up Progressive 4")
    r = settle_round(DEALER_KING_HIGH, seats, _hw(seats), opt)
    assert [(x.seat, x.wager, x.net) for x in r if x.wager.endswith("envy")] == [
        (2, "fortune-envy", 500),
        (2, "progressive-envy", 2500),
    ]
    off = FaceUpOptions(progressive_paytable="Face Up Progressive 4", fortune_offered=False)
    r = settle_round(DEALER_KING_HIGH, seats, _hw(seats), off)
    assert [x.wager for x in r if x.wager.endswith("envy")] == ["progressive-envy"]


def test_688a_12_d_no_progressive_envy_without_a_progressive_wager():
    """No text pays the Progressive envy (§ 688a.12(d) Paytable 4) to a seat that did not
    make a Progressive Payout Wager: the old 'any-qualifying' reading did, and is gone."""
    seats = {
        1: SeatWagers(QUADS, 1000, progressive=500),
        2: SeatWagers(NOTHING, 1000, fortune=500),
        3: SeatWagers(P("Ah Jh 8h 6h 4c 3s 2c"), 1000, progressive=500),
    }
    opt = FaceUpOptions(progressive_paytable="Face Up Progressive 4")
    r = settle_round(DEALER_KING_HIGH, seats, _hw(seats), opt)
    assert [(x.seat, x.net) for x in r if x.wager == "progressive-envy"] == [(3, 2500)]
    with pytest.raises(FaceUpError, match="envy_receivers"):
        settle_round(
            DEALER_KING_HIGH,
            seats,
            _hw(seats),
            FaceUpOptions(progressive_paytable="Face Up Progressive 4", envy_receivers="any-qualifying"),
        )


def test_688a_12_d_progressive_wager_not_returned_and_meter_pays():
    """Paytable 1 ($1): four of a kind "$75", original wager not returned -> net $74;
    five aces 10% of the meter: the wager is collected, the meter pays 1/10."""
    seats = {
        1: SeatWagers(QUADS, 1000, progressive=100),
        2: SeatWagers(FIVE_ACES, 1000, progressive=100),
        3: SeatWagers(NOTHING, 1000, progressive=100),
    }
    r = {x.seat: x for x in settle_round(DEALER_KING_HIGH, seats, _hw(seats)) if x.wager == "progressive"}
    assert (r[1].outcome, r[1].net, r[1].meter_fraction) == ("win", 7400, None)
    assert (r[2].net, r[2].meter_fraction) == (-100, Fraction(1, 10))
    assert (r[3].outcome, r[3].net) == ("lose", -100)


def test_688a_12_d_paytable_4_fixed_plus_meter_wager_returned():
    """Paytable 4 ($5): seven-card straight flush pays $5,000 and 100% of the meter; the
    original wager is returned."""
    sf7 = P("8c 9c Tc Jc Qc Kc Ac")
    seats = {1: SeatWagers(sf7, 1000, progressive=500), 2: SeatWagers(P("6s 6h 6d 6c 8s 4h 4s"), 1000, progressive=500)}
    dealer = P("Kd 9d 7c 5s 3c 2s Jd")
    r = {
        x.seat: x
        for x in settle_round(dealer, seats, _hw(seats), FaceUpOptions(progressive_paytable="Face Up Progressive 4"))
        if x.wager == "progressive"
    }
    assert (r[1].net, r[1].meter_fraction) == (500_000, Fraction(1))
    assert (r[2].net, r[2].meter_fraction) == (10_000, None)


def test_688a_12_d_fully_wild_progressive():
    seats = {1: SeatWagers(P("Ks Kh Kc Jk 9h 2c 3d"), 1000, progressive=100)}
    r = _by(
        settle_round(
            P("Qd 9d 7c 5s 3c 2h Jd"), seats, _hw(seats), FaceUpOptions(progressive_paytable="Face Up Progressive 2")
        ),
        1,
        "progressive",
    )
    assert r[0].hand == "four-of-a-kind" and r[0].net == 3000 - 100  # $30, wager not returned


@pytest.mark.parametrize(
    "seats,err",
    [
        ({1: SeatWagers(NOTHING, 0)}, "no Face Up Pai Gow Poker Wager"),
        ({7: SeatWagers(NOTHING, 100)}, "betting position"),
        ({1: SeatWagers(NOTHING, 100, fortune=-5)}, "non-negative"),
        ({1: SeatWagers(NOTHING, 100, fortune=100, surrender=True)}, "may not surrender"),
        ({1: SeatWagers(NOTHING, 100, progressive=200)}, "Progressive Payout Wager 200"),
        ({1: SeatWagers(NOTHING, 100), 2: SeatWagers(NOTHING, 100)}, "dealt to both"),
        ({1: SeatWagers(NOTHING[:6], 100)}, "wrong number of cards"),
        ({1: SeatWagers(P("Kd 2c 3c 4c 5c 6c 7c"), 100)}, "dealt to both"),
    ],
)
def test_688a_settle_rejects_bad_input(seats, err):
    """§ 688a.2(a): a seat past the six betting positions; § 688a.7(d): no Face Up Pai Gow Poker
    Wager; § 688a.8(d): a hand not of seven cards, or a card dealt twice (one deck,
    § 688a.3(a)): each refused."""
    with pytest.raises(FaceUpError) as e:
        settle_round(DEALER_KING_HIGH, seats, {})
    assert err in str(e.value)


# ---------------------------------------------------------------- money properties
@settings(max_examples=60, deadline=None)
@given(
    st.randoms(use_true_random=False),
    st.integers(1, 6),
    st.sampled_from(["Ace High 2", "Ace High 5"]),
    st.sampled_from(["Face Up Fortune 1", "Face Up Fortune 5"]),
    st.sampled_from(["Face Up Progressive 1", "Face Up Progressive 2", "Face Up Progressive 4"]),
)
def test_688a_settlement_conserves_money(rnd: random.Random, n, ah, fo, pr):
    """Every wager is settled exactly once; a lost wager loses exactly its amount and a
    win never less than nothing; envies come with no wager; the house's net is minus the
    players' (meter pays apart)."""
    deck = list(range(53))
    rnd.shuffle(deck)
    dealer = deck[:7]
    opt = FaceUpOptions(ace_high_paytable=ah, fortune_paytable=fo, progressive_paytable=pr)
    pw = 500 if pr.endswith("4") else 100
    seats = {}
    for i, s in enumerate(rnd.sample(range(1, 7), n)):
        cards = tuple(deck[7 * (i + 1) : 7 * (i + 2)])
        opt_wagers = rnd.random() < 0.7
        seats[s] = SeatWagers(
            cards,
            rnd.choice([500, 1000, 2500]),
            ace_high=rnd.choice([0, 500]) if opt_wagers else 0,
            fortune=rnd.choice([0, 100, 500]) if opt_wagers else 0,
            progressive=rnd.choice([0, pw]) if opt_wagers else 0,
            surrender=not opt_wagers and rnd.random() < 0.3,
        )
    settings_ = {s: house_way(w.cards) for s, w in seats.items() if not w.surrender}
    res = settle_round(dealer, seats, settings_, opt)
    for s, w in seats.items():
        for wager, amount in (
            ("base", w.base),
            ("ace-high", w.ace_high),
            ("fortune", w.fortune),
            ("progressive", w.progressive),
        ):
            got = _by(res, s, wager)
            assert len(got) == (1 if amount else 0)
            for r in got:
                assert r.amount == amount and r.net >= -amount
                if r.outcome == "lose" or r.outcome == "surrender":
                    assert r.net == -amount
                if r.outcome == "push":
                    assert r.net == 0
                assert isinstance(r.net, int)
    for r in res:
        if r.wager.endswith("envy"):
            assert r.amount == 0 and r.net > 0 and seats[r.seat]
    assert table_net(res) == -sum(r.net for r in res)
    lost = sum(-r.net for r in res if r.net < 0)
    won = sum(r.net for r in res if r.net > 0)
    assert table_net(res) == lost - won
