"""Segment seals: the ledger's history in keyed pieces whose integrity is checked at C speed
(docs/security.md).

A ledger's events are cut into *segments* at its checkpoints (one every
:data:`controller.books.ledger.CHECKPOINT_EVERY` events).  In the same transaction as the
checkpoint the writer stores the segment's **seal** (table ``seals``):

* ``n``, ``first``, ``last`` — the segment's number and its first and last event;
* ``ts`` — the time of its last event;
* ``digest`` — HMAC-SHA256, under a key derived from the ledger key, of the segment's rows
  exactly as stored: each row is SQLite's ``json_array(seq, ts, table_id, round, kind, data,
  prev, hash)`` followed by a newline (:data:`SEGMENT_SQL` fetches a run of rows in one
  query; ``json_array`` quotes every text and keeps types apart, so no two different rows
  encode alike, and a value SQLite cannot put in JSON — a BLOB — fails the query);
* ``head`` — the MAC of its last event (where the chain stood);
* ``meters`` — every meter after its last event (the checkpoint's text);
* ``prev`` — the previous seal's ``mac`` (GENESIS for the first): the seals are a chain;
* ``mac`` — HMAC-SHA256 of all of the above under a second derived key.

The writer computes the digest from the rows it appends (in memory, never read back: an edit
made to the file before the seal is written is not sealed), so a segment whose stored rows
still give its seal's digest holds exactly the events the service wrote.  Checking a segment
is a few queries (256 rows each) and one HMAC over its bytes (about 2 µs an event here), not a MAC per event in
Python (about 5 µs); the start-up check needs only the last seal (its MAC, its meters) and the
events after it, and the periodic audit checks the sealed segments a slice at a time
(controller/books/auditrun.py).  Without the key neither a digest nor a seal can be made again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.books.ledger import EventRow

SEGMENT_LABEL = b"tablectl ledger segment digest"
SEAL_LABEL = b"tablectl ledger seal"

SEALS_SCHEMA = """
CREATE TABLE IF NOT EXISTS seals (
    n       INTEGER PRIMARY KEY,
    first   INTEGER NOT NULL,
    last    INTEGER NOT NULL,
    ts      TEXT NOT NULL,
    digest  TEXT NOT NULL,
    head    TEXT NOT NULL,
    meters  TEXT NOT NULL,
    prev    TEXT NOT NULL,
    mac     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS seals_last ON seals(last);
"""

_ROW = "json_array(seq, ts, table_id, round, kind, data, prev, hash)"
#: a segment's rows as stored, in one query: (rows, their encoding as one blob)
SEGMENT_SQL = (
    f"SELECT count(*), CAST(group_concat({_ROW} || char(10), '') AS BLOB) FROM "
    "(SELECT seq, ts, table_id, round, kind, data, prev, hash FROM events WHERE seq BETWEEN ? AND ? ORDER BY seq)"
)
_SEAL_COLUMNS = "n, first, last, ts, digest, head, meters, prev, mac"

#: the Python side of ``json_array``: the same text for every row (tests/controller/test_seals.py)
row_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_canonical = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True).encode


def row_text(ev: EventRow, mac: str) -> str:
    """One row, the event ``ev`` with its MAC, as :data:`SEGMENT_SQL` encodes it (with its newline)."""
    return row_encode([ev.seq, ev.ts, ev.table, ev.round, ev.kind, ev.data, ev.prev, mac]) + "\n"


@dataclass(frozen=True, slots=True)
class SealBody:
    """What a seal says of its segment, all that its MAC covers (the fields of :class:`Seal`)."""

    n: int
    first: int
    last: int
    ts: str
    digest: str
    head: str
    meters: str
    prev: str


@dataclass(frozen=True, slots=True)
class Seal(SealBody):
    """A segment's seal as stored: what it says (:class:`SealBody`, the same fields in the same
    order) and the MAC over that."""

    mac: str

    @property
    def events(self) -> int:
        return self.last - self.first + 1

    @property
    def body(self) -> SealBody:
        """All but the MAC: what the MAC was taken over."""
        return SealBody(self.n, self.first, self.last, self.ts, self.digest, self.head, self.meters, self.prev)

    def meters_rows(self) -> dict[str, dict[str, object]]:
        return dict(json.loads(self.meters))


class Sealer:
    """The two keyed functions, each from a key derived from the ledger key (prepared once,
    copied per use, as the ledger's own MAC is)."""

    def __init__(self, key: bytes):
        self.keyed = bool(key)
        self._segment = hmac.new(hmac.new(key, SEGMENT_LABEL, hashlib.sha256).digest(), digestmod=hashlib.sha256)
        self._seal = hmac.new(hmac.new(key, SEAL_LABEL, hashlib.sha256).digest(), digestmod=hashlib.sha256)

    def running(self) -> hmac.HMAC:
        """A new segment's digest, to be fed its rows (:func:`row_text`) as they are written."""
        return self._segment.copy()

    def digest(self, blob: bytes) -> str:
        d = self._segment.copy()
        d.update(blob)  # hashlib releases the GIL over a large buffer
        return d.hexdigest()

    def mac(self, b: SealBody) -> str:
        m = self._seal.copy()
        m.update(_canonical([b.n, b.first, b.last, b.ts, b.digest, b.head, b.meters, b.prev]).encode("ascii"))
        return m.hexdigest()

    def make(self, b: SealBody) -> Seal:
        """The seal of ``b``: its fields and their MAC."""
        return Seal(b.n, b.first, b.last, b.ts, b.digest, b.head, b.meters, b.prev, self.mac(b))

    def valid(self, s: Seal) -> bool:
        return hmac.compare_digest(s.mac, self.mac(s.body))


def insert(cur: sqlite3.Cursor, s: Seal) -> None:
    """OR REPLACE: a seal left past a cut tail must not stop the ledger (as a checkpoint's)."""
    cur.execute(
        f"INSERT OR REPLACE INTO seals({_SEAL_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
        (s.n, s.first, s.last, s.ts, s.digest, s.head, s.meters, s.prev, s.mac),
    )


def _seal(row: tuple[object, ...]) -> Seal:
    n, first, last, ts, digest, head, meters, prev, mac = row
    return Seal(int(n), int(first), int(last), str(ts), str(digest), str(head), str(meters), str(prev), str(mac))  # type: ignore[call-overload]


def has_table(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'seals'").fetchone()
    return row is not None


def last_seal(db: sqlite3.Connection) -> Seal | None:
    """The last seal that still names an event of this ledger by its MAC (one left past a cut
    tail or a rollback is never a starting point; the checks report it)."""
    if not has_table(db):
        return None
    row = db.execute(
        f"SELECT {', '.join('s.' + c for c in _SEAL_COLUMNS.split(', '))} FROM seals s "
        "JOIN events e ON e.seq = s.last AND e.hash = s.head ORDER BY s.n DESC LIMIT 1"
    ).fetchone()
    return None if row is None else _seal(row)


def seal_number(db: sqlite3.Connection, n: int) -> Seal | None:
    row = db.execute(f"SELECT {_SEAL_COLUMNS} FROM seals WHERE n = ?", (n,)).fetchone()
    return None if row is None else _seal(row)


def seals_from(db: sqlite3.Connection, n: int = 1, limit: int = -1) -> Iterator[Seal]:
    """Seals ``n``, ``n + 1``... in order (none in a ledger from before seals)."""
    if not has_table(db):
        return
    for row in db.execute(f"SELECT {_SEAL_COLUMNS} FROM seals WHERE n >= ? ORDER BY n LIMIT ?", (n, limit)):
        yield _seal(row)


def seals_over(db: sqlite3.Connection, lo: int, hi: int) -> list[Seal]:
    """The seals of the segments holding any event from ``lo`` to ``hi``."""
    if not has_table(db):
        return []
    out = []
    for row in db.execute(f"SELECT {_SEAL_COLUMNS} FROM seals WHERE last >= ? ORDER BY last", (lo,)):
        seal = _seal(row)
        if seal.first > hi:
            break  # (the seals follow one another: none after this one holds the range)
        out.append(seal)
    return out


def segment_blob(db: sqlite3.Connection, first: int, last: int) -> tuple[int, bytes]:
    """(how many rows, their encoding) of events ``first``..``last`` as stored: one query."""
    count, blob = db.execute(SEGMENT_SQL, (first, last)).fetchone()
    return int(count), bytes(blob or b"")


#: events read by one query when a digest is fed from the stored rows: about 90 KB, below the C
#: allocator's threshold for a mapping of its own, so that a long-running audit thread reuses the
#: same memory instead of a heap that grows in steps (bench/_memory.py)
PIECE_EVENTS = 256


def feed(db: sqlite3.Connection, digest: hmac.HMAC, first: int, last: int) -> int:
    """Feed ``digest`` the stored rows of events ``first``..``last``, a piece at a time (each
    piece one query, hashed in C); how many rows there were."""
    count = 0
    for lo in range(first, last + 1, PIECE_EVENTS):
        n, blob = segment_blob(db, lo, min(last, lo + PIECE_EVENTS - 1))
        digest.update(blob)
        count += n
    return count
