"""Pai Gow (tiles) at the table (58 Pa. Code 621a): 200 simulated rounds balanced to
the cent; three scripted rounds (dealer bank, player bank, co-bank) whose every
result is computed by hand from the regulation; keypad entries; the profile."""

from __future__ import annotations

import copy
import io
import sqlite3
from collections import Counter
from typing import Any

import pytest

from controller.books.ledger import Record
from controller.games import procedure_for
from controller.games.tiles_rotation import TilesRound
from controller.rules.tiles import FULL_SET, parse_tiles
from controller.rules.tiles_deal import STYLES, deal
from controller.settings.config import parse_profile
from tests.integration.games.tiles_harness import TilesHarness, ids_for, tiles_doc

# the eight stacks of four used when the tiles do not matter (one whole set)
PLAIN = [
    "6-6 6-6 1-1 1-1",
    "4-4 4-4 1-3 1-3",
    "5-5 5-5 3-3 3-3",
    "2-2 2-2 5-6 5-6",
    "4-6 4-6 1-6 1-6",
    "1-5 1-5 3-6 4-5",
    "2-6 3-5 2-5 3-4",
    "2-4 1-4 2-3 1-2",
]


def kinds_of(h: TilesHarness, who: str) -> list[int]:
    return sorted(FULL_SET[i] for i in h.rnd.cards[who])


def tiles(text: str) -> list[int]:
    return sorted(parse_tiles(text))


def results(h: TilesHarness, number: int) -> list[tuple[int, str, str, int, int]]:
    return [(r["seat"], r["wager"], r["outcome"], r["net"], r.get("commission") or 0) for r in h.results(number)]


def play_plain(h: TilesHarness, bets: list[str]) -> None:
    h.open_round(bets)
    h.key("DONE")
    h.roll((2, 3, 4), 0)
    h.deal_tiles(ids_for(PLAIN))
    h.key("DONE")
    assert h.state == "open_for_wagers"
    h.shuffled()


# --------------------------------------------------------------------------- (a) 200 rounds


@pytest.mark.slow
def _carry(h: TilesHarness) -> dict[str, Any]:
    """What the procedure carries over a restart (the bank's rotation)."""
    state = h.table.proc.carry()
    assert state is not None, "the tiles procedure carries its rotation"
    return state


@pytest.mark.slow
@pytest.mark.soak
def test_200_simulated_rounds_balance_to_the_cent(tmp_path):
    """Every wager of 200 rounds accounted for (hil/balance.py), every
    keyed path exercised: player bank, co-bank, dealer's wager, cut, styles, own settings,
    surrender (§ 621a.8(e)), a voided hand (§ 621a.10(d)), a bank hand reset (§ 621a.10(f))."""
    from hil.simrun import SimSettings, run_sim

    buf = io.StringIO()
    assert run_sim(SimSettings(game="pai-gow-tiles", rounds=200, seed=7, speed=200, state_dir=tmp_path), out=buf) == 0
    out = buf.getvalue().splitlines()
    assert out[-1].startswith("balance: OK (200 rounds"), out[-1]
    db = sqlite3.connect(tmp_path / "ledger.sqlite3")
    import json

    rows = [(k, json.loads(d)) for k, d in db.execute("SELECT kind, data FROM events")]
    db.close()
    decisions = Counter(d.get("decision") for k, d in rows if k == "decision")
    for want in ("bank", "co-bank", "dealer-wager", "cut", "style", "setting", "surrender", "void", "bank-setting"):
        assert decisions[want] > 0, (want, decisions)
    outcomes = Counter((d["wager"], d["outcome"]) for k, d in rows if k == "wager.result")
    for outcome in (
        ("base", "win"),
        ("base", "lose"),
        ("base", "push"),
        ("base", "surrender"),
        ("base", "returned"),
        ("bank", "win"),
        ("bank", "lose"),
        ("pair-fortunes", "win"),
        ("sum", "win"),
        ("beat-it", "win"),
    ):
        assert outcomes[outcome] > 0, (outcome, outcomes)
    assert any(d.get("reset") for k, d in rows if k == "decision" and d.get("decision") == "bank-setting")
    assert sum(1 for k, _d in rows if k == "dice") >= 200  # the player-activated shaker every round


# --------------------------------------------------------------------------- (b) scripted rounds


def test_scripted_rounds_match_hand_computation(tmp_path):
    h = TilesHarness(tmp_path / "ledger.sqlite3")

    # ---- round 1: the dealer banks (start of the game: no player bank, § 621a.9(b)) ----------
    h.open_round(
        [
            "6 base 107",
            "6 pair-fortunes 5",
            "6 sum 10",
            "3 base 40",
            "3 match-1 5",
            "3 beat-it 5",
            "2 base 20",
            "2 pair-fortunes 10",
            "1 base 25",
        ]
    )
    assert h.state == "bank_selection"
    assert h.key("BANK 3 500").startswith("ERROR: no player may bank at the start of the game (§ 621a.9(b))")
    assert h.key("STYLE cup-say-right").startswith("STYLE CUP-SAY-RIGHT")  # the dealer's choice, § 621a.7(2)
    h.key("DONE")
    assert h.state == "starting_position"
    # § 621a.6(a)(3): a player activates the shaker; the first is the player farthest to the dealer's right
    assert h.armed_for() == 6
    # dice 1, 1 and a red 6 (§ 621a.2(f)(1)): total 8; counting the dealer as one, then the betting
    # positions from the dealer's right and the Dead Hand (§ 621a.6(c)): 1 dealer, 2-7 seats 6..1,
    # 8 the Dead Hand -> the Dead Hand receives the first tiles
    h.roll((1, 1, 6), 2)
    assert h.rnd.start == 8
    # § 621a.6(b), § 621a.11(c)-(e), settled right after the roll:
    #   seat 6 Sum A $10: total 8 pays 3 to 1 -> +$30.00
    #   seat 3 Match on 1 $5: two dice show 1, double match 6 to 1 -> +$30.00
    #   seat 3 Beat It A $5: red 6 beats the blue 1 + 1 = 2 by 4 points, 50 to 1 -> +$250.00
    assert results(h, 1) == [
        (6, "sum", "win", 3000, 0),
        (3, "match-1", "win", 3000, 0),
        (3, "beat-it", "win", 25000, 0),
    ]
    # § 621a.9(k): the first stack to the starting position, in the selected style of delivery.
    # Cup Say from the right (§ 621a.7(2)): the top two tiles of stacks 1 and 2 to the starting
    # position (the Dead Hand), their bottom two to the next (the dealer), stacks 3-4 to seats 6
    # and 5, stacks 5-6 to seats 4 and 3, stacks 7-8 to seats 2 and 1
    h.deal_tiles(
        ids_for(
            [
                "1-5 1-5 2-3 1-4",
                "3-6 2-6 5-6 2-2",
                "1-1 1-1 5-5 5-5",
                "4-6 1-6 3-3 3-3",
                "2-2 5-6 3-4 2-5",
                "4-6 1-6 1-2 3-5",
                "6-6 2-4 6-6 4-5",
                "4-4 4-4 1-3 1-3",
            ]
        )
    )
    assert h.state == "setting_hands"
    for who, want in {
        "dead": "1-5 1-5 3-6 2-6",
        "dealer": "2-3 1-4 5-6 2-2",
        "seat:6": "1-1 1-1 4-6 1-6",
        "seat:5": "5-5 5-5 3-3 3-3",
        "seat:4": "2-2 5-6 4-6 1-6",
        "seat:3": "3-4 2-5 1-2 3-5",
        "seat:2": "6-6 2-4 4-4 4-4",
        "seat:1": "6-6 4-5 1-3 1-3",
    }.items():
        assert kinds_of(h, who) == tiles(want), who
    assert h.key("SET 1 6-6 1-3").startswith("SEAT 1 high")  # seat 1 sets his own hands (§ 621a.8(a))
    assert h.key("VOID 2") == "SEAT 2 VOIDS THE HAND - WAGERS RETURNED"  # a tile exposed (§ 621a.10(d))
    # the dealer placed 2-3 with 5-6: not the house way; reset (§ 621a.10(f))
    assert h.key("BANKSET 2-3 5-6").startswith("DEALER RESET TO HOUSE WAY: high 1-4 2-3 (mixed-fives)")
    h.key("DONE")
    assert h.state == "open_for_wagers"
    # Dealer 2-3 1-4 5-6 2-2, house way (§ 621a.8(d)(2)): the mixed fives (16th pair) high;
    #   low 5-6 + 2-2 = 15 -> 5 points.
    # Seat 6 1-1 1-1 4-6 1-6 (house way): pair of Twos (3rd) beats the mixed fives; low 4-6 + 1-6 = 17
    #   -> 7 points beats 5 -> wins 1 to 1 (§ 621a.8(i)): $107.00 won, vigorish 5% = $5.35 rounded up
    #   to $5.50 (§ 621a.11(a)) -> +$101.50.  Pair Fortunes $5: an Identical Pair, 3 to 1 -> +$15.00.
    # Seat 3 3-4 2-5 1-2 3-5 (house way): mixed sevens (15th) beat the mixed fives (16th); low
    #   1-2 + 3-5 = 4 points (1-2 counted as 6, § 621a.3(f)) loses to 5 points -> tie (§ 621a.8(h)(2)): 0.
    # Seat 2 voided his hand: the Pai Gow and Pair Fortunes Wagers returned (§ 621a.10(d)).
    # Seat 1 set 6-6 1-3 high = 16 -> 6 points (loses to the mixed fives), 4-5 1-3 = 13 -> 3 points
    #   (loses to 5) -> loses (§ 621a.8(g)): -$25.00 (the house way would have won both).
    # § 621a.9(s): each seat's Pai Gow Wager settled, then its Pair Fortunes Wager
    assert results(h, 1)[3:] == [
        (6, "base", "win", 10150, 550),
        (6, "pair-fortunes", "win", 1500, 0),
        (3, "base", "push", 0, 0),
        (2, "base", "returned", 0, 0),
        (2, "pair-fortunes", "returned", 0, 0),
        (1, "base", "lose", -2500, 0),
    ]
    h.shuffled()

    # ---- round 2: seat 3 banks; the dealer wagers $20 against it (§ 621a.9(c)-(h), (n)-(q)) ------
    h.open_round(["6 base 100", "1 base 50"])
    assert h.key("BANK 3 149").startswith("ERROR: $149.00 does not cover")  # § 621a.9(d)(2)
    assert h.key("BANK 4 500").startswith("ERROR: seat 4 placed no wager")  # § 621a.9(d)(1)
    # offered from the player farthest to the dealer's right (seat 6, who declines), then seat 3
    assert h.key("BANK 3 200") == "SEAT 3 BANKS; DEALER WAGERS 40.00"  # the bank's last wager, § 621a.9(h)
    assert h.key("DEALER 50").startswith("ERROR")  # more than the bank's last wager
    assert h.key("DEALER 20") == "DEALER WAGERS 20.00"  # the bank directs less
    h.key("DONE")
    assert h.armed_for() == 3  # the bank shakes, § 621a.9(i)
    # total 5 counted from the bank (§ 621a.9(j)): seat 3 (1), seat 2 (2), seat 1 (3), Dead Hand (4),
    # dealer (5) -> the dealer, position 1; standard delivery (§ 621a.6(d)): stack 1 to the dealer, then
    # seats 6, 5, 4, 3, 2, 1 and the Dead Hand
    h.roll((1, 2, 2), 0)
    assert h.rnd.start == 1
    h.deal_tiles(
        ids_for(
            [
                "1-1 2-2 5-6 4-6",
                "6-6 6-6 1-2 2-4",
                "1-1 2-2 5-6 1-6",
                "3-3 3-3 5-5 1-5",
                "4-4 4-4 2-3 3-6",
                "1-3 1-3 4-5 1-4",
                "2-5 3-4 5-5 4-6",
                "3-5 2-6 1-6 1-5",
            ]
        )
    )
    assert kinds_of(h, "seat:3") == tiles("4-4 4-4 2-3 3-6")
    h.key("DONE")
    # Bank 4-4 4-4 2-3 3-6 (house way): pair of Eights high; low 2-3 + 3-6 = 14 -> 4 points.
    # Dealer 1-1 2-2 5-6 4-6: no pair, no two tiles worth 7-9 -> § 621a.8(d)(4) highest (1-1) with
    #   lowest (4-6): 2 points low; 2-2 + 5-6 = 5 points high.  Both lose to the bank: the dealer's
    #   $20 goes to the center.
    # Seat 6 6-6 6-6 1-2 2-4: the Supreme Pair high (§ 621a.8(d)(1)), the Heaven Pair low: wins both ->
    #   +$100 less $5.00 vigorish (§ 621a.9(q)) = +$95.00.
    # Seat 1 2-5 3-4 5-5 4-6: mixed sevens lose to the pair of Eights; 5-5 + 4-6 = 20 -> 0 points loses
    #   -> -$50.00 to the center.
    # Center: $50 + $20 = $70 collected, $100 paid: the bank pays the $30 shortfall (§ 621a.9(o)) -> -$30.00.
    assert results(h, 2) == [
        (6, "base", "win", 9500, 500),
        (1, "base", "lose", -5000, 0),
        (3, "bank", "lose", -3000, 0),
    ]
    h.shuffled()

    # ---- round 3: seat 1 banks and co-banks (§ 621a.9(e), (r)) ------------------------------------
    h.open_round(["6 base 100", "2 base 60"])
    assert h.key("BANK 3 500").startswith("ERROR: seat 3 banked the last round")  # § 621a.9(c)
    assert h.key("COBANK").startswith("ERROR: no player banks")
    assert h.key("BANK 1 500") == "SEAT 1 BANKS; DEALER WAGERS 25.00"
    assert h.key("COBANK") == "SEAT 1 CO-BANKS WITH THE DEALER"
    assert h.key("DEALER 10").startswith("ERROR: the dealer wagers against a player bank only")
    assert h.key("CUT R 1-2") == "CUT: STACKS 1 2 3 4 5 6 7 8"  # stacks 1-2 moved to the right end: no change
    assert h.key("CUT L 7-8").startswith("ERROR: the tiles are cut one time only")
    h.key("DONE")
    assert h.armed_for() == 1
    # total 10 from the bank (seat 1 = 1, Dead Hand 2, dealer 3, seats 6..1 = 4..9, Dead Hand 10)
    h.roll((3, 3, 4), 1)
    assert h.rnd.start == 8
    h.deal_tiles(
        ids_for(
            [
                "6-6 5-5 3-5 2-4",
                "1-3 1-3 3-4 2-5",
                "6-6 4-5 3-3 3-3",
                "4-4 4-4 1-2 1-4",
                "5-5 2-3 1-6 1-5",
                "1-6 5-6 4-6 2-2",
                "2-6 1-5 3-6 4-6",
                "1-1 1-1 2-2 5-6",
            ]
        )
    )
    assert kinds_of(h, "seat:1") == tiles("1-1 1-1 2-2 5-6")
    h.key("DONE")
    # Co-bank 1-1 1-1 2-2 5-6, set by the dealer (house way, § 621a.9(e)): pair of Twos; 2-2 + 5-6 = 5 points.
    # Seat 6 6-6 4-5 3-3 3-3: pair of Sixes (7th) loses to the Twos; the wong (6-6 4-5) beats 5 points -> tie.
    # Seat 2 2-6 1-5 3-6 4-6: no pair; § 621a.8(d)(3) plays 3-6 + 4-6 = 9 points high, 2-6 + 1-5 = 4 points
    #   low: loses both -> -$60.00.
    # Center $60 surplus: the house takes $30 (§ 621a.9(r)); the co-bank's $30 less 5% = $1.50
    #   (a multiple of 25 cents) -> +$28.50.
    assert results(h, 3) == [(6, "base", "push", 0, 0), (2, "base", "lose", -6000, 0), (1, "bank", "win", 2850, 150)]
    bank = h.results(3)[-1]
    assert "co-bank" in bank["detail"] and "share +3000" in bank["detail"]


def test_dealing_styles_follow_the_rules_module(tmp_path):
    """§ 621a.6(d), § 621a.7(1)-(9): the table's positions get exactly the tiles
    controller/rules/tiles_deal.deal gives for the same stacks and start."""
    h = TilesHarness(tmp_path / "ledger.sqlite3")
    stacks = ids_for(PLAIN)
    for n, style in enumerate(STYLES, 1):
        h.open_round(["4 base 10"])
        assert h.key(f"STYLE {style}").startswith("STYLE")
        h.key("DONE")
        h.roll((1, 2, 3 + n % 4), 0)
        assert h.rnd.start is not None
        start = h.rnd.start - 1
        h.deal_tiles(stacks)
        want = deal([[FULL_SET[i] for i in s] for s in stacks], start, style)
        got = {k: sorted(FULL_SET[i] for i in v) for k, v in h.rnd.cards.items()}
        names = {0: "dealer", 7: "dead", **{p: f"seat:{7 - p}" for p in range(1, 7)}}
        assert got == {names[p]: sorted(v) for p, v in want.items()}, style
        h.key("DONE")
        h.shuffled()


# --------------------------------------------------------------------------- (c) entries, profile


def test_bad_entries_are_refused_and_change_nothing(tmp_path):
    h = TilesHarness(tmp_path / "ledger.sqlite3", tiles_doc(beat_it="Tiles Beat It C", sum="Tiles Sum D"))
    t = h.table
    # 5 to 2 (Beat It C) and 15 to 2 (Sum D) on an odd number of cents are not whole cents (§ 621a.11(c),(e))
    assert "fraction of a cent" in h.key("BET 1 beat-it 1.01")
    assert "fraction of a cent" in h.key("BET 1 sum 2.05")
    assert h.key("BET 7 base 10").startswith("ERROR: seat 7 is not a seat")
    assert h.key("BET 1 match-7 5").startswith("ERROR: 'match-7' is not a wager")
    assert h.key("BET 1 base 5000").startswith("ERROR: base $5,000.00 is outside")
    assert h.rnd.keyed == {}
    h.open_round(["1 base 10", "1 beat-it 1.02", "5 base 20"])
    before = copy.deepcopy(t.proc.play)
    for bad, why in (
        ("BANK 1 100", "start of the game"),
        ("COBANK", "no player banks"),
        ("STYLE zigzag", "not a dealing style offered"),
        ("CUT R 1-2", "only a player bank"),
        ("DEALER 5", "player bank only"),
        ("SET 1 1-1 1-1", "enter BANK"),
        ("", "empty"),
    ):
        reply = h.key(bad) if bad else h.key("  ")
        assert reply.startswith("ERROR") and why in reply, (bad, reply)
    assert t.proc.play == before and t.state == "bank_selection"
    h.key("DONE")
    h.roll((1, 1, 1), 0)
    h.deal_tiles(ids_for(PLAIN))
    assert h.state == "setting_hands"
    hand = t.proc.show_cards(h.rnd.cards["seat:1"])
    for bad, why in (
        ("SET 4 6-6 6-6", "not playing this round"),
        ("SET 1 6-6 6-6", "is not among the tiles"),
        ("SET 1 7-7 1-1", "7-7"),
        ("SURRENDER x", "not a seat number"),
        ("VOID 3", "not playing"),
        ("BANKSET 1-1", "enter SET"),
        ("HELLO", "enter SET"),
    ):
        reply = h.key(bad)
        assert reply.startswith("ERROR") and why in reply, (bad, reply, hand)
    play = t.proc.play
    assert isinstance(play, TilesRound)
    assert play.settings == {} and play.voided == [] and play.surrendered == []
    h.key("SURRENDER 5")
    assert h.key("VOID 5").startswith("ERROR: seat 5 has already surrendered")
    h.key("DONE")
    assert h.state == "open_for_wagers"
    rs = {(r["seat"], r["wager"]): r["outcome"] for r in h.results()}
    assert rs[(5, "base")] == "surrender"  # § 621a.8(e)
    assert (1, "beat-it") in rs


def test_cobank_refuses_odd_cent_wagers(tmp_path):
    """§ 621a.9(r): the co-bank and the house halve the center; an odd number of cents cannot be halved."""
    h = TilesHarness(tmp_path / "ledger.sqlite3")
    play_plain(h, ["3 base 10", "5 base 10"])
    h.open_round(["5 base 10.01"])
    assert h.key("BANK 3 100").startswith("SEAT 3 BANKS")
    assert "odd number of cents" in h.key("COBANK")


def test_shoe_face_up_tile_voids_the_round(tmp_path):
    """Every tile is dealt: an exposed tile cannot be burned, the round is void and every
    unsettled wager returned (§ 621a.10(e)); the dice wagers stay settled (§ 621a.6(b))."""
    h = TilesHarness(tmp_path / "ledger.sqlite3")
    h.open_round(["2 base 30", "2 sum 5"])
    h.key("DONE")
    h.roll((4, 4, 4), 0)
    h.post("shoe", "shoe", msg="FACE_UP", stack=1, card=5)
    assert "round_void" in h.table.visited
    returned = [e.data for e in h.ledger.events(kinds=["wager.returned"])]
    assert returned == [{"seat": 2, "wager": "base", "cents": 3000}]


def test_unread_tiles_are_keyed_with_the_bank_hand(tmp_path):
    """The shoe did not read the tiles: the dealer keys each hand as tiles (the bank's too) and
    the round settles from them."""
    h = TilesHarness(tmp_path / "ledger.sqlite3")
    play_plain(h, ["3 base 10", "5 base 10"])
    h.open_round(["5 base 20"])
    h.key("BANK 3 100")
    h.key("DEALER 0")
    h.key("DONE")
    h.roll((2, 2, 2), 0)
    h.deal_tiles([[0xFF] * 4] * 8)
    assert h.state == "hand_entry"
    assert h.key("3 6-6 6-6 1-2 2-4").startswith("SEAT 3 OK: 6-6 6-6 1-2 2-4")
    assert h.key("5 6-6 1-1 1-1 4-4").startswith("ERROR: every 6-6 tile is already entered")
    assert h.key("DONE").startswith("ERROR: enter the tiles of: 5")  # the dealer is not needed
    h.key("5 1-1 1-1 4-4 4-4")
    h.key("DONE")
    # the players still set their hands on the tiles as keyed (§ 621a.8(a)), Phase.after_entry
    assert h.state == "setting_hands"
    assert h.key("SET 5 6-6 1-1").startswith("ERROR: 6-6 is not among the tiles 1-1 1-1 4-4 4-4")
    assert h.key("SET 5 1-1 1-1").startswith("SEAT 5 ")
    h.key("DONE")
    # the bank's Supreme Pair and Heaven Pair beat two pairs: seat 5 loses $20, the bank wins $20 less $1.00
    assert results(h, 2) == [(5, "base", "lose", -2000, 0), (3, "bank", "win", 1900, 100)]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"game": {"seats": 7}}, "six betting positions"),
        (
            {
                "progressive": {
                    "paytable": "Tiles Pai Gow",
                    "wager": "$1",
                    "seed": "$1",
                    "increment_rate": "1%",
                    "reserve_rate": "0%",
                }
            },
            "no progressive",
        ),
        ({"options": {"colour": "red"}}, "colour: not an option"),
        ({"options": {"styles": ["standard", "spiral"]}}, "unknown dealing style 'spiral'"),
        ({"options": {"dealing_style": "chee-yee", "styles": ["standard"]}}, "must be one of the styles offered"),
        ({"options": {"player_bank": False}}, "co-banking (§ 621a.9(e)) needs player_bank"),
        ({"options": {"sum": "Tiles Match"}}, "not pai-gow-tiles/sum"),
        ({"options": {"house_way": "mine"}}, "no house way named 'mine'"),
        ({"options": {"player_bank": "yes"}}, "not true or false"),
        ({"game": {"start_method": "rng"}}, "need the player-activated shaker"),
    ],
)
def test_profile_errors_name_the_option(change, message):
    """§ 621a.2(a): a table of other than six betting positions is refused; § 621a.9(a): the
    banking options the Rules Submission allows (player bank, co-banking) are checked together."""
    doc = tiles_doc()
    doc["game"]["options"].update(change.get("options", {}))
    doc["game"].update(change.get("game", {}))
    if "progressive" in change:
        doc["progressive"] = change["progressive"]
    prof = parse_profile(doc, "pai-gow-tiles.toml")
    with pytest.raises(ValueError, match="pai-gow-tiles.toml") as e:
        procedure_for(prof.game, prof)
    assert message in str(e.value)


def test_rng_start_without_dice_wagers(tmp_path):
    """§ 621a.6(a)(1): a random number 1..8 counted like the dice (§ 621a.6(c))."""
    from tests.integration.harness import FixedRng

    doc = tiles_doc(sum=None, match=None, beat_it=None)
    doc["game"]["start_method"] = "rng"
    h = TilesHarness(tmp_path / "ledger.sqlite3", doc, rng=FixedRng([3]))
    h.open_round(["6 base 10"])
    h.key("DONE")
    assert h.rnd.start == 3 and h.state == "dealing_tiles"
    assert not any(c[0] == "arm" for c in h.shaker.calls)


def test_profile_loads_without_progressive():
    prof = parse_profile(tiles_doc(), "pai-gow-tiles.toml")
    assert prof.progressive is None and prof.sensed == () and prof.positions == 8


def test_bank_rotation_survives_a_restart(tmp_path):
    """A power loss is not the start of a new game: the bank's rotation (§ 621a.9(b)-(d)) and
    the shooter are written with each round's close and taken back at start-up."""
    path = tmp_path / "ledger.sqlite3"
    h = TilesHarness(path)
    h.open_round(["6 base 100", "3 base 40"])
    assert h.key("BANK 3 500").startswith("ERROR: no player may bank at the start of the game (§ 621a.9(b))")
    h.key("DONE")
    h.roll((2, 3, 4), 0)
    h.deal_tiles(ids_for(PLAIN))
    h.key("DONE")
    assert h.state == "open_for_wagers"
    before = _carry(h)
    assert before["rounds_played"] == 1 and before["last_dealer_round"] == [[3, 4000], [6, 10000]]
    h.close()

    h = TilesHarness(path)  # restarted on the same ledger
    assert _carry(h) == before
    h.open_round(["6 base 100", "1 base 50"])
    # seat 3 wagered against the dealer in the last round: it may bank now (§ 621a.9(d)(1))
    assert h.key("BANK 3 200") == "SEAT 3 BANKS; DEALER WAGERS 40.00"
    h.close()


def test_a_carried_state_this_table_cannot_take_is_recorded_and_the_game_starts_afresh(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    h = TilesHarness(path)
    play_plain(h, ["6 base 100"])
    state = {**_carry(h), "first_offer": 9}  # a seat this six-seat table does not have
    h.ledger.append([Record("game.carry", h.table.round_no, {"game": "pai-gow-tiles", "state": state})])
    h.close()
    h = TilesHarness(path)
    assert _carry(h)["rounds_played"] == 0
    refused = list(h.ledger.events(kinds=("game.carry_refused",)))
    assert len(refused) == 1 and "not a seat of this table" in refused[0].data["error"]
    h.close()


def test_a_carried_state_with_one_bad_value_changes_nothing(tmp_path):
    """Every value is checked before any is taken: a bad shooter (checked last) does not leave
    the rounds played and the first offer of the refused state behind."""
    path = tmp_path / "ledger.sqlite3"
    h = TilesHarness(path)
    play_plain(h, ["6 base 100"])
    state = {**_carry(h), "shooter": 9}
    assert state["rounds_played"] == 1
    h.ledger.append([Record("game.carry", h.table.round_no, {"game": "pai-gow-tiles", "state": state})])
    h.close()
    h = TilesHarness(path)
    assert _carry(h)["rounds_played"] == 0  # a new game, not part of the refused state
    assert len(list(h.ledger.events(kinds=("game.carry_refused",)))) == 1
    h.close()
