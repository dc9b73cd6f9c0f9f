"""The attacker holds a table's database role (its password is in
the uplink's DSN) *and its link key* (the Pi's root: with the password alone nothing is taken,
tests/link/test_attack_password_only.py) and talks to the LAP's PostgreSQL directly, as the uplink
would never.

Each money event a genuine table could not have produced is refused *in the database*: kept in
``events``, applied nowhere, recorded in ``refusals`` and closing that table's linked wager with
the reason (``members.closed``, the floor view's data); a batch moves the table's recorded
chain head forward only; a contribution is priced at the rate version it carries."""

from __future__ import annotations

import json
from typing import Any

import pytest
from psycopg import sql

from controller.lap.config import parse_lap
from controller.lap.floor import FloorData
from tests.link.conftest import lap_doc


def send(lap: Any, table: str, seq: int, kind: str, **data: Any) -> None:
    lap.send(table, seq, kind, data)


def refused(lap: Any) -> list[tuple[str, int, str]]:
    return [(r["table_id"], r["seq"], r["reason"]) for r in lap.store.refusals()]


def closed(lap: Any, table: str) -> str | None:
    closed: str | None = lap.store._rows("SELECT closed FROM {s}.members WHERE table_id = %s", (table,))[0]["closed"]
    return closed


def test_a_hit_claim_with_no_progressive_wager_is_refused_recorded_and_closes_the_table(make_lap):
    lap = make_lap()
    send(lap, "T2", 1, "contribution", wager=100, round=4, seat=2)  # another table's wager
    before = lap.store.levels()["primary"]
    send(lap, "T1", 1, "hit", fraction_num=1, fraction_den=1, round=4, seat=2, hand="five aces")  # the whole meter
    assert lap.store._rows("SELECT * FROM {s}.hits") == []
    assert lap.store.levels()["primary"].value == before.value
    assert refused(lap) == [("T1", 1, "this table made no progressive wager in round 4 at seat 2")]
    assert closed(lap, "T1") == (
        "the LAP refused record 1 (hit): this table made no progressive wager in round 4 at seat 2"
    )
    assert closed(lap, "T2") is None  # the other table plays on
    assert lap.store.reconcile().ok  # a refusal is recorded, not a money problem
    floor = FloorData(lap.dsn, lap.cfg.schema)
    try:
        pic = floor.snapshot()
    finally:
        floor.close()
    assert pic["closed_by_lap"] == {"T1": closed(lap, "T1")}  # the floor view's data says why
    assert [(r["table_id"], r["seq"], r["kind"]) for r in pic["refusals"]] == [("T1", 1, "hit")]


@pytest.mark.parametrize(
    ("wager", "why"),
    [
        (10**12, "a wager of 1000000000000 cents is above the level's maximum wager of 1000"),
        (1001, "a wager of 1001 cents is above the level's maximum wager of 1000"),
        (0, "the wager 0 is not a positive whole number of cents"),
        (-500, "the wager -500 is not a positive whole number of cents"),
        (1.5, "the wager 1.5 is not a positive whole number of cents"),
        ("100", "the wager 100 is not a positive whole number of cents"),
        (1e400, "is not a positive whole number of cents"),
    ],
)
def test_an_impossible_contribution_is_refused(make_lap, wager, why):
    # N.J.A.C. 13:69E-1.39A(a): the LAP's "unreasonable contribution" limit (lap.toml max_wager, $10 here)
    lap = make_lap()
    before = lap.store.levels()["primary"]
    c = lap.table("T1")
    body = json.dumps({"wager": wager, "round": 1, "seat": 1}).replace("Infinity", "1e400")
    c.execute(  # signed with T1's link key: the rules refuse what even the Pi's root could send
        sql.SQL(
            "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth)"
            " VALUES ('T1', 1, 'contribution', 'primary', %s, %s, %s)"
        ).format(sql.Identifier(lap.cfg.schema)),
        (body, *lap.auth_raw("T1", 1, "contribution", "primary", body)),
    )
    assert lap.store._rows("SELECT * FROM {s}.contributions") == []
    assert lap.store.levels()["primary"].value == before.value
    ((table, seq, reason),) = refused(lap)
    assert (table, seq) == ("T1", 1) and why in reason
    assert closed(lap, "T1") is not None and lap.store.reconcile().ok


def test_a_second_claim_for_one_round_and_seat_is_refused(make_lap):
    lap = make_lap()
    send(lap, "T1", 1, "contribution", wager=100, round=3, seat=5)
    send(lap, "T1", 2, "hit", fraction_num=1, fraction_den=10, round=3, seat=5, hand="royal")
    first = lap.store._rows("SELECT amount_cents FROM {s}.hits")
    send(lap, "T1", 3, "hit", fraction_num=1, fraction_den=10, round=3, seat=5, hand="royal")
    assert lap.store._rows("SELECT amount_cents FROM {s}.hits") == first  # paid once
    assert refused(lap) == [("T1", 3, "round 3 seat 5 was claimed already")]
    assert lap.store.reconcile().ok


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ({"fraction_num": 1, "fraction_den": 3}, "1/3 of the meter is not a pay of level primary (pays: 1/1, 1/10)"),
        ({"fraction_num": 2, "fraction_den": 20}, None),  # 1/10 however written: a pay of the level
        ({"fraction_num": 1, "fraction_den": 1, "cents": 5}, "the claim names an amount"),
        ({"fraction_num": 3, "fraction_den": 2}, "the meter fraction is not in (0, 1]"),
        ({"fraction_num": "1", "fraction_den": 1}, "the meter fraction is not in (0, 1]"),
    ],
)
def test_a_claim_the_paytable_does_not_have_is_refused(make_lap, claim, why):
    lap = make_lap()  # meter_pays = ["100%", "10%"]
    send(lap, "T1", 1, "contribution", wager=100, round=1, seat=1)
    send(lap, "T1", 2, "hit", round=1, seat=1, hand="x", **claim)
    if why is None:
        assert refused(lap) == [] and len(lap.store._rows("SELECT * FROM {s}.hits")) == 1
    else:
        assert lap.store._rows("SELECT * FROM {s}.hits") == []
        ((_t, _s, reason),) = refused(lap)
        assert why in reason


def test_a_claim_for_a_voided_wager_is_refused(make_lap):
    lap = make_lap()
    send(lap, "T1", 1, "contribution", wager=100, round=2, seat=1)
    send(lap, "T1", 2, "void", of_seq=1)
    send(lap, "T1", 3, "hit", fraction_num=1, fraction_den=1, round=2, seat=1, hand="x")
    assert lap.store._rows("SELECT * FROM {s}.hits") == []
    assert refused(lap) == [("T1", 3, "this table made no progressive wager in round 2 at seat 1")]


# ------------------------------------------------------------------ finding 4: the recorded head


def _batch(lap: Any, table: str, last_seq: int, events: int, wagers: int, head: str) -> None:
    lap.table(table).execute(
        sql.SQL(
            "INSERT INTO {}.batches (table_id, last_seq, events_total, wagers_total, chain_head, key_no, auth)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)"
        ).format(sql.Identifier(lap.cfg.schema)),
        (table, last_seq, events, wagers, head, *lap.batch_auth(table, last_seq, events, wagers, head)),
    )


def _head(lap: Any) -> tuple[int, str]:
    m = lap.store._rows("SELECT reconciled_seq, chain_head FROM {s}.members WHERE table_id = 'T1'")[0]
    return int(m["reconciled_seq"]), str(m["chain_head"])


def test_a_stale_or_forged_batch_does_not_move_the_recorded_head(make_lap):
    lap = make_lap()
    for seq in range(1, 7):
        send(lap, "T1", seq, "contribution", wager=100, round=seq, seat=1)
    _batch(lap, "T1", 6, 6, 600, "6:" + "a" * 64)  # the genuine uplink's batch
    assert _head(lap) == (6, "6:" + "a" * 64)
    for last, head in [
        (0, "0:genesis"),  # rewound to nothing: the rollback check would be off
        (1, "1:forged"),  # rewound to a forged head
        (6, "6:" + "b" * 64),  # resent with another MAC at the same seq
        (9, "9:" + "c" * 64),  # beyond anything the LAP holds
        (7, "6:" + "a" * 64),  # its head names another seq
    ]:
        _batch(lap, "T1", last, last, 100 * last, head)
        assert _head(lap) == (6, "6:" + "a" * 64), (last, head)
    problems = [r["problem"] for r in lap.store._rows("SELECT problem FROM {s}.batches ORDER BY id")][1:]
    assert len(problems) == 5 and all(p.startswith("refused: ") for p in problems)  # each recorded
    assert "is not beyond the 6 already reconciled" in problems[0]
    assert "the LAP holds no event 9 of this table" in problems[3]
    assert "does not name seq 7" in problems[4]
    assert lap.store.reconcile().ok  # a refused batch is recorded, not a mismatch


# ------------------------------------------------------------------ finding 8: rate versions


def test_a_contribution_is_priced_at_the_rate_version_it_carries(make_lap, lap_schema):
    lap = make_lap(increment_rate="21%")
    send(lap, "T1", 1, "contribution", wager=100, round=1, seat=1, rate_version=1)
    lap.store.set_state("stopped")
    lap.store.configure(parse_lap(lap_doc(lap_schema, increment_rate="10%"), "lap.toml"))
    lap.store.set_state("running")
    # a wager taken at 21 % before the change, reaching the LAP after it (the outbox)
    send(lap, "T1", 2, "contribution", wager=100, round=2, seat=1, rate_version=1)
    assert lap.store.levels()["primary"].value == 100_000 + 21 + 21
    send(lap, "T1", 3, "contribution", wager=100, round=3, seat=1, rate_version=2)
    assert lap.store.levels()["primary"].value == 100_000 + 21 + 21 + 10
    assert lap.store._rows("SELECT rate_version FROM {s}.levels")[0]["rate_version"] == 2
    rows = lap.store._rows("SELECT seq, rate_version, rate_num, rate_den FROM {s}.contributions ORDER BY seq")
    assert [(r["seq"], r["rate_version"], r["rate_num"], r["rate_den"]) for r in rows] == [
        (1, 1, 21, 100),
        (2, 1, 21, 100),
        (3, 2, 1, 10),
    ]
    send(lap, "T1", 4, "contribution", wager=100, round=4, seat=1, rate_version=3)  # no such version
    assert refused(lap) == [("T1", 4, "level primary has no rate version 3")]
    assert lap.store.reconcile().ok
