"""``tablectl uplink``: the table's link to its LAP controller, a process of its own (the table service keeps
``PrivateNetwork=yes`` and talks to it over a Unix socket only).

Three parts, each owning its state:

- :class:`~controller.link.channel.TableChannel` connects to the table service's link socket and
  speaks JSON lines: to the table ``meter``/``hb``/``state``/``hit``/``won``/``reconciled``/
  ``mismatch``/``refused``/``unverified``/``link`` messages, from the table ``{"t": "outbox",
  "seq": N}`` (new link records are durable in its ledger: send them) and ``status`` (the floor
  view's line).  On every (re)connection it first replays the last snapshot.
- the **sender** verifies the ledger through the one seam (controller/link/ledgerseam.py: every
  record's MAC under the table's key and its place in the chain) and inserts the new ``link.*``
  records of the verified part in one transaction per batch, ``ON CONFLICT (table_id, seq) DO
  NOTHING`` (a resend is a no-op), with a ``batches`` row naming the chain head at the batch's
  last seq and the table's own totals, which the LAP checks.  A record that does not verify
  stops forwarding there: the table is told (it latches a ledger tilt), the LAP records it
  (``report_unverified``, which closes the table's linked wager), and nothing after it is sent
  until the ledger file is another one or the uplink restarts (a technician's act).
- the **listener** (controller/link/lapview.py) ``LISTEN``s on the group's channel only for
  doorbells, coalesced, and reads what the table must know from the LAP's rows.

The LAP refuses a record by recording it (``refusals``), not by an error: the table hears it as
``refused`` from the LAP's rows.  An error that is neither a lost connection nor the LAP being
inoperable (which holds the records in the outbox until it is operable again) is latched: the
uplink tells the table (``{"t": "rejected"}``) and sends nothing more until restarted.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from controller.link.channel import TableChannel
from controller.link.lapview import LapView, Listener
from controller.link.ledgerseam import LedgerSource, SqliteLedgerSource, Unverified, head_problem
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
    #: the table's ledger key (LoadCredential=, like the table service's): every record forwarded
    #: is verified with it
    key: bytes = field(default=b"", repr=False)
    min_gap_s: float = 0.05  # doorbells: at most one read of the LAP's rows per this many seconds
    refresh_s: float = 0.5  # and one at least this often without any


@dataclass
class Uplink:
    cfg: UplinkConfig
    log: Log = print
    source_factory: Callable[[Path, bytes], LedgerSource] = SqliteLedgerSource
    stop_event: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        check_name(self.cfg.schema)
        if not self.cfg.key:
            raise ValueError("the uplink needs the table's ledger key: it verifies every record it forwards")
        self.wake = threading.Event()
        self.channel = TableChannel(self.cfg.socket, self._from_table, self.stop_event, self.log)
        self.view = LapView(self.cfg.table_id, self.channel.send)
        self.listener = Listener(
            self.cfg.dsn,
            self.cfg.schema,
            self.view,
            self.channel.send,
            self.stop_event,
            self.log,
            min_gap=self.cfg.min_gap_s,
            refresh=self.cfg.refresh_s,
        )
        self.acked = 0  # the highest seq the LAP holds from this table
        self.sent_batches = 0
        self.rejected: str | None = None
        #: the ledger here disagrees with the LAP's record of its chain head: nothing is sent
        #: (events of another ledger would be taken for this table's); checked again whenever
        #: the ledger file or the database connection is new
        self.diverged: str | None = None
        #: the first ledger record that does not verify (nothing from it on is sent)
        self.unverified: Unverified | None = None
        self._inoperable = False
        self._threads: list[threading.Thread] = []
        self._status: dict[str, Any] | None = None  # the table's last status, not yet written (floor view)
        self._status_lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        for name, fn in (("channel", self.channel.run), ("sender", self._sender), ("listener", self.listener.run)):
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
                    source, conn = self._drop(source, conn)  # the LAP's position and the head checked again
                if source is None:
                    source = self.source_factory(self.cfg.ledger, self.cfg.key)
                if conn is None:
                    conn = psycopg.connect(self.cfg.dsn, autocommit=True, connect_timeout=3)
                    self._connected(conn, source)
                    backoff = 0.1
                if self.rejected is None and self.diverged is None:
                    while self._send_batch(conn, source):
                        pass
                self._send_status(conn)
                self._inoperable = False
                self.wake.wait(self.cfg.poll_s)
                self.wake.clear()
            except psycopg.OperationalError as e:
                self.log(f"uplink: database unreachable ({_first_line(e)}); retrying")
                if conn is not None:
                    conn.close()
                conn = None
                self.stop_event.wait(backoff)
                backoff = min(backoff * 2, 1.0)
            except psycopg.errors.ObjectNotInPrerequisiteState as e:
                self._held(e)
            except RETRYABLE:
                continue
            except psycopg.Error as e:
                self._latch(e)
            except Exception as e:  # the ledger unreadable: say so, retry
                self.log(f"uplink: ledger unreadable ({e}); retrying")
                source, conn = self._drop(source, conn)
                self.stop_event.wait(0.5)
        self._drop(source, conn)

    def _drop(self, source: LedgerSource | None, conn: psycopg.Connection | None) -> tuple[None, None]:
        """Close the ledger source and the connection: both are opened afresh (the ledger is
        verified again from the LAP's position)."""
        if source is not None:
            source.close()
        if conn is not None:
            conn.close()
        if self.unverified is not None:
            self.unverified = None
            self.channel.send({"t": "verified"}, key="unverified")
        return None, None

    def _held(self, e: psycopg.Error) -> None:
        """The LAP is inoperable: its database takes no event; they stay in the outbox."""
        if not self._inoperable:
            self._inoperable = True
            self.log(f"uplink: the LAP takes no record now ({_first_line(e)}); they wait in the ledger")
        self.stop_event.wait(1.0)

    def _latch(self, e: psycopg.Error) -> None:
        self.rejected = f"{type(e).__name__}: {_first_line(e)}"
        self.log(f"uplink: the LAP refused an event: {self.rejected}; sending stopped")
        self.channel.send({"t": "rejected", "reason": self.rejected}, key="rejected")
        self.stop_event.wait(1.0)

    def _connected(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """A new connection: check the head, read the LAP's position, and send a batch when the
        LAP holds events it has not reconciled (so that it reconciles the table at once)."""
        self._check_head(conn, source)
        row = conn.execute(
            self._q(
                "SELECT coalesce((SELECT max(seq) FROM {s}.events WHERE table_id = %(t)s), 0),"
                " coalesce((SELECT reconciled_seq FROM {s}.members WHERE table_id = %(t)s), 0)"
            ),
            {"t": self.cfg.table_id},
        ).fetchone()
        self.acked, reconciled = (int(row[0]), int(row[1])) if row else (0, 0)
        if self.diverged is None and self.rejected is None:
            self._send_batch(conn, source, force=self.acked > reconciled)

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

    def _verify(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """Verify the ledger up to its end; the first record that fails is reported once."""
        bad = source.verify(self.acked)
        if bad is None or bad == self.unverified:
            return
        self.unverified = bad
        self.log(f"uplink: ledger record {bad.seq} does not verify ({bad.problem}); nothing from it on is sent")
        self.channel.send({"t": "unverified", "seq": bad.seq, "problem": bad.problem}, key="unverified")
        try:
            conn.execute(self._q("SELECT {s}.report_unverified(%s, %s)"), (bad.seq, bad.problem))
        except psycopg.OperationalError:
            self.unverified = None  # reported again once the database is back
            raise
        except psycopg.Error as e:
            self.log(f"uplink: the LAP did not record it: {_first_line(e)}")

    def _send_batch(self, conn: psycopg.Connection, source: LedgerSource, force: bool = False) -> bool:
        """Send the next batch of verified link events; True when there may be more.  ``force``:
        a batch even when there is nothing new (the LAP holds events it has not reconciled)."""
        self._verify(conn, source)
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


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
