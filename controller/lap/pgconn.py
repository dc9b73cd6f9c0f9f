"""Every PostgreSQL connection of the link (uplink, LAP, floor view) is opened here, with the
parameters that find a dead connection (a network that drops packets without a reset
left uplinks and the LAP waiting forever on a socket that would never answer).

- **TCP keepalives** (``keepalives_idle`` / ``_interval`` / ``_count``): an idle connection
  whose peer went silent is found within about idle + interval × count seconds;
- **``tcp_user_timeout``** (Linux): data sent and not acknowledged for this long ends the
  connection (a query sent into a silent network fails instead of waiting for the kernel's
  15 minutes of retransmissions);
- **``statement_timeout``** and **``idle_in_transaction_session_timeout``** (server side): a
  statement or an open transaction of a client that went away does not hold a level's row lock
  (and so every other table's events) longer than this;
- ``connect_timeout``: a connection attempt into a silent network ends.

The uplink adds an application deadline of its own (controller/uplink/uplink.py: no fresh LAP
heartbeat within the link timeout ends the connection and opens another).  Keepalives mean
nothing on a Unix socket (libpq ignores them there); the deadlines still hold.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict


@dataclass(frozen=True)
class Deadlines:
    """One purpose's deadlines (seconds; milliseconds where libpq wants them)."""

    connect_s: int = 3  # libpq's minimum useful value is 2
    keepalive_idle_s: int = 1
    keepalive_interval_s: int = 1
    keepalive_count: int = 2
    tcp_user_timeout_ms: int = 3000
    statement_timeout_ms: int = 10_000
    idle_in_transaction_ms: int = 10_000

    def kwargs(self) -> dict[str, Any]:
        return {
            "connect_timeout": self.connect_s,
            "keepalives": 1,
            "keepalives_idle": self.keepalive_idle_s,
            "keepalives_interval": self.keepalive_interval_s,
            "keepalives_count": self.keepalive_count,
            "tcp_user_timeout": self.tcp_user_timeout_ms,
        }

    def options(self) -> str:
        return (
            f"-c statement_timeout={self.statement_timeout_ms}"
            f" -c idle_in_transaction_session_timeout={self.idle_in_transaction_ms}"
        )


#: a table's uplink: a dead connection is found within the tables' link timeout (3 s by default)
UPLINK = Deadlines()
#: the LAP: its self-check reads every level's records (and installs a throwaway copy of the
#: schema to compare its code): a longer statement deadline, the same network deadlines
LAP = Deadlines(statement_timeout_ms=120_000, idle_in_transaction_ms=60_000)
#: the floor view's readers: a page's query never holds a worker long
FLOOR = Deadlines(connect_s=3, statement_timeout_ms=5_000, idle_in_transaction_ms=5_000)


def for_link_timeout(link_timeout_s: float) -> Deadlines:
    """The uplink's deadlines for a table whose linked wager closes after ``link_timeout_s``:
    unacknowledged data ends the connection within that time."""
    ms = max(1000, int(link_timeout_s * 1000))
    # the server ends a statement (a batch waiting for a level's lock) after the link timeout
    # + 1 s and answers: the uplink's watchdog, 2 s past that, then knows a statement with no
    # answer is on a dead connection — found within about link timeout + 3 s (6 s at 3 s), so a
    # loss that leaves the database's answers unanswered is recovered from within 10 s: a new
    # connection, then the LAP's next heartbeat (1 s).  A lock wait is short now: the LAP ends
    # or cancels a session that holds a level's lock others wait for after ``[link] table_hold``
    # (1 s, controller/lap/guard.py).  (It was + 3 s: 8 s, and the table reopened 11.95 s after
    # such a loss on a busy machine.)
    return Deadlines(tcp_user_timeout_ms=ms, statement_timeout_ms=ms + 1000)


def params(dsn: str, deadlines: Deadlines, **extra: Any) -> dict[str, Any]:
    """The keyword arguments of ``psycopg.connect(dsn, **…)``: the deadlines, and the server
    options appended to any the DSN names (the DSN's own other parameters stay)."""
    kw: dict[str, Any] = deadlines.kwargs()
    given = conninfo_to_dict(dsn).get("options")
    kw["options"] = f"{given} {deadlines.options()}" if given else deadlines.options()
    kw.update(extra)
    return kw


def connect(
    dsn: str,
    deadlines: Deadlines = UPLINK,
    *,
    user: str | None = None,
    autocommit: bool = True,
    application_name: str | None = None,
) -> psycopg.Connection:
    extra: dict[str, Any] = {"autocommit": autocommit}
    if user is not None:
        extra["user"] = user
    if application_name is not None:
        extra["application_name"] = application_name
    return psycopg.connect(dsn, **params(dsn, deadlines, **extra))


async def connect_async(dsn: str, deadlines: Deadlines = FLOOR) -> psycopg.AsyncConnection:
    return await psycopg.AsyncConnection.connect(dsn, **params(dsn, deadlines, autocommit=True))


class Backoff:
    """The pause before the next connection attempt (with the first one-connection
    uplink, 200 uplinks reconnecting
    at once, without pause, kept a loaded database saturated): exponential from ``base_s`` to
    ``cap_s``, each pause drawn at random in its upper half (jitter: uplinks that failed together do
    not retry together), back to ``base_s`` after a successful connection (:meth:`reset`)."""

    def __init__(self, base_s: float = 0.2, cap_s: float = 5.0, rand: Callable[[], float] = random.random):
        self.base_s, self.cap_s, self.rand = base_s, cap_s, rand
        self.failures = 0

    def next(self) -> float:
        """The pause after one more consecutive failure (seconds)."""
        top: float = min(self.cap_s, self.base_s * 2.0 ** min(self.failures, 30))
        self.failures += 1
        return top / 2 + self.rand() * top / 2

    def reset(self) -> None:
        self.failures = 0


class Watchdog:
    """A client-side deadline on a connection's statements: a thread that shuts the socket of a
    connection whose owner has not ticked for ``limit_s`` (a statement sent into a network that
    swallows bytes while something on the way still acknowledges them, which no keepalive or
    ``tcp_user_timeout`` finds).  The blocked statement then fails as a lost connection does."""

    def __init__(
        self,
        limit_s: float,
        stop: threading.Event,
        name: str = "pg-watchdog",
        step: float = 0.2,
        *,
        quiet: tuple[float, Callable[[float], None]] | None = None,
        also: Callable[[], object] | None = None,
    ):
        """``quiet`` = (seconds, say): ``say(waited)`` is called once when a statement has been
        out that long without an answer, before its own limit ends it (a batch may wait for a
        lock up to its limit; whoever waits on the answer hears of the silence meanwhile).
        ``also``: called at every step on this thread (the connection's progress deadline,
        controller/lap/reconnect.py ``Reconnect.enforce``)."""
        self.limit_s, self.stop, self.step = limit_s, stop, step
        self.quiet = quiet
        self.also = also
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None
        self._since = 0.0
        self._limit = limit_s
        self._said = False
        self.fired = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def tick(self, conn: psycopg.Connection | None, limit_s: float | None = None) -> None:
        """The owner is alive and (``conn``) about to use this connection, for at most
        ``limit_s`` (default: the watchdog's), or (None) holds none."""
        with self._lock:
            self._conn, self._since = conn, time.monotonic()
            self._limit = self.limit_s if limit_s is None else limit_s
            self._said = False

    def _run(self) -> None:
        while not self.stop.wait(self.step):
            if self.also is not None:
                self.also()
            with self._lock:
                conn, waited = self._conn, time.monotonic() - self._since
                due = conn is not None and waited > self._limit
                say = self.quiet is not None and conn is not None and not self._said and waited > self.quiet[0]
                if due:
                    self._conn = None
                if say:
                    self._said = True
            if say and self.quiet is not None:
                self.quiet[1](waited)
            if due and conn is not None:
                self.fired += 1
                shut(conn)


def shut(conn: psycopg.Connection) -> None:
    """Shut the connection's socket (both ways): whatever waits on it returns, the connection is
    then broken (closing it is its owner's act, on its own thread)."""
    try:
        fd = conn.pgconn.socket
    except psycopg.Error:
        return
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        s.close()
