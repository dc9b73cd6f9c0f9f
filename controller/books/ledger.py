"""The ledger: an append-only, hash-chained event log in SQLite, and the meters
derived from it (SPEC § 5).

* SQLite in WAL mode with ``synchronous=FULL``: a transaction that returned is
  on disk.  Events are only ever inserted; nothing is updated or deleted except
  the ``meters`` snapshot table, which is rewritten in the *same* transaction as
  the events that change it.
* Each event carries the MAC of the previous one (``prev``) and its own
  (``hash``): HMAC-SHA256 over a canonical JSON form, under a key the service
  gets from systemd's ``LoadCredential=`` (controller/books/ledgerkey.py).  Any edit,
  deletion or reordering breaks the chain, and a person who can write the
  database but has no key cannot recompute it (docs/security.md).  A ledger
  written before the key (schema 1: plain SHA-256) is migrated by appending a
  keyed ``ledger.keyed`` record over its last hash (``meta.keyed_from``).
* :meth:`Ledger.head` (event count, last MAC) is what the witness
  (controller/books/witness.py) keeps outside the state directory, so a rollback, a
  cut tail, a lost WAL or a missing ledger is found at start-up.
* At start-up :meth:`Ledger.verify` walks the chain and recomputes every meter
  from the events (controller/books/meters.py); a broken chain or a meter that does
  not match its stored snapshot is reported, and the service latches a tilt that
  is itself written to the ledger, so it survives restarts until cleared.

:class:`LedgerWriter` is the thread that owns the connection: the reactor
submits records and a callback; the writer commits them (several submissions
per transaction when they queue up) and hands the callback back to the
reactor only once the records are durable.  Nothing is shown or acknowledged
before that.  The writer also copies the WAL into the database file (a WAL
checkpoint) when it is idle, never inside a commit, so a commit costs the WAL's
one sync (docs/architecture.md, "Where the time goes").
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.books import ledgerfile
from controller.books import meters as meters_mod
from controller.books import seals as seals_mod
from controller.books.meters import Meter
from controller.core.records import Kind

if TYPE_CHECKING:
    from controller.books.ledgermigrate import KeyUnkeyed

GENESIS = "0" * 64
# ``hash`` carries no UNIQUE index: each hash covers its event's ``seq`` (the primary key), so two
# equal hashes would take a SHA-256 collision, and an edited row is found by verify() anyway.  Such
# an index cost every commit one random leaf page per event (about 4 of a lock-out's 10 WAL frames,
# and, on a ledger of millions of events, a read from disk inside the commit); it was never used to
# look anything up.  A ledger created before keeps its index: nothing relies on it either way.
SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS events (
    seq     INTEGER PRIMARY KEY,
    ts      TEXT NOT NULL,
    table_id TEXT NOT NULL,
    round   INTEGER NOT NULL,
    kind    TEXT NOT NULL,
    data    TEXT NOT NULL,
    prev    TEXT NOT NULL,
    hash    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_round ON events(round);
CREATE INDEX IF NOT EXISTS events_kind ON events(kind);
CREATE TABLE IF NOT EXISTS meters (
    level   TEXT PRIMARY KEY,
    row     TEXT NOT NULL,
    seq     INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    seq     INTEGER PRIMARY KEY,
    hash    TEXT NOT NULL,
    meters  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    name    TEXT PRIMARY KEY,
    value   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS wal_restart (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    n       INTEGER NOT NULL
);
"""
    + seals_mod.SEALS_SCHEMA
)
#: a checkpoint (the chain's hash and every meter) and the seal of the segment it ends
#: (controller/books/seals.py) every this many events: start-up verifies and replays only what came
#: after the last one; the audit checks the sealed segments by their digests
CHECKPOINT_EVERY = 2000
#: 1: SHA-256 chain (no key); 2: HMAC-SHA256 chain from ``meta.keyed_from`` on; 3: history
#: sealed in segments (a seal with every checkpoint; schema-2 ledgers sealed at their
#: checkpoints when migrated)
SCHEMA_VERSION = 3
KEYED_KIND = Kind.LEDGER_KEYED
#: space kept free beside the ledger (a preallocated file) and released on a write fault, so
#: that the fault's own record can still be written on a full disk
RESERVE_BYTES = 1 << 20
RESERVE_SUFFIX = ".reserve"


class LedgerError(RuntimeError):
    pass


#: the largest round number (and event number) a ledger holds: SQLite's largest integer
MAX_ROUND = (1 << 63) - 1


def _round_out_of_range(rnd: int, last: int) -> str:
    """Why a record's round cannot be written (said in the ledger's fault tilt, not as SQLite's
    OverflowError): a round past the largest follows a round number forged in the ledger."""
    return (
        f"round {rnd} is outside 0..{MAX_ROUND}, the rounds a ledger holds (its last round is {last}: round "
        "numbers used up, as after a forged round number was acknowledged); restore the ledger from a backup"
    )


class ClockWentBackwards(LedgerError):
    """The wall clock reads earlier than the last durable event: nothing is recorded."""


def fault_of(exc: BaseException) -> tuple[str, str]:
    """The tilt (source, reason) for a failed ledger write: the same in the ledger's own
    fault record (LedgerWriter) and on the table (controller/daemon/service.py)."""
    if isinstance(exc, ClockWentBackwards):
        return "clock", str(exc)
    return "ledger", f"ledger write failed: {exc!r}"


@dataclass(frozen=True)
class Head:
    """The chain's head: how many events, and the MAC of the last one (GENESIS when none)."""

    count: int
    mac: str


@dataclass(frozen=True)
class Record:
    """An event to append: what happened, in which round, with which details."""

    kind: str
    round: int
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredEvent:
    seq: int
    ts: str
    table: str
    round: int
    kind: str
    data: dict[str, Any]
    prev: str
    hash: str


# one encoder each, made once: ``json.dumps`` with these options builds a new encoder on every
# call (the same output; an event's hash and data text are unchanged)
_canonical_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True).encode
_data_encode = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode


@dataclass(frozen=True, slots=True)
class EventRow:
    """An event as its hash or MAC covers it: its stored row but its own hash, ``data`` as its
    stored JSON text (``round``, ``kind`` and the rest as in :class:`StoredEvent`)."""

    seq: int
    ts: str
    table: str
    round: int
    kind: str
    data: str
    prev: str


def canonical(ev: EventRow) -> bytes:
    """The bytes an event's hash or MAC is taken over (ASCII JSON: the format of every ledger)."""
    return _canonical_encode([ev.seq, ev.ts, ev.table, ev.round, ev.kind, ev.data, ev.prev]).encode("ascii")


def event_hash(ev: EventRow) -> str:
    """Schema 1 (unkeyed): the SHA-256 of an event; still checked below ``meta.keyed_from``."""
    return hashlib.sha256(canonical(ev)).hexdigest()


def event_mac(key: bytes, ev: EventRow) -> str:
    """Schema 2: the HMAC-SHA256 of an event under the ledger key."""
    return hmac.new(key, canonical(ev), hashlib.sha256).hexdigest()


def _dumps(data: Mapping[str, Any]) -> str:
    return _data_encode(data)


def _no_clock() -> float:
    return 0.0


_ROWS_PER_INSERT = 500  # 8 parameters a row: well inside SQLite's 32766


@functools.lru_cache(maxsize=64)
def _insert_events_sql(rows: int) -> str:
    values = ",".join(["(?,?,?,?,?,?,?,?)"] * rows)
    return f"INSERT INTO events(seq, ts, table_id, round, kind, data, prev, hash) VALUES {values}"


def read_events(
    db: sqlite3.Connection,
    since: int = 0,
    kinds: Iterable[str] | None = None,
    round_no: int | None = None,
    limit: int | None = None,
    newest_first: bool = False,
) -> Iterator[StoredEvent]:
    """The stored events of the ledger open on ``db`` (also read-only connections:
    controller/reports/tablestatus.py), after ``since``, optionally of ``kinds`` and one round."""
    q = "SELECT seq, ts, table_id, round, kind, data, prev, hash FROM events WHERE seq > ?"
    args: list[Any] = [since]
    if kinds:
        ks = list(kinds)
        q += " AND kind IN (" + ",".join("?" * len(ks)) + ")"
        args += ks
    if round_no is not None:
        q += " AND round = ?"
        args.append(round_no)
    q += " ORDER BY seq" + (" DESC" if newest_first else "")
    if limit is not None:
        q += " LIMIT ?"
        args.append(limit)
    for row in db.execute(q, args):
        yield StoredEvent(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]), row[6], row[7])


@dataclass
class _Batch:
    """An append's records chained onto the ledger's head, before they are written: the last
    event's seq, time and MAC (the new head), its round, the meters after them and the levels
    they touched, the events' INSERT parameters, the events as stored and the rows the running
    segment's digest reads."""

    seq: int
    ts: str
    head: str
    round: int
    meters: dict[str, Meter]
    touched: set[str]
    params: list[Any]
    out: list[StoredEvent]
    rows: list[str]


class Ledger:
    """Synchronous ledger access; use from one thread (the writer), or before it starts."""

    def __init__(
        self,
        path: str | Path,
        table_id: str,
        *,
        key: bytes,
        wall_clock: Callable[[], float] = time.time,
        reserve_bytes: int = RESERVE_BYTES,
        key_unkeyed: KeyUnkeyed | None = None,
    ):
        if len(key) < 16:
            raise LedgerError("the ledger key is shorter than 16 bytes")
        self.path = Path(path)
        self.table_id = table_id
        self._wall = wall_clock
        self._key = key
        self._mac = hmac.new(key, digestmod=hashlib.sha256)  # copied per event: the key is hashed once
        self.sealer = seals_mod.Sealer(key)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = ledgerfile.bound(sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False))
        # before any write: a trigger planted in the file would run inside this process's commits
        problem = ledgerfile.schema_error(self.db, self.path)
        if problem is not None:
            self.db.close()
            raise LedgerError(problem)
        from controller.books.ledgermigrate import refuse_unkeyed

        try:
            refuse_unkeyed(self.db, self.path, key_unkeyed)
        except BaseException:
            self.db.close()
            raise
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA)
        self._load_head()
        self.reserve_path = self.path.with_name(self.path.name + RESERVE_SUFFIX)
        self.make_reserve(reserve_bytes)
        self.migrated_from: int | None = None  # the schema this ledger was migrated from at this open
        from controller.books.ledgermigrate import migrate

        # to SCHEMA_VERSION; an unkeyed ledger only on a technician's order (``key_unkeyed``)
        try:
            migrate(self, key_unkeyed)  # (controller/books/ledgermigrate.py), or refused when newer
        except BaseException:
            self.db.close()
            raise
        #: the last seal (controller/books/seals.py; the next one follows it) and the digest of the segment
        #: after it, fed the rows as they are appended (made from the stored rows at the first append)
        self._seal: seals_mod.Seal | None = seals_mod.last_seal(self.db)
        self._segment: hmac.HMAC | None = None
        # the stored ``meters`` rows are checked against the events by verify(); the
        # live meters always come from the events themselves (from the last seal's keyed snapshot)
        self.meters: dict[str, Meter] = self.recompute_meters(from_checkpoint=True)
        #: perf_counter stamps of the last append: start, BEGIN, COMMIT issued, COMMIT returned (bench/)
        self.append_stamps: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
        #: the writing thread's CPU time at the same instants, when bench/ sets ``cpu_clock`` to
        #: ``time.thread_time`` (a system call: not taken otherwise)
        self.append_cpu: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
        self.cpu_clock: Callable[[], float] = _no_clock

    def _load_head(self) -> None:
        row = self.db.execute("SELECT seq, hash, ts, round FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        self.last_seq: int = int(row[0]) if row else 0
        self.last_hash: str = str(row[1]) if row else GENESIS
        self.last_ts: str = str(row[2]) if row else ""
        self.last_round_no: int = int(row[3]) if row else 0

    def _meta(self, name: str) -> int | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        except sqlite3.OperationalError:  # no meta table: a schema-1 ledger read without migrating it
            return None
        if row is None:
            return None
        value = str(row[0])
        if not value.isdigit() or len(value) > 18:  # an event number: what SQLite can hold
            raise LedgerError(f"{self.path}: meta {name} is {value[:40]!r}, not an event number or schema version")
        return int(value)

    def schema(self) -> int | None:
        """The schema version recorded in ``meta`` (None: a ledger from before the key, or new)."""
        return self._meta("schema")

    def keyed_from(self) -> int | None:
        return self._meta("keyed_from")

    def _meter_seal(self) -> seals_mod.Seal | None:
        """The last seal, when its MAC holds: the meters start from its snapshot (else from the
        last checkpoint; the start-up check reports the seal)."""
        seal = self._seal
        if seal is None or (self.keyed and not self.sealer.valid(seal)):
            return None
        return seal

    @property
    def keyed(self) -> bool:
        """The key is known (a read-only view may have none: nothing keyed is checked)."""
        return bool(self._key)

    def _running_segment(self) -> hmac.HMAC:
        """The digest of the segment after the last seal, so far (from the stored rows, once, a
        bounded piece at a time: should seals have gone missing, many segments' worth)."""
        if self._segment is None:
            seg = self.sealer.running()
            first = self._seal.last + 1 if self._seal is not None else 1
            seals_mod.feed(self.db, seg, first, self.last_seq)
            self._segment = seg
        return self._segment

    def event_mac(self, ev: EventRow) -> str:
        """The MAC of an event under this ledger's key (controller/books/ledgercheck.py)."""
        m = self._mac.copy()
        m.update(canonical(ev))
        return m.hexdigest()

    def head(self) -> Head:
        """The chain's head (event count, last MAC): what the witness keeps, and what a
        linked progressive system's uplink reports."""
        return Head(self.last_seq, self.last_hash)

    # ------------------------------------------------------------------ the disk-full reserve
    def make_reserve(self, size: int = RESERVE_BYTES) -> None:
        """Preallocate ``size`` bytes beside the ledger (kept as long as the ledger works)."""
        if size <= 0 or self.reserve_path.exists():
            return
        try:
            fd = os.open(self.reserve_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return
        try:
            os.posix_fallocate(fd, 0, size)
            os.fsync(fd)
        except OSError:
            os.close(fd)
            os.unlink(self.reserve_path)  # no room for it: the ledger's own writes will say so
            return
        os.close(fd)

    def release_reserve(self) -> bool:
        """Free the reserved space (a write fault: the fault record must still fit)."""
        try:
            os.unlink(self.reserve_path)
        except FileNotFoundError:
            return False
        return True

    @classmethod
    def open_readonly(cls, path: str | Path, table_id: str = "audit", *, key: bytes | None = None) -> Ledger:
        """A read-only view for audits and recall from other threads (WAL lets it read
        beside the writer); it cannot append.  Without the key, :meth:`verify` cannot
        check the MACs and says so.  A missing file is an error (nothing is created)."""
        p = Path(path)
        if not p.is_file():
            raise LedgerError(f"{p}: no ledger file")
        return cls.over(ledgerfile.connect_ro(p), p, table_id, key=key)

    @classmethod
    def over(cls, db: sqlite3.Connection, path: Path, table_id: str = "audit", *, key: bytes | None = None) -> Ledger:
        """A view for checking the ledger open on ``db`` (inside its transaction: a backup's
        copy being brought up to date, controller/books/backupextend.py); never for appending."""
        self = cls.__new__(cls)
        ledgerfile.bound(db)
        self.path = path
        self.table_id = table_id
        self._wall = time.time
        self._key = key or b""
        self._mac = hmac.new(self._key, digestmod=hashlib.sha256)
        self.sealer = seals_mod.Sealer(self._key)
        self.db = db
        self._load_head()
        self._seal = None
        self._segment = None
        self.meters = {}
        self.migrated_from = None
        self.append_stamps = (0.0, 0.0, 0.0, 0.0)
        self.append_cpu = (0.0, 0.0, 0.0, 0.0)
        self.cpu_clock = _no_clock
        return self

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ writing
    def append(self, records: Iterable[Record], *, at_last_time: bool = False) -> list[StoredEvent]:
        """Append records in one durable transaction; return them as stored.

        A wall clock earlier than the last durable event is refused
        (:class:`ClockWentBackwards`, nothing written), unless ``at_last_time``: the
        writer's fault record is then stamped with the last durable time."""
        recs = list(records)
        if not recs:
            return []
        t_start, c_start = time.perf_counter(), self.cpu_clock()
        segment = self._running_segment()
        batch = self._chain(recs, self._timestamp(at_last_time))
        cur = self.db.cursor()
        checkpoint_due = batch.seq // CHECKPOINT_EVERY != self.last_seq // CHECKPOINT_EVERY
        seal = None
        t_begin, c_begin = time.perf_counter(), self.cpu_clock()
        try:
            if not batch.touched and not checkpoint_due and len(batch.out) <= _ROWS_PER_INSERT:
                # events only, one statement: in autocommit mode it is its own transaction (all of its
                # rows or none), and with synchronous=FULL it returns only once the WAL is synced.  One
                # call into SQLite, holding the GIL nowhere between its INSERT and its sync, instead of
                # three (BEGIN, INSERT, COMMIT), each taking the GIL back in between.
                t_commit, c_commit = t_begin, c_begin
                cur.execute(_insert_events_sql(len(batch.out)), batch.params)
            else:
                cur.execute("BEGIN IMMEDIATE")
                seal = self._write_batch(cur, batch, segment, checkpoint_due)
                t_commit, c_commit = time.perf_counter(), self.cpu_clock()
                cur.execute("COMMIT")
        except BaseException:
            self._roll_back(cur)
            raise
        self.last_seq, self.last_hash, self.last_ts, self.last_round_no = batch.seq, batch.head, batch.ts, batch.round
        self.meters = batch.meters
        if seal is not None:
            self._seal, self._segment = seal, self.sealer.running()
        else:
            segment.update("".join(batch.rows).encode())
        self.append_stamps = (t_start, t_begin, t_commit, time.perf_counter())
        self.append_cpu = (c_start, c_begin, c_commit, self.cpu_clock())
        return batch.out

    def _chain(self, recs: list[Record], ts: str) -> _Batch:
        """The records chained onto the ledger's head, each MACed over the one before, with the
        meters they move: all in memory, nothing written yet (a record refused leaves no trace)."""
        seq, prev = self.last_seq, self.last_hash
        meters = self.meters
        out: list[StoredEvent] = []
        params: list[Any] = []
        table = self.table_id
        touched: set[str] = set()
        loads, data_encode, canonical_encode, base = json.loads, _data_encode, _canonical_encode, self._mac
        rnd = self.last_round_no
        rows: list[str] = []  # each event as its segment's digest reads it (controller/books/seals.py)
        ascii_table = table.isascii()
        for r in recs:
            seq += 1
            kind, rnd = r.kind, r.round
            if not 0 <= rnd <= MAX_ROUND:
                raise LedgerError(_round_out_of_range(rnd, self.last_round_no))
            data = data_encode(r.data)
            m = base.copy()
            c = canonical_encode([seq, ts, table, rnd, kind, data, prev])
            m.update(c.encode("ascii"))
            h = m.hexdigest()
            # the row's json_array is its canonical text with the MAC added (all ASCII: the data is
            # ASCII JSON), else made in full
            rows.append(
                c[:-1] + ',"' + h + '"]\n'
                if ascii_table and kind.isascii()
                else seals_mod.row_text(EventRow(seq, ts, table, rnd, kind, data, prev), h)
            )
            if kind.startswith("meter."):
                meters = meters_mod.apply(meters, kind, r.data, round_no=rnd, seq=seq)
                touched.add(str(r.data.get("level")))
            params += (seq, ts, table, rnd, kind, data, prev, h)
            out.append(StoredEvent(seq, ts, table, rnd, kind, loads(data), prev, h))
            prev = h
        return _Batch(seq, ts, prev, rnd, meters, touched, params, out, rows)

    def _write_batch(
        self, cur: sqlite3.Cursor, batch: _Batch, segment: hmac.HMAC, checkpoint_due: bool
    ) -> seals_mod.Seal | None:
        """The batch's events, the meters it moved and, when due, the checkpoint and its segment's
        seal, inside the caller's open transaction; the seal made, if one was."""
        for i in range(0, len(batch.out), _ROWS_PER_INSERT):  # one statement for the events, not one per event
            chunk = batch.params[i * 8 : (i + _ROWS_PER_INSERT) * 8]
            cur.execute(_insert_events_sql(len(chunk) // 8), chunk)
        for level in sorted(batch.touched):
            cur.execute(
                "INSERT OR REPLACE INTO meters(level, row, seq) VALUES (?,?,?)",
                (level, _dumps(batch.meters[level].to_row()), batch.seq),
            )
        if not checkpoint_due:
            return None
        snapshot = _dumps({lv: m.to_row() for lv, m in sorted(batch.meters.items())})
        cur.execute(  # OR REPLACE: a row left past a cut tail must not stop the ledger
            "INSERT OR REPLACE INTO checkpoints(seq, hash, meters) VALUES (?,?,?)",
            (batch.seq, batch.head, snapshot),
        )
        return self._seal_segment(cur, segment, batch, snapshot)

    def _timestamp(self, at_last_time: bool) -> str:
        """Now, in ISO 8601 UTC (fixed width: text order is time order); earlier than the last
        durable event is refused (:class:`ClockWentBackwards`), or with ``at_last_time`` is that time."""
        ts = datetime.fromtimestamp(self._wall(), UTC).isoformat(timespec="microseconds")
        if ts >= self.last_ts:
            return ts
        if not at_last_time:
            raise ClockWentBackwards(f"clock went backwards: now {ts}, last recorded event {self.last_ts}")
        return self.last_ts

    def _roll_back(self, cur: sqlite3.Cursor) -> None:
        """An append that failed: its transaction, if one is open, rolled back (a failing ROLLBACK
        leaves the error that caused it to be raised)."""
        if self.db.in_transaction:
            try:
                cur.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def _seal_segment(self, cur: sqlite3.Cursor, segment: hmac.HMAC, batch: _Batch, meters: str) -> seals_mod.Seal:
        """The seal of the segment ending at this batch's last event, written in the checkpoint's
        transaction; its digest from the rows as written, never read back."""
        digest = segment.copy()
        digest.update("".join(batch.rows).encode())
        before = self._seal
        n, first, prev = (before.n + 1, before.last + 1, before.mac) if before else (1, 1, GENESIS)
        body = seals_mod.SealBody(n, first, batch.seq, batch.ts, digest.hexdigest(), batch.head, meters, prev)
        seal = self.sealer.make(body)
        seals_mod.insert(cur, seal)
        return seal

    # ------------------------------------------------------------------ WAL upkeep
    def set_autocheckpoint(self, pages: int) -> None:
        """SQLite's own checkpoint after a COMMIT that leaves the WAL over ``pages`` pages
        (its default: 1000); 0 turns it off, for a writer that checkpoints itself
        (:class:`LedgerWriter`)."""
        self.db.execute(f"PRAGMA wal_autocheckpoint={int(pages)}")

    def checkpoint(self) -> tuple[int, int]:
        """Copy the WAL's committed pages into the database file and, when all were
        copied, restart the WAL now rather than in the next append.

        The checkpoint is PASSIVE (it never waits for a reader; what a reader still
        needs stays in the WAL for the next one) and, with ``synchronous=FULL``, syncs
        the WAL before copying and the database file after.  A WAL that restarts writes
        and syncs a new header before its first frame: done here, with a one-row
        housekeeping write (``wal_restart``, no ledger data), so that the next append's
        commit costs one sync, not two.  Returns (frames in the WAL, frames copied)."""
        busy, log, copied = self.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if busy == 0 and log > 0 and copied == log:
            cur = self.db.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")
                cur.execute(
                    "INSERT INTO wal_restart(id, n) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET n = n + 1",
                )
                cur.execute("COMMIT")
            except BaseException:
                try:
                    cur.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
        return int(log), int(copied)

    # ------------------------------------------------------------------ reading
    def events(
        self,
        since: int = 0,
        kinds: Iterable[str] | None = None,
        round_no: int | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> Iterator[StoredEvent]:
        return read_events(self.db, since, kinds, round_no, limit, newest_first)

    def last_round(self) -> int:
        """The highest round of the chain's events (a row outside it, seq below 1, is no round
        of this table: the check reports it)."""
        row = self.db.execute("SELECT MAX(round) FROM events WHERE seq > 0").fetchone()
        return int(row[0] or 0)

    def stored_meter_rows(self) -> dict[str, dict[str, Any]]:
        return {level: json.loads(row) for level, row in self.db.execute("SELECT level, row FROM meters")}

    def last_checkpoint(self) -> tuple[int, str, dict[str, Meter]] | None:
        """The last checkpoint that still names an event of this ledger by its MAC: one left
        behind by a cut tail or a rollback (past the last event, or naming another event) is
        never a starting point for the meters (verify() reports it)."""
        row = self.db.execute(
            "SELECT c.seq, c.hash, c.meters FROM checkpoints c JOIN events e ON e.seq = c.seq AND e.hash = c.hash "
            "ORDER BY c.seq DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        return row[0], row[1], {lv: Meter.from_row(r) for lv, r in json.loads(row[2]).items()}

    def recompute_meters(self, from_checkpoint: bool = False) -> dict[str, Meter]:
        """Every meter from the events: from genesis, or (``from_checkpoint``) from the last
        seal's keyed snapshot on (without a seal, from the last checkpoint)."""
        since, meters = 0, dict[str, Meter]()
        seal = self._meter_seal() if from_checkpoint else None
        cp = self.last_checkpoint() if from_checkpoint and seal is None else None
        if seal is not None:
            since, meters = seal.last, {lv: Meter.from_row(r) for lv, r in json.loads(seal.meters).items()}
        elif cp is not None:
            since, _h, meters = cp
        # ``+kind``: the walk goes by seq from ``since``, never through the kind index (all of a year's meter events)
        for seq, rnd, kind, data in self.db.execute(
            "SELECT seq, round, kind, data FROM events WHERE seq > ? AND +kind >= 'meter.' AND +kind < 'meter/' "
            "ORDER BY seq",
            (since,),
        ):
            meters = meters_mod.apply(meters, kind, json.loads(data), round_no=rnd, seq=seq)
        return meters

    def verify(self, full: bool = False) -> list[str]:
        """Check the ledger; return the problems found (controller/books/ledgercheck.py).

        At start-up (``full=False``) from the last seal on: its MAC and keyed meters, then
        every event after it (chain, MAC, meters), and the stored meters — whatever the
        ledger's age.  ``full=True`` first checks every sealed segment by its digest (one
        query and one HMAC each), naming the first bad event of a segment that fails.  It
        reads one consistent snapshot (a read transaction), so it can run while the writer
        appends."""
        from controller.books import ledgercheck

        own = not self.db.in_transaction
        if own:
            self.db.execute("BEGIN")
        try:
            return ledgercheck.full(self) if full else ledgercheck.quick(self)
        finally:
            if own:
                self.db.execute("ROLLBACK")
