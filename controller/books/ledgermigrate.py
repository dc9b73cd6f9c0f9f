"""The ledger's schema brought to this software's at its first open (split from
controller/books/ledger.py; docs/security.md "Schema version and migration"):

* **1 to 2** (issue 13) — a ledger written before the key (plain SHA-256) gets a keyed
  ``ledger.keyed`` record over its last hash and is keyed from that record on: the key then
  covers every event before it too (each hash covers its predecessor);
* **2 to 3** (issue 26) — the history written before seals is checked event by event once and
  sealed at its checkpoints (controller/books/seals.py), up to its first problem: damage is never
  sealed (the start-up check then finds it after the last seal).

Each step is one transaction with its ``meta.schema`` mark.  A new ledger starts at the
current schema; a ledger of a newer schema is refused (never opened by older software).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from controller.books import seals as seals_mod

if TYPE_CHECKING:
    from controller.books.ledger import Ledger


def migrate(led: Ledger) -> None:
    from controller.books.ledger import SCHEMA_VERSION, LedgerError

    schema = led.schema()
    if schema is None:
        _key_it(led)
    elif schema > SCHEMA_VERSION:
        raise LedgerError(f"ledger schema {schema} is newer than this software ({SCHEMA_VERSION})")
    if (led.schema() or 0) < SCHEMA_VERSION:
        _seal_history(led)


def _in_transaction(db: sqlite3.Connection) -> sqlite3.Cursor:
    cur = db.cursor()
    cur.execute("BEGIN IMMEDIATE")
    return cur


def _key_it(led: Ledger) -> None:
    """Schema 1 to 2 (or a new ledger: keyed from its first event, at the current schema)."""
    from controller.books.ledger import KEYED_KIND, SCHEMA_VERSION, _dumps

    cur = _in_transaction(led.db)
    try:
        led._load_head()  # another process may have written meanwhile
        if led.last_seq == 0:
            cur.execute("INSERT INTO meta(name, value) VALUES ('keyed_from', '1')")
        else:
            seq, prev = led.last_seq + 1, led.last_hash
            ts = max(datetime.fromtimestamp(led._wall(), UTC).isoformat(timespec="microseconds"), led.last_ts)
            data = _dumps({"scheme": "hmac-sha256", "from_schema": 1, "sha256_head": prev, "events": seq - 1})
            rnd = led.last_round_no
            h = led.event_mac(seq, ts, led.table_id, rnd, KEYED_KIND, data, prev)
            cur.execute(
                "INSERT INTO events(seq, ts, table_id, round, kind, data, prev, hash) VALUES (?,?,?,?,?,?,?,?)",
                (seq, ts, led.table_id, rnd, KEYED_KIND, data, prev, h),
            )
            cur.execute("INSERT INTO meta(name, value) VALUES ('keyed_from', ?)", (str(seq),))
            led.migrated_from = 1
        # a new ledger is sealed from its start; a keyed schema-1 one is sealed next (_seal_history)
        schema = SCHEMA_VERSION if led.last_seq == 0 else 2
        cur.execute("INSERT INTO meta(name, value) VALUES ('schema', ?)", (str(schema),))
        cur.execute("COMMIT")
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    led._load_head()


def _seal_history(led: Ledger) -> None:
    """Schema 2 to 3 (see the module docstring)."""
    from controller.books import ledgercheck
    from controller.books.ledger import SCHEMA_VERSION

    cur = _in_transaction(led.db)
    try:
        for seal in ledgercheck.seal_history(led):
            seals_mod.insert(cur, seal)
        cur.execute("INSERT OR REPLACE INTO meta(name, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        cur.execute("COMMIT")
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    if led.migrated_from is None:
        led.migrated_from = 2
