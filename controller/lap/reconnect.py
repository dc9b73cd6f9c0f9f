"""One database connection's life, the same for every connection the link holds (a table's
uplink, the LAP, the floor view's listener): a small state machine with a **progress deadline**.

Each fault of a network or a server ends in one of a few ways (a reset, an error, a statement
that never returns, a connection that answers but never moves the work on), and each used to be
found by its own deadline, in the place that met it.  Faults in sequence (a restart while a
connection hangs, a cut during a stall) could leave the work between two of them: the
connection up, records waiting, nothing acknowledged, nobody's deadline running.  Here one
deadline covers them all: **work waiting and nothing acknowledged within ``progress_s`` → the
connection is dropped and another opened, whatever state it is in**; and a **claim** (a hit
claim waiting for its answer) unanswered past its own deadline does the same, so the claim is
sent again on a fresh connection.

States::

    down ──begin()──▶ connecting ──opened(c)──▶ up ──fail(why)──▶ backoff ──begin()──▶ connecting …
                          └──────fail(why)─────────────────────────┘

The machine does no I/O of its own and takes its clock as a parameter (unit-tested alone,
tests/controller/test_reconnect.py).  Its owner opens and closes the connections on its own thread;
another thread (the owner's watchdog) may call :meth:`Reconnect.enforce`, which shuts the
socket of a connection past a deadline (controller/lap/pgconn.py ``shut``) so that whatever
waits on it returns, and the owner's next statement fails as a lost connection does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from controller.lap.pgconn import Backoff, shut

DOWN, CONNECTING, UP, BACKOFF = "down", "connecting", "up", "backoff"


class Reconnect:
    """A connection's state, its progress deadline and its claims (thread-safe)."""

    def __init__(
        self,
        name: str,
        progress_s: float,
        backoff: Backoff | None = None,
        *,
        now: Callable[[], float] = time.monotonic,
        shutter: Callable[[Any], None] = shut,
    ):
        if progress_s <= 0:
            raise ValueError(f"{name}: the progress deadline must be positive, not {progress_s}")
        self.name, self.progress_s, self.now, self.shutter = name, progress_s, now, shutter
        self.backoff = backoff if backoff is not None else Backoff()
        self._lock = threading.Lock()
        self.state = DOWN
        self.conn: Any = None
        self._waiting_since: float | None = None  # work waiting, nothing acknowledged since
        self._claims: dict[Hashable, tuple[float, float]] = {}  # key -> (due at, its deadline)
        self.reason: str | None = None  # why the last connection ended
        self.connects = 0
        self.drops = 0  # connections ended by a deadline of this machine
        self._dropping: str | None = None  # a deadline passed: the connection is being dropped
        self.pause = 0.0  # the last back-off pause (seconds before the next attempt)

    # ------------------------------------------------------------------ the connection
    def begin(self) -> None:
        with self._lock:
            self.state = CONNECTING

    def opened(self, conn: Any) -> None:
        """A connection is up: the deadlines run from now (a fresh connection gets a full one;
        a claim still waiting is sent again on it, its deadline from now)."""
        with self._lock:
            self.state, self.conn, self._dropping = UP, conn, None
            self.connects += 1
            now = self.now()
            if self._waiting_since is not None:
                self._waiting_since = now
            self._claims = {k: (now + d, d) for k, (_due, d) in self._claims.items()}
        self.backoff.reset()

    def fail(self, why: str) -> float:
        """The connection ended (an error, or a deadline of this machine): backoff; the pause
        before the next attempt (closing the connection is the owner's act)."""
        with self._lock:
            self.state, self.conn = BACKOFF, None
            self.reason = self._dropping or why
            self._dropping = None
            self.pause = self.backoff.next()
            return self.pause

    def connect(self, opener: Callable[[], Any]) -> Any:
        """``opener()`` through the machine (the owner's thread): up, or failed and re-raised."""
        self.begin()
        try:
            conn = opener()
        except BaseException as e:
            self.fail(f"{type(e).__name__}: {e}")
            raise
        self.opened(conn)
        return conn

    # ------------------------------------------------------------------ progress
    def waiting(self) -> None:
        """Work is waiting to be acknowledged (the clock starts now, unless it runs already)."""
        with self._lock:
            if self._waiting_since is None:
                self._waiting_since = self.now()

    def progressed(self, more: bool = False) -> None:
        """Something was acknowledged: the clock starts again (``more``: work still waits), or
        stops (nothing waits)."""
        with self._lock:
            self._waiting_since = self.now() if more else None

    def settled(self) -> None:
        """Nothing waits (or what waits is held on purpose: the deadline is not for it)."""
        with self._lock:
            self._waiting_since = None

    def claim(self, key: Hashable, deadline_s: float) -> None:
        """A claim waits for its answer for at most ``deadline_s`` (kept when claimed again)."""
        with self._lock:
            if key not in self._claims:
                self._claims[key] = (self.now() + deadline_s, deadline_s)

    def answered(self, key: Hashable) -> None:
        with self._lock:
            self._claims.pop(key, None)

    def forget_claims(self) -> None:
        """Every claim dropped (its answer will not come on any connection: a refusal)."""
        with self._lock:
            self._claims.clear()

    def claims(self) -> list[Hashable]:
        with self._lock:
            return list(self._claims)

    # ------------------------------------------------------------------ the deadline
    def overdue(self) -> str | None:
        """Why the connection must be dropped now (None: it need not)."""
        with self._lock:
            return self._overdue_locked()[0]

    def _overdue_locked(self) -> tuple[str | None, list[Hashable]]:
        if self.state != UP:
            return None, []
        now = self.now()
        if self._waiting_since is not None and now - self._waiting_since > self.progress_s:
            return f"{self.name}: work waiting and nothing acknowledged for {now - self._waiting_since:.1f} s", []
        late = [k for k, (due, _d) in self._claims.items() if now > due]
        if late:
            return f"{self.name}: claim {late[0]} unanswered for {self._claims[late[0]][1]:.1f} s", late
        return None, []

    def enforce(self) -> str | None:
        """(Any thread) Past a deadline: the connection's socket is shut (the owner's statement
        then fails, and the owner calls :meth:`fail`); why, or None.  A late claim waits twice
        as long on the next connection (up to a minute: never a tight loop)."""
        with self._lock:
            why, late = (None, []) if self._dropping is not None else self._overdue_locked()
            for k in late:
                due, d = self._claims[k]
                self._claims[k] = (due, min(d * 2, 60.0))
            conn = self.conn if why is not None else None
            if why is not None:
                self._dropping = why
                self.drops += 1
        if conn is not None:
            self.shutter(conn)
        return why


class Lending:
    """The machine for a pool whose connections several threads borrow (the floor view's): each
    connection has its :class:`Reconnect`; a loan is work waiting, its return the acknowledgement,
    so a connection lent for longer than ``limit_s`` (a statement sent into a network that holds
    or swallows bytes, which neither keepalives nor ``tcp_user_timeout`` find when a middlebox
    acknowledges them) has its socket shut: the borrower's statement fails as a lost connection
    does and the pool drops it.  One thread enforces every machine's deadline, started at the
    first loan; it ends when ``stop`` is set."""

    def __init__(
        self,
        name: str,
        limit_s: float,
        stop: threading.Event,
        *,
        step: float = 0.25,
        now: Callable[[], float] = time.monotonic,
        shutter: Callable[[Any], None] = shut,
    ):
        self.name, self.limit_s, self.stop, self.step = name, limit_s, stop, step
        self.now, self.shutter = now, shutter
        self._lock = threading.Lock()
        self._machines: dict[int, Reconnect] = {}
        self._thread: threading.Thread | None = None
        self.fired = 0

    def lend(self, conn: Any) -> None:
        with self._lock:
            m = self._machines.get(id(conn))
            if m is None:
                m = Reconnect(self.name, self.limit_s, now=self.now, shutter=self.shutter)
                m.opened(conn)
                self._machines[id(conn)] = m
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        m.waiting()

    def back(self, conn: Any, kept: bool = True) -> None:
        """The loan ended (``kept``: the connection goes back to the pool, else it is closed)."""
        with self._lock:
            m = self._machines.get(id(conn)) if kept else self._machines.pop(id(conn), None)
        if m is not None and kept:
            m.progressed()
        elif m is not None:
            m.fail("closed by the pool")

    def enforce(self) -> int:
        """Shut every lent connection past its deadline; how many."""
        with self._lock:
            machines = list(self._machines.values())
        n = sum(1 for m in machines if m.enforce() is not None)
        self.fired += n
        return n

    def _run(self) -> None:
        while not self.stop.wait(self.step):
            self.enforce()
