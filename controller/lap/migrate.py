"""The LAP schema from one version to the next, in one transaction (``LapStore.install`` runs it
at start-up; the catalogue check then compares the result with a fresh install of this release).

4 -> 5: the link records' authenticators (controller/lap/schema_auth.py): the tables' link keys,
the ``key_no``/``auth`` columns of ``events`` and ``batches`` (the records already held keep none:
they were applied before), the checks, ``report_foreign``, the payment rule that never counts a
hit the table's ledger does not hold, the LAPs' lease (controller/lap/schema_lease.py), and every
table role's grants again.  The tables' uplinks
need their link keys (``tablectl lap --enrol-table``) before they send again: until then their
records are refused and recorded, never applied.
"""

from __future__ import annotations

import re

import psycopg
from psycopg import sql

from controller.lap.schema import check_name, grants
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


def migrate(conn: psycopg.Connection, schema: str, version: int) -> int:
    """Bring ``schema`` from ``version`` to this release's; the version it is at now."""
    s = check_name(schema)
    if version == 4:
        with conn.transaction():
            conn.execute(_to_5(s).encode())
            roles = conn.execute(sql.SQL("SELECT role FROM {}.members").format(sql.Identifier(s))).fetchall()
            for (role,) in roles:
                conn.execute(grants(s, str(role)).encode())
        version = 5
    if version == 5:
        with conn.transaction():
            conn.execute(_to_6(s).encode())
        version = 6
    return version
