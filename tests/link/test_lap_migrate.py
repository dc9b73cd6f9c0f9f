"""A LAP schema of release 4 (no link keys) brought to this release's at the LAP's start
(controller/lap/migrate.py): its records kept, its code then this release's (the catalogue check
against a fresh install), and from then on nothing unauthenticated moves money."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
from psycopg import sql

from controller.lap.config import LapConfig, parse_lap
from controller.lap.lap import LapStore, connect
from controller.lap.linkkeys import enrol
from controller.lap.schema import SCHEMA_VERSION
from tests.link.conftest import lap_doc, own_privileges

V4 = Path(__file__).parent / "data" / "lap_schema_v4.sql"


def _install_v4(c: psycopg.Connection, schema: str, cfg: LapConfig) -> LapStore:
    ddl, grants = V4.read_text().split("-- @GRANTS\n")
    store = LapStore(c, schema)
    with c.transaction():
        c.execute(ddl.replace("@S", schema).encode())
        c.execute(sql.SQL("INSERT INTO {}.link (group_name) VALUES ('pit')").format(sql.Identifier(schema)))
        store._configure_levels(cfg)
        for t in cfg.tables:
            role = cfg.role_for(t.table_id)
            if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                c.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
            c.execute(grants.replace("@S", schema).replace("@R", role).encode())
            c.execute(
                sql.SQL("INSERT INTO {}.members (table_id, role, asset, game) VALUES (%s, %s, %s, %s)").format(
                    sql.Identifier(schema)
                ),
                (t.table_id, role, t.asset, t.game),
            )
    return store


def test_a_version_4_schema_is_migrated_and_then_takes_only_signed_records(pg_dsn, lap_schema):
    cfg = parse_lap(lap_doc(lap_schema), "lap.toml")
    s = sql.Identifier(lap_schema)
    with connect(pg_dsn) as c:
        store = _install_v4(c, lap_schema, cfg)
        assert store.installed() == 4
        store.set_state("running")
        ins = sql.SQL(
            "INSERT INTO {}.events (table_id, seq, kind, level, data) VALUES ('T1', %s, 'contribution', 'primary', %s)"
        ).format(s)
        with connect(pg_dsn, user=cfg.role_for("T1")) as t1:
            t1.execute(ins, (1, json.dumps({"wager": 100, "round": 1, "seat": 1})))  # taken by release 4's rules
        meter = store.levels()["primary"]
        store.set_state("stopped")
        assert store.install("pit") is False  # migrated, not created
        assert store.installed() == SCHEMA_VERSION == 7
        assert store.schema_differences() == []  # its code is this release's, exactly
        # release 4 granted each table's role its rights itself: now its group holds them, the
        # role nothing of its own (what a fresh install's table may do, no more)
        assert own_privileges(c, lap_schema, cfg.role_for("T1")) == []
        assert store.levels()["primary"] == meter and store.reconcile().ok
        store.set_state("running")
        k = enrol(c, lap_schema, "T1")
        from controller.lap.linkauth import sign_event

        with connect(pg_dsn, user=cfg.role_for("T1")) as t1:
            t1.execute(ins, (2, json.dumps({"wager": 100, "round": 2, "seat": 1})))  # unsigned: refused
            data = {"wager": 100, "round": 3, "seat": 1}
            t1.execute(
                sql.SQL(
                    "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth)"
                    " VALUES ('T1', 3, 'contribution', 'primary', %s, %s, %s)"
                ).format(s),
                (json.dumps(data), k.key_no, sign_event(k, 3, "contribution", "primary", None, data)),
            )
        seqs = [r["seq"] for r in store._rows("SELECT seq FROM {s}.contributions ORDER BY seq")]
        assert seqs == [1, 3]
        assert [(r["seq"], r["kind"]) for r in store.refusals()] == [(2, "forged")]
