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
of its table against the ledger (:meth:`Uplink._check_memory`): a LAP behind it (restored from a
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

from controller.lap import pgconn
from controller.lap.linkauth import LinkKey, aware_time, sign_batch, sign_event
from controller.lap.reconnect import Reconnect
from controller.lap.schema import check_name
from controller.uplink.channel import TableChannel
from controller.uplink.foreign import ForeignCheck
from controller.uplink.lapview import LapView, Listener
from controller.uplink.ledgerseam import LedgerSource, LinkEvent, SqliteLedgerSource, Unverified, head_problem

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
    #: a batch's transaction holds the rows of the levels its contributions touch until it
    #: commits, and every other table's batch waits for them: batches are small (the first
    #: one-connection uplink's 500-event batches queued behind each other past every deadline and livelocked)
    batch_max: int = 50
    #: the time a batch should take: after a slower one the next is smaller (in proportion),
    #: after a quicker one larger again (doubling, up to ``batch_max``)
    batch_target_s: float = 0.5
    #: a turn sends batches for at most this long before it reads the LAP's rows again
    send_turn_s: float = 0.25
    #: the pause before a new connection: exponential with jitter, from the first to the second
    reconnect_s: tuple[float, float] = (0.2, 5.0)
    #: the table's ledger key (LoadCredential=, like the table service's): every record forwarded
    #: is verified with it
    key: bytes = field(default=b"", repr=False)
    #: doorbells (the LAP's notifications, and the uplink's own batches): at most one read of the
    #: LAP's rows per this many seconds, however many ring
    min_gap_s: float = 0.2
    #: the LAP's rows read this often without a doorbell: liveness (the heartbeat row) and meters.
    #: None: a third of ``link_timeout_s`` (a fresh heartbeat is seen well within the link timeout)
    refresh_s: float | None = None
    #: the read interval while a flood of notifications keeps the uplink from listening
    flood_refresh_s: float = 0.25
    #: the table's ``[progressive] link_timeout``: no fresh LAP heartbeat for this long (and a
    #: second more: the table closes its linked wager first) ends the connection, another is opened
    link_timeout_s: float = 3.0
    #: how often the LAP's memory of this table is compared with the ledger (and at every connection)
    memory_s: float = 10.0
    #: the table's link key (``tablectl lap --enrol-table``; LoadCredential=, like the ledger key):
    #: every record sent carries its MAC, which the LAP checks before the record moves money
    link_key: LinkKey | None = field(default=None, repr=False)


class Wake:
    """The table's wake-up: an event the uplink's one thread can also ``select`` on beside its
    database socket."""

    def __init__(self) -> None:
        self._r, self._w = socket.socketpair()
        self._r.setblocking(False)
        self._w.setblocking(False)
        self._flag = threading.Event()

    def set(self) -> None:
        self._flag.set()
        try:
            self._w.send(b"x")
        except OSError:  # full: a wake-up is pending anyway
            pass

    def is_set(self) -> bool:
        return self._flag.is_set()

    def take(self) -> bool:
        """Whether it was set (and clear it)."""
        was = self._flag.is_set()
        self._flag.clear()
        try:
            while self._r.recv(4096):
                pass
        except OSError:
            pass
        return was

    def wait(self, timeout: float) -> bool:
        return self._flag.wait(timeout)

    def fileno(self) -> int:
        return self._r.fileno()

    def close(self) -> None:
        self._r.close()
        self._w.close()


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
        k = self.cfg.link_key
        if k is None:
            raise ValueError("the uplink needs the table's link key (tablectl lap --enrol-table): it signs each record")
        if (k.schema, k.table_id) != (self.cfg.schema, self.cfg.table_id):
            raise ValueError(
                f"the link key is table {k.table_id}'s of {k.schema}, "
                f"not table {self.cfg.table_id}'s of {self.cfg.schema}"
            )
        self.link_key: LinkKey = k
        #: the LAP's records of this table compared with the ledger, the other way (controller/uplink/foreign.py)
        self.foreign = ForeignCheck()
        self.foreign_found = 0
        self.wake = Wake()
        self.channel = TableChannel(self.cfg.socket, self._from_table, self.stop_event, self.log)
        self.view = LapView(self.cfg.table_id, self.channel.send)
        self.listener = Listener(
            self.cfg.schema,
            self.view,
            self.channel.send,
            self.log,
            min_gap=self.cfg.min_gap_s,
            refresh=self.cfg.refresh_s or self.cfg.link_timeout_s / 3,
            flood_refresh=self.cfg.flood_refresh_s,
            # a second after the table's own timeout: the table closes on the missing heartbeat
            # itself, never earlier because of this deadline
            deadline_s=self.cfg.link_timeout_s + 1.0,
        )
        self.deadlines = pgconn.for_link_timeout(self.cfg.link_timeout_s)
        #: a batch's statements may wait for a level's row lock behind other tables' batches: the
        #: server ends one after its ``statement_timeout`` (and answers so), so the watchdog ends
        #: the connection only when not even that answer came (docs/linked.md, failure table)
        self.send_limit_s = self.deadlines.statement_timeout_ms / 1000 + 2.0
        #: the heartbeat read and the other reads: nothing waits for a lock there
        self.read_limit_s = self.cfg.link_timeout_s + 2.0
        self.backoff = pgconn.Backoff(*self.cfg.reconnect_s)
        #: the connection's life (controller/lap/reconnect.py): records waiting and nothing
        #: acknowledged ends the connection, whatever it was doing, after the server's own
        #: deadline on a batch and a second (5 s at a 3 s link timeout): a batch waiting for a
        #: level's lock is answered by the server first (cancelled: an acknowledgement, sent again
        #: on the same connection), never cut; the table has closed on its own timeout before
        self.relink = Reconnect(
            f"uplink {self.cfg.table_id}", self.deadlines.statement_timeout_ms / 1000 + 1.0, self.backoff
        )
        #: a hit claim whose answer has not been read within a batch's whole limit and a second
        #: (7 s) ends the connection too, and is sent again on the next one (its answer is
        #: written in the claim's own transaction: the first read after it finds it)
        self.claim_s = self.send_limit_s + 1.0
        self.busy = pgconn.Backoff(*self.cfg.reconnect_s)  # statements the server cancelled (busy)
        self.batch_n = self.cfg.batch_max  # the next batch's size (adapted to the time one takes)
        self.cancelled = 0  # batches the server cancelled (statement_timeout), sent again smaller
        self.acked = 0  # the highest seq the LAP holds from this table
        self.sent_batches = 0
        self.rejected: str | None = None
        #: the ledger here disagrees with the LAP's record of its chain head: nothing is sent
        #: (events of another ledger would be taken for this table's); checked again whenever
        #: the ledger file or the database connection is new
        self.diverged: str | None = None
        #: the first ledger record that does not verify (nothing from it on is sent)
        self.unverified: Unverified | None = None
        #: the LAP's memory of this table: the highest seq it was seen to hold (never goes back
        #: here), its database's identity, and why it is behind the ledger now (None: it is not)
        self.lap_high = 0
        self.identity: tuple[str, int | None] | None = None
        self.behind: str | None = None
        self.recoveries = 0
        self._next_memory = 0.0
        self._inoperable = False
        self._threads: list[threading.Thread] = []
        self._status: dict[str, Any] | None = None  # the table's last status, not yet written (floor view)
        self._status_lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        #: a statement that has not returned by then ends the connection (bytes swallowed by the
        #: network while something on the way still acknowledges them)
        #: the table hears of a statement out longer than the link timeout at once (a batch may
        #: wait up to its own, longer limit for a level's lock; the table does not wait with it)
        self._silent = threading.Event()
        self.watchdog = pgconn.Watchdog(
            self.read_limit_s,
            self.stop_event,
            "uplink-watchdog",
            quiet=(self.cfg.link_timeout_s, self._quiet),
            also=self.relink.enforce,
        )
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

    # ------------------------------------------------------------------ the link (one connection)
    def _link(self) -> None:
        conn: psycopg.Connection | None = None
        source: LedgerSource | None = None
        while not self.stop_event.is_set():
            self.watchdog.tick(conn)
            try:
                if source is not None and source.replaced():
                    self.log(f"uplink: {self.cfg.ledger} is another file now (a restore?); reopened")
                    self.foreign = ForeignCheck()
                    source, conn = self._drop(source, conn)  # the LAP's position and the head checked again
                if source is None:
                    source = self.source_factory(self.cfg.ledger, self.cfg.key)
                if conn is None:
                    conn = self.relink.connect(self._open)
                    self.watchdog.tick(conn)
                    self.listener.attach(conn)
                    self._connected(conn, source)
                self._cycle(conn, source)
                self._answered()
            except psycopg.errors.QueryCanceled as e:
                self._cancelled(e)
            except psycopg.errors.ObjectNotInPrerequisiteState as e:
                # before OperationalError, of which psycopg makes it a subclass (SQLSTATE class
                # 55): the LAP holds the records (inoperable, a restored hit it cannot pay yet);
                # the connection is fine and kept (taken for a lost database, the
                # table heard "the uplink lost the database" at every retry)
                self._held(e)
            except psycopg.OperationalError as e:
                self.listener.detached(_first_line(e))  # the table first
                # an attempt that failed went to back-off already (its pause drawn)
                pause = self.relink.pause if conn is None else self.relink.fail(_first_line(e))
                self.log(f"uplink: database unreachable ({self.relink.reason}); retrying in {pause:.1f} s")
                self.watchdog.tick(None)
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
        self.watchdog.tick(None)
        self._drop(source, conn)
        self.wake.close()

    def _cycle(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """One turn: send what the table woke us for (or the poll found), check the LAP's
        memory when due, then listen until the next doorbell, wake-up or read."""
        now = time.monotonic()
        if self.wake.take() or now >= self._next_poll:
            self._next_poll = now + self.cfg.poll_s
            if self.rejected is None and self.diverged is None:
                self._send_turn(conn, source)
            else:
                self.relink.settled()  # latched: nothing is sent until a technician acts
            self._send_status(conn)
            self._inoperable = False
            if self.behind is not None or now >= self._next_memory:
                self._check_memory(conn, source)
        wait = 0.0 if self.wake.is_set() else max(0.0, self._next_poll - time.monotonic())
        self.watchdog.tick(conn, self.read_limit_s)
        self.listener.step(conn, wait, self.wake.fileno())
        self._claims_answered()

    def _send_turn(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """Batches for at most ``send_turn_s``; what remains is sent next turn, after a read of
        the LAP's rows (a backlog does not keep the table from hearing its heartbeats)."""
        until = time.monotonic() + self.cfg.send_turn_s
        while self._send_batch(conn, source):
            if time.monotonic() >= until:
                self.wake.set()  # more to send: the next turn does not wait
                return

    def _open(self) -> psycopg.Connection:
        return pgconn.connect(self.cfg.dsn, self.deadlines, application_name=f"tablectl uplink {self.cfg.table_id}")

    def _cancelled(self, e: psycopg.Error) -> None:
        """The server cancelled a batch's statement (its ``statement_timeout``: it waited behind
        other tables' batches for a level's lock, or the server is busy).  The connection is
        sound (the server answered): the batch was rolled back whole and is sent again, smaller,
        after a pause; no reconnection."""
        self.cancelled += 1
        self.relink.progressed(more=True)  # the server answered: the connection is alive, the batch waits
        self.batch_n = max(1, self.batch_n // 4)
        pause = self.busy.next()
        self.log(f"uplink: the LAP cancelled a batch ({_first_line(e)}); sending {self.batch_n} in {pause:.1f} s")
        self.stop_event.wait(pause)

    _next_poll = 0.0

    def _drop(self, source: LedgerSource | None, conn: psycopg.Connection | None) -> tuple[None, None]:
        """Close the ledger source and the connection: both are opened afresh (the ledger is
        verified again from the LAP's position)."""
        self._agreed = (0, 0)
        if source is not None:
            source.close()
        if conn is not None:
            conn.close()
        if self.unverified is not None:
            self.unverified = None
            self.channel.send({"t": "verified"}, key="unverified")
        return None, None

    def _quiet(self, waited: float) -> None:
        """(the watchdog's thread) A statement unanswered for the link timeout: the table is told
        the link is down now; up again when the connection answers (:meth:`_answered`)."""
        self._silent.set()
        self.listener.detached(f"no answer from the database for {waited:.1f} s")

    def _answered(self) -> None:
        """The connection answered again after the table was told of its silence: the link is up
        (the heartbeats then read say whether the LAP is)."""
        if self._silent.is_set():
            self._silent.clear()
            self.listener.send({"t": "link", "up": True}, key="link")

    def _held(self, e: psycopg.Error) -> None:
        """The LAP is inoperable: its database takes no event; they stay in the outbox (held on
        purpose: no deadline runs for them, another connection would not take them either)."""
        self.relink.settled()
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
        """A new connection: check the head, read the LAP's position, check its memory of this
        table, and send a batch when the LAP holds events it has not reconciled (so that it
        reconciles the table at once)."""
        self._check_head(conn, source)
        row = conn.execute(
            self._q(
                "SELECT coalesce((SELECT max_seq FROM {s}.held WHERE table_id = %(t)s), 0),"
                " coalesce((SELECT reconciled_seq FROM {s}.members WHERE table_id = %(t)s), 0)"
            ),
            {"t": self.cfg.table_id},
        ).fetchone()
        self.acked, reconciled = (int(row[0]), int(row[1])) if row else (0, 0)
        self._check_memory(conn, source)
        #: a batch even with nothing new (kept until one is sent: the server may cancel it)
        self._force = self.acked > reconciled or self.behind is not None
        if self.diverged is None and self.rejected is None:
            self._send_batch(conn, source)

    # ------------------------------------------------------------------ the LAP's memory
    def _check_memory(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """Compare what the LAP holds of this table with the ledger (a LAP that goes
        back in time, restored from a backup or failed over to a standby that lagged, used to
        go unnoticed).  Behind: the table hears ``mismatch`` (its linked wager stays closed),
        every missing record is sent again from where the LAP's records agree with the ledger
        (a hit the ledger shows paid at the amount paid), and the table reopens once the LAP has
        reconciled it.  Each finding is recorded (``report_recovery``)."""
        self._next_memory = time.monotonic() + self.cfg.memory_s
        self._verify(conn, source)  # the paid hits are read from the verified part only
        problem, kind, resend_from = self._memory_problem(conn, source)
        if self.diverged is None:
            self._check_foreign(conn, source)
        if problem is not None and self.behind is None:
            self.behind = problem
            self.view.behind = f"the LAP is behind this table: {problem}"
            self.channel.send({"t": "mismatch", "problem": self.view.behind}, key="reconciled")
            self.log(f"uplink: {self.view.behind}; resending from event {resend_from + 1}")
            self._record(conn, kind, problem)
        if problem is not None:
            if resend_from < self.acked:
                self.acked = resend_from
                source.rewind()  # verified again from there: nothing unverified is resent
            return
        if self.behind is not None and self._caught_up(conn):
            self.log(f"uplink: the LAP holds this table's records again (was: {self.behind})")
            self._record(conn, "caught-up", f"resent to event {self.acked}, reconciled (was: {self.behind})")
            self.behind = None
            self.view.behind = None
            self.view.retell()

    def _memory_problem(self, conn: psycopg.Connection, source: LedgerSource) -> tuple[str | None, str, int]:
        """(what is wrong, the recovery's kind, the seq to resend after) of the LAP's memory."""
        row = conn.execute(
            self._q(
                "SELECT coalesce(h.events, 0), coalesce(h.max_seq, 0), s.system_identifier::text,"
                " CASE WHEN pg_is_in_recovery() THEN NULL ELSE"
                " ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END"
                " FROM pg_control_system() s LEFT JOIN {s}.held h ON h.table_id = %s"
            ),
            (self.cfg.table_id,),
        ).fetchone()
        assert row is not None
        events, high = int(row[0]), int(row[1])
        identity = (str(row[2]), None if row[3] is None else int(row[3]))
        was, self.identity = self.identity, identity
        if was is not None and was != identity:
            self.foreign = ForeignCheck()  # another database: its records are read again
            self.lap_high = max(self.lap_high, self.acked)
            return (
                f"its database is another one now (system {was[0]} timeline {was[1]} -> "
                f"system {identity[0]} timeline {identity[1]}: a failover or a restore)",
                "identity-changed",
                high if self._agrees_to(source, high, events) else 0,
            )
        if not self._agrees_to(source, high, events):
            return f"it holds {events} records of this table up to event {high}, the ledger others", "lap-behind", 0
        if high < self.lap_high:
            return (
                f"it holds this table's records up to event {high}, it held them up to {self.lap_high}",
                ("lap-behind"),
                high,
            )
        lost = self._paid_hits_lost(conn, source, high)
        if lost:
            return f"it does not hold hit {lost[0]}, which the table paid", "lap-behind", min(high, lost[0] - 1)
        self.lap_high = max(self.lap_high, high)
        return None, "", high

    def _agrees_to(self, source: LedgerSource, high: int, events: int) -> bool:
        """Whether the LAP holds as many records of this table up to ``high`` as the ledger has.
        Records beyond the ledger's end are not the LAP being behind (another ledger, records
        no genuine uplink sent: the head check and the LAP's refusals deal with those)."""
        if high == 0 or (high, events) == self._agreed:
            return True  # the ledger's past does not change (another file is another source)
        if high > source.last_seq() or source.totals(high).events == events:
            self._agreed = (high, events)
            return True
        return False

    _agreed: tuple[int, int] = (0, 0)  # the LAP's (last seq, records) last found to agree with the ledger

    def _paid_hits_lost(self, conn: psycopg.Connection, source: LedgerSource, high: int) -> list[int]:
        """The hits the ledger shows paid that the LAP does not hold (held: a hit after ``high``
        has not been sent, and the table cannot have been answered for it by this LAP)."""
        paid = source.paid()
        if not paid:
            return []
        rows = conn.execute(
            self._q("SELECT seq FROM {s}.hits WHERE table_id = %s AND seq = ANY(%s)"),
            (self.cfg.table_id, list(paid)),
        ).fetchall()
        held = {int(r[0]) for r in rows}
        return sorted(h for h in paid if h not in held)

    def _check_foreign(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """Report every record the LAP holds of this table that the ledger does not (once each):
        the LAP closes the table's linked wager with it and never counts such a hit as paid."""
        for seq, what in self.foreign.find(conn, self._q, self.cfg.table_id, source):
            self.foreign_found += 1
            self.log(f"uplink: the LAP holds a record of this table that its ledger does not: {what}")
            try:
                conn.execute(self._q("SELECT {s}.report_foreign(%s, %s)"), (seq, what))
            except psycopg.OperationalError:
                self.foreign.reported.discard(seq)  # reported again once the database is back
                raise
            except psycopg.Error as e:
                self.log(f"uplink: the LAP did not record it: {_first_line(e)}")
        if self.foreign.more:
            self._next_memory = 0.0  # a long history: the next part at the next turn

    def _caught_up(self, conn: psycopg.Connection) -> bool:
        row = conn.execute(
            self._q("SELECT reconciled_seq, mismatch FROM {s}.members WHERE table_id = %s"), (self.cfg.table_id,)
        ).fetchone()
        return row is not None and int(row[0]) >= self.acked and row[1] is None

    def _record(self, conn: psycopg.Connection, kind: str, detail: str) -> None:
        self.recoveries += 1
        try:
            conn.execute(self._q("SELECT {s}.report_recovery(%s, %s)"), (kind, detail))
        except psycopg.OperationalError:
            raise
        except psycopg.Error as e:
            self.log(f"uplink: the LAP did not record the recovery: {_first_line(e)}")

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

    _force = False

    def _send_batch(self, conn: psycopg.Connection, source: LedgerSource) -> bool:
        """Send the next batch of verified link events; True when there may be more.  ``_force``:
        a batch even when there is nothing new (the LAP holds events it has not reconciled)."""
        self._verify(conn, source)
        n = self.batch_n
        evs = source.link_events(self.acked, n)
        if not evs and not self._force:
            self.relink.settled()
            return False
        self.relink.waiting()
        started = time.monotonic()
        self.watchdog.tick(conn, self.send_limit_s)
        last = evs[-1].seq if evs else self.acked
        tot = source.totals(last)
        paid = source.paid() if any(e.kind == "hit" for e in evs) else {}
        with conn.transaction():
            if evs:
                with conn.cursor() as cur:
                    cur.executemany(
                        self._q(
                            "INSERT INTO {s}.events (table_id, seq, kind, level, data, table_time, key_no, auth)"
                            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (table_id, seq) DO NOTHING"
                        ),
                        [_signed(self.link_key, e, _with_paid(e, paid)) for e in evs],
                    )
            conn.execute(
                self._q(
                    "INSERT INTO {s}.batches (table_id, last_seq, events_total, wagers_total, chain_head, key_no, auth)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s)"
                ),
                (
                    self.cfg.table_id,
                    tot.last_seq,
                    tot.events,
                    tot.wagers,
                    tot.head,
                    self.link_key.key_no,
                    sign_batch(self.link_key, tot.last_seq, tot.events, tot.wagers, tot.head),
                ),
            )
        self.watchdog.tick(conn, self.read_limit_s)
        self.relink.progressed(more=len(evs) == n)
        for e in evs:
            if e.kind == "hit":  # its answer is read next: a claim until it is
                self.relink.claim(e.seq, self.claim_s)
        self._force = False
        self._took(time.monotonic() - started)
        self.acked = last
        self.lap_high = max(self.lap_high, last)
        self.sent_batches += 1
        self.listener.bell.ring()  # the LAP's answer to this batch (reconciled, refused) is read next
        return len(evs) == n

    def _claims_answered(self) -> None:
        """The hit claims whose answer the table has been told; all of them when the LAP closed
        this table (a refused claim has no answer to wait for on any connection)."""
        if self.view.closed():
            self.relink.forget_claims()
            return
        for seq in self.relink.claims():
            if isinstance(seq, int) and seq <= self.view.known:
                self.relink.answered(seq)

    def _took(self, took: float) -> None:
        """The next batch's size after one that took ``took`` seconds: in proportion when it took
        longer than ``batch_target_s`` (the level's lock is held about that long), doubled
        (up to ``batch_max``) when quicker."""
        target = self.cfg.batch_target_s
        if took > target:
            self.batch_n = max(1, int(self.batch_n * target / took))
        else:
            self.batch_n = min(self.cfg.batch_max, self.batch_n * 2)
        self.busy.reset()


def _with_paid(e: LinkEvent, paid: dict[int, tuple[int, str | None]]) -> dict[str, Any]:
    """A hit the ledger shows paid carries the amount paid and the LAP's proof that it decided it:
    a LAP that does not hold it (behind the table) re-establishes it at that amount instead of
    pricing it again, with the proof only (a LAP that holds it ignores the resend)."""
    if e.kind == "hit" and e.seq in paid:
        cents, proof = paid[e.seq]
        return {**e.data, "paid_cents": cents, **({} if proof is None else {"paid_proof": proof})}
    return e.data


def _signed(k: LinkKey, e: LinkEvent, data: dict[str, Any]) -> tuple[Any, ...]:
    """An event's row, with its MAC under the table's link key (the LAP checks it before it applies it)."""
    tt = aware_time(e.table_time)
    auth = sign_event(k, e.seq, e.kind, e.level, tt, data)
    return (k.table_id, e.seq, e.kind, e.level, json.dumps(data), tt, k.key_no, auth)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
