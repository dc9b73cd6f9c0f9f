"""The LAP controller's schema against a real PostgreSQL (cf. N.J.A.C. 13:69E-1.39B and
9 NYCRR 5321.18 for a local-area progressive controller, which § 688a.2(d) / § 605a.8 send us to):
exact meters with carried remainders, idempotent events, per-table roles under row-level
security, hits ordered and priced in the database, parameters only with the link stopped."""

from __future__ import annotations

import json
import threading
import time
from fractions import Fraction

import psycopg
import pytest
from psycopg import sql

from controller.lap.config import parse_lap
from controller.lap.lap import LapError
from tests.link.conftest import lap_doc


def contrib(lap, table, seq, wager=100, round_no=1, seat=1):
    lap.send(table, seq, "contribution", {"wager": wager, "round": round_no, "seat": seat})


def hit(lap, table, seq, num=1, den=1, round_no=1, seat=1):
    # a claim for a (round, seat) in which the table made a progressive wager (else it is refused)
    data = {"fraction_num": num, "fraction_den": den, "seat": seat, "hand": "royal", "round": round_no}
    lap.send(table, seq, "hit", data)


def refusals(lap) -> list[tuple[str, int, str]]:
    return [(r["table_id"], r["seq"], r["reason"]) for r in lap.store.refusals()]


def test_meter_exact_with_carried_remainder(make_lap):
    lap = make_lap(increment_rate="12.5%")
    contrib(lap, "T1", 1, wager=100)  # 12.5 cents
    m = lap.store.levels()["primary"]
    assert m.value == Fraction(100_000) + Fraction(25, 2) and m.cents == 100_012
    contrib(lap, "T2", 1, wager=100)
    m = lap.store.levels()["primary"]
    assert m.value == 100_025 and m.cents == 100_025  # the half cent carried, not dropped
    assert lap.store.reconcile().ok


def test_resent_event_counts_once(make_lap):
    lap = make_lap()
    for _ in range(3):
        contrib(lap, "T1", 7)
    rec = lap.store.reconcile()
    assert rec.ok and rec.contributions == 1
    assert lap.store.levels()["primary"].value == 100_000 + 21


def test_table_writes_only_its_own_rows(make_lap):
    lap = make_lap()
    s = sql.Identifier(lap.cfg.schema)
    t1 = lap.table("T1")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        t1.execute(
            sql.SQL(
                "INSERT INTO {}.events (table_id, seq, kind, level, data) VALUES ('T2', 1, 'contribution',"
                " 'primary', '{{\"wager\": 100}}')"
            ).format(s)
        )
    for stmt in (
        "UPDATE {}.levels SET value_num = 0",
        "DELETE FROM {}.events",
        "UPDATE {}.events SET data = '{{}}'",
        "INSERT INTO {}.hits VALUES ('primary', 9, 'T1', 9, 1, 1, 'x', 1, 1, 0, 100)",
        "UPDATE {}.link SET state = 'stopped'",
        "UPDATE {}.members SET asset = 'x'",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            t1.execute(sql.SQL(stmt).format(s))
    contrib(lap, "T1", 1)
    contrib(lap, "T2", 1)
    rows = t1.execute(sql.SQL("SELECT table_id FROM {}.events").format(s)).fetchall()
    assert rows == [("T1",)]  # T2's rows are invisible to T1
    members = t1.execute(sql.SQL("SELECT table_id FROM {}.members").format(s)).fetchall()
    assert members == [("T1",)]


def test_records_are_append_only_even_for_the_owner(make_lap):
    lap = make_lap()
    contrib(lap, "T1", 1)
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
        lap.store.conn.execute(sql.SQL("DELETE FROM {}.contributions").format(sql.Identifier(lap.cfg.schema)))


def test_hit_amount_decided_by_the_lap_and_level_resets(make_lap):
    lap = make_lap(reserve_rate="4%", reset="$500")
    contrib(lap, "T2", 1, wager=500)  # 105 to the meter, 20 to the reserve
    hit(lap, "T2", 2)
    h = lap.store._rows("SELECT * FROM {s}.hits")
    assert [(r["order_no"], r["table_id"], r["amount_cents"]) for r in h] == [(1, "T2", 100_105)]
    m = lap.store.levels()["primary"]
    assert m.value == 50_000 + 20 and m.reserve == 0  # reset plus the reserve moved in
    assert lap.store.reconcile().ok


def test_percentage_hit_keeps_the_fraction_in_the_meter(make_lap):
    lap = make_lap(increment_rate="12.5%")
    contrib(lap, "T1", 1, wager=100)  # meter 100,012.5
    hit(lap, "T1", 2, 1, 10)  # 10 % of the 100,012 the sign shows
    h = lap.store._rows("SELECT amount_cents, meter_cents_before FROM {s}.hits")[0]
    assert h["meter_cents_before"] == 100_012 and h["amount_cents"] == 10_001
    assert lap.store.levels()["primary"].value == Fraction(200_025, 2) - 10_001
    assert lap.store.reconcile().ok


def test_two_hits_at_once_are_ordered_and_the_second_is_paid_from_the_reset(make_lap):
    lap = make_lap(reset="$500")
    contrib(lap, "T1", 1, wager=1000)  # +210
    contrib(lap, "T2", 1, wager=100)  # +21
    s = sql.Identifier(lap.cfg.schema)
    a, b = lap.table("T1"), lap.table("T2")
    a.autocommit = b.autocommit = False
    ins = sql.SQL(
        "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth) VALUES (%s, 2, 'hit', 'primary', %s,"
        " %s, %s)"
    )
    body = json.dumps({"fraction_num": 1, "fraction_den": 1, "round": 1, "seat": 1})
    a.execute(ins.format(s), ("T1", body, *lap.auth_raw("T1", 2, "hit", "primary", body)))  # T1's hit holds the level
    done = threading.Event()
    t2_auth = lap.auth_raw("T2", 2, "hit", "primary", body)

    def second():
        b.execute(ins.format(s), ("T2", body, *t2_auth))  # waits for T1's decision
        b.commit()
        done.set()

    th = threading.Thread(target=second)
    th.start()
    time.sleep(0.3)
    assert not done.is_set()  # one decision at a time
    a.commit()
    th.join(10)
    a.autocommit = b.autocommit = True
    h = lap.store._rows("SELECT order_no, table_id, amount_cents FROM {s}.hits ORDER BY order_no")
    assert [(r["order_no"], r["table_id"], r["amount_cents"]) for r in h] == [(1, "T1", 100_231), (2, "T2", 50_000)]
    contrib(lap, "T2", 3, wager=100, round_no=2)
    contrib(lap, "T1", 4, wager=100, round_no=2)
    hit(lap, "T1", 5, round_no=2)
    h = lap.store._rows("SELECT amount_cents FROM {s}.hits WHERE order_no = 3")
    assert h[0]["amount_cents"] == 50_042  # the reset plus what came in after
    assert lap.store.reconcile().ok


def test_void_reverses_exactly(make_lap):
    lap = make_lap(increment_rate="12.5%", reserve_rate="1%")
    contrib(lap, "T1", 1, wager=100)
    contrib(lap, "T1", 2, wager=300)
    lap.send("T1", 3, "void", {"of_seq": 2})
    m = lap.store.levels()["primary"]
    assert m.value == 100_000 + Fraction(25, 2) and m.reserve == 1
    lap.send("T1", 4, "void", {"of_seq": 2})  # voided once only: refused, recorded
    lap.send("T2", 1, "void", {"of_seq": 1})  # T1's contribution is not T2's to void
    assert [(t, q) for t, q, _ in refusals(lap)] == [("T1", 4), ("T2", 1)]
    assert all("no unvoided contribution" in why for _, _, why in refusals(lap))
    lap.send("T1", 5, "void", {"round": 1, "seat": 1})  # by round and seat
    assert lap.store.levels()["primary"].value == 100_000
    assert lap.store.reconcile().ok


def test_paid_must_match_the_answer(make_lap):
    lap = make_lap()
    contrib(lap, "T1", 1)
    hit(lap, "T1", 2)
    lap.send("T1", 3, "paid", {"hit_seq": 2, "cents": 5})
    assert refusals(lap) == [("T1", 3, "no hit 2 of this table answered 5 cents")]
    lap.send("T1", 4, "paid", {"hit_seq": 2, "cents": 100_021})
    assert lap.store._rows("SELECT cents FROM {s}.payouts") == [{"cents": 100_021}]
    lap.send("T1", 5, "paid", {"hit_seq": 2, "cents": 100_021})  # paid twice: refused
    assert refusals(lap)[-1] == ("T1", 5, "hit 2 was paid already")
    assert lap.store.reconcile().ok


@pytest.mark.parametrize("at_limit", ["reserve", "freeze"])
def test_limit(make_lap, at_limit):
    lap = make_lap(limit="$1,000.50", at_limit=at_limit)
    contrib(lap, "T1", 1, wager=1000)  # 210 offered, 50 fit
    m = lap.store.levels()["primary"]
    assert m.cents == 100_050
    assert (m.reserve, m.overflow) == ((160, 0) if at_limit == "reserve" else (0, 160))
    assert lap.store.reconcile().ok


def test_parameters_change_only_with_the_link_stopped_and_are_recorded(make_lap, lap_schema):
    lap = make_lap(increment_rate="21%")
    contrib(lap, "T1", 1, wager=100)
    cfg2 = parse_lap(lap_doc(lap_schema, increment_rate="12.5%"), "lap.toml")
    with pytest.raises(LapError, match="only with the link stopped"):
        lap.store.configure(cfg2)
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):  # the database refuses it too
        lap.store.conn.execute(sql.SQL("UPDATE {}.levels SET rate_num = 1").format(sql.Identifier(lap_schema)))
    lap.store.set_state("stopped")
    assert lap.store.configure(cfg2) == ["level primary: rate_num 21 -> 1", "level primary: rate_den 100 -> 8"]
    lap.store.set_state("running")
    contrib(lap, "T1", 2, wager=100)
    assert lap.store.levels()["primary"].value == 100_021 + Fraction(25, 2)
    changes = [(c["what"], c["key"], c["old"], c["new"]) for c in lap.store.param_changes()]
    assert ("link", "state", "running", "stopped") in changes
    lv = [c for c in changes if c[0] == "levels" and c[2] is not None]
    assert len(lv) == 1 and (lv[0][2]["rate_num"], lv[0][3]["rate_num"]) == (21, 1)
    assert lap.store.reconcile().ok


def test_batch_records_the_chain_head_and_checks_the_totals(make_lap):
    lap = make_lap()
    contrib(lap, "T1", 3, wager=100)
    contrib(lap, "T1", 5, wager=200)
    lap.batch("T1", 5, 3, 300, "5:" + "cd" * 32)  # the table says it sent one more than the LAP holds
    m = lap.store._rows("SELECT reconciled_seq, mismatch FROM {s}.members WHERE table_id = 'T1'")[0]
    assert m["reconciled_seq"] == 0 and "3 events" in m["mismatch"]
    rec = lap.store.reconcile()
    assert not rec.ok and "T1" in rec.problems[0]
    lap.batch("T1", 5, 2, 300, "5:" + "ab" * 32)
    m = lap.store._rows("SELECT reconciled_seq, chain_head, mismatch FROM {s}.members WHERE table_id = 'T1'")[0]
    assert m == {"reconciled_seq": 5, "chain_head": "5:" + "ab" * 32, "mismatch": None}
    assert lap.store.reconcile().ok


def test_reconcile_finds_a_meter_changed_behind_the_lap(make_lap):
    lap = make_lap()
    contrib(lap, "T1", 1)
    assert lap.store.reconcile().ok
    lap.store.conn.execute(
        sql.SQL("UPDATE {}.levels SET value_num = value_num + 1").format(sql.Identifier(lap.cfg.schema))
    )
    rec = lap.store.reconcile()
    assert not rec.ok and "level primary" in rec.problems[0]


def test_a_notification_is_a_doorbell_that_carries_no_value(make_lap, pg_dsn):
    """Any role may NOTIFY any channel: the LAP's own notifications say only *what* changed (the
    uplinks read the values from the rows, controller/uplink/lapview.py).  A contribution rings
    nothing (the LAP rings the meters' doorbell at a bounded rate), a hit at once."""
    lap = make_lap()
    from controller.lap.lap import connect

    listener = connect(pg_dsn)
    listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(lap.cfg.schema)))
    contrib(lap, "T2", 1)
    assert list(listener.notifies(timeout=0.5)) == []
    hit(lap, "T2", 2)
    got = [json.loads(n.payload) for n in listener.notifies(timeout=2, stop_after=1)]
    assert got == [{"t": "meter", "level": "primary"}]
    assert lap.store.push_meters(None) == lap.store.push_meters(None)  # nothing moved: no doorbell
    seen = lap.store.push_meters(None)
    contrib(lap, "T2", 3, round_no=2)
    assert lap.store.push_meters(seen) != seen  # a level moved: the LAP rang the meters' doorbell
    got = [json.loads(n.payload) for n in listener.notifies(timeout=2, stop_after=1)]
    listener.close()
    assert got == [{"t": "meter"}]
