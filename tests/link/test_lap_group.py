"""The tables' grants held once by their group role (controller/lap/schema.py ``tables_role``):
configuring a pit costs the same per table at 1,000 tables as at 2 (a grant per role grew every
access list by one entry), a table's role holds no privilege of its own, and the group is nobody's
login nor anybody's to hand on (N.J.A.C. 13:69E-1.39B: a table may write only its own records)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

from controller.lap.config import parse_lap
from controller.lap.lap import LapStore, connect
from controller.lap.schema import tables_role
from tests.link.conftest import lap_doc, own_privileges


def _acl_entries(c: psycopg.Connection, schema: str) -> int:
    """Entries in the access lists of the schema's tables and functions."""
    row = c.execute(
        "SELECT (SELECT coalesce(sum(cardinality(relacl)), 0) FROM pg_class WHERE relnamespace = %(s)s::regnamespace)"
        " + (SELECT coalesce(sum(cardinality(proacl)), 0) FROM pg_proc WHERE pronamespace = %(s)s::regnamespace)"
        " + (SELECT coalesce(sum(cardinality(attacl)), 0) FROM pg_attribute a JOIN pg_class r ON r.oid = a.attrelid"
        "    WHERE r.relnamespace = %(s)s::regnamespace)",
        {"s": schema},
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_table_role_holds_nothing_itself_and_the_access_lists_do_not_grow(pg_dsn, lap_schema):
    with connect(pg_dsn) as c:
        store = LapStore(c, lap_schema)
        store.install("pit")
        store.configure(parse_lap(lap_doc(lap_schema, 2), "lap.toml"))
        two = _acl_entries(c, lap_schema)
        cfg = parse_lap(lap_doc(lap_schema, 12), "lap.toml")
        store.configure(cfg)
        assert _acl_entries(c, lap_schema) == two  # not one entry more per table
        for t in cfg.tables:
            role = cfg.role_for(t.table_id)
            assert own_privileges(c, lap_schema, role) == []
            assert c.execute("SELECT pg_has_role(%s, %s, 'MEMBER')", (role, tables_role(lap_schema))).fetchone() == (
                True,
            )
        assert store.configure(cfg) == []  # nothing left to change


def test_the_group_logs_in_nobody_and_a_table_cannot_hand_it_on(pg_dsn, make_lap):
    lap = make_lap(2)
    schema = lap.cfg.schema
    group = tables_role(schema)
    row = lap.store.conn.execute("SELECT rolcanlogin, rolcreaterole FROM pg_roles WHERE rolname = %s", (group,))
    assert row.fetchone() == (False, False)
    with pytest.raises(psycopg.OperationalError):
        connect(pg_dsn, user=group).close()
    t1 = lap.table("T1")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        t1.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), sql.Identifier(lap.cfg.role_for("T2"))))
    # the group's rights are a table's own rows only: T1 reads no row of T2's
    lap.send("T2", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    n = t1.execute(sql.SQL("SELECT count(*) FROM {}.events").format(sql.Identifier(schema))).fetchone()
    assert n == (0,)


def test_a_table_that_leaves_the_link_leaves_the_group(pg_dsn, lap_schema):
    with connect(pg_dsn) as c:
        store = LapStore(c, lap_schema)
        store.install("pit")
        three = parse_lap(lap_doc(lap_schema, 3), "lap.toml")
        store.configure(three)
        store.configure(parse_lap(lap_doc(lap_schema, 2), "lap.toml"))
        gone = three.role_for("T3")
        assert c.execute("SELECT pg_has_role(%s, %s, 'MEMBER')", (gone, tables_role(lap_schema))).fetchone() == (False,)
        with connect(pg_dsn, user=gone) as t3, pytest.raises(psycopg.errors.InsufficientPrivilege):
            t3.execute(sql.SQL("SELECT * FROM {}.levels").format(sql.Identifier(lap_schema)))
