"""The tables' link keys at the LAP (``tablectl lap --enrol-table`` / ``--revoke-key``): made,
numbered, stored as HMAC pads in ``link_keys`` (which no table role reads), revoked.  Every change
recorded in ``param_changes``.

A new key for a table that has one is a **rotation**: the table's uplink is given the new file and
restarted; the records it signed under the old key and has not yet sent are still taken (the old
key stays good for every record before the new key's first one), so nothing in flight is lost;
``--revoke-key`` ends a key at once (a key known to be out: its records are refused from then on).
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from controller.lap.linkauth import LinkKey, new_key
from controller.lap.schema import check_name


class EnrolError(ValueError):
    """No such member table, no such key."""


def enrol(conn: psycopg.Connection, schema: str, table_id: str) -> LinkKey:
    """A new link key for ``table_id`` (the next number), stored; the key to hand to the table."""
    s = sql.Identifier(check_name(schema))
    with conn.transaction():
        member = sql.SQL("SELECT 1 FROM {}.members WHERE table_id = %s FOR UPDATE").format(s)
        if conn.execute(member, (table_id,)).fetchone() is None:  # (locked: one enrolment at a time)
            raise EnrolError(f"{table_id} is not a member table of {schema} (lap.toml [tables])")
        row = conn.execute(
            sql.SQL("SELECT coalesce(max(key_no), 0) FROM {}.link_keys WHERE table_id = %s").format(s), (table_id,)
        ).fetchone()
        k = new_key(schema, table_id, int(row[0]) + 1 if row else 1)
        ki, ko = k.pads()
        conn.execute(
            sql.SQL("INSERT INTO {}.link_keys (table_id, key_no, ki, ko) VALUES (%s, %s, %s, %s)").format(s),
            (table_id, k.key_no, ki, ko),
        )
        _record(conn, s, table_id, None, {"key_no": k.key_no, "made": True})
    return k


def revoke(conn: psycopg.Connection, schema: str, table_id: str, key_no: int) -> None:
    s = sql.Identifier(check_name(schema))
    with conn.transaction():
        cur = conn.execute(
            sql.SQL(
                "UPDATE {}.link_keys SET revoked_at = clock_timestamp() WHERE table_id = %s AND key_no = %s"
                " AND revoked_at IS NULL"
            ).format(s),
            (table_id, key_no),
        )
        if cur.rowcount != 1:
            raise EnrolError(f"table {table_id} has no link key {key_no} in force")
        _record(conn, s, table_id, {"key_no": key_no}, {"key_no": key_no, "revoked": True})


def keys(conn: psycopg.Connection, schema: str) -> list[dict[str, Any]]:
    """Every link key's number and state (never the key)."""
    cur = conn.cursor(row_factory=psycopg.rows.dict_row)
    return list(
        cur.execute(
            sql.SQL(
                "SELECT table_id, key_no, made_at, first_seq, revoked_at FROM {}.link_keys ORDER BY table_id, key_no"
            ).format(sql.Identifier(check_name(schema)))
        ).fetchall()
    )


def _record(conn: psycopg.Connection, s: sql.Identifier, table_id: str, old: Any, new: Any) -> None:
    conn.execute(
        sql.SQL("INSERT INTO {}.param_changes (what, key, old, new) VALUES ('link_key', %s, %s, %s)").format(s),
        (table_id, None if old is None else Jsonb(old), Jsonb(new)),
    )
