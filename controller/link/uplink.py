"""``tablectl uplink``: the table's link to its LAP, a process of its own (the table service keeps
``PrivateNetwork=yes`` and talks to it over a Unix socket only).

Three parts, each owning its state:

- :class:`TableChannel` connects to the table service's link socket and speaks JSON lines:
  to the table ``meter``/``hb``/``state``/``hit``/``won``/``reconciled``/``link`` messages, from the
  table ``{"t": "outbox", "seq": N}`` (new link records are durable in its ledger: send them).
  On every (re)connection it first replays the last snapshot (meters, link state, answers).
- the **sender** reads new ``link.*`` records from the ledger through the one seam
  (controller/link/ledgerseam.py) and inserts them in one transaction per batch,
  ``ON CONFLICT (table_id, seq) DO NOTHING`` (a resend is a no-op), with a ``batches`` row naming
  the ledger's chain head and the table's own totals, which the LAP checks.
- the **listener** ``LISTEN``s on the group's channel: meter pushes, hit answers, reconciliation
  and the LAP's heartbeat reach the table as PostgreSQL commits them (no polling loop).
  After a reconnection it reads the current meters and this table's answers once (a
  notification sent while it was away is not queued for it).

A database error that is not a lost connection (the LAP refused an event) is latched: the
uplink tells the table (``{"t": "rejected"}``) and sends nothing more until restarted.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from controller.jsonlines import json_lines
from controller.link.ledgerseam import LedgerSource, SqliteLedgerSource, head_problem
from controller.link.schema import check_name

Log = Callable[[str], None]

RETRYABLE = (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected)


@dataclass(frozen=True)
class UplinkConfig:
    dsn: str  # logs in as the table's own role (user=...)
    schema: str
    table_id: str
    ledger: Path
    socket: Path
    poll_s: float = 0.5  # fallback re-read of the ledger when the table's wake-up is missed
    batch_max: int = 500


class TableChannel:
    """The Unix socket to the table service: JSON lines both ways, reconnecting."""

    def __init__(self, path: Path, on_message: Callable[[dict[str, Any]], None], stop: threading.Event, log: Log):
        self.path, self.on_message, self.stop, self.log = path, on_message, stop, log
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self.snapshot: dict[str, dict[str, Any]] = {}  # key -> last message, replayed on connect

    def send(self, msg: dict[str, Any], key: str | None = None) -> None:
        line = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        with self._lock:
            if key is not None:
                self.snapshot[key] = msg
            if self._sock is None:
                return
            try:
                self._sock.sendall(line)
            except OSError:
                self._close_locked()

    def _close_locked(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def run(self) -> None:
        while not self.stop.is_set():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(str(self.path))
            except OSError:
                s.close()
                self.stop.wait(0.1)
                continue
            with self._lock:
                self._sock = s
                for msg in list(self.snapshot.values()):
                    try:
                        s.sendall((json.dumps(msg, separators=(",", ":")) + "\n").encode())
                    except OSError:
                        break
            self.log(f"uplink: connected to the table at {self.path}")
            s.settimeout(0.2)
            for line in json_lines(s, self.stop, bufsize=4096):
                if isinstance(line.value, dict):  # another JSON value is as garbled as no JSON
                    try:
                        self.on_message(line.value)
                        continue
                    except (ValueError, TypeError):
                        pass
                what = "over-long line" if line.too_long else "garbled line"
                self.log(f"uplink: {what} from the table ignored: {line.raw[:80]!r}")
            with self._lock:
                if self._sock is s:
                    self._close_locked()

    def close(self) -> None:
        with self._lock:
            self._close_locked()


@dataclass
class Uplink:
    cfg: UplinkConfig
    log: Log = print
    source_factory: Callable[[Path], LedgerSource] = SqliteLedgerSource
    stop_event: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        check_name(self.cfg.schema)
        self.wake = threading.Event()
        self.channel = TableChannel(self.cfg.socket, self._from_table, self.stop_event, self.log)
        self.acked = 0  # the highest seq the LAP holds from this table
        self.sent_batches = 0
        self.rejected: str | None = None
        #: the ledger here disagrees with the LAP's record of its chain head: nothing is sent
        #: (events of another ledger would be taken for this table's); checked again whenever
        #: the ledger file or the database connection is new
        self.diverged: str | None = None
        self._threads: list[threading.Thread] = []
        self._reader: psycopg.Connection | None = None  # the listener's reading connection
        self._lap_pid: int | None = None  # the LAP's session: the only one whose heartbeat counts
        self._status: dict[str, Any] | None = None  # the table's last status, not yet written (floor view)
        self._status_lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        for name, fn in (("channel", self.channel.run), ("sender", self._sender), ("listener", self._listener)):
            t = threading.Thread(target=fn, name=f"uplink-{name}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        self.stop_event.set()
        self.wake.set()
        for t in self._threads:
            t.join(5)
        self.channel.close()

    def run(self) -> None:
        self.start()
        try:
            while not self.stop_event.wait(0.5):
                pass
        finally:
            self.stop()

    def _from_table(self, msg: dict[str, Any]) -> None:
        if msg.get("t") == "outbox":
            self.wake.set()
        elif msg.get("t") == "status":
            with self._status_lock:
                self._status = {k: msg.get(k) for k in ("state", "round", "open", "reason", "tilts", "sign")}
            self.wake.set()

    def _send_status(self, conn: psycopg.Connection) -> None:
        """The table's status for the floor view (never money: a refusal is logged, not latched)."""
        with self._status_lock:
            st, self._status = self._status, None
        if st is None:
            return
        try:
            conn.execute(self._q("SELECT {s}.report_status(%s::jsonb)"), (json.dumps(st),))
        except psycopg.OperationalError:
            with self._status_lock:
                self._status = self._status or st
            raise
        except psycopg.Error as e:
            self.log(f"uplink: the LAP refused the table's status: {_first_line(e)}")

    def _q(self, text: str) -> sql.Composed:
        return sql.SQL(text).format(s=sql.Identifier(self.cfg.schema))

    # ------------------------------------------------------------------ sender
    def _sender(self) -> None:
        conn: psycopg.Connection | None = None
        source: LedgerSource | None = None
        backoff = 0.1
        while not self.stop_event.is_set():
            try:
                if source is not None and source.replaced():
                    self.log(f"uplink: {self.cfg.ledger} is another file now (a restore?); reopened")
                    source.close()
                    source = None
                    if conn is not None:
                        conn.close()
                    conn = None  # read the LAP's position and check the head again
                if source is None:
                    source = self.source_factory(self.cfg.ledger)
                if conn is None:
                    conn = psycopg.connect(self.cfg.dsn, autocommit=True, connect_timeout=3)
                    self._check_head(conn, source)
                    row = conn.execute(
                        self._q("SELECT coalesce(max(seq), 0) FROM {s}.events WHERE table_id = %s"),
                        (self.cfg.table_id,),
                    ).fetchone()
                    self.acked = int(row[0]) if row else 0
                    if self.diverged is None:
                        self._send_batch(conn, source, force=True)
                    backoff = 0.1
                if self.rejected is None and self.diverged is None:
                    while self._send_batch(conn, source):
                        pass
                self._send_status(conn)
                self.wake.wait(self.cfg.poll_s)
                self.wake.clear()
            except psycopg.OperationalError as e:
                self.log(f"uplink: database unreachable ({_first_line(e)}); retrying")
                if conn is not None:
                    conn.close()
                conn = None
                self.stop_event.wait(backoff)
                backoff = min(backoff * 2, 1.0)
            except RETRYABLE:
                continue
            except psycopg.Error as e:
                self.rejected = f"{type(e).__name__}: {_first_line(e)}"
                self.log(f"uplink: the LAP refused an event: {self.rejected}; sending stopped")
                self.channel.send({"t": "rejected", "reason": self.rejected}, key="rejected")
                self.stop_event.wait(1.0)
            except Exception as e:  # the ledger unreadable: say so, retry
                self.log(f"uplink: ledger unreadable ({e}); retrying")
                if source is not None:
                    source.close()
                source = None
                self.stop_event.wait(0.5)
        if conn is not None:
            conn.close()
        if source is not None:
            source.close()

    def _check_head(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """Compare the ledger with the LAP's record of its chain head (``members.chain_head``,
        written with each reconciled batch).  A difference is told to the table, which closes its
        linked wager with the reason, and nothing is sent until a check passes (a technician puts
        the right ledger back, or settles it with the LAP's operator; docs/linked.md)."""
        row = conn.execute(
            self._q("SELECT chain_head FROM {s}.members WHERE table_id = %s"), (self.cfg.table_id,)
        ).fetchone()
        problem = head_problem(None if row is None else row[0], source)
        if problem != self.diverged:
            if problem is not None:
                self.log(f"uplink: {problem}; sending stopped")
                self.channel.send({"t": "diverged", "problem": problem}, key="diverged")
            else:
                self.log("uplink: the ledger agrees with the LAP's record of its head again")
                self.channel.send({"t": "agrees"}, key="diverged")
        self.diverged = problem

    def _send_batch(self, conn: psycopg.Connection, source: LedgerSource, force: bool = False) -> bool:
        """Send the next batch; True when there may be more.  ``force``: a batch even when empty,
        so the LAP reconciles the table right after a (re)connection."""
        evs = source.link_events(self.acked, self.cfg.batch_max)
        if not evs and not force:
            return False
        last = evs[-1].seq if evs else self.acked
        tot = source.totals(last)
        with conn.transaction():
            if evs:
                with conn.cursor() as cur:
                    cur.executemany(
                        self._q(
                            "INSERT INTO {s}.events (table_id, seq, kind, level, data, table_time)"
                            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (table_id, seq) DO NOTHING"
                        ),
                        [(self.cfg.table_id, e.seq, e.kind, e.level, json.dumps(e.data), e.table_time) for e in evs],
                    )
            conn.execute(
                self._q(
                    "INSERT INTO {s}.batches (table_id, last_seq, events_total, wagers_total, chain_head)"
                    " VALUES (%s, %s, %s, %s, %s)"
                ),
                (self.cfg.table_id, tot.last_seq, tot.events, tot.wagers, tot.head),
            )
        self.acked = last
        self.sent_batches += 1
        return len(evs) == self.cfg.batch_max

    # ------------------------------------------------------------------ listener
    def _listener(self) -> None:
        backoff = 0.1
        while not self.stop_event.is_set():
            conn: psycopg.Connection | None = None
            self._reader = None
            try:
                conn = psycopg.connect(self.cfg.dsn, autocommit=True, connect_timeout=3)
                # a second connection reads what a notification announces (the listening one is
                # busy waiting); a notification is only a doorbell, see _on_notify
                self._reader = psycopg.connect(self.cfg.dsn, autocommit=True, connect_timeout=3)
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.cfg.schema)))
                self._snapshot(self._reader)
                backoff = 0.1
                while not self.stop_event.is_set():
                    # wait for one, then take every notification already queued: under load the
                    # reads below are made once per batch, not once per notification
                    batch = list(conn.notifies(timeout=0.25, stop_after=1))
                    if batch:
                        batch += list(conn.notifies(timeout=0.0, stop_after=10_000))
                    self._on_batch(batch)
            except psycopg.OperationalError as e:
                self.channel.send({"t": "link", "up": False, "reason": _first_line(e)}, key="link")
                self.stop_event.wait(backoff)
                backoff = min(backoff * 2, 1.0)
            finally:
                for c in (conn, self._reader):
                    if c is not None:
                        c.close()

    def _rows(self, text: str, params: Any = None) -> list[dict[str, Any]]:
        assert self._reader is not None
        cur = self._reader.cursor(row_factory=psycopg.rows.dict_row)
        return list(cur.execute(self._q(text), params).fetchall())

    def _snapshot(self, conn: psycopg.Connection) -> None:
        """What the table must know after a (re)connection: every meter, the link's state and
        this table's answered hits and reconciliation."""
        self.channel.send({"t": "link", "up": True}, key="link")
        self._send_state()
        for r in self._rows("SELECT level FROM {s}.levels"):
            self._send_meter(r["level"])
        for r in self._rows(
            "SELECT seq, level, order_no, amount_cents FROM {s}.hits WHERE table_id = %s", (self.cfg.table_id,)
        ):
            self._answer(r["seq"], r["level"], r["order_no"], r["amount_cents"])
        self._send_reconciled()

    def _send_state(self) -> tuple[str, int | None]:
        rows = self._rows("SELECT state, lap_pid FROM {s}.link")
        if not rows:
            return "unknown", None
        self.channel.send({"t": "state", "state": rows[0]["state"]}, key="state")
        return str(rows[0]["state"]), rows[0]["lap_pid"]

    def _send_meter(self, level: str, at: Any = None) -> None:
        rows = self._rows("SELECT div(value_num, den) AS cents, version FROM {s}.levels WHERE level = %s", (level,))
        if not rows:
            return
        msg: dict[str, Any] = {
            "t": "meter",
            "level": level,
            "cents": int(rows[0]["cents"]),
            "version": rows[0]["version"],
        }
        if isinstance(at, (int, float)):
            msg["at"] = at  # when the notification says the LAP decided (informational: bench/link.py)
        msg["rx"] = time.time()
        self.channel.send(msg, key=f"meter:{level}")

    def _send_reconciled(self) -> None:
        m = self._rows("SELECT reconciled_seq, mismatch FROM {s}.members WHERE table_id = %s", (self.cfg.table_id,))
        if not m:
            return
        if m[0]["mismatch"]:
            self.channel.send({"t": "mismatch", "problem": m[0]["mismatch"]}, key="reconciled")
        else:
            self.channel.send({"t": "reconciled", "seq": int(m[0]["reconciled_seq"])}, key="reconciled")

    def _asset_of(self, table_id: str) -> str | None:
        """The winning table's asset number, from the LAP's ``members`` (``asset_of``, installed
        with the floor view's additions at every LAP start); None if this LAP has not got it."""
        try:
            rows = self._rows("SELECT {s}.asset_of(%s) AS asset", (table_id,))
        except (psycopg.errors.UndefinedFunction, psycopg.errors.InsufficientPrivilege) as e:
            self.log(f"uplink: the winning table's asset number is not readable ({_first_line(e)})")
            return None
        return None if not rows or rows[0]["asset"] is None else str(rows[0]["asset"])

    def _answer(self, seq: int, level: str, order: int, amount: int) -> None:
        self.channel.send({"t": "hit", "seq": seq, "level": level, "order": order, "amount": amount}, key=f"hit:{seq}")

    def _on_batch(self, batch: list[psycopg.Notify]) -> None:
        """Several notifications at once: hits and heartbeats each, the meters once per level
        (the newest values, read once)."""
        levels: dict[str, Any] = {}
        for n in batch:
            try:
                msg = json.loads(n.payload)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            if msg.get("t") == "meter" and isinstance(msg.get("level"), str) and not isinstance(msg.get("hit"), dict):
                levels[msg["level"]] = msg.get("at")
            else:
                self._on_notify(msg, n.pid)
        for level, at in levels.items():
            self._send_meter(level, at)

    def _on_notify(self, msg: dict[str, Any], pid: int) -> None:
        """A notification says *what* changed; the values are read from the database (under
        the table role's grants and row-level security).  Any role may NOTIFY any channel, so
        a payload is never trusted: a hit answer, a meter value or a reconciliation comes from
        the LAP's rows, and a heartbeat counts only from the LAP's own session (``link.lap_pid``,
        which no table can write)."""
        t = msg.get("t")
        if t == "meter" and isinstance(msg.get("level"), str):
            won = None
            hit = msg.get("hit")
            if isinstance(hit, dict):
                rows = self._rows(
                    "SELECT table_id, seq, order_no, amount_cents FROM {s}.hits WHERE level = %s AND order_no = %s",
                    (msg["level"], hit.get("order")),
                )
                if rows:
                    r = rows[0]
                    won = {
                        "t": "won",
                        "level": msg["level"],
                        "order": r["order_no"],
                        "table": r["table_id"],
                        "asset": self._asset_of(r["table_id"]),
                        "amount": r["amount_cents"],
                    }
                    if r["table_id"] == self.cfg.table_id:
                        self._answer(r["seq"], msg["level"], r["order_no"], r["amount_cents"])
            self._send_meter(msg["level"], msg.get("at"))
            if won is not None:
                # the hit announced to every linked table's sign, once, as it happens: no key, so
                # a reconnection does not replay an old hit as a new one
                self.channel.send(won)
        elif t == "hb":
            if pid != self._lap_pid:
                self._lap_pid = self._send_state()[1]
            if pid == self._lap_pid:
                self.channel.send(
                    {"t": "hb", "state": msg.get("state"), "meters": msg.get("meters", {}), "at": msg.get("at")}
                )
            else:
                self.log(f"uplink: a heartbeat from backend {pid}, not the LAP's ({self._lap_pid}): ignored")
        elif t == "state":
            self._lap_pid = self._send_state()[1]
        elif t in ("reconciled", "mismatch") and msg.get("table") == self.cfg.table_id:
            self._send_reconciled()


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
