"""The LAP schema's code as PostgreSQL holds it, against what this release installs (
9 NYCRR 5321.18 and N.J.A.C. 13:69E-1.39B: a self-check with software authentication).

The money rules are PL/pgSQL in the database (controller/lap/schema_rules.py): replacing
``guard_params()`` with a no-op, disabling a trigger, adding a rule that drops inserts or
switching row-level security off would change what the LAP does without touching a file the
software digest covers.  :func:`definitions` reads, from the catalogue, every function's full
definition (``pg_get_functiondef``: body, SECURITY DEFINER, its search_path), every trigger
(``pg_get_triggerdef`` and whether it is enabled), every rewrite rule, every row-level policy,
every CHECK constraint (the bounds on what a table writes) and every table's row-level security
switches, with the schema's name replaced by ``@S``.
:func:`expected` is the same read of a throwaway schema this release creates inside a
transaction that is rolled back, so the comparison needs no hand-kept list and follows every
change of the DDL.  The LAP compares them at start-up and on its reconciliation timer.

What it cannot see: the database owner (or a superuser) can change the catalogue's own
functions, run with ``session_replication_role = replica`` (triggers skipped in that session
only) or edit rows directly — those are found by the reconciliation of the accounts, not here.
"""

from __future__ import annotations

import re
import uuid

import psycopg

from controller.lap.schema import ddl

_QUERIES = (
    (
        "function",
        "SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',"
        " CASE WHEN p.prokind IN ('f', 'p') THEN pg_get_functiondef(p.oid) ELSE p.prokind::text END"
        " FROM pg_proc p WHERE p.pronamespace = %(ns)s::oid",
    ),
    (
        "trigger",
        "SELECT c.relname || '.' || t.tgname, pg_get_triggerdef(t.oid) || ' [enabled ' || t.tgenabled::text || ']'"
        " FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        " WHERE c.relnamespace = %(ns)s::oid AND NOT t.tgisinternal",
    ),
    (
        "rule",
        "SELECT c.relname || '.' || r.rulename, pg_get_ruledef(r.oid) FROM pg_rewrite r"
        " JOIN pg_class c ON c.oid = r.ev_class WHERE c.relnamespace = %(ns)s::oid",
    ),
    (
        "policy",
        "SELECT c.relname || '.' || p.polname, p.polcmd::text || ' ' || p.polpermissive::text || ' '"
        " || coalesce(pg_get_expr(p.polqual, p.polrelid), '') || ' / '"
        " || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '') || ' ' || p.polroles::text"
        " FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace = %(ns)s::oid",
    ),
    (
        # every CHECK constraint (the bounds on what a table writes among them)
        "constraint",
        "SELECT c.relname || '.' || con.conname, pg_get_constraintdef(con.oid) FROM pg_constraint con"
        " JOIN pg_class c ON c.oid = con.conrelid WHERE c.relnamespace = %(ns)s::oid AND con.contype = 'c'",
    ),
    (
        "row security",
        "SELECT c.relname, c.relrowsecurity::text || ' ' || c.relforcerowsecurity::text FROM pg_class c"
        " WHERE c.relnamespace = %(ns)s::oid AND c.relkind IN ('r', 'p')",
    ),
)


def definitions(conn: psycopg.Connection, schema: str) -> dict[str, str]:
    """``{"function apply_event()": "<definition>", "trigger events.apply_event": …}`` for the
    schema, its own name replaced by ``@S``."""
    name = re.compile(rf"\b{re.escape(schema)}\b")
    out: dict[str, str] = {}
    with conn.transaction():
        # every name printed schema-qualified, whatever the session's search_path
        conn.execute("SET LOCAL search_path = pg_catalog, pg_temp")
        # the schema's oid, looked up once (a name cast in each query is looked up for every row)
        row = conn.execute("SELECT %s::regnamespace::oid::bigint", (schema,)).fetchone()
        assert row is not None
        for what, q in _QUERIES:
            for key, text in conn.execute(q, {"ns": int(row[0])}).fetchall():
                out[name.sub("@S", f"{what} {key}")] = name.sub("@S", str(text))
    return out


_EXPECTED: dict[str, str] | None = None


def expected(conn: psycopg.Connection) -> dict[str, str]:
    """What this release installs: its DDL in a throwaway schema, read back, rolled back (the
    first call in a process; the DDL does not change while it runs)."""
    global _EXPECTED
    if _EXPECTED is None:
        probe = f"lap_probe_{uuid.uuid4().hex[:12]}"
        with conn.transaction() as tx:
            conn.execute(ddl(probe).encode())
            _EXPECTED = definitions(conn, probe)
            raise psycopg.Rollback(tx)
    return dict(_EXPECTED)


def differences(conn: psycopg.Connection, schema: str) -> list[str]:
    """How the schema's functions, triggers, rules and policies differ from this release's."""
    want, have = expected(conn), definitions(conn, schema)
    out = [f"{k} differs from this release's" for k in sorted(want) if k in have and have[k] != want[k]]
    out += [f"{k} is missing" for k in sorted(want) if k not in have]
    out += [f"{k} is not this release's" for k in sorted(have) if k not in want]
    return out
