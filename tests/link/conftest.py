"""PostgreSQL for the link tests: the server at ``TABLECTL_TEST_PG`` when set, else a throwaway
cluster (controller/lap/pgtemp.py) for the session.  Every test gets its own schema (and so its
own table roles, named after the schema), dropped afterwards, so xdist workers never collide."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from controller.lap.config import LapConfig, parse_lap
from controller.lap.lap import LapStore, connect


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    dsn = os.environ.get("TABLECTL_TEST_PG")
    if dsn:
        yield dsn
        return
    from controller.lap.pgtemp import temp_cluster

    with temp_cluster() as d:
        yield d


def lap_doc(schema: str, tables: int = 2, **level: Any) -> dict[str, Any]:
    lv = {
        "seed": "$1,000",
        "reset": "$1,000",
        "increment_rate": "21%",
        "max_wager": "$10",
        "meter_pays": ["100%", "10%"],
    }
    lv.update(level)
    return {
        "link": {
            "group": "pit",
            "schema": schema,
            "heartbeat": "100ms",
            "reconcile": "200ms",
            "allow_async_replication": True,  # one test cluster, no standby
        },
        "levels": {"primary": lv},
        "tables": {f"T{i + 1}": {"asset": f"A-{1000 + i + 1}", "game": "six-card-fortune"} for i in range(tables)},
    }


def own_privileges(c: psycopg.Connection, schema: str, role: str) -> list[str]:
    """Every privilege ``role`` holds itself (not through a group) on the schema and what is in it."""
    rows = c.execute(
        "SELECT 'table ' || table_name || ' ' || privilege_type FROM information_schema.table_privileges"
        " WHERE table_schema = %(s)s AND grantee = %(r)s"
        " UNION ALL SELECT 'column ' || table_name || '.' || column_name || ' ' || privilege_type"
        " FROM information_schema.column_privileges WHERE table_schema = %(s)s AND grantee = %(r)s"
        " UNION ALL SELECT 'function ' || routine_name FROM information_schema.routine_privileges"
        " WHERE routine_schema = %(s)s AND grantee = %(r)s"
        " UNION ALL SELECT 'schema usage' FROM pg_namespace n, aclexplode(n.nspacl) a"
        " WHERE n.nspname = %(s)s AND a.grantee = %(r)s::regrole",
        {"s": schema, "r": role},
    ).fetchall()
    return [str(r[0]) for r in rows]


class Lap:
    """A test's linked group: the LAP's store plus a connection per table role."""

    def __init__(self, dsn: str, cfg: LapConfig):
        self.dsn, self.cfg = dsn, cfg
        self.store = LapStore(connect(dsn), cfg.schema)
        self.store.install(cfg.group)
        self.store.configure(cfg)
        self.store.set_state("running")
        self._tables: dict[str, psycopg.Connection] = {}
        from controller.lap.linkkeys import enrol

        #: each table's link key, as ``tablectl lap --enrol-table`` makes it (its uplink signs with it)
        self.keys = {t.table_id: enrol(self.store.conn, cfg.schema, t.table_id) for t in cfg.tables}

    def table(self, table_id: str) -> psycopg.Connection:
        if table_id not in self._tables:
            self._tables[table_id] = connect(self.dsn, user=self.cfg.role_for(table_id))
        return self._tables[table_id]

    def send(
        self, table_id: str, seq: int, kind: str, data: dict[str, Any], level: str = "primary", *, key: Any = None
    ) -> None:
        """Insert an event as the table's role, signed with its link key (or ``key``: another
        :class:`~controller.lap.linkauth.LinkKey`, or False for none) as its uplink signs it."""
        import json

        from controller.lap.linkauth import sign_event

        k = self.keys[table_id] if key is None else key
        auth = sign_event(k, seq, kind, level, None, data) if k else None
        c = self.table(table_id)
        c.execute(
            sql.SQL(
                "INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
            ).format(sql.Identifier(self.cfg.schema)),
            (table_id, seq, kind, level, json.dumps(data), k.key_no if k else None, auth),
        )

    def auth_raw(
        self, table_id: str, seq: int, kind: str, level: str, body: str, table_time: str | None = None
    ) -> tuple[int, str]:
        """(key number, MAC) of an event whose data is the JSON text ``body`` exactly as written
        (a float, ``1e400``: what only someone holding the table's link key could sign)."""
        from controller.lap.linkauth import mac

        k = self.keys[table_id]
        row = self.store.conn.execute(
            "SELECT pg_catalog.jsonb_build_array('event', %s::text, %s::text, %s::bigint, %s::text, %s::text,"
            " %s::int, (extract(epoch FROM %s::timestamptz) * 1000000)::bigint, %s::jsonb)::text",
            (self.cfg.schema, table_id, seq, kind, level, k.key_no, table_time, body),
        ).fetchone()
        assert row is not None
        return k.key_no, mac(k.key, str(row[0]).encode())

    def batch_auth(self, table_id: str, last_seq: int, events: int, wagers: int, head: str) -> tuple[int, str]:
        from controller.lap.linkauth import sign_batch

        k = self.keys[table_id]
        return k.key_no, sign_batch(k, last_seq, events, wagers, head)

    def batch(self, table_id: str, last_seq: int, events: int, wagers: int, head: str) -> None:
        """A batch head as the table's role, signed with its link key as its uplink signs it."""
        self.table(table_id).execute(
            sql.SQL(
                "INSERT INTO {}.batches (table_id, last_seq, events_total, wagers_total, chain_head, key_no, auth)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s)"
            ).format(sql.Identifier(self.cfg.schema)),
            (table_id, last_seq, events, wagers, head, *self.batch_auth(table_id, last_seq, events, wagers, head)),
        )

    def claim(self, table_id: str, seq: int, rnd: int, seat: int, hand: str, level: str = "primary") -> int:
        """A 10 % hit claim for (``rnd``, ``seat``) at ``seq + 1``, after the 1-cent wager it needs at
        ``seq`` (the LAP refuses a claim with no progressive wager); the claim's seq."""
        self.send(table_id, seq, "contribution", {"wager": 1, "round": rnd, "seat": seat}, level)
        data = {"fraction_num": 1, "fraction_den": 10, "round": rnd, "seat": seat, "hand": hand}
        self.send(table_id, seq + 1, "hit", data, level)
        return seq + 1

    def close_tables(self) -> None:
        for c in self._tables.values():
            c.close()
        self._tables.clear()

    def close(self) -> None:
        self.close_tables()
        self.store.conn.close()


@pytest.fixture
def lap_schema(pg_dsn: str) -> Iterator[str]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw")
    schema = f"t_{worker}_{uuid.uuid4().hex[:10]}"
    yield schema
    with connect(pg_dsn) as c:
        c.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        for (role,) in c.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE %s", (schema + "\\_%",)).fetchall():
            c.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@pytest.fixture
def make_lap(pg_dsn: str, lap_schema: str) -> Iterator[Any]:
    made: list[Lap] = []

    def make(tables: int = 2, **level: Any) -> Lap:
        for old in made:  # (a table role holds a few connections at most: the LAP's limit)
            old.close_tables()
        lap = Lap(pg_dsn, parse_lap(lap_doc(lap_schema, tables, **level), "lap.toml"))
        made.append(lap)
        return lap

    yield make
    for lap in made:
        lap.close()


@pytest.fixture
def make_floor(make_lap: Any, pg_dsn: str, tmp_path: Any) -> Iterator[Any]:
    """A linked group of two tables with its floor view's server (staff: alice floorperson 4821,
    tom technician 9134, dan dealer 5555); ``make_floor(**FloorSettings fields, log=, tls=)`` -> (lap, server)."""
    from controller.lap.floor_auth import StaffStore
    from controller.lap.floor_server import FloorServer, FloorSettings

    servers: list[FloorServer] = []

    def make(tables: int = 2, dsn: str | None = None, **kw: Any) -> tuple[Lap, FloorServer]:
        lap = make_lap(tables=tables)
        staff = tmp_path / "floor-staff.toml"
        if not staff.exists():
            st = StaffStore(staff)
            st.set("alice", "floorperson", "4821")
            st.set("tom", "technician", "9134")
            st.set("dan", "dealer", "5555")
        kw.setdefault("session_s", 60)
        kw.setdefault("push_s", 0.05)
        log, tls = kw.pop("log", lambda m: None), kw.pop("tls", None)
        settings = FloorSettings("127.0.0.1", 0, staff, **kw)
        srv = FloorServer(dsn or pg_dsn, lap.cfg.schema, settings, log, tls=tls)
        servers.append(srv)
        srv.start()
        return lap, srv

    yield make
    for s in servers:
        s.stop()
