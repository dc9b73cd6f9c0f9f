"""The uplink's only window on the table's ledger (read-only): which link events it holds, the
totals a batch claims, and the chain head a batch records.

Everything the uplink knows about the ledger goes through :class:`LedgerSource`, so that a
change of the ledger's format or API (a keyed chain, a ``Ledger.head()``) is made here alone.

**Nothing unverified leaves it**: the ledger's directory can be written by someone
who has no key (docs/security.md), so :meth:`SqliteLedgerSource.verify` walks every record after
the LAP's last one — not only the link records — and checks each one's MAC under the table's key
(controller/books/ledger.py ``event_mac``) and its place in the chain (its seq follows the one before,
its ``prev`` is that one's MAC); :meth:`link_events` hands out only records inside the verified
part.  The first record that fails is :class:`Unverified`: forwarding stops there (the uplink
reports it to the table and the LAP) until the file is another one (a restore) or the uplink
restarts, and is verified again from scratch.
"""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

from controller.books.ledger import GENESIS, EventRow, canonical, event_hash
from controller.core.records import Kind

#: ledger kind -> the LAP's event kind (controller/lap/schema.py ``events.kind``)
LINK_KINDS: dict[str, str] = {
    Kind.LINK_CONTRIBUTION: "contribution",
    Kind.LINK_VOID: "void",
    Kind.LINK_HIT: "hit",
    Kind.LINK_PAID: "paid",
}


@dataclass(frozen=True)
class LinkEvent:
    """One event for the LAP, keyed by the table's ledger sequence number."""

    seq: int
    kind: str  # the LAP's kind: contribution | void | hit | paid
    level: str
    data: dict[str, Any]
    table_time: str  # the table's clock (ISO 8601); the LAP orders by its own


@dataclass(frozen=True)
class Totals:
    """What a batch claims: link events and wagered cents up to ``last_seq``, and the ledger's
    chain head at ``last_seq`` (``seq:hash``)."""

    last_seq: int
    events: int
    wagers: int
    head: str


@dataclass(frozen=True)
class Unverified:
    """The first ledger record whose MAC or place in the chain does not verify."""

    seq: int
    problem: str


class LedgerSource(Protocol):
    def verify(self, start: int) -> Unverified | None:
        """Extend the verified part to the ledger's end (from ``start``, the last seq the LAP
        holds, on the first call); the first record that fails, if any."""
        ...

    def rewind(self) -> None:
        """Verify again from scratch at the next :meth:`verify` (the LAP lost records: they are
        resent from an earlier place than this source was verified from)."""
        ...

    def link_events(self, since: int, limit: int) -> Sequence[LinkEvent]:
        """The link events after ``since``, in the verified part only."""
        ...

    def totals(self, upto: int) -> Totals: ...

    def last_seq(self) -> int:
        """The ledger's last seq (0: empty)."""
        ...

    def paid(self) -> dict[int, tuple[int, str | None]]:
        """Every hit the verified part of the ledger shows paid: hit seq -> (cents paid, the
        LAP's proof that it decided that amount, None in a record from before the proofs).  A LAP
        that lost the hit re-establishes it at this amount, with the proof only."""
        ...

    def mac_at(self, seq: int) -> str | None:
        """The MAC (hash) of event ``seq``, None when the ledger has no such event."""
        ...

    def link_event_at(self, seq: int) -> LinkEvent | None:
        """The link event at ``seq`` as the uplink sends it; None when the ledger has no link record there."""
        ...

    def replaced(self) -> bool:
        """The ledger file is no longer the one this source opened (a restore, a new ledger)."""
        ...

    def close(self) -> None: ...


def head_problem(lap_head: str | None, source: LedgerSource) -> str | None:
    """What is wrong between the chain head the LAP recorded for this table (``seq:hash``, from
    its last reconciled batch) and the table's ledger, or None.  The LAP's record is the central
    copy of the head (docs/security.md): a ledger put back from an older copy together with its
    witness ends before it, and another ledger has another MAC there."""
    if not lap_head or ":" not in lap_head:
        return None  # nothing recorded yet (a new member)
    seq_text, mac = lap_head.split(":", 1)
    try:
        seq = int(seq_text)
    except ValueError:
        return f"the LAP's record of this table's chain head is not valid: {lap_head[:80]!r}"
    if seq <= 0:
        return None
    here = source.mac_at(seq)
    if here is None:
        return (
            f"the LAP holds this table's ledger up to event {seq}, which the ledger here does not have "
            "(an older copy restored, or another ledger)"
        )
    if here != mac:
        return (
            f"event {seq} of the ledger here has another MAC than the LAP recorded "
            "(the ledger was replaced or rewritten)"
        )
    return None


def to_lap(kind: str, round_no: int, data: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(LAP kind, level, LAP data) for one ledger record of a ``link.*`` kind."""
    lap_kind = LINK_KINDS[kind]
    level = str(data["level"])
    out: dict[str, Any] = {"round": round_no}
    if lap_kind == "contribution":
        out.update(wager=int(data["wager"]), seat=int(data["seat"]))
        if "rate_version" in data:  # the LAP's rate version the wager was taken under
            out["rate_version"] = int(data["rate_version"])
    elif lap_kind == "void":
        # by its seq when the table knows it, else by the round and seat it was made for
        out.update({"of_seq": int(data["of_seq"])} if "of_seq" in data else {"seat": int(data["seat"])})
    elif lap_kind == "hit":
        f = Fraction(str(data["fraction"]))
        out.update(fraction_num=f.numerator, fraction_den=f.denominator, seat=int(data["seat"]), hand=data["hand"])
    else:
        out.update(hit_seq=int(data["hit_seq"]), cents=int(data["cents"]))
        if isinstance(data.get("by"), str):  # who validated (the floor view shows it)
            out["by"] = data["by"][:60]
    return lap_kind, level, out


class SqliteLedgerSource:
    """The table's SQLite ledger (controller/books/ledger.py), opened read-only (``mode=ro``; WAL lets
    it read beside the table's writer), verified under the table's ``key``."""

    CHUNK = 2000  # records read and verified per query

    def __init__(self, path: str | Path, key: bytes):
        if not key:
            raise ValueError("the uplink needs the table's ledger key to verify what it forwards")
        self.path = Path(path)
        self._inode = self.path.stat().st_ino  # a missing ledger is an error, as opening it is
        self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        self._kinds = tuple(LINK_KINDS)
        self._in = ",".join("?" * len(self._kinds))
        self._mac = hmac.new(key, digestmod=hashlib.sha256)
        self._pos: tuple[int, str] | None = None  # the last verified record: (seq, MAC)
        self._bad: Unverified | None = None

    # ---- verification -------------------------------------------------------------
    def verify(self, start: int) -> Unverified | None:
        if self._bad is not None:
            return self._bad
        if self._pos is None:
            anchor = GENESIS if start <= 0 else self.mac_at(start)
            if anchor is None:
                self._bad = Unverified(start, f"the ledger has no event {start}, the last the LAP holds")
                return self._bad
            self._pos = (max(start, 0), anchor)
        keyed_from = self._keyed_from()
        while self._bad is None:
            rows = self.db.execute(
                "SELECT seq, ts, table_id, round, kind, data, prev, hash FROM events"
                " WHERE seq > ? ORDER BY seq LIMIT ?",
                (self._pos[0], self.CHUNK),
            ).fetchall()
            for row in rows:
                problem = self._check(row, keyed_from)
                if problem is not None:
                    self._bad = Unverified(int(row[0]), problem)
                    break
                self._pos = (int(row[0]), str(row[7]))
            if len(rows) < self.CHUNK:
                break
        return self._bad

    def rewind(self) -> None:
        self._pos = None
        self._bad = None

    def _keyed_from(self) -> int:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE name = 'keyed_from'").fetchone()
        except sqlite3.OperationalError:
            return 1
        try:
            return int(row[0]) if row else 1
        except ValueError:
            return 1 << 62  # a meta row that is no number: nothing counts as keyed (fails safe)

    def _check(self, row: tuple[Any, ...], keyed_from: int) -> str | None:
        seq, ts, table, rnd, kind, data, prev, mac = row
        assert self._pos is not None
        if seq != self._pos[0] + 1:
            return f"event {seq}: expected event {self._pos[0] + 1} next (a gap in the chain)"
        if prev != self._pos[1]:
            return f"event {seq}: its prev is not the MAC of event {seq - 1} (the chain is broken)"
        ev = EventRow(seq, ts, table, rnd, kind, data, prev)
        if seq < keyed_from:
            if kind in LINK_KINDS:
                return f"event {seq}: a link record written before the ledger was keyed cannot be verified"
            if event_hash(ev) != mac:
                return f"event {seq}: its hash does not match its contents"
            return None
        m = self._mac.copy()
        m.update(canonical(ev))
        if not hmac.compare_digest(m.hexdigest(), str(mac)):
            return f"event {seq}: its MAC does not match its contents (edited, or written without the key)"
        return None

    def verified_to(self) -> int:
        return 0 if self._pos is None else self._pos[0]

    # ---- reading ------------------------------------------------------------------
    def link_events(self, since: int, limit: int) -> list[LinkEvent]:
        rows = self.db.execute(
            f"SELECT seq, ts, round, kind, data FROM events WHERE seq > ? AND seq <= ? AND kind IN ({self._in})"
            " ORDER BY seq LIMIT ?",
            (since, self.verified_to(), *self._kinds, limit),
        ).fetchall()
        return [self._event(*r) for r in rows]

    def link_event_at(self, seq: int) -> LinkEvent | None:
        """The link event the ledger holds at ``seq`` as the uplink sends it (None: no link record there)."""
        row = self.db.execute(
            f"SELECT seq, ts, round, kind, data FROM events WHERE seq = ? AND kind IN ({self._in})",
            (seq, *self._kinds),
        ).fetchone()
        return None if row is None else self._event(*row)

    def _event(self, seq: Any, ts: Any, round_no: Any, kind: str, data: str) -> LinkEvent:
        import json

        lap_kind, level, d = to_lap(kind, int(round_no), json.loads(data))
        if lap_kind == "contribution":
            taken = self._taken_ms(int(round_no), int(seq))
            if taken is not None:
                d["taken_ms"] = taken
        return LinkEvent(int(seq), lap_kind, level, d, str(ts))

    def _taken_ms(self, round_no: int, seq: int) -> int | None:
        """When a round's wagers were taken: its lock-out's time (ms since the epoch), the time the
        LAP checks a contribution's rate version against (the contribution itself is written at the
        count's confirmation, later)."""
        from datetime import datetime

        row = self.db.execute(
            "SELECT ts FROM events WHERE round = ? AND kind = ? AND seq < ? ORDER BY seq DESC LIMIT 1",
            (round_no, Kind.LOCKOUT, seq),
        ).fetchone()
        if row is None:
            return None
        try:
            return int(datetime.fromisoformat(str(row[0])).timestamp() * 1000)
        except ValueError:
            return None

    def totals(self, upto: int) -> Totals:
        import json

        n = 0
        wagers = 0
        for kind, data in self.db.execute(
            f"SELECT kind, data FROM events WHERE seq <= ? AND kind IN ({self._in})", (upto, *self._kinds)
        ):
            n += 1
            if kind == Kind.LINK_CONTRIBUTION:
                wagers += int(json.loads(data)["wager"])
        # the head at the batch's last seq: the LAP moves its record of it forward only
        mac = self.mac_at(upto) if upto > 0 else None
        return Totals(upto, n, wagers, f"{upto}:{mac}" if mac is not None else "0:genesis")

    def last_seq(self) -> int:
        row = self.db.execute("SELECT max(seq) FROM events").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def paid(self) -> dict[int, tuple[int, str | None]]:
        import json

        out: dict[int, tuple[int, str | None]] = {}
        for (data,) in self.db.execute(
            "SELECT data FROM events WHERE kind = ? AND seq <= ?", (Kind.LINK_PAID, self.verified_to())
        ):
            d = json.loads(data)
            proof = d.get("proof")
            out[int(d["hit_seq"])] = (int(d["cents"]), proof if isinstance(proof, str) else None)
        return out

    def mac_at(self, seq: int) -> str | None:
        row = self.db.execute("SELECT hash FROM events WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else str(row[0])

    def replaced(self) -> bool:
        try:
            return self.path.stat().st_ino != self._inode
        except FileNotFoundError:
            return True

    def head(self) -> str:
        """The ledger's chain head as ``seq:hash`` (the switch point for ``Ledger.head()``)."""
        row = self.db.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        return f"{row[0]}:{row[1]}" if row else "0:genesis"

    def close(self) -> None:
        self.db.close()
