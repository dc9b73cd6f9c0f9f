"""The LAP's record of this table against the table's ledger, the other way round: the uplink's
memory check (controller/uplink/uplink.py) finds a LAP *behind* the ledger; this finds a LAP
*ahead* of it or different — an event, a hit or a payment the LAP holds for this table that the
ledger does not hold as such (a record the table never wrote: the database's owner, a LAP host
that writes rows behind the rules, a record of before the link keys).

The uplink reads the LAP's rows of its own table once each (a cursor per kind of row, kept across
connections while the LAP's database is the same one), compares each with the ledger's link
record at that seq as the uplink would send it, and reports every difference once
(``report_foreign``: recorded, the table's linked wager closed, the hit never counted as paid,
shown on the floor view and named by ``tablectl lap --reconcile``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from controller.uplink.ledgerseam import LedgerSource, LinkEvent

#: the keys a resend adds to a hit the ledger shows paid (the amount paid and the LAP's proof)
_RESEND_KEYS = ("paid_cents", "paid_proof")
#: what decides money in a record: compared alone for a record of before the link keys (sent by an
#: earlier release, whose other fields may have been written otherwise)
_MONEY_KEYS = ("wager", "round", "seat", "rate_version", "of_seq", "fraction_num", "fraction_den", "hit_seq", "cents")
#: the LAP's records compared per call (a long history is read over several calls, each short: the
#: uplink's statement watchdog bounds a turn)
CHUNK = 500


def difference(mine: LinkEvent | None, kind: str, level: str, data: Any, signed: bool = True) -> str | None:
    """Why the LAP's event (``kind``, ``level``, ``data``) is not the ledger's ``mine``, or None
    (``signed``: a record of schema 5, compared whole; else its money fields)."""
    if mine is None:
        return f"a {kind} record the ledger does not hold (no link record at that seq)"
    if (mine.kind, mine.level) != (kind, level):
        return f"a {kind} record of level {level}; the ledger holds a {mine.kind} record of level {mine.level} there"
    theirs = {k: v for k, v in data.items() if k not in _RESEND_KEYS} if isinstance(data, dict) else data
    ours = mine.data
    if not signed and isinstance(theirs, dict):
        theirs = {k: theirs.get(k) for k in _MONEY_KEYS if k in theirs or k in ours}
        ours = {k: ours.get(k) for k in _MONEY_KEYS if k in theirs or k in ours}
    if theirs != ours:
        return f"a {kind} record whose contents are not the ledger's ({str(theirs)[:120]})"
    return None


@dataclass
class ForeignCheck:
    """What has been compared so far (the LAP's rows are append-only)."""

    events: int = 0
    hits: int = 0
    payouts: int = 0
    reported: set[int] = field(default_factory=set)

    #: more of the LAP's records remain to be compared (the uplink checks again at once)
    more: bool = False

    def find(
        self, conn: psycopg.Connection, q: Callable[[str], sql.Composed], table_id: str, source: LedgerSource
    ) -> list[tuple[int, str]]:
        """The new differences among the next :data:`CHUNK` records: (seq, what)."""
        found: list[tuple[int, str]] = []
        rows = conn.execute(
            q(
                "SELECT seq, kind, level, data, auth IS NOT NULL FROM {s}.events WHERE table_id = %s AND seq > %s"
                " ORDER BY seq LIMIT %s"
            ),
            (table_id, self.events, CHUNK),
        ).fetchall()
        for seq, kind, level, data, signed in rows:
            why = difference(source.link_event_at(int(seq)), str(kind), str(level), data, bool(signed))
            if why is not None:
                found.append((int(seq), f"event {seq}: {why}"))
            self.events = int(seq)
        self.more = len(rows) == CHUNK
        found += self._rows(conn, q, table_id, source, "hits", "hit")
        found += self._rows(conn, q, table_id, source, "payouts", "paid")
        out = [(s, w) for s, w in found if s not in self.reported]
        self.reported.update(s for s, _ in out)
        return out

    def _rows(
        self,
        conn: psycopg.Connection,
        q: Callable[[str], sql.Composed],
        table_id: str,
        source: LedgerSource,
        table: str,
        kind: str,
    ) -> list[tuple[int, str]]:
        """A hit or payment the LAP holds (written by its rules, or behind them) at a seq where the
        ledger holds no record of that kind."""
        since = self.hits if table == "hits" else self.payouts
        rows = conn.execute(
            q(f"SELECT seq FROM {{s}}.{table} WHERE table_id = %s AND seq > %s ORDER BY seq"), (table_id, since)
        ).fetchall()
        found = []
        for (seq,) in rows:
            mine = source.link_event_at(int(seq))
            if mine is None or mine.kind != kind:
                what = "hit" if kind == "hit" else "payment"
                found.append((int(seq), f"{what} {seq}: the ledger holds no such record"))
            since = int(seq)
        if table == "hits":
            self.hits = since
        else:
            self.payouts = since
        return found
