"""Fortune Asia Poker at the table (58 Pa. Code 659a): 200 simulated rounds
balanced to the cent, one scripted round checked against a hand computation from
the regulation, the keypad entries (bad ones refused, changing nothing) and the
table profile's validation."""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest

from controller.games import procedure_for
from controller.games.base import EntryError
from controller.games.fortune_asia import FortuneAsia
from controller.rules.cards import parse_cards
from controller.settings.config import ConfigError, parse_profile
from tests.integration.games.rounds import HandRound
from tests.integration.harness import Harness, records

ROOT = Path(__file__).resolve().parents[3]


def fa_doc(**options) -> dict[str, Any]:
    opts = {
        "fortune_paytable": "Fortune Asia Fortune A",
        "insurance_paytable": "Fortune Asia Insurance A",
        "adjacent_areas": True,
    }
    opts.update(options)
    return {
        "game": {"id": "fortune-asia", "seats": 6, "positions": 7, "options": opts},
        "progressive": {
            "paytable": "Fortune Asia Progressive",
            "wager": "$1",
            "seed": "$2,000",
            "increment_rate": "20%",
            "reserve_rate": "0%",
        },
    }


def proc_for(doc: dict[str, Any]):
    return procedure_for("fortune-asia", parse_profile(doc, "<test>"))


# --------------------------------------------------------------------------- 200 rounds


@pytest.mark.slow
@pytest.mark.soak
def test_200_simulated_rounds_balance_to_the_cent(tmp_path):
    """Every wager of 200 rounds (§ 659a.7) is won, lost, surrendered
    (§ 659a.11(d)) or returned, every payout recorded, the meter reconciled (§ 659a.12(d))."""
    from hil.simrun import SimSettings, run_sim

    buf = io.StringIO()
    assert run_sim(SimSettings(game="fortune-asia", rounds=200, seed=7, speed=200, state_dir=tmp_path), out=buf) == 0, (
        buf.getvalue()[-2000:]
    )
    out = buf.getvalue()
    lines = out.splitlines()
    assert lines[-1].startswith("balance: OK (200 rounds")
    assert sum(1 for ln in lines if ln.startswith("round ")) == 200
    # the rarer paths were taken: surrender, the insurance, the Fortune Bonus and its envy, a
    # progressive pay, hands set by the players; a losing progressive reads "prog lose -$1.00"
    assert "None" not in out
    for what in (
        "prog lose -$1.00",
        "base surrender",
        "ins win",
        "fortune win",
        "envy(",
        "prog full-house",
        "base lose",
        "base win",
        "set by players",
    ):
        assert what in out, what


def test_659a_11_h_3_ii_b_the_hit_lights_its_paytable_row():
    """The sign's hand lights follow the § 659a.12(d)(1) paytable, 1 = the top award."""
    proc = proc_for(fa_doc())
    assert [
        proc.hand_light(h) for h in ("seven-card-straight-flush", "five-aces", "royal-flush", "full-house", "flush")
    ] == [1, 2, 3, 6, 0]


# --------------------------------------------------------------------------- one scripted round

DEALER = "Kc Kd 9h 7s 5c 4d 2h"
HANDS = {
    1: "8c 8d 8h 8s Ac Qd 3c",
    2: "Ah Kh Qh Jh 2c 2d 6s",
    3: "Jc Td 7c 6c 4s 3h 2s",
    4: "Tc 7d 7h 4c 4h Qs 3s",
    5: "5h 5s 5d 9c 9s Jd 6d",
}


def _stacks() -> list[list[int]]:
    """Dice 1+1+1 = 3: counting from the dealer as one counterclockwise, position 3 is
    seat 5 (§ 659a.5(g)(1)(iii)); stacks go clockwise from there (§ 659a.10(b)): seat 5,
    seat 6, the dealer, seat 1, seat 2, seat 3, seat 4."""
    hands = {s: list(parse_cards(c)) for s, c in HANDS.items()}
    dealer = list(parse_cards(DEALER))
    used = {c for h in hands.values() for c in h} | set(dealer)
    filler = [c for c in range(53) if c not in used]
    return [hands[5], filler[:7], dealer, hands[1], hands[2], hands[3], hands[4]]


def key(h: Harness, text: str) -> str:
    h.post("keypad", "keypad", msg="ENTRY", text=text)
    return str(h.keypad.calls[-1][1][0])


def test_scripted_round_matches_the_hand_computation(tmp_path):
    """One round computed by hand from §§ 659a.6, 659a.11, 659a.12 and the house way
    (docs/rules-readings/659a.md).

    Dealer Kc Kd 9h 7s 5c 4d 2h, one pair, no four-card straight or flush among the odd
    cards (HW-7): high Kc Kd 4d 2h (pair of kings), medium 9h 7s, low 5c (§ 659a.11(c)).

    Seat 5, $30 base + $1 progressive, 5h 5s 5d 9c 9s Jd 6d, house way HW-3: high 5-5-5-6
    (trips), medium 9-9, low J.  Trips > KK, 99 > 97, J > 5: three higher -> wins 1 to 1,
    +$30 (§ 659a.11(f)(2), § 659a.12(a)).  Seven cards: full house -> Progressive 4 for 1
    on $1: net +$3 (§ 659a.12(d)(1)).
    Seat 4, $15 base only, surrenders once the dealer's hands are set: the wager is
    collected, -$15 (§ 659a.11(d)).
    Seat 3, $20 base + $5 insurance, Jc Td 7c 6c 4s 3h 2s, no pair (HW-8): high J-4-3-2,
    medium T-7, low 6.  J432 < KK, T7 > 97, 6 > 5: two higher -> +$20.  Seven cards hold
    no pair, straight or flush, jack-high -> Insurance Paytable A 10 to 1: +$50
    (§ 659a.7(e)(2), § 659a.11(h)(2)(ii), § 659a.12(c)).  Seat 3 may not surrender: he
    placed an optional wager (§ 659a.11(d)).
    Seat 2, $10 base + $5 Fortune, Ah Kh Qh Jh 2c 2d 6s, keys his own setting: high
    Ah Kh Qh Jh (straight flush, A-K-Q-J the highest, § 659a.6(b)), medium 2c 2d, low 6s.
    All three beat the dealer -> +$10.  Seven cards: a pair, below Paytable A's straight
    qualifier -> Fortune lost, -$5 (§ 659a.11(h)(1)(i)(A)).
    Seat 1, $25 base + $5 Fortune + $1 progressive, 8c 8d 8h 8s Ac Qd 3c, HW-1: high
    8-8-8-8, medium A-Q, low 3.  8888 > KK, AQ > 97, 3 < 5: two higher -> +$25.  Four of a
    kind: Fortune 25 to 1 = +$125 (§ 659a.12(b) Paytable A); Progressive 75 for 1 on $1 =
    net +$74 (§ 659a.12(d)(1)).
    Envy Bonus (§ 659a.11(h)(1)(ii)): seat 1's four of a kind is an Envy Bonus Qualifying
    Hand; seat 2's $5 Fortune Bonus is a Qualifying Wager (§ 659a.1) -> $5 (Envy A); seat 1
    gets none for his own hand.
    Order: from the dealer's right counterclockwise, seat 5 first (§ 659a.11(e)); each
    player's optional wagers after his base wager (§ 659a.11(h),(i)); envy last.
    Meter: $2,000 reset amount + 20% of two $1 wagers = $2,000.40; no meter hit.
    """
    h = Harness(tmp_path / "l.db", fa_doc())
    assert h.table.meters["primary"].cents == 200_000
    h.shuffled()
    for text in (
        "BET 1 base 25",
        "BET 1 fortune 5",
        "BET 2 base 10",
        "BET 2 fortune 5",
        "BET 3 base 20",
        "BET 3 insurance 5",
        "BET 4 base 15",
        "BET 5 base 30",
    ):
        assert key(h, text).startswith("SEAT"), text
    for s in (1, 5):
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    for s in (1, 5):
        h.edge(f"bet.progressive.{s}", False)
    assert key(h, "BET 6 base 10").startswith("ERROR")  # after "no more bets" (§ 659a.7(c))
    h.press("confirm")
    assert h.state == "starting_position"
    h.dice((1, 1, 1))
    for i, cards in enumerate(_stacks(), 1):
        h.post("shoe", "shoe", msg="STACK", stack=i, count=7, remaining=53 - 7 * i, cards=cards)
    h.post("shoe", "shoe", msg="REMAINING", remaining=4, stacks=7)  # § 659a.10(c)
    assert h.state == "setting_hands"
    assert key(h, "SET 2 2c 2d 6s") == "SEAT 2 Ah Kh Qh Jh | 2c 2d | 6s"
    key(h, "DONE")
    assert h.state == "dealer_sets_surrender"
    # the dealer's hands, set by the house way, are shown before anyone surrenders (§ 659a.11(c),(d))
    assert h.keypad.calls[-1][1][0].startswith("DEALER Kd Kc 4d 2h | 9h 7s | 5c - SURRENDER")
    assert "may not surrender" in key(h, "SUR 3")
    assert key(h, "SUR 4") == "SEAT 4 SURRENDERS 15.00"
    key(h, "DONE")
    assert h.state == "open_for_wagers"

    got = [
        (d["seat"], d["wager"], d["cents"], d["outcome"], d["net"], d["hand"])
        for d in (e.data for e in records(h, "wager.result"))
    ]
    assert got == [
        (5, "base", 3000, "win", 3000, None),
        (5, "progressive", 100, "win", 300, "full-house"),
        (4, "base", 1500, "surrender", -1500, None),
        (3, "base", 2000, "win", 2000, None),
        (3, "insurance", 500, "win", 5000, "jack-high"),
        (2, "base", 1000, "win", 1000, None),
        (2, "fortune", 500, "lose", -500, None),
        (1, "base", 2500, "win", 2500, None),
        (1, "fortune", 500, "win", 12500, "four-of-a-kind"),
        (1, "progressive", 100, "win", 7400, "four-of-a-kind"),
        (2, "fortune-envy", 0, "win", 500, "four-of-a-kind"),
    ]
    assert h.table.meters["primary"].cents == 200_040
    rejected = [e.data for e in records(h, "keypad.rejected")]
    assert [r["text"] for r in rejected] == ["BET 6 base 10", "SUR 3"]


# --------------------------------------------------------------------------- keypad entries


def _round(proc, wagers: dict[Any, int], cards: dict[Any, Any] | None = None) -> HandRound:
    hr = HandRound(1, wagers, proc)
    hands = cards or {s: HANDS[s] for s in {s for (s, _w) in wagers}}
    hr.dealt.cards = {f"seat:{s}": tuple(parse_cards(c)) for s, c in hands.items()}
    hr.dealt.cards["dealer"] = tuple(parse_cards(DEALER))
    return hr


def _open(proc, hr, name):
    return hr.open(proc, name)


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "empty"),
        ("SET 2 2c 2d", "enter SET"),  # a wrong count of cards
        ("SET 9 2c 2d 6s", "seat 9 is not playing"),  # no such player
        ("SET 3 2c 2d 6s", "not one of seat 3's cards"),  # another seat's cards (§ 659a.11(b))
        ("SET 2 2c 2c 6s", "named twice"),  # a duplicate
        ("SET 2 2c Xx 6s", "Xx"),  # not a card: names the token
        ("SET x 2c 2d 6s", "not a seat number"),
        ("SUR 4", "after the dealer's hands are set"),  # § 659a.11(d): too early
        ("SAME 1 3", "not adjacent"),  # § 659a.7(f)
        ("HELLO", "enter SET"),
    ],
)
def test_659a_11_b_bad_setting_entries_are_refused_and_change_nothing(text, why):
    proc = proc_for(fa_doc())
    hr = _round(proc, {(1, "base"): 2500, (2, "base"): 1000, (3, "base"): 2000, (4, "base"): 1500})
    _open(proc, hr, "settings")
    before = (copy.deepcopy(proc.play), hr.ds("settings"), dict(hr.round.wagers))
    with pytest.raises(EntryError, match=why):
        hr.apply(proc, "settings", text)
    assert (proc.play, hr.ds("settings"), dict(hr.round.wagers)) == before


def test_659a_11_a_3_hands_once_set_may_not_be_changed():
    proc = proc_for(fa_doc())
    hr = _round(proc, {(2, "base"): 1000})
    _open(proc, hr, "settings")
    hr.apply(proc, "settings", "SET 2 2c 2d 6s")
    with pytest.raises(EntryError, match=r"§ 659a.11\(a\)\(3\)"):
        hr.apply(proc, "settings", "SET 2 Ah Kh 6s")
    assert proc.play.settings[2].medium == tuple(parse_cards("2c 2d"))


def test_659a_11_f_1_a_foul_setting_is_taken_and_loses():
    """The player set a medium hand (A-K) that is not lower than his high hand: taken as
    set, the keypad says FOUL, and the wager loses (§ 659a.11(f)(1)(iii))."""
    proc = proc_for(fa_doc())
    hr = _round(proc, {(2, "base"): 1000})
    _open(proc, hr, "settings")
    # high Qh Jh 2c 2d (a pair) over medium Ah Kh (no pair) over low 6s: legal
    e = hr.apply(proc, "settings", "SET 2 Ah Kh 6s")
    assert "FOUL" not in e.reply and "foul" not in e.record
    hr2 = _round(proc, {(2, "base"): 1000})
    _open(proc, hr2, "settings")
    e = hr2.apply(proc, "settings", "SET 2 2c 2d Ah")  # high Kh Qh Jh 6s (K-high) < medium 2-2
    assert e.reply.endswith("FOUL, LOSES") and "659a.11(f)(1)(iii)" in e.record["foul"]
    base = [r for r in proc.settle(hr2.round) if r.wager == "base"]
    assert [(r.outcome, r.net) for r in base] == [("lose", -1000)]


def test_659a_11_d_surrender_only_without_an_optional_wager():
    proc = proc_for(fa_doc())
    hr = _round(
        proc, {(1, "base"): 2500, (1, "progressive"): 100, (4, "base"): 1500, (3, "base"): 2000, (3, "fortune"): 500}
    )
    rnd = hr.round
    ds = _open(proc, hr, "surrender")
    assert not ds.done and proc.may_surrender(rnd) == [4]
    for text, why in (
        ("SUR 1", "may not surrender"),
        ("SUR 3", "may not surrender"),
        ("SUR 6", "not playing"),
        ("SET 4 Tc 7d 7h", "enter SUR"),
    ):
        with pytest.raises(EntryError, match=why):
            hr.apply(proc, "surrender", text)
    assert proc.play.surrender == []
    hr.apply(proc, "surrender", "SUR 4")
    with pytest.raises(EntryError, match="already surrendered"):
        hr.apply(proc, "surrender", "SUR 4")
    assert proc.play.surrender == [4] and hr.ds("surrender").answers == {4: "surrender"}
    # nobody may surrender: the phase is skipped
    hr2 = _round(proc, {(1, "base"): 2500, (1, "insurance"): 100})
    assert _open(proc, hr2, "surrender").done


def test_659a_7_f_one_player_on_two_adjacent_areas_gets_no_envy_for_his_other_hand():
    """Seats 1 and 2 are one player (§ 659a.7(f)); seat 1 holds four of a kind; seat 2's
    $5 Fortune Bonus is a Qualifying Wager but the hand is his own: no Envy Bonus
    (§ 659a.11(h)(1)(ii)).  Seat 3, another player with a $5 Fortune Bonus, gets $5."""
    proc = proc_for(fa_doc())
    w = {(1, "base"): 1000, (2, "base"): 1000, (2, "fortune"): 500, (3, "base"): 1000, (3, "fortune"): 500}
    hr = _round(proc, w)
    _open(proc, hr, "settings")
    assert hr.apply(proc, "settings", "SAME 2 1").reply == "SEATS 1 AND 2 ONE PLAYER"
    with pytest.raises(EntryError, match="already one player's"):
        hr.apply(proc, "settings", "SAME 2 3")
    envy = [(r.seat, r.net) for r in proc.settle(hr.round) if r.wager == "fortune-envy"]
    assert envy == [(3, 500)]
    no_adj = proc_for(fa_doc(adjacent_areas=False))
    hr = _round(no_adj, w)
    _open(no_adj, hr, "settings")
    with pytest.raises(EntryError, match="does not permit"):
        hr.apply(no_adj, "settings", "SAME 1 2")


def test_659a_7_e_optional_wagers_need_the_base_wager_and_offered_paytables():
    proc = proc_for(fa_doc())
    refused = proc.reject_unsupported(
        {(1, "fortune"): 500, (2, "progressive"): 100, (3, "base"): 500, (3, "insurance"): 100}
    )
    assert set(refused) == {(1, "fortune"), (2, "progressive")}
    assert "§ 659a.7(e)(1)" in refused[(1, "fortune")]
    doc = fa_doc()
    del doc["game"]["options"]["insurance_paytable"]
    p2 = proc_for(doc)
    with pytest.raises(EntryError, match="not a wager of this game"):
        p2.keyed_wager(1, "insurance", 500)
    with pytest.raises(EntryError, match="outside"):
        proc.keyed_wager(1, "base", 100)  # below the table minimum
    with pytest.raises(EntryError, match="sensed"):
        proc.keyed_wager(1, "progressive", 100)


# --------------------------------------------------------------------------- the profile


@pytest.mark.parametrize(
    "change, where, why",
    [
        (lambda d: d["progressive"].update(seed="$1,999.99"), "[progressive] seed", r"below the \$2,000.00 minimum"),
        (
            lambda d: d["game"]["options"].update(jackpot="yes"),
            "[game.options] jackpot",
            "not a Fortune Asia Poker option",
        ),
        (
            lambda d: d["game"]["options"].update(fortune_paytable="Fortune Asia Fortune E"),
            "[game.options] fortune_paytable",
            "not a Fortune Asia Poker fortune paytable",
        ),
        (
            lambda d: d["game"]["options"].update(insurance_paytable="Fortune Asia Fortune A"),
            "[game.options] insurance_paytable",
            "not a Fortune Asia Poker insurance paytable",
        ),
        (lambda d: d["game"]["options"].update(house_way="whatever"), "[game.options] house_way", "no house way"),
        (lambda d: d["game"]["options"].update(adjacent_areas="yes"), "[game.options] adjacent_areas", "true or false"),
        (lambda d: d["game"]["options"].update(base_min_cents=0), "[game.options] base_min_cents", "whole number"),
        (
            lambda d: d["progressive"].update(paytable="Six-Card Fortune Progressive"),
            "[progressive] paytable",
            "not a Fortune Asia Poker progressive",
        ),
        (lambda d: d.pop("progressive"), "[progressive]", "needs a"),
        (lambda d: d["game"].update(positions=8), "[game] positions", "seats \\+ 1"),
    ],
)
def test_profile_errors_name_the_option(change, where, why):
    doc = fa_doc()
    change(doc)
    with pytest.raises(ConfigError, match=why) as e:
        proc_for(doc)
    assert where in str(e.value)


def test_659a_12_d_2_the_shipped_profile_resets_at_two_thousand_dollars():
    from controller.settings.config import load_profile

    prof = load_profile("fortune-asia")
    proc = procedure_for(prof.game, prof)
    assert isinstance(proc, FortuneAsia) and prof.progressive is not None
    assert prof.progressive.seed_cents == proc.rules.progressive_reset == 200_000
    assert set(proc.wagers) == {"base", "fortune", "insurance", "progressive"}
    assert proc.wagers["progressive"].sensed and proc.wagers["progressive"].progressive
    assert proc.stack_size * 7 + 4 == proc.deck == 53  # § 659a.10(c)
    assert (prof.seats, prof.positions) == (6, 7)  # § 659a.2(a), § 659a.5(g)
