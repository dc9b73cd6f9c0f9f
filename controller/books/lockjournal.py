"""The lock-out journal: the accepted set made durable in one write and one sync, before the
count is shown (docs/architecture.md, "Where the time goes").

At the lock-out (§ 670a.2(c)(2)) the table must not show the count before the accepted set is
on disk.  Through the ledger that costs a hand-off to the writer thread, the JSON and MACs of
every record, SQLite's insert and the WAL's sync: about 1.2 ms for a 0.3 ms sync on the
development machine.  The journal takes the same records, as one keyed block, straight to a
preallocated file: one ``pwrite`` of 4 KiB and one ``fdatasync`` on the reactor thread (the GIL
released meanwhile), and the count is shown when it returns.  The same records then go to the
ledger as usual, a millisecond later, in their own transaction.

The journal is not a second ledger: it holds only the last few lock-outs, each until the ledger
has it.  If the service stops between the two (a crash, a power cut), start-up finds the
journal's block for the round in play with no ``lockout`` in the ledger and appends its records
there — with a ``lockout.recovered`` record saying so — before the table recovers the round
(:func:`recover`).  The ledger stays the one chain; nothing shown is lost, nothing doubled
(the ledger's records of a lock-out are one transaction: all there, or none).

Format: ``SLOTS`` blocks of ``BLOCK`` bytes, written in turn; each block is ``MAGIC``, the body's
length (4 bytes, little-endian), the body (JSON: table, block number, round, records) and the
HMAC-SHA256 of all that under a key derived from the ledger key (so a block cannot be forged or
moved to another table without it).  A block whose MAC does not check — torn by a power cut
before its sync returned, or never written — is not a lock-out that was shown, and is ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.books.ledger import Ledger, LedgerError, Record, StoredEvent
from controller.core.records import Kind

JOURNAL_FILE = "lockout.journal"
MAGIC = b"TLJ1"
BLOCK = 4096
SLOTS = 8
_HEAD = len(MAGIC) + 4
_MAC = 32


class JournalError(OSError):
    pass


@dataclass(frozen=True)
class Entry:
    n: int  # the block's number (one more for each lock-out written)
    round: int
    records: list[Record]


#: made once (``json.dumps`` with options builds an encoder per call); the ledger's own encoding
#: of the same data (its ``default=str``) is what the recovered records get
_encode = json.JSONEncoder(separators=(",", ":"), default=str).encode


def _journal_key(ledger_key: bytes) -> bytes:
    return hmac.new(ledger_key, b"tablectl lockout journal", hashlib.sha256).digest()


class LockoutJournal:
    """The journal file of one table (reactor thread only, after start-up)."""

    def __init__(self, path: str | Path, table_id: str, ledger_key: bytes):
        self.path = Path(path)
        self.table_id = table_id
        self._mac = hmac.new(_journal_key(ledger_key), digestmod=hashlib.sha256)  # copied per block
        new = not self.path.exists()
        # never through a link (the service writes it: a link planted there would send its blocks
        # elsewhere), and only a regular file: a device or FIFO there is refused, never read
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(self._fd).st_mode):
                raise JournalError(f"{self.path} is not a regular file")
            if os.fstat(self._fd).st_size < BLOCK * SLOTS:
                os.posix_fallocate(self._fd, 0, BLOCK * SLOTS)
                os.fsync(self._fd)
                if new:  # its name durable in the directory too
                    dfd = os.open(self.path.parent, os.O_RDONLY)
                    try:
                        os.fsync(dfd)
                    finally:
                        os.close(dfd)
            self._n = max((e.n for e in self.entries()), default=0)
        except BaseException:
            os.close(self._fd)
            raise
        self.written = 0

    def close(self) -> None:
        os.close(self._fd)

    # ---- writing --------------------------------------------------------------------
    def block(self, round_no: int, records: Sequence[Record]) -> bytes | None:
        """The next block for these records, or None when they do not fit in one (the caller
        then makes them durable through the ledger alone)."""
        body = _encode(
            {
                "table": self.table_id,
                "n": self._n + 1,
                "round": round_no,
                "records": [[r.kind, r.round, r.data] for r in records],
            }
        ).encode()
        if _HEAD + len(body) + _MAC > BLOCK:
            return None
        head = MAGIC + len(body).to_bytes(4, "little") + body
        return (head + self._mac_of(head)).ljust(BLOCK, b"\0")

    def write(self, block: bytes) -> None:
        """Write a block from :meth:`block` in the next slot and sync it: durable on return."""
        n = self._n + 1
        os.pwrite(self._fd, block, (n % SLOTS) * BLOCK)
        os.fdatasync(self._fd)
        self._n = n
        self.written += 1

    def _mac_of(self, head: bytes) -> bytes:
        m = self._mac.copy()  # the key hashed once, not per block (the lock-out's path)
        m.update(head)
        return m.digest()

    # ---- reading --------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        """The valid blocks of this table, oldest first."""
        out = []
        for i in range(SLOTS):
            raw = os.pread(self._fd, BLOCK, i * BLOCK)
            e = self._parse(raw)
            if e is not None:
                out.append(e)
        return sorted(out, key=lambda e: e.n)

    def _parse(self, raw: bytes) -> Entry | None:
        if len(raw) < _HEAD + _MAC or not raw.startswith(MAGIC):
            return None
        size = int.from_bytes(raw[len(MAGIC) : _HEAD], "little")
        if _HEAD + size + _MAC > len(raw):
            return None
        head, mac = raw[: _HEAD + size], raw[_HEAD + size : _HEAD + size + _MAC]
        if not hmac.compare_digest(mac, self._mac_of(head)):
            return None
        try:
            doc = json.loads(head[_HEAD:])
            if doc["table"] != self.table_id:
                return None
            records = [Record(Kind(k), int(r), dict(d)) for k, r, d in doc["records"]]
            return Entry(int(doc["n"]), int(doc["round"]), records)
        except (ValueError, KeyError, TypeError):
            return None


def _lockout_lost(ledger: Ledger, rnd: int) -> bool:
    """The ledger has round ``rnd`` open, neither locked out nor voided."""
    kinds = {ev.kind for ev in ledger.events(round_no=rnd)}
    return Kind.ROUND_OPEN in kinds and Kind.LOCKOUT not in kinds and Kind.ROUND_VOID not in kinds


def recover(journal: LockoutJournal, ledger: Ledger) -> list[StoredEvent]:
    """At start-up, before the table reads the round in play from the ledger: the journal's
    lock-out of that round, when the ledger has the round open and no lock-out of it (the
    service stopped between the journal's sync and the ledger's commit), appended to the
    ledger with a ``lockout.recovered`` record.  Returns what was appended."""
    last = ledger.last_round()
    mine = [e for e in journal.entries() if e.round == last and last > 0]
    if not mine:
        return []
    entry = mine[-1]
    if not _lockout_lost(ledger, last):
        return []
    data: dict[str, Any] = {"journal_block": entry.n, "records": len(entry.records)}
    return ledger.append([*entry.records, Record(Kind.LOCKOUT_RECOVERED, last, data)])


def open_at_start(
    state_dir: Path, table_id: str, ledger_key: bytes, ledger: Ledger, *, ledger_ok: bool
) -> tuple[LockoutJournal | None, list[str], list[StoredEvent]]:
    """The service's start-up (controller/daemon/service.py): (the journal, problems, what
    :func:`recover` appended).  Recovery runs only on a ledger that passed its check
    (``ledger_ok``): a damaged one is the technician's first, its tilt latched, and the journal
    keeps its blocks meanwhile.  A journal that cannot be opened is a problem (a latched tilt;
    lock-outs then wait for the ledger's commit); a block the ledger refuses (its clock gone back
    since) is a problem too, and the block stays for a later start."""
    try:
        journal = LockoutJournal(Path(state_dir) / JOURNAL_FILE, table_id, ledger_key)
    except OSError as e:
        return None, [f"lock-out journal: cannot open {JOURNAL_FILE}: {e}"], []
    if not ledger_ok:
        return journal, [], []
    try:
        return journal, [], recover(journal, ledger)
    except LedgerError as e:
        return journal, [f"lock-out journal: its lock-out could not go into the ledger: {e}"], []
