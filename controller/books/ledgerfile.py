"""The ledger *file* checked before anything in it is trusted or run (docs/security.md, "What a
writer of the state directory can and cannot do"):

* **its schema** — every table, index, trigger and view in ``sqlite_schema`` must be one this
  software (or an earlier release) creates, word for word.  A trigger planted in the file would
  run inside the service's own commits (it once wrote a forged payout every round, another
  stopped all sealing); a view or a changed table could make a read say what the events do not.
  Checked before the first write of an open, and by every audit;
* **the size of a row** — every connection to a ledger refuses a string or blob larger than
  :data:`MAX_VALUE_BYTES` (SQLite's own length limit, checked before the value is loaded): a
  150 MB row planted in a sealed segment once got the service killed for its memory at each
  start; it is now an error naming the events read, latched as a tilt like any other finding.
"""

from __future__ import annotations

import functools
import re
import sqlite3

#: the largest value a ledger query may return: far above any event (a configuration record is a
#: few KB) or the rows of a digest's piece (about 90 KB, controller/books/seals.py ``PIECE_EVENTS``)
MAX_VALUE_BYTES = 4 << 20

#: what older releases created and this one no longer does: the first events table had a UNIQUE
#: hash (its index is SQLite's own, ``sqlite_autoindex_events_1``)
_LEGACY_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq     INTEGER PRIMARY KEY,
    ts      TEXT NOT NULL,
    table_id TEXT NOT NULL,
    round   INTEGER NOT NULL,
    kind    TEXT NOT NULL,
    data    TEXT NOT NULL,
    prev    TEXT NOT NULL,
    hash    TEXT NOT NULL UNIQUE
);
"""


def bound(db: sqlite3.Connection) -> sqlite3.Connection:
    """``db`` refusing any value over :data:`MAX_VALUE_BYTES` (``sqlite3.DataError``: "string or
    blob too big") instead of loading it."""
    db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    return db


def connect_ro(path: object) -> sqlite3.Connection:
    """A bounded read-only connection to the ledger at ``path`` (never creates it)."""
    return bound(sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False))


def _norm(sql: str | None) -> str | None:
    """The statement with its layout ignored (spaces, line breaks, around brackets and commas)."""
    if sql is None:
        return None
    return re.sub(r"\s*([(),])\s*", r"\1", re.sub(r"\s+", " ", sql)).strip()


def _objects(script: str) -> set[tuple[str, str, str | None]]:
    mem = sqlite3.connect(":memory:")
    try:
        mem.executescript(script)
        return {(t, n, _norm(s)) for t, n, s in mem.execute("SELECT type, name, sql FROM sqlite_schema")}
    finally:
        mem.close()


@functools.cache
def allowed_objects() -> frozenset[tuple[str, str, str | None]]:
    """(type, name, sql) of every object a release of this software creates in a ledger."""
    from controller.books.ledger import SCHEMA

    return frozenset(_objects(SCHEMA) | _objects(_LEGACY_SCHEMA))


def schema_problems(db: sqlite3.Connection) -> list[str]:
    """Objects in the ledger's schema this software never creates (or created otherwise): a
    trigger, a view, a changed table or index; [] for a ledger as made by a release."""
    allowed = allowed_objects()
    problems = []
    rows = db.execute("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name").fetchall()
    for kind, name, sql in rows:
        if (kind, name, _norm(sql)) not in allowed:
            what = "changed from what this software creates" if _known(kind, name) else "not made by this software"
            problems.append(f"the ledger file's schema holds {kind} {name!r}, {what}")
    return problems


def _known(kind: str, name: str) -> bool:
    return any(k == kind and n == name for k, n, _s in allowed_objects())


def schema_error(db: sqlite3.Connection, path: object) -> str | None:
    """One message naming the file and what is wrong with its schema, or None."""
    problems = schema_problems(db)  # (a file that is no database raises SQLite's own error, as any read)
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{path}: {problems[0]}{more}; nothing was written"
