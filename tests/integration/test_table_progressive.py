"""Progressive table game system at the table: bet sensing and lock-out,
meters, hits, voids and the ledger, through the synchronous harness
(§§ 670a.2(c), 670a.10(a)(2)(ii), 670a.11(h)(3), 670a.12(d))."""

from __future__ import annotations

from fractions import Fraction

from controller.books.history import hits, open_readonly, round_detail
from tests.integration.harness import Harness, profile_doc, records, stacks_for

ROYAL = "As Ks Qs Js Ts 4d"
FIVE_ACES = "Ac Ad Ah As Jk 2c"


def play_to_settlement(h: Harness, seats, dice=(2, 3, 4), hands=None):
    h.shuffled()
    for s in seats:
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    for s in seats:
        h.edge(f"bet.progressive.{s}", False)  # the dealer collects the chips
    h.press("confirm")
    h.dice(dice)
    start = (sum(dice) - 1) % 7 + 1
    h.deal(stacks_for(start, hands or {}))


def test_670a_10_a_2_ii_increments_credited_only_when_count_confirmed(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    for s in (1, 2, 3):
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    assert h.state == "no_more_bets" and h.table.meters["primary"].value == 500_000
    h.press("confirm")
    assert h.table.meters["primary"].value == 500_063


def test_670a_7_c_late_chip_rejected_and_flashed_accepted_set_unchanged(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    h.edge("bet.progressive.2", True)
    h.press("lockout")
    h.edge("bet.progressive.5", True)  # placed after "no more bets"
    assert h.rnd.accepted == {2: 100}
    assert h.lights.mode("light.progressive.5") == "blink-fast"
    assert h.lights.mode("light.progressive.2") == "on"
    rej = records(h, "wager.rejected")
    assert [(e.data["seat"], e.data["reason"]) for e in rej] == [(5, "placed after lock-out")]


def test_lockout_twice_and_chatter_cause_no_fault(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    h.edge("bet.progressive.4", True)
    h.press("lockout")
    h.press("lockout")  # a second press is ignored
    for _ in range(5):
        h.post("input", "bet.progressive.4", active=False)
        h.post("input", "bet.progressive.4", active=True)
    assert h.state == "no_more_bets" and not h.table.tilts
    assert len(records(h, "lockout")) == 1 and h.rnd.accepted == {4: 100}


def test_count_mismatch_is_an_event_and_dealer_may_void(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    for s in (1, 6):
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    h.press("void")  # chips collected != accepted count
    assert [e.data["count"] for e in records(h, "count.mismatch")] == [2]
    assert sorted(e.data["seat"] for e in records(h, "wager.returned")) == [1, 6]
    assert h.state == "open_for_wagers"
    assert h.table.meters["primary"].value == 500_000  # nothing was credited yet


def test_670a_13_m_void_after_confirmation_returns_contributions_as_new_entries(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    for s in (2, 3):
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    h.press("confirm")
    assert h.table.meters["primary"].value == 500_042
    h.dice((1, 1, 1))
    h.post("shoe", "shoe", msg="JAM", stack=3, dispensed=2)  # § 670a.13(m)
    assert h.table.meters["primary"].value == 500_000
    assert len(records(h, "meter.increment")) == 2 and len(records(h, "meter.void")) == 2  # nothing deleted
    assert h.ledger.verify() == []


def test_670a_12_d_3_two_hits_paid_in_settlement_order_each_from_meter_as_it_stands(tmp_path):
    h = Harness(tmp_path / "l.db")
    # seat 5 and seat 2 both hit a royal flush (10% of meter); settlement runs seat 6 -> 1 (§ 670a.11(e))
    play_to_settlement(h, (2, 5), hands={5: ROYAL, 2: "Ah Kh Qh Jh Th 3c"})
    assert h.state == "floor_validation"
    m0 = h.table.meters["primary"].value  # 500,042
    assert m0 == 500_042
    h.press("key")
    first = Fraction(1, 10) * 500_042  # 50,004.2 -> 50,004 cents
    assert h.table.meters["primary"].value == m0 - 50_004
    h.press("key")
    second = (Fraction(1, 10) * (m0 - 50_004)).__floor__()  # from the meter as it then stands
    assert h.table.meters["primary"].value == m0 - 50_004 - second
    assert h.state == "open_for_wagers"
    pays = records(h, "meter.payout")
    assert [(e.data["seat"], e.data["order"], e.data["cents"]) for e in pays] == [(5, 1, 50_004), (2, 2, second)]
    assert int(first) == 50_004
    conn = open_readonly(tmp_path / "l.db")
    assert [(x["seat"], x["order"]) for x in hits(conn) if x["paid_by"] == "attendant"] == [(5, 1), (2, 2)]


def test_670a_12_d_2_hundred_percent_hit_resets_to_seed_and_carries_remainder(tmp_path):
    h = Harness(tmp_path / "l.db", profile_doc(rate="1.5%"))
    play_to_settlement(h, (1, 3, 4), hands={3: FIVE_ACES})
    m = h.table.meters["primary"]
    assert m.value == 500_000 + Fraction(9, 2)  # 3 x 1.5 cents = 4.5 cents, half a cent hidden
    h.press("key")
    m = h.table.meters["primary"]
    assert m.cents == 500_000 and m.remainder == Fraction(1, 2)  # reseeded; the half cent carried
    assert records(h, "meter.payout")[0].data["cents"] == 500_004
    assert m.hits == 1 and m.paid_attendant == 500_004 and m.value == m.expected_value()


def test_fixed_progressive_pays_are_table_paid_and_do_not_move_the_meter(tmp_path):
    h = Harness(tmp_path / "l.db")
    play_to_settlement(h, (1,), hands={1: "7c 7d 7h 7s 2d 5h"})  # four of a kind: 150 for 1
    m = h.table.meters["primary"]
    assert m.value == 500_021 and m.paid_table == 15_000 and m.fixed_hits == 1
    assert h.state == "open_for_wagers"


def test_688a_12_d_reserve_funds_the_next_jackpot(tmp_path):
    h = Harness(tmp_path / "l.db", profile_doc(rate="1%", reserve="1%"))
    play_to_settlement(h, (1, 2), hands={2: FIVE_ACES})
    m = h.table.meters["primary"]
    assert m.value == 500_002 and m.reserve == 2
    h.press("key")
    m = h.table.meters["primary"]
    assert m.value == 500_000 + 2 and m.reserve == 0  # seed + reserve moved in
    assert m.value == m.expected_value()


def test_restart_mid_round_voids_it_and_returns_everything(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    for s in (1, 2, 3, 4):
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    h.press("confirm")
    h.close()  # power lost here
    h2 = Harness(tmp_path / "l.db")
    assert h2.state == "open_for_wagers"
    assert h2.table.meters["primary"].value == 500_000
    rnd = round_detail(open_readonly(tmp_path / "l.db"), 1)
    assert rnd is not None and rnd.status == "void" and len(rnd.returned) == 4 and rnd.increments == 4
    assert h2.ledger.verify() == []


def test_restart_while_waiting_for_validation_resumes_it(tmp_path):
    h = Harness(tmp_path / "l.db")
    play_to_settlement(h, (3,), hands={3: ROYAL})
    assert h.state == "floor_validation"
    h.close()
    h2 = Harness(tmp_path / "l.db")
    assert h2.state == "floor_validation"
    h2.press("key")
    assert h2.state == "open_for_wagers"
    assert [e.data["cents"] for e in records(h2, "meter.payout")] == [50_002]


def test_broken_chain_is_a_tilt_that_survives_restart_until_cleared(tmp_path):
    h = Harness(tmp_path / "l.db")
    play_to_settlement(h, (1,))
    h.close()
    import sqlite3

    db = sqlite3.connect(tmp_path / "l.db")
    db.execute("UPDATE events SET data = replace(data, '\"count\":1', '\"count\":9') WHERE kind = 'lockout'")
    db.commit()
    db.close()
    h2 = Harness(tmp_path / "l.db")
    assert h2.state == "tilt" and "self-check" in h2.table.tilts
    h2.close()
    h3 = Harness(tmp_path / "l.db")
    assert h3.state == "tilt"  # still there after a restart
    h3.post("command", "console", cmd="clear", reason="ledger inspected, lockout record edit logged", by="tech1")
    assert h3.state == "open_for_wagers"
    h3.close()
    h4 = Harness(tmp_path / "l.db")
    assert h4.state == "open_for_wagers"  # acknowledged problems do not re-tilt


def test_tilt_while_a_hit_waits_never_drops_the_hit(tmp_path):
    h = Harness(tmp_path / "l.db")
    play_to_settlement(h, (3,), hands={3: ROYAL})
    assert h.state == "floor_validation"
    h.post("link", "sign", event="lost", detail="nothing received for 4 s")
    assert h.state == "tilt"
    h.press("key")  # no validation while in tilt
    assert records(h, "meter.payout") == []
    h.post("command", "console", cmd="clear", reason="try again", by="tech1")
    assert h.state == "tilt" and len(records(h, "tilt.clear_refused")) == 1  # the sign is still lost
    h.post("link", "sign", event="restored", detail="frames received again")
    h.post("command", "console", cmd="clear", reason="sign cable reseated", by="tech1")
    assert h.state == "floor_validation"  # back to the floorperson
    h.press("key")
    assert [e.data["cents"] for e in records(h, "meter.payout")] == [50_002]
    assert h.state == "open_for_wagers"


def test_clear_needs_a_reason(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.post("link", "shoe", event="fault", detail="no ACK")
    h.post("command", "console", cmd="clear", reason="  ", by="tech1")
    assert h.state == "tilt"
    assert records(h, "tilt.cleared") == []


def test_periodic_full_audit_finds_an_old_edit_and_tilts(make_rig):
    """SPEC § 5: critical data is verified at start-up (from the last checkpoint) and
    periodically (the whole chain); a mismatch is a latched tilt."""
    import sqlite3

    rig = make_rig().start()
    # the table opens only once its start-up records are durable (Table.start): the power.up
    # record is there to edit, with no wait for it here
    rig.table.wait_for(lambda s: s["state"] == "open_for_wagers", 30)
    assert rig.service.audit_ledger() == []
    path = rig.service.ledger.path
    db = sqlite3.connect(path, timeout=30)  # the service may be writing: wait for its lock
    edited = db.execute("UPDATE events SET data = replace(data, 'version', 'versi0n') WHERE kind = 'power.up'")
    assert edited.rowcount == 1
    db.commit()
    db.close()
    problems = rig.service.audit_ledger()
    assert any("does not match its contents" in p for p in problems)
    st = rig.table.wait_for(lambda s: s["state"] == "tilt", 10)
    assert "ledger-audit" in st["tilts"]


def test_670a_7_e_progressive_chip_without_a_base_wager_is_refused_and_flashed(tmp_path):
    doc = profile_doc()
    doc["game"]["options"] = {"keyed": ["base"]}
    h = Harness(tmp_path / "l.db", doc)
    h.shuffled()
    h.post("keypad", "keypad", msg="ENTRY", text="BET 2 base 25")
    h.edge("bet.progressive.2", True)
    h.edge("bet.progressive.5", True)  # no base wager at seat 5
    h.press("lockout")
    assert h.rnd.wagers == {(2, "base"): 2500, (2, "progressive"): 100}
    assert h.lights.mode("light.progressive.5") == "blink-fast"
    assert h.lights.mode("light.progressive.2") == "on"
    refused = [e.data for e in records(h, "wager.rejected")]
    assert refused == [
        {"seat": 5, "spot": "progressive", "reason": "a progressive wager needs a base wager (§ 670a.7(e)(4))"}
    ]


def test_start_method_must_fit_the_game(tmp_path):
    import pytest

    doc = profile_doc()
    doc["game"]["start_method"] = "none"
    with pytest.raises(ValueError, match="has a starting position"):
        Harness(tmp_path / "l.db", doc)
