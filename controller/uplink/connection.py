"""The uplink's one database connection and its deadlines: the connection opened with the link's
deadlines (controller/lap/pgconn.py), its life (controller/lap/reconnect.py), the statement watchdog,
the table told at once of a connection silent for the link timeout; and the table's wake-up.

Dead connections are found and replaced (keepalives, ``tcp_user_timeout``, statement and
idle-in-transaction timeouts; and an application deadline: no heartbeat the LAP wrote after this
connection was made, within the link timeout and a second, ends the connection; a statement
watchdog, whose deadline for a batch is past the server's own ``statement_timeout`` so that a batch
waiting for a level's lock is never taken for a dead connection).
"""

from __future__ import annotations

import socket
import threading

import psycopg

from controller.lap import pgconn
from controller.lap.reconnect import Reconnect
from controller.uplink.config import UplinkConfig
from controller.uplink.lapview import Listener


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


class Connection:
    """The connection's deadlines and life; the watchdog is armed by :meth:`arm` (the uplink's start)."""

    __slots__ = (
        "_silent",
        "backoff",
        "cfg",
        "claim_s",
        "deadlines",
        "listener",
        "read_limit_s",
        "relink",
        "send_limit_s",
        "stop_event",
        "watchdog",
    )

    def __init__(self, cfg: UplinkConfig, listener: Listener, stop_event: threading.Event) -> None:
        self.cfg = cfg
        self.listener = listener
        self.stop_event = stop_event
        self.deadlines = pgconn.for_link_timeout(cfg.link_timeout_s)
        #: a batch's statements may wait for a level's row lock behind other tables' batches: the
        #: server ends one after its ``statement_timeout`` (and answers so), so the watchdog ends
        #: the connection only when not even that answer came (docs/linked.md, failure table)
        self.send_limit_s = self.deadlines.statement_timeout_ms / 1000 + 2.0
        #: the heartbeat read and the other reads: nothing waits for a lock there
        self.read_limit_s = cfg.link_timeout_s + 2.0
        self.backoff = pgconn.Backoff(*cfg.reconnect_s)
        #: the connection's life (controller/lap/reconnect.py): records waiting and nothing
        #: acknowledged ends the connection, whatever it was doing, after the server's own
        #: deadline on a batch and a second (5 s at a 3 s link timeout): a batch waiting for a
        #: level's lock is answered by the server first (cancelled: an acknowledgement, sent again
        #: on the same connection), never cut; the table has closed on its own timeout before
        progress_s = self.deadlines.statement_timeout_ms / 1000 + 1.0
        self.relink = Reconnect(f"uplink {cfg.table_id}", progress_s, self.backoff)
        #: a hit claim whose answer has not been read within a batch's whole limit and a second
        #: (7 s) ends the connection too, and is sent again on the next one (its answer is
        #: written in the claim's own transaction: the first read after it finds it)
        self.claim_s = self.send_limit_s + 1.0
        self._silent = threading.Event()
        self.watchdog: pgconn.Watchdog | None = None

    def arm(self) -> pgconn.Watchdog:
        """The statement watchdog: a statement that has not returned by then ends the connection
        (bytes swallowed by the network while something on the way still acknowledges them); the
        table hears of a statement out longer than the link timeout at once (a batch may wait up to
        its own, longer limit for a level's lock; the table does not wait with it)."""
        self._silent = threading.Event()
        self.watchdog = pgconn.Watchdog(
            self.read_limit_s,
            self.stop_event,
            "uplink-watchdog",
            quiet=(self.cfg.link_timeout_s, self.quiet),
            also=self.relink.enforce,
        )
        return self.watchdog

    @property
    def fired(self) -> int:
        """The connections the watchdog ended (0 before it is armed)."""
        return 0 if self.watchdog is None else self.watchdog.fired

    def tick(self, conn: psycopg.Connection | None, limit: float | None = None) -> None:
        """The watchdog told what runs now (``conn``: a statement on it; None: nothing)."""
        assert self.watchdog is not None, "the uplink is not started"
        self.watchdog.tick(conn, limit)

    def open(self) -> psycopg.Connection:
        return pgconn.connect(self.cfg.dsn, self.deadlines, application_name=f"tablectl uplink {self.cfg.table_id}")

    def quiet(self, waited: float) -> None:
        """(the watchdog's thread) A statement unanswered for the link timeout: the table is told
        the link is down now; up again when the connection answers (:meth:`answered`)."""
        self._silent.set()
        self.listener.detached(f"no answer from the database for {waited:.1f} s")

    def answered(self) -> None:
        """The connection answered again after the table was told of its silence: the link is up
        (the heartbeats then read say whether the LAP is)."""
        if self._silent.is_set():
            self._silent.clear()
            self.listener.send({"t": "link", "up": True}, key="link")
