"""Face Up Pai Gow Poker at the table (58 Pa. Code 688a): 200 simulated rounds
balanced to the cent, scripted rounds whose every result is computed by hand from
the regulation, progressive hits with the wager returned / not returned and the
reserve, the keypad entries of the hand-setting phase, and the profile's checks."""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest

from controller.games import procedure_for
from controller.games.base import DecisionState, EntryError
from controller.games.faceup import DealerShown
from controller.rules.cards import parse_cards
from controller.rules.positions import delivery_order, seat_to_position
from controller.settings.config import parse_profile
from hil.simrun import SimSettings, run_sim
from tests.integration.games.rounds import HandRound
from tests.integration.harness import Harness, records

DOC: dict[str, Any] = {
    "game": {
        "id": "face-up",
        "seats": 6,
        "positions": 7,
        "options": {"ace_high_paytable": "Ace High 1", "fortune_paytable": "Face Up Fortune 1"},
    },
    "progressive": {
        "paytable": "Face Up Progressive 4",
        "wager": "$5",
        "seed": "$10,000",
        "increment_rate": "1%",
        "reserve_rate": "1%",
    },
}
PROG1 = {
    "paytable": "Face Up Progressive 1",
    "wager": "$1",
    "seed": "$10,000",
    "increment_rate": "28%",
    "reserve_rate": "0%",
}


def doc(**progressive: Any) -> dict[str, Any]:
    d = copy.deepcopy(DOC)
    if progressive:
        d["progressive"] = progressive
    return d


def stacks(start: int, hands: dict[str, str]) -> list[list[int]]:
    """Seven stacks of seven in dispensing order, clockwise from ``start`` (§ 688a.10(c));
    ``hands`` by "dealer" or seat number; unnamed positions get the cards left over."""
    want = {(1 if k == "dealer" else seat_to_position(int(k), 6)): list(parse_cards(v)) for k, v in hands.items()}
    used = [c for cs in want.values() for c in cs]
    assert len(set(used)) == len(used)
    pool = [c for c in range(53) if c not in used]
    return [want[p] if p in want else [pool.pop(0) for _ in range(7)] for p in delivery_order(start, 7)]


def key(h: Harness, text: str) -> str:
    h.post("keypad", "keypad", msg="ENTRY", text=text)
    return str([a[0] for name, a in h.keypad.calls if name == "prompt"][-1])


def play(
    h: Harness,
    keyed: list[str],
    sensed: list[int],
    dice: tuple[int, int, int],
    hands: dict[str, str],
    entries: list[str],
) -> None:
    h.shuffled()
    for text in keyed:
        assert not key(h, text).startswith("ERROR"), text
    for s in sensed:
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    for s in sensed:
        h.edge(f"bet.progressive.{s}", False)  # the dealer collects the chips
    h.press("confirm")
    h.dice(dice)
    start = (sum(dice) - 1) % 7 + 1  # § 688a.5(i)(1)(iii)
    for i, st in enumerate(stacks(start, hands), 1):
        h.post("shoe", "shoe", msg="STACK", stack=i, count=7, remaining=53 - 7 * i, cards=st)
    h.post("shoe", "shoe", msg="REMAINING", remaining=4, stacks=7)  # § 688a.10(d): four left
    assert h.state == "setting_hands"
    for text in entries:
        assert not key(h, text).startswith("ERROR"), text


def results(h: Harness, rnd: int) -> list[tuple[int, str, str, int]]:
    return [
        (r.data["seat"], r.data["wager"], r.data["outcome"], r.data["net"])
        for r in records(h, "wager.result")
        if r.round == rnd
    ]


# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.soak
def test_688a_200_simulated_rounds_balance_to_the_cent(tmp_path):
    buf = io.StringIO()
    assert run_sim(SimSettings(game="face-up", rounds=200, seed=7, speed=200, state_dir=tmp_path), out=buf) == 0
    out = buf.getvalue()
    lines = out.splitlines()
    assert sum(1 for line in lines if line.startswith("round ")) == 200
    assert lines[-1].startswith("balance: OK (200 rounds")
    # every path exercised: wins, pushes, losses, surrenders, voided hands, optional wagers, envy
    for what in (
        "base win",
        "base push",
        "base lose",
        "base surrender",
        "base returned",
        "ace-high win",
        "fortune win",
        "prog full-house",
        "envy(",
    ):
        assert what in out, what


# ---------------------------------------------------------------------------------------------
# Round 1, computed by hand.  Dice 2+3+4 = 9 -> position (9-1) % 7 + 1 = 2 = seat 6 (§ 688a.5(i)(1)(iii));
# stacks clockwise from there: seat 6, dealer, seat 1, seat 2, seat 3, seat 4, seat 5 (§ 688a.10(c)).
ROUND1 = {
    "dealer": "9c 9d Kh Qc 7s 5d 3h",  # one pair, no ace-high pai gow; house way: 9 9 7 5 3 / K Q
    "6": "Tc Td Th 4c 4d 2s 8h",  # full house
    "1": "6c 6d 6h 6s Jd 8c 2c",  # four of a kind (an Envy Bonus Qualifying Hand, § 688a.1)
    "2": "Ks Qh 8s 5h 3s 2h 7c",  # king high
    "3": "Jc Jh 9h 7h 4h 3d Ac",  # pair of jacks (surrenders)
    "4": "Qs Qd Ts 9s 5c 4s Kd",  # pair of queens, set foul
    "5": "7d 8d Js Kc 2d 3c 5s",  # voids the hand
}


def test_688a_scripted_round_every_result_computed_by_hand(tmp_path):
    """The deal as § 688a.10 orders it: the starting position from the shaker's dice (§ 688a.10(b)),
    seven stacks of seven clockwise from it (§ 688a.10(c)), four cards left and the round played on
    (§ 688a.10(d),(e)); then every wager settled as computed by hand below."""
    h = Harness(tmp_path / "l.db", doc())
    meter0 = h.table.meters["primary"].value
    assert meter0 == 1_000_000  # Paytable 4 seed $10,000 (§ 688a.12(d))
    play(
        h,
        [
            "BET 6 base 10",
            "BET 1 base 20",
            "BET 1 fortune 5",
            "BET 2 base 15",
            "BET 2 fortune 5",
            "BET 3 base 25",
            "BET 4 base 10",
            "BET 4 ace-high 5",
            "BET 5 base 10",
        ],
        sensed=[1, 2, 5, 6],
        dice=(2, 3, 4),
        hands=ROUND1,
        entries=["SUR 3", "SET 4 Qs Qd", "VOID 5", "DONE"],
    )
    assert h.state == "open_for_wagers"
    rnd = h.table.round_no - 1
    # Hand computation (cents), settlement order seats 6, 5, ..., 1 (§ 688a.11(e)):
    # dealer: pair of 9s, house way high 9c 9d 7s 5d 3h / low Kh Qc; not an Ace High Pai Gow (§ 688a.6(d)).
    want = [
        # § 688a.13(d): seat 5 voids its hand (a card exposed): base $10 and progressive $5 returned
        (5, "base", "returned", 0),
        (5, "progressive", "returned", 0),
        # § 688a.11(d): seat 3 (no optional wager) surrenders: the $25 wager is collected
        (3, "base", "surrender", -2500),
        # seat 6 by the house way (full house: the pair in front): high Tc Td Th 2s 8h (three tens) beats
        # the dealer's pair of 9s, low 4c 4d (pair) beats K-Q: both higher, wins 1 to 1 (§ 688a.11(f)(3),
        # § 688a.12(a)): +$10
        (6, "base", "win", 1000),
        # seat 4 set Qs Qd in front, K-T-9-5-4 behind: the high hand ranks below the low hand, a foul:
        # loses (§ 688a.11(c), (f)(1)(iii)): -$10
        (4, "base", "lose", -1000),
        # seat 2 by the house way (no pair: the highest card behind, the 2nd and 3rd in front):
        # high K-7-5-3-2 < pair of 9s, low Q-8 < K-Q: loses (§ 688a.11(f)(1)(i)): -$15
        (2, "base", "lose", -1500),
        # seat 1 by the house way (four 6s, never split): high 6-6-6-6-2 beats the 9s, low J-8 below K-Q:
        # one hand higher, a tie (§ 688a.11(f)(2)(i)): 0
        (1, "base", "push", 0),
        # § 688a.11(h)(1)(i)(A): the dealer has no Ace High Pai Gow: seat 4's $5 Ace High Bonus loses
        (4, "ace-high", "lose", -500),
        # § 688a.11(h)(2)(i), § 688a.12(c) Paytable 1: seat 2 king high: -$5; seat 1 four of a kind 20 to 1: +$100
        (2, "fortune", "lose", -500),
        (1, "fortune", "win", 10_000),
        # § 688a.11(h)(2)(ii): seat 1's four of a kind earns each other Envy lammer (§ 688a.8(b)(1): beside
        # every Qualifying Wager, a $5 Fortune or a $5 Progressive, § 688a.1) the Paytable 1 Envy of $5:
        # seat 6 (its $5 Progressive) and seat 2 — not seat 1 for its own hand (reading 688a-8)
        (6, "fortune-envy", "win", 500),
        (2, "fortune-envy", "win", 500),
        # § 688a.12(d) Paytable 4 ($5, original wager returned): seat 6 full house $25: +$25; seat 2 no
        # full house or better, collected: -$5; seat 1 four of a kind $100: +$100
        (6, "progressive", "win", 2500),
        (2, "progressive", "lose", -500),
        (1, "progressive", "win", 10_000),
        # Paytable 4 Progressive Envy: four of a kind $25 to each other $5 Progressive wager: seats 6 and 2
        (6, "progressive-envy", "win", 2500),
        (2, "progressive-envy", "win", 2500),
    ]
    assert results(h, rnd) == want
    # the table hands back wager + win on every positive result, envy included
    paid = sorted((r.data["seat"], r.data["wager"], r.data["cents"]) for r in records(h, "payout") if r.round == rnd)
    assert paid == sorted(
        [
            (5, "base", 1000),
            (5, "progressive", 500),
            (6, "base", 2000),
            (1, "base", 2000),
            (1, "fortune", 10_500),
            (6, "fortune-envy", 500),
            (2, "fortune-envy", 500),
            (6, "progressive", 3000),
            (1, "progressive", 10_500),
            (6, "progressive-envy", 2500),
            (2, "progressive-envy", 2500),
        ]
    )
    # meter: 4 accepted $5 wagers x 1% = 20 cents at the count (§ 688a.12(d), § 688a.10(a)(2)(ii)),
    # seat 5's 5 cents taken back with its voided hand; the reserve (1%) holds 15 cents
    m = h.table.meters["primary"]
    assert m.value == 1_000_015 and m.reserve == 15
    assert [r.data["seat"] for r in records(h, "meter.void") if r.round == rnd] == [5]


ROUND2 = {
    "dealer": "Ac Kd 9h 7s 5c 3d 2h",  # Ace High Pai Gow, no joker (§ 688a.1, § 688a.6(d))
    "1": "Ad Qc Jh 8s 6d 4c 3s",  # also an Ace High Pai Gow
    "2": "Ks Kh Qd Ts 8c 6h 4d",  # pair of kings, set foul
    "3": "9s 9d 7h 6c 5d 2c 2s",  # surrenders
}


def test_688a_11_f_2_iii_dealer_ace_high_pai_gow_pushes_and_pays_the_ace_high_bonus(tmp_path):
    h = Harness(tmp_path / "l.db", doc())
    play(
        h,
        ["BET 1 base 10", "BET 1 ace-high 5", "BET 2 base 10", "BET 2 ace-high 10", "BET 3 base 10"],
        sensed=[1],
        dice=(1, 1, 1),
        hands=ROUND2,
        entries=["SET 2 Ks Kh", "SUR 3", "DONE"],
    )
    rnd = h.table.round_no - 1
    assert results(h, rnd) == [
        (3, "base", "surrender", -1000),  # § 688a.11(d): surrendered before the exposure
        (2, "base", "push", 0),  # § 688a.11(f)(2)(iii): the push, although fouled (688a-2)
        (1, "base", "push", 0),  # § 688a.11(f)(2)(iii)
        (2, "ace-high", "win", 8000),  # § 688a.12(b) Paytable 1: only the dealer, no joker, 8 to 1
        (1, "ace-high", "win", 10_000),  # both dealer and player have ace high, 20 to 1
        (1, "progressive", "lose", -500),  # ace high: no full house or better (§ 688a.11(h)(3)(i)(A))
    ]


@pytest.mark.parametrize(
    "prog, hand, net, meter_after",
    [
        # Paytable 1 ($1): 7 card straight flush 100% of meter, original wager NOT returned: the player
        # gets the meter (10,000.28 = seed + 28% of $1) and loses the $1 (net -100); reseed $10,000
        (PROG1, "seven-card-straight-flush", -100, 1_000_000),
        # Paytable 4 ($5): $5,000 and 100% of meter, original wager returned (net +$5,000); the meter
        # (seed + 1% of $5) is paid, then reseeded with $10,000 plus the 1% reserve (5 cents)
        (DOC["progressive"], "seven-card-natural-straight-flush", 500_000, 1_000_005),
    ],
)
def test_688a_12_d_meter_hit_wager_returned_or_not_and_reserve(tmp_path, prog, hand, net, meter_after):
    h = Harness(tmp_path / "l.db", doc(**prog))
    play(h, ["BET 1 base 10"], sensed=[1], dice=(1, 1, 1), hands={"1": "2h 3h 4h 5h 6h 7h 8h"}, entries=["DONE"])
    assert h.state == "floor_validation"  # § 688a.11(h)(3)(i)(B)(3)
    before = h.table.meters["primary"].value
    h.press("key")
    assert h.state == "open_for_wagers"
    rnd = h.table.round_no - 1
    hit = [r for r in records(h, "wager.result") if r.round == rnd and r.data["wager"] == "progressive"][0]
    assert (hit.data["hand"], hit.data["net"]) == (hand, net)
    assert [r.data["cents"] for r in records(h, "meter.payout")] == [int(before)]
    assert h.table.meters["primary"].value == meter_after


# ---------------------------------------------------------------------------------------------
def proc_and_round(d: dict[str, Any] | None = None):
    proc = procedure_for("face-up", parse_profile(d or doc(), "<t>"))
    wagers = {(1, "base"): 1000, (1, "fortune"): 500, (2, "base"): 1000, (3, "base"): 500, (3, "progressive"): 500}
    hr = HandRound(1, wagers, proc)
    for k, v in {
        "dealer": "9c 9d Kh Qc 7s 5d 3h",
        "seat:1": "Tc Td Th 4c 4d 2s 8h",
        "seat:2": "6c 6d 6h 6s Jd 8c 2c",
        "seat:3": "Ks Qh 8s 5h 3s 2h 7c",
    }.items():
        hr.dealt.cards[k] = parse_cards(v)
    hr.open(proc, "settings")
    return proc, hr


@pytest.mark.parametrize(
    "text, match",
    [
        ("", "empty"),
        ("HELLO", "enter SET"),
        ("SET 1 Tc", "enter SET"),
        ("SET 4 Tc Td", "seat 4 is not playing"),
        ("SET x Tc Td", "not a seat number"),
        ("SET 1 Tc Zz", "Zz"),
        ("SET 1 Tc Tc", "Tc"),
        ("SET 1 As Td", "As is not one of seat 1's cards"),
        ("SUR 1", "fortune wager and may not surrender"),  # § 688a.11(d)
        ("SUR 3", "progressive wager and may not surrender"),
        ("DONE now", "enter SET"),
    ],
)
def test_688a_11_bad_entries_are_refused_and_change_nothing(text, match):
    proc, hr = proc_and_round()
    before = (copy.deepcopy(proc.play), copy.deepcopy(hr.decided))
    with pytest.raises(EntryError, match=match):
        hr.apply(proc, "settings", text)
    assert (proc.play, hr.decided) == before


def test_688a_11_b_the_dealers_hands_are_set_and_shown_before_the_players_decide():
    """§ 688a.11(b): the dealer's seven cards set by the house way and shown (the prompt and the
    round's line) before any player sets his hands; nothing is shown before the cards are in."""
    proc = procedure_for("face-up", parse_profile(doc(), "<t>"))
    HandRound(1, {(1, "base"): 1000}, proc)
    assert proc.describe(HandRound(1, {}).round) == ""
    proc, hr = proc_and_round()
    assert proc.describe(hr.round) == "dealer 9d 9c 7s 5d 3h / Kh Qc"
    assert proc.decision_prompt(hr.round, "settings").startswith("DEALER 9d 9c 7s 5d 3h / Kh Qc: ")


def test_688a_11_entries_set_surrender_void():
    proc, hr = proc_and_round()
    rnd = hr.round
    assert proc.play.dealer == DealerShown("9d 9c 7s 5d 3h", "Kh Qc", False)
    assert proc.decision_prompt(rnd, "settings").startswith("DEALER 9d 9c 7s 5d 3h / Kh Qc: SET")
    e = hr.apply(proc, "settings", "set 1 4c 4d")
    assert e.reply == "SEAT 1 Tc Td Th 2s 8h / 4c 4d" and proc.play.low == {
        1: (parse_cards("4c")[0], parse_cards("4d")[0])
    }
    assert hr.apply(proc, "settings", "SET 2 Jd 8c").reply == "SEAT 2 6c 6d 6h 6s 2c / Jd 8c"
    assert hr.apply(proc, "settings", "SUR 2").record == {"seat": 2, "decision": "surrender"}
    assert 2 not in proc.play.low  # a surrender replaces the setting
    with pytest.raises(EntryError, match="surrendered"):
        hr.apply(proc, "settings", "SET 2 Jd 8c")
    with pytest.raises(EntryError, match="already surrendered"):
        hr.apply(proc, "settings", "SUR 2")
    hr.apply(proc, "settings", "VOID 3")  # § 688a.13(d)
    with pytest.raises(EntryError, match="voided"):
        hr.apply(proc, "settings", "SET 3 Ks Qh")
    assert not hr.ds("settings").done
    hr.apply(proc, "settings", "DONE")
    assert hr.ds("settings").done


def test_688a_11_c_a_foul_setting_is_taken_and_shown():
    proc, hr = proc_and_round()
    # equal pairs front and back are not a foul (docs/rules-readings/688a.md 688a-4)
    assert not hr.apply(proc, "settings", "SET 2 6c 6d").reply.endswith("FOUL")
    e = hr.apply(proc, "settings", "SET 3 Ks Qh")  # 8-7-5-3-2 behind K-Q
    assert e.reply.endswith(" FOUL") and e.record["foul"] is True


def test_no_players_no_decisions():
    proc, hr = proc_and_round()
    hr.wagered.wagers = {}
    assert proc.decision_state(hr.round, "settings") == DecisionState(done=True)


# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "change, match",
    [
        (lambda d: d["game"]["options"].update(colour="red"), "'colour' is not an option of face-up"),
        (lambda d: d["game"]["options"].update(house_way="nope"), "house_way = 'nope'"),
        (lambda d: d["game"]["options"].update(envy_receivers="all"), "envy_receivers"),
        (lambda d: d["game"]["options"].update(ace_high_paytable="Ace High 9"), "ace_high_paytable = 'Ace High 9'"),
        (lambda d: d["game"]["options"].update(fortune_paytable="Ace High 1"), "not a face-up fortune"),
        (lambda d: d["game"]["options"].update(base_min_cents="5"), "base_min_cents"),
        (lambda d: d["progressive"].update(paytable="Face Up Fortune 1"), "not a face-up progressive"),
        (
            lambda d: d["progressive"].update(seed="$5,000"),
            r"seed = \$5,000.00, but Face Up Progressive 4 fixes \$10,000",
        ),
        (lambda d: d["progressive"].update(increment_rate="2%"), "increment_rate = 2%, but .* fixes 1%"),
        (lambda d: d["progressive"].update(reserve_rate="0%"), "reserve_rate = 0%, but .* fixes 1%"),
        (lambda d: d["progressive"].update(wager="$1"), r"wager = \$1.00, but .* fixes \$5.00"),
        (lambda d: d["progressive"].update(envy_paytable="Face Up Fortune Envy 1"), "envy_paytable"),
    ],
)
def test_688a_12_profile_checks_name_the_option(change, match):
    d = doc()
    change(d)
    with pytest.raises(ValueError, match=match):
        procedure_for("face-up", parse_profile(d, "<t>"))


def test_profile_without_optional_wagers_or_progressive():
    d = doc()
    d["game"]["options"] = {}
    del d["progressive"]
    proc = procedure_for("face-up", parse_profile(d, "<t>"))
    assert list(proc.wagers) == ["base"]
    assert list(procedure_for("face-up", parse_profile(doc(), "<t>")).wagers) == [
        "base",
        "ace-high",
        "fortune",
        "progressive",
    ]


def test_run_check_refuses_a_face_up_profile_that_does_not_match_its_paytable(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    from controller.books.ledgerkey import init_key
    from controller.cli import main

    init_key(tmp_path / "creds" / "tablectl-ledger-key")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path / "creds"))

    root = Path(__file__).resolve().parents[3]
    prof = tmp_path / "fu.toml"
    prof.write_text((root / "config/tables/face-up.toml").read_text().replace('seed = "$10,000"', 'seed = "$5,000"'))
    table = tmp_path / "table.toml"
    table.write_text(
        (root / "config/examples/table.toml").read_text().replace('profile = "six-card-fortune"', f'profile = "{prof}"')
    )
    assert main(["run", "--config", str(table), "--check", "--offline"]) == 2
    assert "seed = $5,000.00, but Face Up Progressive 4 fixes $10,000.00" in capsys.readouterr().err
    table.write_text(
        (root / "config/examples/table.toml").read_text().replace('profile = "six-card-fortune"', 'profile = "face-up"')
    )
    assert main(["run", "--config", str(table), "--check", "--offline"]) == 0


def test_688a_hands_keyed_then_set_surrendered_or_voided_on_the_keyed_cards(tmp_path):
    """The shoe out of order (§ 688a.13(m)): the dealer keys every hand, then the setting step
    follows on the keyed cards (Phase.after_entry) — a seat may reset its hand, surrender or void
    (§ 688a.11(a)-(d), § 688a.13(d)); an entry before that step is open is refused."""
    h = Harness(tmp_path / "l.db", doc())
    h.shuffled()
    h.post("command", "console", cmd="out_of_order", device="shoe", alternative="manual", by="t", reason="x")
    for t in ("BET 6 base 10", "BET 1 base 20", "BET 3 base 10"):
        assert not key(h, t).startswith("ERROR")
    h.press("lockout")
    h.press("confirm")
    h.dice((2, 3, 4))
    assert h.state == "hand_entry"
    for t in (
        "6 Tc Td Th 2s 8h 4c 4d",
        "1 6c 6d 6h 6s 2c Jd 8c",
        "3 As Kd 7c 5h 3d 2h Jc",
        "DEALER 9c 9d Kh Qc 7s 5d 3h",
    ):
        assert "OK" in key(h, t), t
    assert key(h, "DONE").startswith("DEALER 9d 9c 7s 5d 3h / Kh Qc: SET")
    assert h.state == "setting_hands"
    decided = h.rnd.decisions
    assert isinstance(decided, dict)  # the deciding component's own
    decisions = decided.pop("settings")  # as if its records were not yet durable
    assert key(h, "SUR 3").startswith("ERROR: not ready for entries yet")
    decided["settings"] = decisions
    assert key(h, "SET 6 Kh Qc").startswith("ERROR: Kh is not one of seat 6's cards")
    # seat 1 keyed 6666 2 / J 8 and resets to 6666 8 / J 2: four sixes beat the dealer's high hand and
    # J 2 loses to K Q, a push either way
    assert key(h, "SET 1 Jd 2c") == "SEAT 1 6c 6d 6h 6s 8c / Jd 2c"
    assert key(h, "SUR 3") == "SEAT 3 SURRENDERS"
    key(h, "DONE")
    assert h.state == "open_for_wagers"
    got = {(s, w): (o, n) for s, w, o, n in results(h, 1)}
    assert got[(6, "base")] == ("win", 1000)  # Tc Td Th 8h 2s / 4c 4d beats 9 9 7 5 3 / K Q
    assert got[(1, "base")] == ("push", 0)  # four sixes beat the high hand; J 2 loses to K Q
    assert got[(3, "base")][0] == "surrender"  # § 688a.11(d)
