"""``tablectl backup --incremental DEST``: the newest copy of this table's ledger in DEST
brought up to date, instead of a whole new copy (docs/operations.md).

A year's ledger is gigabytes: a whole copy (``tablectl backup``) reads and writes all of it,
and its audit reads it again.  The ledger only grows at its end, so the newest copy in DEST
is a prefix of it — checked, not assumed: the copy's last event must be the ledger's event at
that number with the same MAC, and its last seal the ledger's seal with the same MAC (the
seals are a chain, controller/books/seals.py).  Then, in one transaction on the copy (a rollback
journal beside it: killed halfway, the copy is as it was):

1. the ledger's events after the copy's last, its seals, checkpoints, meters and schema are
   copied in (SQLite ``ATTACH``, ``INSERT ... SELECT``: one read transaction on the ledger,
   which never blocks its writer);
2. what was added is audited in the copy — the sealed segments it touches by their digests,
   every event after the last seal, the stored meters — and the copy must reach the witness
   as read before it began;
3. committed and synced, the copy takes its new name (the last event's number and the time).

A copy that does not pass is rolled back (unchanged) and the backup fails.  When there is no
copy to extend (none yet, another table's, another schema, or one that is not a prefix of the
ledger) the backup makes a whole copy, as without ``--incremental``.  Older copies are not kept
by this: a whole copy now and then (``tablectl backup`` without it) is the one to put away.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

from controller.books.audit import Where
from controller.books.ledger import Head, Ledger


class NotExtendable(Exception):
    """No copy here that this ledger continues (the backup makes a whole one)."""


def newest_copy(dest: Path, safe_table: str) -> Path | None:
    """The copy of this table with the most events (then the latest) in ``dest``."""
    pat = re.compile(rf"^{re.escape(safe_table)}-ledger-(\d{{8,}})-(\d{{8}}T\d{{6}}Z)\.sqlite3$")
    found = [(int(m[1]), m[2], p) for p in dest.iterdir() if (m := pat.match(p.name)) and p.is_file()]
    return max(found)[2] if found else None


def _one(db: sqlite3.Connection, sql: str, *args: object) -> tuple[object, ...] | None:
    row = db.execute(sql, args).fetchone()
    return None if row is None else tuple(row)


def _continues(db: sqlite3.Connection) -> tuple[int, int]:
    """(the copy's last event, its last seal) when the attached ledger continues the copy."""
    schemas = [_one(db, f"SELECT value FROM {s}.meta WHERE name = 'schema'") for s in ("main", "live")]
    if schemas[0] != schemas[1]:
        raise NotExtendable(f"the copy's schema {schemas[0]} is not the ledger's {schemas[1]}")
    head = _one(db, "SELECT seq, hash FROM main.events ORDER BY seq DESC LIMIT 1")
    if head is None:
        raise NotExtendable("the copy is empty")
    if _one(db, "SELECT hash FROM live.events WHERE seq = ?", head[0]) != (head[1],):
        raise NotExtendable(f"the ledger has another event {head[0]} than the copy (not a copy of this ledger)")
    seal = _one(db, "SELECT n, mac FROM main.seals ORDER BY n DESC LIMIT 1")
    if seal is not None and _one(db, "SELECT mac FROM live.seals WHERE n = ?", seal[0]) != (seal[1],):
        raise NotExtendable(f"the ledger has another seal {seal[0]} than the copy")
    return int(head[0]), int(seal[0]) if seal is not None else 0  # type: ignore[call-overload]


def _copy_in(db: sqlite3.Connection, after: int, after_seal: int) -> None:
    db.execute("INSERT INTO main.events SELECT * FROM live.events WHERE seq > ?", (after,))
    db.execute("INSERT OR REPLACE INTO main.seals SELECT * FROM live.seals WHERE n > ?", (after_seal,))
    db.execute("INSERT OR REPLACE INTO main.checkpoints SELECT * FROM live.checkpoints WHERE seq > ?", (after,))
    db.execute("DELETE FROM main.meters")
    db.execute("INSERT INTO main.meters SELECT * FROM live.meters")
    db.execute("INSERT OR REPLACE INTO main.meta SELECT * FROM live.meta")


def extend(where: Where, copy: Path, table_id: str, witnessed: object) -> tuple[Head, list[str]]:
    """Bring ``copy`` up to date from the ledger (see the module docstring): (its new head,
    the problems its audit found — then nothing was changed)."""
    from controller.books import ledgercheck
    from controller.books.witness import check

    db = sqlite3.connect(f"file:{copy}", uri=True, isolation_level=None)
    try:
        db.execute("ATTACH DATABASE ? AS live", (f"file:{where.ledger_path}?mode=ro",))
        db.execute("BEGIN IMMEDIATE")
        try:
            after, after_seal = _continues(db)
            _copy_in(db, after, after_seal)
            view = Ledger.over(db, copy, table_id, key=where.key)
            problems = ledgercheck.quick(view) + ledgercheck.read_problems(view, [(after + 1, view.last_seq)])
            problems += check(view, witnessed)  # type: ignore[arg-type]
            head = view.head()
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("ROLLBACK" if problems else "COMMIT")
    finally:
        db.close()
    if not problems:
        fd = os.open(copy, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return head, problems
