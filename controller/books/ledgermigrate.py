"""The ledger's schema brought to this software's at its first open (split from
controller/books/ledger.py; docs/security.md "Schema version and migration"):

* **1 to 2** — a ledger written before the key (plain SHA-256) gets a keyed
  ``ledger.keyed`` record over its last hash and is keyed from that record on: the key then
  covers every event before it too (each hash covers its predecessor);
* **2 to 3** — the history written before seals is checked event by event once and
  sealed at its checkpoints (controller/books/seals.py), up to its first problem: damage is never
  sealed (the start-up check then finds it after the last seal).

Each step is one transaction with its ``meta.schema`` mark.  A new ledger starts at the
current schema; a ledger of a newer schema is refused (never opened by older software).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from controller.books import seals as seals_mod

if TYPE_CHECKING:
    from controller.books.ledger import Ledger


@dataclass(frozen=True)
class KeyUnkeyed:
    """A technician's explicit order to key a ledger written before the key (``tablectl migrate
    --key-unkeyed``): who, and why; recorded in the ``ledger.keyed`` record it appends."""

    by: str
    reason: str


def refuse_unkeyed(db: sqlite3.Connection, path: Path, order: KeyUnkeyed | None) -> None:
    """Before anything is written at an open (even the tables this software adds): a ledger with
    events and no schema mark is never keyed without a technician's ``order`` (LedgerError)."""
    from controller.books.ledger import LedgerError

    names = {n for (n,) in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    if order is not None or "events" not in names:
        return
    (last,) = db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
    marked = "meta" in names and db.execute("SELECT 1 FROM meta WHERE name = 'schema'").fetchone() is not None
    if last and not marked:
        raise LedgerError(_unkeyed_message(path, int(last)))


def _unkeyed_message(path: Path, events: int) -> str:
    return (
        f"{path}: an unkeyed ledger (schema 1, {events} events): never keyed at start-up; a technician who "
        "has checked it keys it with `tablectl migrate --key-unkeyed --by NAME --reason TEXT`"
    )


def migrate(led: Ledger, key_unkeyed: KeyUnkeyed | None = None) -> None:
    from controller.books.ledger import SCHEMA_VERSION, LedgerError

    schema = led.schema()
    if schema is None:
        led._load_head()
        if led.last_seq and key_unkeyed is None:
            # keying signs its whole history as it stands: a writer of the state directory who
            # recomputed the plain chain and removed the keyed markers would have it signed
            raise LedgerError(_unkeyed_message(led.path, led.last_seq))
        _key_it(led, key_unkeyed)
    elif schema > SCHEMA_VERSION:
        raise LedgerError(f"{led.path}: ledger schema {schema} is newer than this software ({SCHEMA_VERSION})")
    if (led.schema() or 0) < SCHEMA_VERSION:
        _seal_history(led)


def _in_transaction(db: sqlite3.Connection) -> sqlite3.Cursor:
    cur = db.cursor()
    cur.execute("BEGIN IMMEDIATE")
    return cur


def _key_it(led: Ledger, order: KeyUnkeyed | None) -> None:
    """Schema 1 to 2 (or a new ledger: keyed from its first event, at the current schema)."""
    from controller.books.ledger import KEYED_KIND, SCHEMA_VERSION, EventRow, _dumps

    cur = _in_transaction(led.db)
    try:
        led._load_head()  # another process may have written meanwhile
        if led.last_seq == 0:
            cur.execute("INSERT INTO meta(name, value) VALUES ('keyed_from', '1')")
        else:
            seq, prev = led.last_seq + 1, led.last_hash
            ts = max(datetime.fromtimestamp(led._wall(), UTC).isoformat(timespec="microseconds"), led.last_ts)
            if order is None:  # (migrate() refuses it; a new ledger has no events)
                raise RuntimeError("an unkeyed ledger keyed without a technician's order")
            doc = {"scheme": "hmac-sha256", "from_schema": 1, "sha256_head": prev, "events": seq - 1}
            data = _dumps({**doc, "by": order.by, "reason": order.reason})
            rnd = led.last_round_no
            h = led.event_mac(EventRow(seq, ts, led.table_id, rnd, KEYED_KIND, data, prev))
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


def ever_keyed(db: sqlite3.Connection, witness_file: Path, state_dir: Path) -> str | None:
    """What says a ledger that reads as unkeyed was once keyed (then it is never keyed again:
    its keyed markers were removed, and keying it would sign whatever it now holds), or None.
    The witness and the lock-out journal are written only by keyed software; a seal, a keyed
    record or a ``keyed_from`` mark only in a keyed ledger."""
    from controller.books.lockjournal import JOURNAL_FILE

    if witness_file.exists() or witness_file.is_symlink():
        return f"the witness {witness_file} exists (only keyed software writes one)"
    if (state_dir / JOURNAL_FILE).exists():
        return f"the lock-out journal {state_dir / JOURNAL_FILE} exists (only keyed software writes one)"
    names = {n for (n,) in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    for table in ("meta", "seals"):  # created by every open of keyed software, never by the one before
        if table in names:
            return f"the ledger has a {table} table (only keyed software makes one)"
    checks = (
        ("SELECT count(*) FROM seals", "the ledger holds seals"),
        ("SELECT count(*) FROM meta WHERE name IN ('keyed_from', 'schema')", "the ledger holds a schema mark"),
        ("SELECT count(*) FROM events WHERE kind = 'ledger.keyed'", "the ledger holds a ledger.keyed record"),
    )
    for sql, what in checks:
        try:
            (n,) = db.execute(sql).fetchone()
        except sqlite3.OperationalError:  # no such table: nothing of it
            continue
        if n:
            return what
    return None
