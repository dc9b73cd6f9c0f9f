"""Over/Under at the table (58 Pa. Code 686a): 200 simulated rounds balanced to the cent,
one scripted round against a hand computation from the regulation, the continuous six-deck
shoe (burn card, cover card, reshuffles), the keypad entries and the profile options
(controller/games/overunder.py)."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path
from typing import Any

import pytest

from controller.games import procedure_for
from controller.games.base import EntryError, Stack
from controller.rules.cards import parse_cards
from controller.rules.overunder import SHOE_CARDS
from controller.settings.config import parse_profile
from hil.simrun import SimSettings, run_sim
from tests.integration.games.rounds import HandRound
from tests.integration.harness import Harness, records

PROFILE = Path(__file__).resolve().parents[3] / "config" / "tables" / "over-under.toml"


def doc(**options) -> dict[str, Any]:
    d = tomllib.loads(PROFILE.read_text(encoding="utf-8"))
    d["game"]["options"].update(options)
    return d


def proc(**options):
    return procedure_for("over-under", parse_profile(doc(**options), "<test>"))


# --------------------------------------------------------------------------- (a) 200 rounds


@pytest.mark.slow
@pytest.mark.soak
def test_686a_200_simulated_rounds_balance_to_the_cent(tmp_path):
    buf = io.StringIO()
    assert run_sim(SimSettings(game="over-under", rounds=200, seed=7, speed=200, state_dir=tmp_path), out=buf) == 0
    out = buf.getvalue()
    lines = out.splitlines()
    assert sum(1 for line in lines if line.startswith("round ")) == 200
    assert lines[-1].startswith("balance: OK (200 rounds")
    # every path: both decisions won and lost, surrenders, the Bonus Wager won and lost
    for text in (
        "over-23 win",
        "over-23 lose",
        "under-18 win",
        "under-18 lose",
        "ante surrender",
        "bonus win",
        "bonus lose",
    ):
        assert text in out, text


# --------------------------------------------------------------------------- (b) scripted round


class Shoe:
    """Posts the shoe's messages as the table asks for stacks (the harness's shoe is a recorder)."""

    def __init__(self, h: Harness, left: int = SHOE_CARDS):
        self.h, self.left, self.n = h, left, 0

    def shuffled(self, cover: int = 230, cards: int = SHOE_CARDS) -> None:
        self.h.post("shoe", "shoe", msg="SHUFFLED", cards=cards, cover=cover)
        self.left, self.n = cards, 0

    def deal(self, *stacks: str) -> None:
        for s in stacks:
            cards = list(parse_cards(s, allow_duplicates=True, allow_joker=False))
            self.n += 1
            self.left -= len(cards)
            assert self.h.shoe.calls[-1] == ("dispense", (self.n, len(cards))), self.h.shoe.calls[-1]
            self.h.post("shoe", "shoe", msg="STACK", stack=self.n, count=len(cards), remaining=self.left, cards=cards)
        if self.h.state == "open_for_wagers":
            self.n = 0  # the round is over: the next one numbers its stacks from 1


def _harness(tmp_path: Path, **options) -> tuple[Harness, Shoe]:
    h = Harness(tmp_path / "ledger.db", doc(**options))
    return h, Shoe(h)


def _key(h: Harness, text: str) -> str:
    h.post("keypad", "keypad", msg="ENTRY", text=text)
    return str(h.keypad.calls[-1][1][0])


def _bets(h: Harness, *texts: str) -> None:
    for text in texts:
        assert not _key(h, text).startswith("ERROR"), text
    h.press("lockout")
    h.press("confirm")


def outcomes(h: Harness, rnd: int) -> list[str]:
    return [e.data["outcome"] for e in records(h, "wager.result") if e.round == rnd]


def test_686a_scripted_round_every_result_computed_by_hand(tmp_path):
    """Six players; point values § 686a.3(d): 2-10 face value, J/Q/K 10, ace 11.

    Hand computation (§ 686a.7(i)-(l); even money § 686a.8(a); Bonus paytable § 686a.8(b)):

    seat 1  Ante $25, Bonus $5.  9h -> OVER (an Over 23 Wager of $25, § 686a.7(g)(1)).
            9h Kd As = 9+10+11 = 30 -> 24..33 (§ 686a.7(i)(1)): ante +2500, over-23 +2500;
            bonus total 30 pays 4 to 1: +2000.
    seat 2  Ante $10.  3c -> UNDER ($10, § 686a.7(g)(2)).  3c 4d 2s = 9 -> 6..17 (§ 686a.7(i)(2)):
            ante +1000, under-18 +1000.
    seat 3  Ante $15, Bonus $2.  6s -> SURRENDER (§ 686a.7(g)(3)): the ante is forfeited, -1500;
            two more cards anyway (§ 686a.7(i)): 6s 7c 8h = 21; the Bonus stays (§ 686a.7(h)):
            21 is in 13..26, loses (§ 686a.7(l)): -200.
    seat 4  Ante $5, Bonus $1.  Ad -> UNDER.  Ad Kc Qc = 31: Under 18 on 24..33 loses (reading
            686a-1): ante -500, under-18 -500; bonus total 31 pays 5 to 1: +500.
    seat 5  Ante $20, Bonus $1.  2h -> UNDER.  2h 2d 2c = 6: ante +2000, under-18 +2000;
            bonus total 6 pays 50 to 1: +5000.
    seat 6  Ante $30.  Th -> OVER.  Th 5c 4s = 19 -> 18..23, the house band (§ 686a.7(k)):
            ante -3000, over-23 -3000.
    order   seat by seat from the dealer's far left (§ 686a.7(e),(j)): 1, 2, 3, 4, 5, 6.
    """
    h, shoe = _harness(tmp_path)
    assert h.state == "open_for_wagers" and ("shuffle", ()) in h.shoe.calls  # first round: shuffle
    shoe.shuffled(cover=230)
    assert h.table.deck_ready
    assert _key(h, "BET 1 over-23 25").startswith("ERROR")  # only after the first card (§ 686a.6(c))
    _bets(
        h,
        "BET 1 ante 25",
        "BET 1 bonus 5",
        "BET 2 ante 10",
        "BET 3 ante 15",
        "BET 3 bonus 2",
        "BET 4 ante 5",
        "BET 4 bonus 1",
        "BET 5 ante 20",
        "BET 5 bonus 1",
        "BET 6 ante 30",
    )
    assert h.state == "first_card"
    # § 686a.7(c): the burn card first (a new batch), then one card to each Ante from seat 1 (§ 686a.7(e))
    assert h.rnd.to_dispense == [Stack("burn", 1)] + [Stack(f"seat:{s}", 1) for s in range(1, 7)]
    shoe.deal("7d", "9h", "3c", "6s", "Ad", "2h", "Th")
    assert h.state == "over_under_decisions"
    for text in ("OVER 1", "UNDER 2", "SURRENDER 3", "UNDER 4", "UNDER 5", "OVER 6"):
        assert not _key(h, text).startswith("ERROR"), text
    assert h.state == "two_more_cards"
    assert h.rnd.to_dispense == [Stack(f"seat:{s}", 2) for s in range(1, 7)]  # seat 3 too
    shoe.deal("Kd As", "4d 2s", "7c 8h", "Kc Qc", "2d 2c", "5c 4s")
    assert h.state == "open_for_wagers"
    results = [
        (e.data["seat"], e.data["wager"], e.data["cents"], e.data["outcome"], e.data["net"])
        for e in records(h, "wager.result")
    ]
    assert results == [
        (1, "ante", 2500, "win", 2500),
        (1, "over-23", 2500, "win", 2500),
        (1, "bonus", 500, "win", 2000),
        (2, "ante", 1000, "win", 1000),
        (2, "under-18", 1000, "win", 1000),
        (3, "ante", 1500, "surrender", -1500),
        (3, "bonus", 200, "lose", -200),
        (4, "ante", 500, "lose", -500),
        (4, "under-18", 500, "lose", -500),
        (4, "bonus", 100, "win", 500),
        (5, "ante", 2000, "win", 2000),
        (5, "under-18", 2000, "win", 2000),
        (5, "bonus", 100, "win", 5000),
        (6, "ante", 3000, "lose", -3000),
        (6, "over-23", 3000, "lose", -3000),
    ]
    late = {
        (e.data["seat"], e.data["spot"]): e.data["cents"] for e in records(h, "wager.accepted") if e.data.get("late")
    }
    assert late == {
        (1, "over-23"): 2500,
        (2, "under-18"): 1000,
        (4, "under-18"): 500,
        (5, "under-18"): 2000,
        (6, "over-23"): 3000,
    }
    payouts = {(e.data["seat"], e.data["wager"]): e.data["cents"] for e in records(h, "payout")}
    assert payouts[(5, "bonus")] == 5100 and payouts[(1, "ante")] == 5000 and (3, "ante") not in payouts
    (deal1, deal2) = records(h, "deal")
    assert deal1.data["hands"]["burn"] == "7d"
    h.close()


# --------------------------------------------------------------------------- the shoe


def _round(h: Harness, shoe: Shoe, first: list[str], more: list[str], *, seats=(1,), decision="OVER") -> None:
    _bets(h, *[f"BET {s} ante 10" for s in seats])
    shoe.n = 0
    shoe.deal(*first)
    for s in seats:
        _key(h, f"{decision} {s}")
    shoe.deal(*more)


def test_686a_7_c_d_burn_after_each_shuffle_cover_card_reshuffles_after_the_round(tmp_path):
    h, shoe = _harness(tmp_path)
    shoe.shuffled(cover=10)
    _round(h, shoe, ["7d", "9h"], ["Kd As"])  # burn + first card, then two more
    assert h.table.round is not None and h.state == "open_for_wagers"
    # dealt on: no shuffle, no burn (§ 686a.7(c): only after a full batch is placed in the shoe)
    assert h.shoe.calls.count(("shuffle", ())) == 1 and h.table.deck_ready
    _bets(h, "BET 2 ante 10")
    assert h.rnd.to_dispense == [Stack("seat:2", 1)]
    shoe.n = 0
    shoe.deal("5c")
    _key(h, "UNDER 2")
    # § 686a.7(d): the cover card comes out during play: set aside, the round is completed ...
    h.post("shoe", "shoe", msg="COVER", stack=2, dealt=1, remaining=shoe.left - 1)
    shoe.deal("2c 3c")
    assert outcomes(h, 2) == ["win", "win"]  # 5+2+3 = 10
    (cover,) = records(h, "shoe.cover")
    assert cover.data["stack"] == 2 and cover.data["dealt"] == 1
    # ... and the cards are reshuffled before the next round, then a card burned
    assert h.shoe.calls.count(("shuffle", ())) == 2 and not h.table.deck_ready
    shoe.shuffled(cover=200)
    _bets(h, "BET 1 ante 10")
    assert h.rnd.to_dispense == [Stack("burn", 1), Stack("seat:1", 1)]
    assert [e.data["cover"] for e in records(h, "shoe.shuffled")] == [10, 200]
    h.close()


def test_686a_7_d_a_cover_card_the_shoe_did_not_report_still_means_a_reshuffle(tmp_path):
    """The controller knows where the cover card lies (SHUFFLED.cover): past it, a reshuffle."""
    h, shoe = _harness(tmp_path)
    shoe.shuffled(cover=3)
    _round(h, shoe, ["7d", "9h"], ["Kd As"])  # 4 cards dealt past 3: no COVER came
    assert h.state == "open_for_wagers" and h.shoe.calls.count(("shuffle", ())) == 2
    h.close()


def test_686a_7_c_d_the_burn_card_counts_toward_the_cover_card_to_the_card(tmp_path):
    """The controller counts every card out since the shuffle, the burn card first (§ 686a.7(c)):
    four cards out with four above the cover card is not past it, so no reshuffle (§ 686a.7(d))."""
    h, shoe = _harness(tmp_path)
    shoe.shuffled(cover=4)
    _round(h, shoe, ["7d", "9h"], ["Kd As"])  # the burn, the first card, two more: 4 cards
    assert h.state == "open_for_wagers" and h.shoe.calls.count(("shuffle", ())) == 1 and h.table.deck_ready
    h.close()


@pytest.mark.parametrize(
    "cards, cover, why",
    [
        (SHOE_CARDS, 0, "no cover card"),
        (SHOE_CARDS, 235, "at least 1/4 of the way in from the bottom"),
        (SHOE_CARDS - 1, 100, "311 cards after shuffle"),
    ],
)
def test_686a_3_a_5_d_a_shoe_without_a_proper_batch_or_cover_card_tilts(tmp_path, cards, cover, why):
    h, shoe = _harness(tmp_path)
    shoe.shuffled(cover=cover, cards=cards)
    assert h.state == "tilt" and why in h.table.tilts["shoe"] and not h.table.deck_ready
    h.close()


def test_686a_3_a_a_joker_from_the_shoe_is_impossible(tmp_path):
    h, shoe = _harness(tmp_path)
    shoe.shuffled()
    _bets(h, "BET 1 ante 10")
    h.post("shoe", "shoe", msg="STACK", stack=1, count=1, remaining=311, cards=[52])
    assert h.state == "tilt"
    h.close()


def test_686a_9_a_face_up_cards_are_discarded_and_the_round_goes_on(tmp_path):
    h, shoe = _harness(tmp_path)
    shoe.shuffled()
    _bets(h, "BET 1 ante 10")
    h.post("shoe", "shoe", msg="FACE_UP", stack=2, card=5)
    shoe.deal("7d", "9h")
    _key(h, "OVER 1")
    h.post("shoe", "shoe", msg="FACE_UP", stack=1, card=9)
    shoe.deal("Kd As")
    assert outcomes(h, 1) == ["win", "win"] and not records(h, "round.void")
    assert len(records(h, "card.burned")) == 2
    h.close()


def test_686a_9_b_a_round_the_shoe_might_not_complete_is_preceded_by_a_reshuffle():
    """Reading 686a-7: the controller reshuffles before a round whose cards (a burn, three
    and a face-up card per position) the shoe might not hold, so § 686a.9(b) cannot arise."""
    p = proc()
    assert p.needs_shuffle()  # a new shoe
    assert p.on_shuffled(SHOE_CARDS) and not p.needs_shuffle()
    p.left = 1 + 4 * 6
    assert not p.needs_shuffle()
    p.left -= 1
    assert p.needs_shuffle()


def test_686a_void_after_cards_were_dealt_reshuffles(tmp_path):
    h, shoe = _harness(tmp_path)
    shoe.shuffled()
    _bets(h, "BET 1 ante 10")
    h.post("shoe", "shoe", msg="JAM", stack=2, dispensed=0)
    assert h.state == "open_for_wagers" and records(h, "round.void")
    assert h.shoe.calls.count(("shuffle", ())) == 2
    h.close()


# --------------------------------------------------------------------------- (c) keypad entries


def _decisions_round(p, antes=(1, 2, 4)) -> HandRound:
    hr = HandRound(1, {(s, "ante"): 1000 * s for s in antes}, p)
    hr.open(p, "over-under")
    return hr


@pytest.mark.parametrize(
    "text, error",
    [
        ("", "enter OVER <seat>"),
        ("OVER", "enter OVER <seat>"),
        ("OVER 1 2", "enter OVER <seat>"),
        ("MAYBE 1", "is not OVER, UNDER or SURRENDER"),
        ("OVER x", "is not a seat number"),
        ("OVER 3", "seat 3 is not playing"),
        ("UNDER 2", "seat 1 decides first"),
        ("DONE", "enter OVER <seat>"),
    ],
)
def test_686a_7_f_g_bad_entries_refused_and_change_nothing(text, error):
    p = proc()
    hr = _decisions_round(p)
    before = dict(hr.round.wagers)
    with pytest.raises(EntryError, match=error):
        hr.apply(p, "over-under", text)
    assert hr.round.wagers == before and hr.ds("over-under").answers == {}


def test_686a_7_g_over_and_under_equal_the_ante_and_a_decision_stands():
    p = proc()
    hr = _decisions_round(p)
    e = hr.apply(p, "over-under", "over 1")
    assert e.late == {(1, "over-23"): 1000}  # § 686a.7(g)(1)
    e = hr.apply(p, "over-under", "U 2")
    assert e.late == {(2, "under-18"): 2000}  # § 686a.7(g)(2)
    with pytest.raises(EntryError, match="already decided"):
        hr.apply(p, "over-under", "SURRENDER 2")
    e = hr.apply(p, "over-under", "SURRENDER 4")
    assert e.late == {} and hr.ds("over-under").answers == {1: "over-23", 2: "under-18", 4: "surrender"}


def test_686a_6_c_e_keyed_wagers_before_the_first_card():
    p = proc()
    p.keyed_wager(1, "ante", 500)
    p.keyed_wager(1, "bonus", 100)
    for wager in ("over-23", "under-18"):
        with pytest.raises(EntryError, match="after the first card"):
            p.keyed_wager(1, wager, 500)
    with pytest.raises(EntryError, match="outside"):
        p.keyed_wager(1, "ante", 100)
    # § 686a.6(e): a Bonus Wager only with an Ante
    assert p.reject_unsupported({(2, "bonus"): 100, (1, "ante"): 500, (1, "bonus"): 100}) == {
        (2, "bonus"): "a bonus wager needs a ante wager (§ 686a.6(e))"
    }
    with pytest.raises(EntryError, match="not a wager of this game"):
        proc(bonus=False).keyed_wager(1, "bonus", 100)


def test_686a_7_e_plan_first_card_to_each_ante_from_the_far_left():
    p = proc()
    rnd = HandRound(1, {(5, "ante"): 500, (2, "ante"): 500, (2, "bonus"): 100}).round
    p.on_shuffled(SHOE_CARDS)
    assert p.plan(rnd, "first") == [Stack("burn", 1), Stack("seat:2", 1), Stack("seat:5", 1)]
    assert p.plan(rnd, "more") == [Stack("seat:2", 2), Stack("seat:5", 2)]
    assert p.plan(HandRound(2).round, "first") == []


@pytest.mark.parametrize(
    "options, error",
    [
        ({"progressive": 1}, "'progressive' is not an Over/Under option"),
        ({"bonus": "yes"}, "bonus = 'yes'"),
        ({"bonus_paytable": "Nope"}, "no paytable named 'Nope'"),
        ({"bonus_paytable": "Over/Under Ante"}, "is not an Over/Under Bonus paytable"),
        ({"ante_min_cents": 0}, "ante_min_cents = 0"),
        ({"ante_min_cents": 5000, "ante_max_cents": 100}, "ante_min_cents = 5000: above ante_max_cents"),
    ],
)
def test_profile_options_validated(options, error):
    with pytest.raises(ValueError, match=error):
        proc(**options)


def test_profile_686a_2_a_at_most_six_seats_and_no_progressive():
    d = doc()
    d["game"]["seats"] = 7
    with pytest.raises(ValueError, match=r"at most 6 betting positions \(§ 686a.2\(a\)\)"):
        procedure_for("over-under", parse_profile(d, "<test>"))
    d = doc()
    d["progressive"] = {
        "paytable": "Six-Card Fortune Progressive",
        "wager": "$1",
        "seed": "$5,000",
        "increment_rate": "21%",
        "reserve_rate": "0%",
    }
    with pytest.raises(ValueError, match="no progressive"):
        procedure_for("over-under", parse_profile(d, "<test>"))


def test_686a_cards_not_read_are_counted_then_keyed_with_six_decks_duplicates(tmp_path):
    """A shoe that does not read the cards: the decisions are keyed as usual (the dealer
    sees the cards), then the cards left are counted and the dealer keys the hands; with
    six decks two hands may hold the same card, even one hand the same card twice (§ 686a.3(a))."""
    h, shoe = _harness(tmp_path)
    shoe.shuffled()
    _bets(h, "BET 1 ante 10", "BET 2 ante 10")
    for i, n in enumerate((1, 1, 1), 1):
        h.post("shoe", "shoe", msg="STACK", stack=i, count=n, remaining=312 - i, cards=[0xFF])
    assert h.state == "over_under_decisions"
    _key(h, "OVER 1")
    _key(h, "UNDER 2")
    for i in (4, 5):
        h.post("shoe", "shoe", msg="STACK", stack=i, count=2, remaining=312 - 3 - 2 * (i - 3), cards=[0xFF, 0xFF])
    assert h.state == "shoe_count" and h.shoe.calls[-1] == ("request_count", ())
    h.post("shoe", "shoe", msg="REMAINING", remaining=312 - 7, stacks=5)
    assert h.state == "hand_entry"
    assert _key(h, "DEALER 2c 3c 4c").startswith("ERROR")
    assert _key(h, "1 Ks Ks").startswith("ERROR")  # three cards
    for text in ("1 Ks Ks Qs", "2 Ks 2c 3c"):  # 30 over; 15 under
        assert not _key(h, text).startswith("ERROR"), text
    _key(h, "DONE")
    assert outcomes(h, 1) == ["win", "win", "win", "win"]
    h.close()


def test_686a_shoe_out_of_order_dealt_by_hand_decisions_then_keyed_hands(tmp_path):
    """The shoe marked out of order (§ 670a.13(n) practice, SPEC § 1): the dealer deals by hand.
    The first card is only recorded (the players decide on the card they see, § 686a.7(f)); after
    the two more cards the dealer keys the three-card hands.  Back in service, the shoe shuffles
    before it deals (a burn follows, § 686a.7(c))."""
    h, shoe = _harness(tmp_path)
    shoe.shuffled()
    h.post("command", "console", cmd="out_of_order", device="shoe", alternative="manual", by="t", reason="x")
    _bets(h, "BET 1 ante 25", "BET 3 ante 10")
    assert h.state == "over_under_decisions"
    assert [e.data["phase"] for e in records(h, "deal.manual")] == ["first_card"]
    assert _key(h, "OVER 1") == "SEAT 1 OVER-23 25.00"
    assert _key(h, "UNDER 3").startswith("ENTER WINNING HANDS SEATS 1,3: '<seat> <3 cards>'")
    assert ("prompt", ("SEAT 3 UNDER-18 10.00",)) in h.keypad.calls
    assert h.state == "hand_entry"
    assert _key(h, "1 9h Kd As") == "SEAT 1 OK: 9h Kd As"
    assert _key(h, "3 9h 2c 3c") == "SEAT 3 OK: 9h 2c 3c"  # six decks: the same card twice
    _key(h, "DONE")
    assert h.state == "open_for_wagers"
    assert not any(c[0] == "dispense" for c in h.shoe.calls)
    # 30 is over 23, 14 under 18 (§ 686a.7(j)-(l)): each Over/Under wager wins even money (§ 686a.8(a))
    assert [(e.data["seat"], e.data["wager"], e.data["net"]) for e in records(h, "wager.result")] == [
        (1, "ante", 2500),
        (1, "over-23", 2500),
        (3, "ante", 1000),
        (3, "under-18", 1000),
    ]
    shuffles = h.shoe.calls.count(("shuffle", ()))
    h.table.mark_in_service("shoe", "t")
    h.pump()
    assert h.shoe.calls.count(("shuffle", ())) == shuffles + 1 and not h.table.deck_ready
    shoe.shuffled()
    _bets(h, "BET 2 ante 10")
    assert h.rnd.to_dispense == [Stack("burn", 1), Stack("seat:2", 1)]
    h.close()


def test_686a_7_c_a_new_dealer_burns_a_card_and_a_floorperson_may_order_a_reshuffle(tmp_path):
    """§ 686a.7(c): each new dealer removes one card before dealing; § 686a.5(a),(f): a
    floorperson may direct a reshuffle after any round.  Both between rounds only."""
    h, shoe = _harness(tmp_path)
    shoe.shuffled()
    _round(h, shoe, ["7d", "9h"], ["Kd As"])  # burn + first card after the shuffle
    _bets(h, "BET 1 ante 10")
    assert h.rnd.to_dispense == [Stack("seat:1", 1)]  # dealt on: no burn
    with pytest.raises(ValueError, match="between rounds only"):
        h.table.new_dealer("console:dealer")
    with pytest.raises(ValueError, match="between rounds only"):
        h.table.floor_reshuffle("console:floorperson")
    shoe.n = 0
    shoe.deal("5c")
    _key(h, "UNDER 1")
    shoe.deal("2c 3c")
    assert h.state == "open_for_wagers" and h.table.deck_ready
    assert h.table.new_dealer("console:dealer") == "one card is burned before the next deal (§ 686a.7(c))"
    _bets(h, "BET 2 ante 10")
    assert h.rnd.to_dispense == [Stack("burn", 1), Stack("seat:2", 1)]
    shoe.n = 0
    shoe.deal("4d", "5c")
    _key(h, "UNDER 2")
    shoe.deal("2c 3c")
    shuffles = h.shoe.calls.count(("shuffle", ()))
    h.table.floor_reshuffle("console:floorperson")
    h.pump()
    assert h.shoe.calls.count(("shuffle", ())) == shuffles + 1 and not h.table.deck_ready
    shoe.shuffled()
    _bets(h, "BET 3 ante 10")
    assert h.rnd.to_dispense == [Stack("burn", 1), Stack("seat:3", 1)]
    assert [e.data["by"] for e in records(h, "dealer.changed")] == ["console:dealer"]
    assert [e.data["by"] for e in records(h, "shoe.reshuffle_ordered")] == ["console:floorperson"]
    h.close()
