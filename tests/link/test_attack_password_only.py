"""The attacker holds only a table's database credentials (the password in ``uplink.toml``,
sniffed or copied): no ledger key, no link key, no access to the table's Pi.  Nothing they can
write moves money: every event and batch head carries an HMAC under the table's own link key
(controller/lap/schema_auth.py), checked by the database before the rules run; a record that
fails is not stored, is recorded (``refusals``, kind ``forged``) and closes that table's linked
wager with the reason on the floor view (N.J.A.C. 13:69E-1.39B, 9 NYCRR 5321.18: the controller
decides every amount — and so must know whose record it decides on).

And the other way: a record the LAP holds for a table that the table's ledger does not hold (the
database's owner or the LAP's host wrote it, with the key) is found by the table's uplink, closes
the table with an alert on the floor view, is named by ``tablectl lap --reconcile``, and such a
hit is never counted as paid."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import throwaway_key
from controller.cli import main
from controller.core.records import Kind
from controller.lap.floor import FloorData
from controller.lap.lap import wait_until
from controller.lap.linkauth import sign_event
from controller.lap.linkkeys import enrol, revoke
from controller.uplink.uplink import Uplink, UplinkConfig
from tests.link.test_uplink import FakeTableSocket

CONTRIBUTION = {"seat": 1, "round": 99999, "wager": 500, "rate_version": 1}
HIT = {"fraction_num": 1, "fraction_den": 1, "seat": 1, "round": 99999, "hand": "seven-card-straight-flush"}


def insert(lap: Any, table: str, seq: int, kind: str, data: Any, key_no: Any = None, auth: Any = None) -> None:
    """As ``table``'s role (its password only), as the issue's attacker typed it."""
    lap.table(table).execute(
        sql.SQL(
            "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth)"
            " VALUES (%s, %s, %s, 'primary', %s, %s, %s)"
        ).format(sql.Identifier(lap.cfg.schema)),
        (table, seq, kind, json.dumps(data), key_no, auth),
    )


def forged(lap: Any) -> list[tuple[str, int, str]]:
    return [(r["table_id"], r["seq"], r["reason"]) for r in lap.store.refusals() if r["kind"] == "forged"]


def closed(lap: Any, table: str = "T1") -> str | None:
    got: str | None = lap.store._rows("SELECT closed FROM {s}.members WHERE table_id = %s", (table,))[0]["closed"]
    return got


def held(lap: Any, table: str = "T1") -> list[int]:
    rows = lap.store._rows("SELECT seq FROM {s}.events WHERE table_id = %s ORDER BY seq", (table,))
    return [int(r["seq"]) for r in rows]


def test_the_issues_attack_a_forged_round_and_its_hit_of_the_whole_meter_moves_nothing(make_lap):
    lap = make_lap(max_wager="$10")
    before = lap.store.levels()["primary"]
    insert(lap, "T1", 1, "contribution", CONTRIBUTION)  # no authenticator
    insert(lap, "T1", 2, "hit", HIT, 1, "ab" * 32)  # a made-up one
    assert lap.store.levels()["primary"] == before  # the meter unchanged, not reset
    assert lap.store._rows("SELECT * FROM {s}.hits") == [] and lap.store._rows("SELECT * FROM {s}.contributions") == []
    assert held(lap) == []  # not stored: the genuine records 1 and 2 can still arrive
    got = forged(lap)
    assert [(t, s) for t, s, _ in got] == [("T1", 1), ("T1", 2)]
    assert "no authenticator" in got[0][2] and "does not verify under this table's link key 1" in got[1][2]
    assert closed(lap) is not None and "not this table's" in str(closed(lap))
    assert closed(lap, "T2") is None  # the other table plays on
    floor = FloorData(lap.dsn, lap.cfg.schema)
    try:
        pic = floor.snapshot()
    finally:
        floor.close()
    assert pic["closed_by_lap"] == {"T1": closed(lap)}  # the reason, on the floor view
    assert {(r["table_id"], r["kind"]) for r in pic["refusals"]} == {("T1", "forged")}
    assert lap.store.reconcile().ok
    # the genuine record for seq 1 arrives after and is taken
    lap.send("T1", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    assert held(lap) == [1]


def test_a_hit_claim_for_a_genuine_round_is_refused(make_lap):
    lap = make_lap()
    lap.send("T1", 1, "contribution", {"wager": 100, "round": 7, "seat": 1})  # the table's own, signed
    before = lap.store.levels()["primary"]
    claim = {"fraction_num": 1, "fraction_den": 1, "round": 7, "seat": 1, "hand": "royal"}
    insert(lap, "T1", 2, "hit", claim)
    # the genuine contribution's authenticator on the claim: it covers another record
    genuine = lap.store._rows("SELECT key_no, auth FROM {s}.events WHERE seq = 1")[0]
    insert(lap, "T1", 3, "hit", claim, genuine["key_no"], genuine["auth"])
    assert lap.store.levels()["primary"] == before and lap.store._rows("SELECT * FROM {s}.hits") == []
    assert [s for _t, s, _r in forged(lap)] == [2, 3] and closed(lap) is not None


def test_a_replayed_genuine_record_of_another_table_or_an_earlier_round_is_refused(make_lap):
    lap = make_lap()
    lap.send("T2", 1, "contribution", {"wager": 500, "round": 1, "seat": 1})
    lap.send("T1", 1, "contribution", {"wager": 500, "round": 1, "seat": 1})
    lap.send("T1", 2, "hit", {"fraction_num": 1, "fraction_den": 10, "round": 1, "seat": 1, "hand": "x"})
    before = lap.store.levels()["primary"]
    rows = {
        (r["table_id"], r["seq"]): r
        for r in lap.store._rows("SELECT table_id, seq, data, key_no, auth FROM {s}.events")
    }
    t2 = rows[("T2", 1)]
    insert(lap, "T1", 3, "contribution", t2["data"], t2["key_no"], t2["auth"])  # T2's, as T1's
    c1, h1 = rows[("T1", 1)], rows[("T1", 2)]
    insert(lap, "T1", 4, "contribution", c1["data"], c1["key_no"], c1["auth"])  # an earlier round's, again
    insert(lap, "T1", 5, "hit", h1["data"], h1["key_no"], h1["auth"])  # its hit, again
    assert lap.store.levels()["primary"] == before
    assert len(lap.store._rows("SELECT * FROM {s}.hits")) == 1
    assert [s for _t, s, _r in forged(lap)] == [3, 4, 5] and closed(lap) is not None and closed(lap, "T2") is None
    # at its own seq a replay is the resend a genuine uplink makes: a no-op
    lap.table("T1").execute(
        sql.SQL(
            "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth) VALUES ('T1', 2, 'hit', 'primary',"
            " %s, %s, %s) ON CONFLICT DO NOTHING"
        ).format(sql.Identifier(lap.cfg.schema)),
        (json.dumps(h1["data"]), h1["key_no"], h1["auth"]),
    )
    assert lap.store.levels()["primary"] == before and len(lap.store._rows("SELECT * FROM {s}.hits")) == 1


def test_a_record_signed_with_another_tables_key_is_refused(make_lap):
    lap = make_lap()
    before = lap.store.levels()["primary"]
    lap.send("T1", 1, "contribution", {"wager": 500, "round": 1, "seat": 1}, key=lap.keys["T2"])
    # T2's key under T1's key number too: the key is the table's, found by (table, number)
    assert lap.keys["T2"].key_no == lap.keys["T1"].key_no
    assert lap.store.levels()["primary"] == before and held(lap) == []
    ((_t, seq, why),) = forged(lap)
    assert seq == 1 and "does not verify" in why and closed(lap) is not None


def test_a_forged_batch_head_does_not_move_the_recorded_head(make_lap):
    lap = make_lap()
    lap.send("T1", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    lap.table("T1").execute(
        sql.SQL(
            "INSERT INTO {}.batches (table_id, last_seq, events_total, wagers_total, chain_head)"
            " VALUES ('T1', 1, 1, 100, '1:' || repeat('e', 64))"
        ).format(sql.Identifier(lap.cfg.schema))
    )
    m = lap.store._rows("SELECT reconciled_seq, chain_head FROM {s}.members WHERE table_id = 'T1'")[0]
    assert m == {"reconciled_seq": 0, "chain_head": None}
    assert lap.store._rows("SELECT * FROM {s}.batches") == []
    (r,) = [r for r in lap.store.refusals() if r["kind"] == "forged-batch"]
    assert r["seq"] == 1 and "no authenticator" in r["reason"] and closed(lap) is not None
    lap.batch("T1", 1, 1, 100, "1:" + "e" * 64)  # the genuine one moves it
    assert lap.store._rows("SELECT reconciled_seq FROM {s}.members WHERE table_id = 'T1'")[0]["reconciled_seq"] == 1


def test_a_table_role_cannot_read_the_link_keys_nor_file_a_refusal_against_another_table(make_lap):
    lap = make_lap()
    s = sql.Identifier(lap.cfg.schema)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        lap.table("T1").execute(sql.SQL("SELECT * FROM {}.link_keys").format(s))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # another table's row: its policy refuses
        lap.table("T1").execute(
            sql.SQL(
                "INSERT INTO {}.events (table_id, seq, kind, level, data) VALUES ('T2', 1, 'contribution', 'primary',"
                " '{{}}')"
            ).format(s)
        )
    assert lap.store.refusals() == [] and closed(lap, "T2") is None


def test_a_rotated_key_takes_the_records_in_flight_and_a_revoked_key_nothing(make_lap):
    lap = make_lap()
    old = lap.keys["T1"]
    lap.send("T1", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    new = enrol(lap.store.conn, lap.cfg.schema, "T1")  # tablectl lap --enrol-table T1
    assert new.key_no == old.key_no + 1
    lap.send("T1", 3, "contribution", {"wager": 100, "round": 3, "seat": 1}, key=new)  # the new key's first
    lap.send("T1", 2, "contribution", {"wager": 100, "round": 2, "seat": 1}, key=old)  # in flight: taken
    lap.send("T1", 4, "contribution", {"wager": 100, "round": 4, "seat": 1}, key=old)  # after it: refused
    assert held(lap) == [1, 2, 3]
    ((_t, seq, why),) = forged(lap)
    assert seq == 4 and "replaced by a later key from record 3" in why
    lap.store.reopen("T1", "test")
    revoke(lap.store.conn, lap.cfg.schema, "T1", new.key_no)  # tablectl lap --revoke-key T1:2
    lap.send("T1", 5, "contribution", {"wager": 100, "round": 5, "seat": 1}, key=new)
    assert held(lap) == [1, 2, 3] and "was revoked" in forged(lap)[-1][2]
    changes = [(c["key"], c["new"]) for c in lap.store.param_changes() if c["what"] == "link_key"]
    assert ("T1", {"key_no": new.key_no, "revoked": True}) in changes


def lap_toml(tmp_path: Path, schema: str) -> Path:
    """The test group's lap.toml as a file (conftest's lap_doc: the commands read a file)."""
    toml = tmp_path / "lap.toml"
    lines = [f'[link]\ngroup = "pit"\nschema = "{schema}"\nallow_async_replication = true\n']
    lines.append('[levels.primary]\nseed = "$1,000"\nreset = "$1,000"\nincrement_rate = "21%"\nmax_wager = "$10"\n')
    lines.append('meter_pays = ["100%", "10%"]\n[tables.T1]\nasset = "A-1001"\ngame = "six-card-fortune"\n')
    lines.append('[tables.T2]\nasset = "A-1002"\ngame = "six-card-fortune"\n')
    toml.write_text("".join(lines))
    return toml


def test_enrol_and_revoke_are_commands(make_lap, pg_dsn, tmp_path, capsys):
    lap = make_lap()
    toml = lap_toml(tmp_path, lap.cfg.schema)
    out = tmp_path / "t1.link.key"
    base = ["lap", "--sim", "--db", pg_dsn, "--config", str(toml)]
    assert main([*base, "--enrol-table", "T1", "--key-out", str(out)]) == 0
    assert "link key 2 written" in capsys.readouterr().out
    assert out.stat().st_mode & 0o777 == 0o600
    from controller.lap.linkauth import read_key

    k = read_key(out)
    assert (k.schema, k.table_id, k.key_no) == (lap.cfg.schema, "T1", 2)
    lap.send("T1", 1, "contribution", {"wager": 100, "round": 1, "seat": 1}, key=k)
    assert held(lap) == [1]
    assert main([*base, "--enrol-table", "T1", "--key-out", str(out)]) == 2  # never over a key file
    assert main([*base, "--enrol-table", "T9", "--key-out", str(tmp_path / "t9")]) == 1
    assert "not a member table" in capsys.readouterr().err
    assert main([*base, "--revoke-key", "T1:2"]) == 0
    assert main([*base, "--revoke-key", "T1:2"]) == 1
    assert main([*base, "--revoke-key", "T1"]) == 2


# ---------------------------------------------------------------------------- the other way


def _contrib(seat: int, round_no: int) -> Record:
    return Record(Kind.LINK_CONTRIBUTION, round_no, {"level": "primary", "wager": 100, "seat": seat})


@pytest.fixture
def linked(make_lap, pg_dsn, tmp_path):
    lap = make_lap()
    key = throwaway_key()
    ledger = Ledger(tmp_path / "ledger.sqlite3", "T1", key=key)
    table = FakeTableSocket(tmp_path / "link.sock")
    dsn = psycopg.conninfo.make_conninfo(pg_dsn, user=lap.cfg.role_for("T1"))
    cfg = UplinkConfig(
        dsn, lap.cfg.schema, "T1", Path(tmp_path / "ledger.sqlite3"), tmp_path / "link.sock", poll_s=0.2, key=key,
        link_key=lap.keys["T1"], memory_s=lap.cfg.reconcile_s,
    )  # fmt: skip
    u = Uplink(cfg, log=lambda m: None)
    yield lap, ledger, table, u
    u.stop()
    table.close()
    ledger.close()


def test_a_record_the_lap_holds_that_the_ledger_does_not_closes_the_table_and_is_never_paid(linked, pg_dsn, capsys):
    lap, ledger, table, u = linked
    ledger.append([_contrib(1, 1), _contrib(2, 1)])
    u.start()
    assert wait_until(lambda: len(lap.store._rows("SELECT * FROM {s}.contributions")) == 2, 10)
    # the table's own records, a hit and its payment among them, are its ledger's: nothing found
    hit = ledger.append([Record(Kind.LINK_HIT, 1, {"level": "primary", "fraction": "1/10", "seat": 2, "hand": "x"})])
    table.wake(hit[0].seq)
    assert wait_until(lambda: bool(table.of("hit")), 10)
    cents = table.of("hit")[-1]["amount"]
    paid = ledger.append([Record(Kind.LINK_PAID, 1, {"level": "primary", "hit_seq": hit[0].seq, "cents": cents})])
    table.wake(paid[0].seq)
    assert wait_until(lambda: len(lap.store._rows("SELECT * FROM {s}.payouts")) == 1, 10)
    assert wait_until(lambda: u.memory.foreign.payouts == paid[0].seq, 10)
    assert closed(lap) is None and u.memory.foreign_found == 0
    # the LAP's host (the database's owner, who holds the keys) writes a round and a hit of the
    # whole meter for T1, signed, at seqs the ledger never wrote
    k, after = lap.keys["T1"], 1000
    s = sql.Identifier(lap.cfg.schema)
    forged_rows = [
        (after + 100, "contribution", {"wager": 500, "round": 99999, "seat": 1}),
        (after + 101, "hit", {"fraction_num": 1, "fraction_den": 1, "round": 99999, "seat": 1, "hand": "x"}),
    ]
    t0 = time.monotonic()
    for seq, kind, data in forged_rows:
        lap.store.conn.execute(
            sql.SQL(
                "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth)"
                " VALUES ('T1', %s, %s, 'primary', %s, %s, %s)"
            ).format(s),
            (seq, kind, json.dumps(data), k.key_no, sign_event(k, seq, kind, "primary", None, data)),
        )
    assert lap.store._rows("SELECT seq FROM {s}.hits WHERE seq = %s", (after + 101,))  # taken: the key was right
    assert wait_until(lambda: closed(lap) is not None, 10)
    took = time.monotonic() - t0
    with capsys.disabled():
        print(f"\na record the ledger does not hold closed T1 {took:.2f} s after it was written (interval 0.2 s)")
    assert took <= lap.cfg.reconcile_s + 2.0  # within the interval, and the load's slack
    assert "which its ledger does not" in str(closed(lap))

    def foreign() -> set[int]:
        return {int(r["seq"]) for r in lap.store.refusals() if r["kind"] == "foreign"}

    assert wait_until(lambda: foreign() == {after + 100, after + 101}, 5), foreign()
    assert wait_until(lambda: any("ledger does not" in str(m.get("reason")) for m in table.of("refused")), 5)
    # the hit is never counted as paid
    amount = lap.store._rows("SELECT amount_cents FROM {s}.hits WHERE seq = %s", (after + 101,))[0]["amount_cents"]
    paid = {"hit_seq": after + 101, "cents": amount}
    lap.store.conn.execute(
        sql.SQL(
            "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth)"
            " VALUES ('T1', %s, 'paid', 'primary', %s, %s, %s)"
        ).format(s),
        (after + 102, json.dumps(paid), k.key_no, sign_event(k, after + 102, "paid", "primary", None, paid)),
    )
    assert [r["hit_seq"] for r in lap.store._rows("SELECT hit_seq FROM {s}.payouts")] == [hit[0].seq]  # the genuine
    assert any("not counted as paid" in r["reason"] for r in lap.store.refusals() if r["seq"] == after + 102)
    floor = FloorData(lap.dsn, lap.cfg.schema)
    try:
        pic = floor.snapshot()
    finally:
        floor.close()
    assert "T1" in pic["closed_by_lap"] and any(r["kind"] == "foreign" for r in pic["refusals"])
    # named by `tablectl lap --reconcile`
    toml = lap_toml(Path(str(ledger.path)).parent, lap.cfg.schema)
    main(["lap", "--sim", "--db", pg_dsn, "--config", str(toml), "--reconcile"])
    assert f"refused: table T1 record {after + 101} (foreign): event {after + 101}" in capsys.readouterr().out


def test_a_flood_of_forged_records_is_recorded_up_to_a_bound(make_lap):
    from controller.lap.schema_auth import FORGED_KEPT

    lap = make_lap()
    lap.table("T1").execute(
        sql.SQL(
            "INSERT INTO {}.events (table_id, seq, kind, level, data) SELECT 'T1', g, 'contribution', 'primary',"
            " jsonb_build_object('wager', 1, 'round', g, 'seat', 1) FROM generate_series(1, %s) g"
        ).format(sql.Identifier(lap.cfg.schema)),
        (FORGED_KEPT + 500,),
    )
    assert held(lap) == [] and len(forged(lap)) == FORGED_KEPT and closed(lap) is not None
    assert closed(lap, "T2") is None


def test_a_long_history_is_compared_in_parts(linked, monkeypatch):
    from controller.uplink import foreign

    monkeypatch.setattr(foreign, "CHUNK", 3)
    lap, ledger, _table, u = linked
    ledger.append([_contrib(s % 6 + 1, r) for r in range(1, 4) for s in range(4)])  # 12 records
    k = lap.keys["T1"]
    data = {"wager": 500, "round": 99999, "seat": 1}
    lap.store.conn.execute(  # a record of T1 at seq 7, before the uplink sends the ledger's 7
        sql.SQL(
            "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth)"
            " VALUES ('T1', 7, 'contribution', 'primary', %s, %s, %s)"
        ).format(sql.Identifier(lap.cfg.schema)),
        (json.dumps(data), k.key_no, sign_event(k, 7, "contribution", "primary", None, data)),
    )
    u.start()
    assert wait_until(lambda: u.memory.foreign.events >= 12, 15), u.memory.foreign
    assert [r["seq"] for r in lap.store.refusals() if r["kind"] == "foreign"] == [7]
    assert "which its ledger does not" in str(closed(lap))


def test_reconcile_names_a_record_written_behind_the_rules(make_lap, pg_dsn, tmp_path, capsys):
    """The database's owner inserts with triggers skipped (``session_replication_role = replica``):
    the LAP's --reconcile recomputes every held record's authenticator and names it."""
    lap = make_lap()
    lap.send("T1", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute("SET session_replication_role = replica")
        c.execute(
            sql.SQL(
                "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth)"
                " VALUES ('T1', 2, 'hit', 'primary', '{{}}', 1, repeat('a', 64))"
            ).format(sql.Identifier(lap.cfg.schema))
        )
    assert [(r["table_id"], r["seq"]) for r in lap.store.unauthenticated()] == [("T1", 2)]
    toml = str(lap_toml(tmp_path, lap.cfg.schema))
    assert main(["lap", "--sim", "--db", pg_dsn, "--config", toml, "--reconcile"]) == 1
    out = capsys.readouterr().out
    assert "NOT AUTHENTIC: table T1 record 2 (hit)" in out and "record 1 " not in out and "link: FAILED" in out
