"""The witness of the ledger's head, kept outside the ledger's directory.

The ledger (controller/books/ledger.py) can prove that nothing inside it was edited,
but not that it is the *latest* ledger: an older copy restored, a cut tail, a
lost WAL, an empty or a deleted ledger are each a consistent chain.  The witness
is a small file elsewhere (``[ledger] witness_dir``, by default a sibling of the
state directory) holding the chain's head after the last durable commit: the
event count and the MAC of that event.  At start-up and in ``tablectl audit``
the ledger must reach the witness's count, and its event there must carry the
witness's MAC; a ledger behind the witness is a latched tilt.

The witness is written *after* each durable commit has been handed back (never on
the lock-out's path, and without an fsync: a witness lost to a power cut lags the
ledger, which is allowed; it can never get ahead of it), atomically: a temporary
file renamed over the old one.  It cannot stop a person who can write both
directories and restores both from the same moment (docs/security.md); a linked
progressive system's central record is the next line (``Ledger.head``).  Written with
the ledger key, it is signed (:class:`Witness`): without the key no witness can be made
or edited, only deleted, copied or put back.  A witness that did not match at start-up is
never rewritten until a technician acts (controller/daemon/ledgerstack.py).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from pathlib import Path

from controller.books.ledger import GENESIS, Head

WITNESS_FILE = "witness.json"
#: a witness is about 130 bytes; anything much larger is not one
WITNESS_MAX = 4096
#: the largest event number (SQLite's largest integer)
MAX_COUNT = (1 << 63) - 1
_HEX64 = re.compile(r"[0-9a-f]{64}")


class WitnessError(RuntimeError):
    pass


def default_witness_dir(state_dir: Path) -> Path:
    """``/var/lib/tablectl`` -> ``/var/lib/tablectl-witness``: outside the ledger's directory."""
    return state_dir.parent / f"{state_dir.name}-witness"


def _signer(key: bytes | None) -> hmac.HMAC | None:
    """The witness's own key, derived from the ledger key (never the ledger key itself)."""
    if not key:
        return None
    return hmac.new(hmac.new(key, b"tablectl witness", hashlib.sha256).digest(), digestmod=hashlib.sha256)


class Witness:
    """The witness file of one table.  With the ledger ``key`` it is *signed* (``sig``: an HMAC of
    its table, count and MAC under a key derived from the ledger key) and a read checks the
    signature: a writer of the witness directory without the key can delete or copy a witness,
    never make one — for a ledger copy put back from a backup, say.  Without the key (``tablectl
    status``) it is read as it is."""

    def __init__(self, directory: str | Path, table_id: str, key: bytes | None = None):
        self.dir = Path(directory)
        self.path = self.dir / WITNESS_FILE
        self.table_id = table_id
        self._sign = _signer(key)
        self.written = 0  # writes by this process (bench/, tests)
        self._tmp: tuple[int, Path] | None = None  # (the process, its temporary file): see _tmp_path

    def _tmp_path(self) -> Path:
        """The temporary file a write renames over the witness, made once per process: a path made
        at each write (``with_name``) interns its new name, and the interpreter's table of
        interned strings, emptied of it again when the path is dropped, is rebuilt whole (about
        1 MB here) every few thousand writes: the C allocator kept a freed copy of it in the
        writer thread's arena now and then, steps of about 0.9 MB over hours of play (
        bench/_memory.py)."""
        pid = os.getpid()
        if self._tmp is None or self._tmp[0] != pid:
            self._tmp = (pid, self.path.with_name(f".{WITNESS_FILE}.{pid}.tmp"))
        return self._tmp[1]

    def read(self) -> Head | None:
        """The recorded head, or None when there is no witness file; a file that cannot be
        read or parsed is a :class:`WitnessError` (never taken for "no witness")."""
        from controller.core.safefile import read_text_bounded

        try:
            # bounded, and never through a link (a witness linked to /dev/zero once filled the memory)
            text = read_text_bounded(self.path, WITNESS_MAX)
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as e:
            raise WitnessError(f"{self.path}: cannot read the witness: {e}") from None
        try:
            doc = json.loads(text)
            count, mac = doc["count"], doc["mac"]
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            raise WitnessError(f"{self.path}: the witness is not valid: {e!r}") from None
        # an event number SQLite can hold (not 1e300, a float or a bool), and a MAC's hex digest
        if type(count) is not int or not 0 <= count <= MAX_COUNT:
            raise WitnessError(f"{self.path}: the witness's count is not an event number: {str(count)[:40]!r}")
        if not isinstance(mac, str) or not _HEX64.fullmatch(mac) or (count == 0) != (mac == GENESIS):
            raise WitnessError(f"{self.path}: the witness's MAC is not valid: {str(mac)[:80]!r}")
        self._check_signature(doc, count, mac)
        return Head(count, mac)

    def _signature(self, table: str, count: int, mac: str) -> str:
        assert self._sign is not None
        m = self._sign.copy()
        m.update(json.dumps([table, count, mac]).encode("utf-8"))
        return m.hexdigest()

    def _check_signature(self, doc: dict[str, object], count: int, mac: str) -> None:
        """With the key: the witness must carry its signature, and it must hold."""
        if self._sign is None:
            return
        sig, table = doc.get("sig"), doc.get("table")
        if sig is None:
            raise WitnessError(
                f"{self.path}: the witness is not signed (written before signed witnesses, or by someone "
                "without the key)"
            )
        if not isinstance(sig, str) or not isinstance(table, str):
            raise WitnessError(f"{self.path}: the witness's signature is not valid")
        if not hmac.compare_digest(sig, self._signature(table, count, mac)):
            raise WitnessError(f"{self.path}: the witness's signature does not match (made without the key)")

    def recorded_table(self) -> str | None:
        """The table the witness was written for (None: no witness, or none it can say)."""
        from controller.core.safefile import read_text_bounded

        try:
            doc = json.loads(read_text_bounded(self.path, WITNESS_MAX))
            return str(doc["table"]) if isinstance(doc, dict) and doc.get("table") else None
        except (OSError, UnicodeDecodeError, ValueError, KeyError):
            return None

    def write(self, head: Head) -> None:
        """Atomically (rename); no fsync (see the module docstring)."""
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self._tmp_path()
        # bytes, not text: a text file's codec set-up looks attributes up by names made at each
        # call, and CPython's type attribute cache keeps each such name (up to 4,096 of them), so
        # a write per commit grew the service by a little every round for hours
        fields: dict[str, object] = {"table": self.table_id, "count": head.count, "mac": head.mac}
        if self._sign is not None:
            fields["sig"] = self._signature(self.table_id, head.count, head.mac)
        tmp.write_bytes(json.dumps(fields).encode("utf-8"))
        os.replace(tmp, self.path)
        self.written += 1


def compare(witness: Head | None, mac_at: dict[int, str] | None, head: Head) -> list[str]:
    """Problems between the witness and the ledger: ``head`` is the ledger's head and
    ``mac_at`` maps the witness's count to the ledger's MAC at that event (when the ledger
    has that event).  A witness behind the ledger is fine (written after the commit)."""
    if witness is None:
        if head.count > 0:
            return [f"no witness of the ledger's head, but the ledger has {head.count} events (witness deleted?)"]
        return []
    if witness.count == 0:
        return []
    if head.count == 0:
        return [f"the ledger is empty or missing, but the witness says {witness.count} events were recorded"]
    if head.count < witness.count:
        return [
            f"the ledger ends at event {head.count}, but the witness says {witness.count} events were recorded "
            "(cut tail, lost WAL or an older copy restored)"
        ]
    mac = (mac_at or {}).get(witness.count)
    if mac != witness.mac:
        return [
            f"event {witness.count}: its MAC differs from the witness's (the ledger was replaced or rewritten "
            "after that event)"
        ]
    return []


def table_problems(witness: Witness, table_id: str) -> list[str]:
    """The witness names another table (copied in with another table's ledger)."""
    recorded = witness.recorded_table()
    if recorded is None or recorded == table_id:
        return []
    return [f"{witness.path}: the witness was written by table {recorded!r}, not by this table ({table_id!r})"]


def read_for_check(witness: Witness) -> Head | WitnessError | None:
    """Read the witness *before* the ledger (so a writer running meanwhile only moves the
    ledger ahead of it)."""
    try:
        return witness.read()
    except WitnessError as e:
        return e


def check(ledger: object, witnessed: Head | WitnessError | None) -> list[str]:
    """Compare a witness read before (:func:`read_for_check`) with the ledger: anything
    with a ``db`` (a sqlite3 connection to it: a controller.books.ledger.Ledger, ideally inside
    the same read transaction as its verify, or ``tablectl status``'s read-only view)."""
    import sqlite3

    db = getattr(ledger, "db", None)
    assert isinstance(db, sqlite3.Connection)
    if isinstance(witnessed, WitnessError):
        return [str(witnessed)]
    row = db.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    head = Head(int(row[0]), str(row[1])) if row else Head(0, GENESIS)
    mac_at: dict[int, str] = {}
    if witnessed is not None and witnessed.count:
        r = db.execute("SELECT hash FROM events WHERE seq = ?", (witnessed.count,)).fetchone()
        if r is not None:
            mac_at[witnessed.count] = str(r[0])
    return compare(witnessed, mac_at, head)


def sign_if_unsigned(directory: Path, table_id: str, key: bytes, db: object) -> bool:
    """An upgrade's step (``tablectl migrate``, run as root by install.sh): a witness written
    before witnesses were signed, that still vouches for an event of the ledger open on ``db``
    (the same MAC at its count), is written again signed, for the same head.  Anything else is
    left for the start-up to find.  True when it was signed."""
    import sqlite3

    assert isinstance(db, sqlite3.Connection)
    try:
        Witness(directory, table_id, key).read()
        return False  # signed (or none)
    except WitnessError:
        pass
    plain = Witness(directory, table_id)
    try:
        head = plain.read()
        doc = json.loads(plain.path.read_text())
    except (WitnessError, OSError, ValueError):
        return False
    if head is None or "sig" in doc or doc.get("table") != table_id:
        return False
    row = db.execute("SELECT hash FROM events WHERE seq = ?", (head.count,)).fetchone()
    if head.count and (row is None or row[0] != head.mac):
        return False
    Witness(directory, table_id, key).write(head)
    return True
