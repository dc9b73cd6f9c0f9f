"""Alternative methods and shuffler faults at the table: the RNG starting
position (§ 670a.5(i)(2)), out-of-order devices (§ 670a.13(n)) with keypad entry
of the winning hands, cards the shoe did not read, and shuffler failures
(§ 670a.13(l))."""

from __future__ import annotations

import pytest

from drivers import protocol as P
from tests.integration.harness import FixedRng, Harness, profile_doc, records

ROYAL = "As Ks Qs Js Ts 4d"


def lock_and_confirm(h, seats):
    h.shuffled()
    for s in seats:
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    h.press("confirm")


def test_670a_5_i_2_rng_draw_counts_from_the_dealer(tmp_path):
    doc = profile_doc()
    doc["game"]["start_method"] = "rng"
    rng = FixedRng([3])
    h = Harness(tmp_path / "l.db", doc, rng=rng)
    lock_and_confirm(h, (2,))
    assert h.state == "dispensing" and rng.draws == [7]  # a number from 1 to 7
    draw = records(h, "rng.draw")[0].data
    assert draw == {"value": 3, "range": 7, "start": 3}
    assert ("message", ("RNG 3 - START POSITION 3",)) in h.sign.calls  # displayed
    assert not [c for c in h.shaker.calls if c[0] == "activate"]


def test_670a_13_n_shaker_out_of_order_uses_the_rng_once_marked(tmp_path):
    h = Harness(tmp_path / "l.db", rng=FixedRng([5]))
    with pytest.raises(ValueError, match="not an alternative"):
        h.table.mark_out_of_order("shaker", "tech1", "coin-toss")
    h.table.mark_out_of_order("shaker", "tech1", "rng")
    h.pump()
    lock_and_confirm(h, (1,))
    assert records(h, "rng.draw")[0].data["value"] == 5
    # the marking is recorded and survives a restart
    h.close()
    h2 = Harness(tmp_path / "l.db", rng=FixedRng([1]))
    assert h2.table.out_of_order == {"shaker": "rng"}


def test_out_of_order_only_between_rounds(tmp_path):
    h = Harness(tmp_path / "l.db")
    lock_and_confirm(h, (1,))
    with pytest.raises(ValueError, match="between rounds"):
        h.table.mark_out_of_order("shoe", "tech1", "manual")


def test_670a_13_n_shoe_out_of_order_dealer_enters_winning_hands(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.table.mark_out_of_order("shoe", "tech1", "manual")
    h.pump()
    for s in (2, 4):
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    h.press("confirm")
    h.dice((1, 2, 3))
    assert h.state == "hand_entry" and not [c for c in h.shoe.calls if c[0] == "dispense"]
    h.post("keypad", "keypad", msg="ENTRY", text="9 As Ks Qs Js Ts 4d")  # no such seat
    h.post("keypad", "keypad", msg="ENTRY", text="4 As Ks Qs Js Ts")  # five cards, not six
    h.post("keypad", "keypad", msg="ENTRY", text="4 As Ks Qs Js Ts Xx")  # not a card
    assert h.rnd.entered == {} and len(records(h, "keypad.rejected")) == 3
    assert any("ERROR" in c[1][0] for c in h.keypad.calls if c[0] == "prompt")
    h.post("keypad", "keypad", msg="ENTRY", text=f"4 {ROYAL}")
    h.post("keypad", "keypad", msg="ENTRY", text="2 As 2c 3d 4h 5s 9c")  # As already entered for seat 4
    h.post("keypad", "keypad", msg="ENTRY", text="DONE")
    assert h.state == "floor_validation"
    res = {r.seat: r for r in h.rnd.results if r.wager == "progressive"}
    assert res[4].hand == "royal-flush" and res[2].outcome == "lose"


def test_unread_cards_go_to_keypad_entry_after_the_stub_check(tmp_path):
    h = Harness(tmp_path / "l.db")
    lock_and_confirm(h, (3,))
    h.dice((2, 2, 2))
    stacks = [[P.CARD_UNREAD] * 6 for _ in range(7)]
    h.deal(stacks)
    assert h.state == "hand_entry"
    assert records(h, "deal")[0].data["cards_read"] is False
    h.post("keypad", "keypad", msg="ENTRY", text="DONE")
    assert h.state == "open_for_wagers"
    res = [e.data for e in records(h, "wager.result")]
    assert [(r["seat"], r["outcome"], r["hand"]) for r in res] == [(3, "lose", "no-winning-hand-entered")]


def test_670a_13_l_shuffler_failure_reshuffles_then_tilts_after_three(tmp_path):
    h = Harness(tmp_path / "l.db")
    shuffles = lambda: len([c for c in h.shoe.calls if c[0] == "shuffle"])  # noqa: E731
    n0 = shuffles()
    h.post("shoe", "shoe", msg="SHUFFLE_FAILED", code=1, cards=53)
    assert shuffles() == n0 + 1 and h.state == "open_for_wagers"  # reshuffled
    h.post("shoe", "shoe", msg="SHUFFLED", cards=53)
    assert h.table.deck_ready and h.table.shuffle_failures == 0
    for _ in range(3):
        h.post("shoe", "shoe", msg="SHUFFLE_FAILED", code=1, cards=53)
    assert h.state == "tilt" and "shoe" in h.table.tilts
    assert len(records(h, "shuffle.failed")) == 4
