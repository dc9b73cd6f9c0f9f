"""The LAP schema from one version to the next, in one transaction (``LapStore.install`` runs it
at start-up; the catalogue check then compares the result with a fresh install of this release).

4 -> 5: the link records' authenticators (controller/lap/schema_auth.py): the tables' link keys,
the ``key_no``/``auth`` columns of ``events`` and ``batches`` (the records already held keep none:
they were applied before), the checks, ``report_foreign``, the payment rule that never counts a
hit the table's ledger does not hold, the LAPs' lease (controller/lap/schema_lease.py); the
tables' roles are granted this release's rights by version 7.  The tables' uplinks
need their link keys (``tablectl lap --enrol-table``) before they send again: until then their
records are refused and recorded, never applied.

5 -> 6: the heartbeat rings no doorbell.  6 -> 7: the tables' grants held once by their group
(controller/lap/schema.py ``tables_role``), each table's own privileges taken back.
"""

from __future__ import annotations

import re

import psycopg
from psycopg import sql

from controller.lap.schema import check_name, make_tables_role, tables_role
from controller.lap.schema_auth import AUTH_DDL
from controller.lap.schema_lease import LEASE_DDL
from controller.lap.schema_rules import RULES_DDL


def _function(name: str) -> str:
    """One function of the rules, as ``CREATE OR REPLACE`` (the text this release installs)."""
    m = re.search(rf"CREATE FUNCTION {name}\(.*?\nEND \$\$;\n", RULES_DDL, re.S)
    assert m is not None, name
    return m.group(0).replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


def _to_5(schema: str) -> str:
    # every rule whose text this release changed, as this release installs it (the catalogue check
    # compares the code with a fresh install's)
    body = AUTH_DDL + LEASE_DDL + _function("apply_paid") + _function("apply_event")
    body += "REVOKE ALL ON link_keys FROM PUBLIC;\nREVOKE ALL ON lap_lease, lap_lease_log FROM PUBLIC;\n"
    body += "REVOKE ALL ON ALL FUNCTIONS IN SCHEMA @S FROM PUBLIC;\nUPDATE schema_info SET version = 5;\n"
    return f"SET LOCAL search_path = {schema}, pg_temp;\n" + body.replace("@S", schema)


def _to_6(schema: str) -> str:
    body = _function("heartbeat") + "UPDATE schema_info SET version = 6;\n"
    return f"SET LOCAL search_path = {schema}, pg_temp;\n" + body.replace("@S", schema)


def _to_7(conn: psycopg.Connection, schema: str) -> None:
    """The tables' grants moved to their group: each table's role made a member, then every
    privilege it held itself on the schema taken back (revoking a table's privileges revokes its
    columns' too), so a table may do what a fresh install's may, no more."""
    group = sql.Identifier(tables_role(schema))
    conn.execute(make_tables_role(schema).encode())
    roles = conn.execute(sql.SQL("SELECT role FROM {}.members").format(sql.Identifier(schema))).fetchall()
    for (role,) in roles:
        r, s = sql.Identifier(str(role)), sql.Identifier(schema)
        conn.execute(sql.SQL("GRANT {} TO {}").format(group, r))
        conn.execute(sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA {s} FROM {r}").format(s=s, r=r))
        conn.execute(sql.SQL("REVOKE ALL ON ALL FUNCTIONS IN SCHEMA {s} FROM {r}").format(s=s, r=r))
        conn.execute(sql.SQL("REVOKE ALL ON SCHEMA {s} FROM {r}").format(s=s, r=r))
    conn.execute(sql.SQL("UPDATE {}.schema_info SET version = 7").format(sql.Identifier(schema)))


def migrate(conn: psycopg.Connection, schema: str, version: int) -> int:
    """Bring ``schema`` from ``version`` to this release's; the version it is at now."""
    s = check_name(schema)
    if version == 4:
        with conn.transaction():
            # the tables' roles get this release's grants with version 7 (their group), which
            # follows before the LAP runs
            conn.execute(_to_5(s).encode())
        version = 5
    if version == 5:
        with conn.transaction():
            conn.execute(_to_6(s).encode())
        version = 6
    if version == 6:
        with conn.transaction():
            _to_7(conn, s)
        version = 7
    return version
