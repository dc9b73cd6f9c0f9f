"""``tablectl uplink``: the table's link to its LAP controller, a process of its own (the table service keeps
``PrivateNetwork=yes`` and talks to it over a Unix socket only).

Two threads, each owning its state, and **one database connection** (it used to be
three, sender, listener and reader, and a stock ``max_connections = 100`` held about 31 tables):

- :class:`~controller.uplink.channel.TableChannel` connects to the table service's link socket and
  speaks JSON lines: to the table ``meter``/``hb``/``state``/``hit``/``won``/``reconciled``/
  ``mismatch``/``refused``/``unverified``/``link`` messages, from the table ``{"t": "outbox",
  "seq": N}`` (new link records are durable in its ledger: send them) and ``status`` (the floor
  view's line).  On every (re)connection it first replays the last snapshot.
- the **sender** verifies the ledger through the one seam (controller/uplink/ledgerseam.py: every
  record's MAC under the table's key and its place in the chain) and inserts the new ``link.*``
  records of the verified part in one transaction per batch, ``ON CONFLICT (table_id, seq) DO
  NOTHING`` (a resend is a no-op), with a ``batches`` row naming the chain head at the batch's
  last seq and the table's own totals, which the LAP checks.  A record that does not verify
  stops forwarding there: the table is told (it latches a ledger tilt), the LAP records it
  (``report_unverified``, which closes the table's linked wager), and nothing after it is sent
  until the ledger file is another one or the uplink restarts (a technician's act).
- the **listener** (controller/uplink/lapview.py), on the same connection and thread as the
  sender, reads what the table must know from the LAP's rows every ``refresh_s`` (a third of the
  link timeout), and sooner when the LAP's doorbell rings or after each batch (at most one read per
  ``min_gap_s``).  A doorbell carries nothing; a flood of forged ones makes it stop listening for a
  while and read every ``flood_refresh_s`` instead (on the one connection a flood would delay reads).

Dead connections are found and replaced (controller/lap/pgconn.py: keepalives,
``tcp_user_timeout``, statement and idle-in-transaction timeouts; and an application deadline:
no heartbeat the LAP wrote after this connection was made, within the link timeout and a
second (drawn up to a quarter longer, doubling while the LAP stays silent), ends the
connection; a statement watchdog, whose deadline for a batch is past the
server's own ``statement_timeout`` so that a batch waiting for a level's lock is never taken for
a dead connection).  Batches are small and sized by the time the last one took (the level's lock
is held for a batch's transaction); reconnections pause with exponential back-off and jitter
(docs/linked.md, failure table).  On every connection and every ``memory_s`` the uplink checks **the LAP's memory**
of its table against the ledger (controller/uplink/memory.py): a LAP behind it (restored from a
backup, failed over to a standby that lagged) or whose database is another one (its system
identifier or timeline changed) keeps the linked wager closed (the table hears ``mismatch``),
gets every missing record again, a hit the ledger shows paid at the amount paid (with the LAP's
proof of it), and the table
reopens once the LAP has reconciled the resend.  Each is recorded (``recoveries``, the floor view).

The LAP refuses a record by recording it (``refusals``), not by an error: the table hears it as
``refused`` from the LAP's rows.  An error that is neither a lost connection nor the LAP being
inoperable (which holds the records in the outbox until it is operable again) is latched: the
uplink tells the table (``{"t": "rejected"}``) and sends nothing more until restarted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from controller.lap.schema import check_name
from controller.uplink.batching import Batcher
from controller.uplink.channel import TableChannel
from controller.uplink.config import Log, UplinkConfig, first_line
from controller.uplink.connection import Connection, Wake
from controller.uplink.foreign import ForeignCheck
from controller.uplink.lapview import LapView, Listener, ListenerTiming
from controller.uplink.ledgerseam import LedgerSource, SqliteLedgerSource
from controller.uplink.memory import LapMemory
from controller.uplink.status import StatusRelay

__all__ = ["RETRYABLE", "Log", "Uplink", "UplinkConfig", "Wake"]

RETRYABLE = (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected)


class Uplink:
    """The two threads and the parts they drive: the connection and its deadlines
    (:class:`~controller.uplink.connection.Connection`), batching and verification
    (:class:`~controller.uplink.batching.Batcher`), the LAP's memory and divergence
    (:class:`~controller.uplink.memory.LapMemory`), the table's status
    (:class:`~controller.uplink.status.StatusRelay`)."""

    __slots__ = (
        "_inoperable",
        "_next_poll",
        "_threads",
        "cfg",
        "channel",
        "connection",
        "listener",
        "log",
        "memory",
        "rejected",
        "sender",
        "source_factory",
        "status",
        "stop_event",
        "view",
        "wake",
    )

    def __init__(
        self,
        cfg: UplinkConfig,
        log: Log = print,
        source_factory: Callable[[Path, bytes], LedgerSource] = SqliteLedgerSource,
        stop_event: threading.Event | None = None,
    ) -> None:
        self.cfg = cfg
        self.log = log
        self.source_factory = source_factory
        self.stop_event = threading.Event() if stop_event is None else stop_event
        check_name(self.cfg.schema)
        if not self.cfg.key:
            raise ValueError("the uplink needs the table's ledger key: it verifies every record it forwards")
        k = self.cfg.link_key
        if k is None:
            raise ValueError("the uplink needs the table's link key (tablectl lap --enrol-table): it signs each record")
        if (k.schema, k.table_id) != (self.cfg.schema, self.cfg.table_id):
            raise ValueError(
                f"the link key is table {k.table_id}'s of {k.schema}, "
                f"not table {self.cfg.table_id}'s of {self.cfg.schema}"
            )
        self.wake = Wake()
        self.channel = TableChannel(self.cfg.socket, self._from_table, self.stop_event, self.log)
        self.view = LapView(self.cfg.table_id, self.channel.send)
        self.listener = Listener(
            self.cfg.schema,
            self.view,
            self.channel.send,
            self.log,
            ListenerTiming(
                min_gap=self.cfg.min_gap_s,
                refresh=self.cfg.refresh_s or self.cfg.link_timeout_s / 3,
                flood_refresh=self.cfg.flood_refresh_s,
                # a second after the table's own timeout: the table closes on the missing heartbeat
                # itself, never earlier because of this deadline
                deadline_s=self.cfg.link_timeout_s + 1.0,
            ),
        )
        self.connection = Connection(self.cfg, self.listener, self.stop_event)
        self.sender = Batcher(self.cfg, self.log, self.channel.send, self.connection, self.listener)
        self.memory = LapMemory(self.cfg, self.log, self.channel.send, self.view)
        self.sender.on_sent = self.memory.sent
        self.status = StatusRelay(self.cfg, self.log)
        self.rejected: str | None = None
        self._next_poll = 0.0
        self._inoperable = False
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self.connection.arm()
        for name, fn in (("channel", self.channel.run), ("link", self._link)):
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
            self.status.heard(msg)
            self.wake.set()

    # ------------------------------------------------------------------ the link (one connection)
    def _link(self) -> None:
        conn: psycopg.Connection | None = None
        source: LedgerSource | None = None
        relink = self.connection.relink
        while not self.stop_event.is_set():
            self.connection.tick(conn)
            try:
                if source is not None and source.replaced():
                    self.log(f"uplink: {self.cfg.ledger} is another file now (a restore?); reopened")
                    self.memory.foreign = ForeignCheck()
                    source, conn = self._drop(source, conn)  # the LAP's position and the head checked again
                if source is None:
                    source = self.source_factory(self.cfg.ledger, self.cfg.key)
                if conn is None:
                    conn = relink.connect(self.connection.open)
                    self.connection.tick(conn)
                    self.listener.attach(conn)
                    self._connected(conn, source)
                self._cycle(conn, source)
                self.connection.answered()
            except psycopg.errors.QueryCanceled as e:
                self.sender.cancelled_by_server(e)
            except psycopg.errors.ObjectNotInPrerequisiteState as e:
                # before OperationalError, of which psycopg makes it a subclass (SQLSTATE class
                # 55): the LAP holds the records (inoperable, a restored hit it cannot pay yet);
                # the connection is fine and kept (taken for a lost database, the
                # table heard "the uplink lost the database" at every retry)
                self._held(e)
            except psycopg.OperationalError as e:
                self.listener.detached(first_line(e))  # the table first
                # an attempt that failed went to back-off already (its pause drawn)
                pause = relink.pause if conn is None else relink.fail(first_line(e))
                self.log(f"uplink: database unreachable ({relink.reason}); retrying in {pause:.1f} s")
                self.connection.tick(None)
                if conn is not None:
                    conn.close()
                conn = None
                self.stop_event.wait(pause)
            except RETRYABLE:
                continue
            except psycopg.Error as e:
                self._latch(e)
            except Exception as e:  # the ledger unreadable: say so, retry
                self.log(f"uplink: ledger unreadable ({e}); retrying")
                source, conn = self._drop(source, conn)
                self.stop_event.wait(0.5)
        self.connection.tick(None)
        self._drop(source, conn)
        self.wake.close()

    def _cycle(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """One turn: send what the table woke us for (or the poll found), check the LAP's
        memory when due, then listen until the next doorbell, wake-up or read."""
        now = time.monotonic()
        if self.wake.take() or now >= self._next_poll:
            self._next_poll = now + self.cfg.poll_s
            if self.rejected is None and self.memory.diverged is None:
                self.sender.turn(conn, source, self.wake.set)
            else:
                self.connection.relink.settled()  # latched: nothing is sent until a technician acts
            self.status.send(conn)
            self._inoperable = False
            if self.memory.behind is not None or now >= self.memory.next_check:
                self.memory.check(conn, source, self.sender)
        wait = 0.0 if self.wake.is_set() else max(0.0, self._next_poll - time.monotonic())
        self.connection.tick(conn, self.connection.read_limit_s)
        self.listener.step(conn, wait, self.wake.fileno())
        self._claims_answered()

    def _drop(self, source: LedgerSource | None, conn: psycopg.Connection | None) -> tuple[None, None]:
        """Close the ledger source and the connection: both are opened afresh (the ledger is
        verified again from the LAP's position)."""
        self.memory.agreed = (0, 0)
        if source is not None:
            source.close()
        if conn is not None:
            conn.close()
        self.sender.reverified()
        return None, None

    def _held(self, e: psycopg.Error) -> None:
        """The LAP is inoperable: its database takes no event; they stay in the outbox (held on
        purpose: no deadline runs for them, another connection would not take them either)."""
        self.connection.relink.settled()
        if not self._inoperable:
            self._inoperable = True
            self.log(f"uplink: the LAP takes no record now ({first_line(e)}); they wait in the ledger")
        self.stop_event.wait(1.0)

    def _latch(self, e: psycopg.Error) -> None:
        self.rejected = f"{type(e).__name__}: {first_line(e)}"
        self.log(f"uplink: the LAP refused an event: {self.rejected}; sending stopped")
        self.channel.send({"t": "rejected", "reason": self.rejected}, key="rejected")
        self.stop_event.wait(1.0)

    def _connected(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """A new connection: check the head, read the LAP's position, check its memory of this
        table, and send a batch when the LAP holds events it has not reconciled (so that it
        reconciles the table at once)."""
        self.memory.check_head(conn, source)
        row = conn.execute(
            self.cfg.q(
                "SELECT coalesce((SELECT max_seq FROM {s}.held WHERE table_id = %(t)s), 0),"
                " coalesce((SELECT reconciled_seq FROM {s}.members WHERE table_id = %(t)s), 0)"
            ),
            {"t": self.cfg.table_id},
        ).fetchone()
        self.sender.acked, reconciled = (int(row[0]), int(row[1])) if row else (0, 0)
        self.memory.check(conn, source, self.sender)
        self.sender.force = self.sender.acked > reconciled or self.memory.behind is not None
        if self.memory.diverged is None and self.rejected is None:
            self.sender.batch(conn, source)

    def _claims_answered(self) -> None:
        """The hit claims whose answer the table has been told; all of them when the LAP closed
        this table (a refused claim has no answer to wait for on any connection)."""
        relink = self.connection.relink
        if self.view.closed():
            relink.forget_claims()
            return
        for seq in relink.claims():
            if isinstance(seq, int) and seq <= self.view.known:
                relink.answered(seq)
