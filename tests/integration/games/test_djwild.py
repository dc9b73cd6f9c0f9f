"""DJ Wild Stud Poker at the table (58 Pa. Code 687a): 200 simulated rounds balanced to
the cent, one scripted round against a hand computation from the regulation, the
procedure's keypad entries and profile options (controller/games/djwild.py)."""

from __future__ import annotations

import copy
import io
import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from controller.games import procedure_for
from controller.games.base import EntryError, Stack
from controller.games.djwild import DJWild
from controller.rules.cards import parse_cards
from controller.settings.config import parse_profile
from hil.simrun import SimSettings, run_sim
from tests.integration.games.rounds import HandRound
from tests.integration.harness import Harness, records

PROFILE = Path(__file__).resolve().parents[3] / "config" / "tables" / "dj-wild.toml"


def doc(**options) -> dict[str, Any]:
    d = tomllib.loads(PROFILE.read_text(encoding="utf-8"))
    d["game"]["options"].update(options)
    return d


def proc(**options):
    p = parse_profile(doc(**options), "<test>")
    return procedure_for("dj-wild", p)


# --------------------------------------------------------------------------- (a) 200 rounds


@pytest.mark.slow
@pytest.mark.soak
def test_687a_200_simulated_rounds_balance_to_the_cent(tmp_path):
    buf = io.StringIO()
    assert run_sim(SimSettings(game="dj-wild", rounds=200, seed=11, speed=200, state_dir=tmp_path), out=buf) == 0
    out = buf.getvalue()
    lines = out.splitlines()
    assert sum(1 for line in lines if line.startswith("round ")) == 200
    assert lines[-1].startswith("balance: OK (200 rounds")
    # every path of the round was played: raises, folds (ante/blind lost without a raise),
    # the optional wagers, and a card exposed before the raises (§ 687a.13(d))
    assert "raise win" in out and "raise lose" in out
    assert "trips win" in out and "bad-beat win" in out
    assert "ante returned" in out  # § 687a.13(d): hands void
    assert out.count("prog ") > 100


# --------------------------------------------------------------------------- (b) scripted round


def _harness(tmp_path: Path) -> Harness:
    h = Harness(tmp_path / "ledger.db", doc())
    h.table.debounce.add("start_game", False)  # the rig's Start Game pin (§ 687a.8(c))
    return h


def _key(h: Harness, text: str) -> str:
    h.post("keypad", "keypad", msg="ENTRY", text=text)
    return str(h.keypad.calls[-1][1][0])


def _deal(h: Harness, stacks: list[str], remaining: int | None) -> None:
    left = 53
    for i, s in enumerate(stacks, 1):
        cards = list(parse_cards(s, allow_joker=True))
        left -= len(cards)
        h.post("shoe", "shoe", msg="STACK", stack=i, count=len(cards), remaining=left, cards=cards)
    if remaining is not None:
        h.post("shoe", "shoe", msg="REMAINING", remaining=remaining, stacks=len(stacks))


def test_687a_scripted_round_every_result_computed_by_hand(tmp_path):
    """Seats 1-4 play; seat 5 has a Progressive chip and no Ante, seat 6 an unequal Blind.

    Hand computation (§ 687a.6 ranks with deuces and the joker wild; paytables § 687a.12):

    dealer  Jk 2h 2d Ah As  -> five aces: five-of-a-kind (three wild cards)
    seat 1  9h 9d 9s 2c Kd  -> four 9s with the wild 2c; raises.  Ante $10, Blind $10, Raise $20,
            Trips $5, Progressive $1.
            Lower than five of a kind (§ 687a.11(e)(3)): ante -1000, blind -1000, raise -2000.
            Progressive: no joker to replace; the deuce at face value -> three 9s, 9 to 1: +900.
            Trips DJWT-05 "With Wild" four-of-a-kind 6 to 1 on $5: +3000.
    seat 2  5c 6c 7c 8c 9c  -> natural straight flush; raises.  Ante $5, Blind $5, Raise $10,
            Bad Beat $5, Progressive $1.
            Lower than five of a kind: ante -500, blind -500, raise -1000.
            Progressive: straight flush, 10% of the meter (the wager is not lost: net 0).
            Bad Beat DJWBB-01: a straight flush losing to the dealer, 500 to 1 on $5: +250000.
    seat 3  3c 3d 3h 7s Qd  -> natural three 3s; FOLDS.  Ante $5, Blind $5, Trips $1.
            Fold forfeits Ante and Blind (§ 687a.11(b)): -500, -500; Trips stands
            (§ 687a.11(b)(1)): natural three-of-a-kind 6 to 1: +600.
    seat 4  Ad Kc Qc Js Td  -> natural straight, ace high; raises.  Ante $25, Blind $25, Raise $50,
            Bad Beat $1, Progressive $1.
            Lower: -2500, -2500, -5000.  Progressive straight 30 to 1: +3000.
            Bad Beat: a straight losing, 100 to 1 on $1: +10000.
    envy    seat 2's straight flush pays every other Progressive seat the Envy column's $300
            (reading 687a-5): seat 4 +30000, seat 1 +30000 (seat 3 has none; seat 5's was refused).
    order   from the dealer's far left (§ 687a.11(e), reading 687a-8): seats 1, 2, 3, 4, then the envy.
    meter   $2,000 seed + 3 accepted $1 wagers x 20.5% = $2,000.615 at the count confirmation;
            the hit pays 10% of $2,000.61 = $200.061 -> 20006 cents, the fraction stays.
    """
    h = _harness(tmp_path)
    assert h.state == "open_for_wagers"
    h.shuffled()
    for text in (
        "BET 1 ante 10",
        "BET 1 blind 10",
        "BET 1 trips 5",
        "BET 2 ante 5",
        "BET 2 blind 5",
        "BET 2 bad-beat 5",
        "BET 3 ante 5",
        "BET 3 blind 5",
        "BET 3 trips 1",
        "BET 4 ante 25",
        "BET 4 blind 25",
        "BET 4 bad-beat 1",
        "BET 6 ante 10",
        "BET 6 blind 15",
    ):
        assert not _key(h, text).startswith("ERROR"), text
    assert _key(h, "BET 1 raise 20").startswith("ERROR")  # a Raise only after the cards (§ 687a.11(b))
    for seat in (1, 2, 4, 5):
        h.edge(f"bet.progressive.{seat}", True)
    h.press("start_game")  # § 687a.8(c): freezes and lights them
    assert h.state == "no_more_bets"
    wagers = h.rnd.wagers
    assert (5, "progressive") not in wagers and (6, "ante") not in wagers and (6, "blind") not in wagers
    assert sorted(s for (s, w) in wagers if w == "progressive") == [1, 2, 4]
    rejected = {(r.data["seat"], r.data["spot"]) for r in records(h, "wager.rejected")}
    assert rejected == {(5, "progressive"), (6, "ante"), (6, "blind")}
    for seat in (1, 2, 4, 5):
        h.edge(f"bet.progressive.{seat}", False)  # the dealer collects them
    h.press("confirm")
    assert h.state == "dispensing"
    assert h.table.meters["primary"].value == Fraction(200_000) + 3 * Fraction(205, 10)
    # § 687a.10(b),(c): seats 1..4 from the dealer's far left, the dealer, the replacement card
    assert h.rnd.to_dispense == [
        Stack("seat:1", 5),
        Stack("seat:2", 5),
        Stack("seat:3", 5),
        Stack("seat:4", 5),
        Stack("dealer", 5),
        Stack("replacement", 1),
    ]
    _deal(
        h,
        ["9h 9d 9s 2c Kd", "5c 6c 7c 8c 9c", "3c 3d 3h 7s Qd", "Ad Kc Qc Js Td", "Jk 2h 2d Ah As", "4c"],
        remaining=53 - 26,
    )  # first round since start-up: stub counted
    assert h.state == "raise_or_fold"
    assert "from seat 1" in h.keypad.calls[-1][1][0]
    assert _key(h, "RAISE 2").startswith("ERROR: seat 1 decides first")
    for text in ("RAISE 1", "RAISE 2", "FOLD 3"):
        assert not _key(h, text).startswith("ERROR"), text
    assert _key(h, "RAISE 3").startswith("ERROR: seat 3 has already folded")
    _key(h, "RAISE 4")
    assert h.state == "floor_validation"  # the straight flush's 10% of meter
    assert h.rnd.wagers[(4, "raise")] == 5000 and (3, "raise") not in h.rnd.wagers
    got = [(r.seat, r.wager, r.outcome, r.net) for r in h.rnd.results]
    assert got == [
        (1, "ante", "lose", -1000),
        (1, "blind", "lose", -1000),
        (1, "raise", "lose", -2000),
        (1, "progressive", "win", 900),
        (1, "trips", "win", 3000),
        (2, "ante", "lose", -500),
        (2, "blind", "lose", -500),
        (2, "raise", "lose", -1000),
        (2, "progressive", "win", 0),
        (2, "bad-beat", "win", 250000),
        (3, "ante", "lose", -500),
        (3, "blind", "lose", -500),
        (3, "trips", "win", 600),
        (4, "ante", "lose", -2500),
        (4, "blind", "lose", -2500),
        (4, "raise", "lose", -5000),
        (4, "progressive", "win", 3000),
        (4, "bad-beat", "win", 10000),
        (1, "progressive-envy", "win", 30000),
        (4, "progressive-envy", "win", 30000),
    ]
    hands = {(r.seat, r.wager): r.hand for r in h.rnd.results}
    assert hands[(1, "trips")] == "wild-four-of-a-kind" and hands[(3, "trips")] == "natural-three-of-a-kind"
    assert hands[(2, "progressive")] == "straight-flush" and hands[(1, "progressive")] == "three-of-a-kind"
    assert h.rnd.pending_hits[0].meter_fraction == Fraction(1, 10)
    h.press("key")  # the floorperson validates
    assert h.state == "open_for_wagers"
    (paid,) = records(h, "meter.payout")
    assert paid.data["cents"] == 20006 and paid.data["seat"] == 2
    assert h.table.meters["primary"].value == Fraction(200_000) + Fraction(615, 10) - 20006
    h.close()


def test_687a_13_d_card_exposed_before_the_raises(tmp_path):
    """§ 687a.13(d): all hands void and the wagers returned — a Raise already made too
    (reading 687a-9) — but the Progressive and Trips are settled on the hands as dealt."""
    h = _harness(tmp_path)
    h.shuffled()
    for text in (
        "BET 1 ante 10",
        "BET 1 blind 10",
        "BET 1 trips 5",
        "BET 1 bad-beat 5",
        "BET 2 ante 5",
        "BET 2 blind 5",
    ):
        _key(h, text)
    h.edge("bet.progressive.2", True)
    h.press("start_game")
    h.edge("bet.progressive.2", False)
    h.press("confirm")
    _deal(h, ["Kc Kd Kh 4s 8d", "Jk 5h 5d 9s Qc", "Ac 7d 3c 6s Th", "6c"], remaining=53 - 16)
    _key(h, "RAISE 1")
    assert _key(h, "EXPOSED").startswith("CARD EXPOSED")
    assert h.state == "open_for_wagers"
    got = {(r.data["seat"], r.data["wager"]): (r.data["outcome"], r.data["net"]) for r in records(h, "wager.result")}
    assert got == {
        (1, "ante"): ("returned", 0),
        (1, "blind"): ("returned", 0),
        (1, "bad-beat"): ("returned", 0),
        (1, "raise"): ("returned", 0),
        (1, "trips"): ("win", 3000),  # natural three kings, 6 to 1 on $5
        (2, "ante"): ("returned", 0),
        (2, "blind"): ("returned", 0),
        # the joker replaced by the card set aside (6c): 5h 5d 9s Qc 6c, one pair (§ 687a.11(f)(1))
        (2, "progressive"): ("lose", -100),
    }
    # every returned wager goes back to its player as a payout
    payouts = sum(r.data["cents"] for r in records(h, "payout"))
    assert payouts == 1000 + 1000 + 500 + 2000 + (500 + 3000) + 500 + 500
    h.close()


# --------------------------------------------------------------------------- (c) keypad entries


def test_687a_11_e_two_hits_paid_from_the_dealers_far_left_first(tmp_path):
    """Two percentage-of-meter hits in one round, paid one at a time in the settlement order,
    each from the meter as it then stands (§ 687a.12(c)).  § 687a.11(e) settles "beginning with
    the player farthest to the dealer's left" (reading 687a-8): seat 1's royal flush (100% of
    the meter) first, all of $2,000.41 ($2,000 seed + two $1 wagers at 20.5%); the meter is
    reset to the seed; then seat 4's straight flush, 10% of $2,000.00 = $200.00.  From the
    dealer's far right (an earlier reading) seat 4 took 10% of $2,000.41 first and
    seat 1 the rest."""
    h = _harness(tmp_path)
    h.shuffled()
    for text in ("BET 1 ante 5", "BET 1 blind 5", "BET 4 ante 5", "BET 4 blind 5"):
        assert not _key(h, text).startswith("ERROR"), text
    for seat in (1, 4):
        h.edge(f"bet.progressive.{seat}", True)
    h.press("start_game")
    for seat in (1, 4):
        h.edge(f"bet.progressive.{seat}", False)
    h.press("confirm")
    _deal(h, ["As Ks Qs Js Ts", "9h 8h 7h 6h 5h", "Kd Kc 8c 6c 4d", "3d"], remaining=53 - 16)
    for text in ("RAISE 1", "RAISE 4"):
        assert not _key(h, text).startswith("ERROR"), text
    assert h.state == "floor_validation"
    hits = [(r.seat, r.hand, r.meter_fraction) for r in h.rnd.pending_hits]
    assert hits == [(1, "royal-flush", Fraction(1)), (4, "straight-flush", Fraction(1, 10))]
    assert h.table.meters["primary"].value == 200_041
    h.press("key")
    assert h.table.meters["primary"].value == 200_000  # reset to the seed (no reserve)
    h.press("key")
    assert h.state == "open_for_wagers"
    pays = [(e.data["seat"], e.data["order"], e.data["cents"]) for e in records(h, "meter.payout")]
    assert pays == [(1, 1, 200_041), (4, 2, 20_000)]
    assert h.table.meters["primary"].value == 180_000
    h.close()


def test_687a_7_c_no_wager_after_start_game_but_the_raise(tmp_path):
    """§ 687a.7(c): "All wagers, except Raise Wagers, shall be placed prior to the dealer
    announcing 'no more bets'" (the Start Game button, § 687a.8(c)): a keyed wager and a
    Progressive chip placed after it are refused and recorded; the Raise is taken later."""
    h = _harness(tmp_path)
    h.shuffled()
    for text in ("BET 1 ante 5", "BET 1 blind 5"):
        assert not _key(h, text).startswith("ERROR"), text
    h.press("start_game")
    assert h.state == "no_more_bets"
    assert _key(h, "BET 1 trips 5").startswith("ERROR")
    h.edge("bet.progressive.1", True)  # a chip placed after "no more bets"
    assert (1, "trips") not in h.rnd.wagers and (1, "progressive") not in h.rnd.wagers
    assert any(r.data["spot"] == "progressive" for r in records(h, "wager.rejected"))
    h.edge("bet.progressive.1", False)
    h.press("confirm")
    _deal(h, ["As Ks Qs Js Ts", "Kd Kc 8c 6c 4d"], remaining=53 - 10)
    assert _key(h, "RAISE 1") == "SEAT 1 RAISES 10.00"  # the Raise: after the cards (§ 687a.11(b))
    assert h.state == "open_for_wagers"
    h.close()


def _round(p, wagers: dict[Any, int]) -> HandRound:
    hr = HandRound(1, wagers)
    hr.open(p, "raise")
    return hr


@pytest.mark.parametrize(
    "text, error",
    [
        ("", "empty entry"),
        ("RAISE", "enter RAISE <seat>"),
        ("RAISE x", "'x' is not a seat number"),
        ("RAISE 5", "seat 5 is not playing"),
        ("RAISE 3", "seat 1 decides first"),
        ("DOUBLE 1", "enter RAISE <seat>"),
        ("REPLACEMENT 4c", "only when the hands were keyed"),
        ("EXPOSED now", "enter RAISE <seat>"),
    ],
)
def test_687a_11_b_bad_entries_refused_and_change_nothing(text, error):
    p = proc()
    hr = _round(p, {(1, "ante"): 500, (1, "blind"): 500, (3, "ante"): 1000, (3, "blind"): 1000})
    before = (dict(hr.ds("raise").answers), copy.deepcopy(p.play), dict(hr.round.wagers))
    with pytest.raises(EntryError, match=error):
        hr.apply(p, "raise", text)
    assert (dict(hr.ds("raise").answers), p.play, dict(hr.round.wagers)) == before


def test_687a_11_b_raise_is_two_times_the_ante_and_fold_makes_none():
    p = proc()
    hr = _round(p, {(1, "ante"): 500, (1, "blind"): 500, (3, "ante"): 1000, (3, "blind"): 1000})
    assert hr.ds("raise").required == (1, 3)
    e = hr.apply(p, "raise", "fold 1")
    assert e.late == {} and p.play.raised == {1: False} and e.answer == (1, "fold")
    e = hr.apply(p, "raise", "RAISE 3")
    assert e.late == {(3, "raise"): 2000}
    with pytest.raises(EntryError, match="already raised"):
        hr.apply(p, "raise", "RAISE 3")


def test_687a_7_d_1_ante_and_equal_blind_required_at_the_lockout():
    p = proc()
    refused = p.reject_unsupported(
        {
            (1, "ante"): 500,
            (1, "blind"): 500,
            (1, "trips"): 100,
            (2, "ante"): 500,
            (2, "blind"): 1000,
            (2, "progressive"): 100,
            (3, "blind"): 500,
            (4, "trips"): 100,
        }
    )
    assert set(refused) == {(2, "ante"), (2, "blind"), (2, "progressive"), (3, "blind"), (4, "trips")}
    assert "must equal the Ante" in refused[(2, "ante")]
    with pytest.raises(EntryError, match="after the player has examined"):
        p.keyed_wager(1, "raise", 1000)
    with pytest.raises(EntryError, match="outside"):
        p.keyed_wager(1, "ante", 100)  # below the table minimum ($5)


def test_687a_10_b_c_stacks_from_the_dealers_far_left_and_the_replacement_card():
    p = proc()
    hr = HandRound(1, {(5, "ante"): 500, (5, "blind"): 500, (2, "ante"): 500, (2, "blind"): 500})
    assert p.plan(hr.round, "main") == [Stack("seat:2", 5), Stack("seat:5", 5), Stack("dealer", 5)]
    hr.wagered.wagers[(5, "progressive")] = 100
    assert p.plan(hr.round, "main")[-1] == Stack("replacement", 1)  # § 687a.10(c), § 687a.11(f)(1)
    assert p.plan(HandRound(2).round, "main") == []  # nobody plays: nothing dealt


def test_687a_10_d_stub_counted_at_least_every_n_rounds():
    p = proc(stub_every_rounds=3)
    due = []
    for n in range(1, 9):
        p.begin_round()
        hr = HandRound(n)
        hr.dealt.dealt_stacks = [Stack("seat:1", 5)]
        rnd = hr.round
        due.append(p.stub_due(rnd))
        p.round_ended(rnd, void=False)
    assert due == [True, False, False, True, False, False, True, False]
    assert not proc(shuffler_counts=True).stub_due(rnd)


@pytest.mark.parametrize(
    "options, error",
    [
        ({"colour": "red"}, "colour: unknown option"),
        ({"keyed": ["insurance"]}, "keyed"),
        ({"trips_paytable": "DJWT-01"}, "trips_paytable"),
        ({"bad_beat_paytable": "DJWT-05"}, "bad_beat_paytable"),
        ({"stub_every_rounds": 6}, "at least once every 5 rounds"),
        ({"progressive_on_fold": "yes"}, "true or false"),
        ({"ante_min_cents": 0}, "ante_min_cents"),
    ],
)
def test_profile_options_validated(options, error):
    with pytest.raises(ValueError, match=error):
        proc(**options)


def test_profile_progressive_wager_must_match_the_paytable_687a_12_c():
    d = doc()
    d["progressive"]["wager"] = "$5"
    with pytest.raises(ValueError, match="is for a \\$1.00 wager"):
        procedure_for("dj-wild", parse_profile(d, "<test>"))
    d["progressive"].update(
        paytable="DJ Wild Progressive 2", seed="$10,000", envy_paytable="DJ Wild Progressive 2 Envy"
    )
    p = procedure_for("dj-wild", parse_profile(d, "<test>"))
    assert isinstance(p, DJWild)
    assert p.wagers["progressive"].fixed_cents == 500 and p.config.progressive_paytable == "DJ Wild Progressive 2"


def test_687a_13_g_shoe_out_of_order_hands_keyed_then_raise_or_fold(tmp_path):
    """§ 687a.13(g): the shoe marked out of order, the dealer deals by hand and keys every
    hand; the players then raise or fold (Phase.after_entry), the card set aside is keyed
    because a Progressive hand holds the joker, and the round settles on the keyed cards.

    seat 1  Jk 9h 9d 4s Kd (joker wild: three 9s) raises; dealer 7c 7d 3s 5h Qc (pair of 7s):
            ante +1000, blind push (three of a kind or less, § 687a.12(b)), raise +2000.
            Progressive: the joker replaced by the 9c -> natural three 9s, 9 to 1: +900."""
    h = _harness(tmp_path)
    h.table.mark_out_of_order("shoe", "tech-1", "manual")
    h.pump()
    for text in ("BET 1 ante 10", "BET 1 blind 10"):
        _key(h, text)
    h.edge("bet.progressive.1", True)
    h.press("start_game")
    h.edge("bet.progressive.1", False)
    h.press("confirm")
    assert h.state == "hand_entry"
    assert _key(h, "1 Jk 9h 9d 4s").startswith("ERROR")  # five cards (§ 687a.10(b))
    _key(h, "1 Jk 9h 9d 4s Kd")
    assert _key(h, "DONE").startswith("ERROR")  # the dealer's hand is missing
    _key(h, "DEALER 7c 7d 3s 5h Qc")
    _key(h, "DONE")
    assert h.state == "raise_or_fold"
    assert h.rnd.decisions["raise"].required == (0, 1)  # 0: the replacement card
    assert _key(h, "REPLACEMENT 9h").startswith("ERROR")  # already in a hand
    _key(h, "RAISE 1")
    assert h.state == "raise_or_fold"  # still waiting for the card set aside
    _key(h, "REPLACEMENT 9c")
    assert h.state == "open_for_wagers"
    got = [(r.data["wager"], r.data["outcome"], r.data["net"]) for r in records(h, "wager.result")]
    assert got == [("ante", "win", 1000), ("blind", "push", 0), ("raise", "win", 2000), ("progressive", "win", 900)]
    h.close()


def test_cards_not_read_are_counted_and_keyed_even_when_the_stub_is_not_due(tmp_path):
    """The shoe did not read the cards: the stub is counted and the dealer keys the hands,
    whatever the § 687a.10(d) cadence; then raise or fold as usual."""
    h = Harness(tmp_path / "ledger.db", doc(shuffler_counts=True))
    h.table.debounce.add("start_game", False)
    h.shuffled()
    for text in ("BET 2 ante 5", "BET 2 blind 5"):
        _key(h, text)
    h.press("start_game")
    h.press("confirm")
    for i in (1, 2):
        h.post("shoe", "shoe", msg="STACK", stack=i, count=5, remaining=53 - 5 * i, cards=[0xFF] * 5)
    assert h.state == "stub_check"
    h.post("shoe", "shoe", msg="REMAINING", remaining=43, stacks=2)
    assert h.state == "hand_entry"
    _key(h, "2 As Ad Ac 5d 6d")
    _key(h, "DEALER Ks Kd 8c 9h Th")
    _key(h, "DONE")
    assert h.state == "raise_or_fold" and h.rnd.decisions["raise"].required == (2,)
    _key(h, "RAISE 2")
    got = [(r.data["wager"], r.data["outcome"], r.data["net"]) for r in records(h, "wager.result")]
    assert got == [("ante", "win", 500), ("blind", "push", 0), ("raise", "win", 1000)]
    h.close()
