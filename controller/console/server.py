"""The console server: where sessions come from.

* ``pty=True`` — a pseudo-terminal; the server holds the master and keeps the
  slave open, and :attr:`ConsoleServer.pty_path` is the path a person attaches
  to (``picocom``/``screen``) — ``tablectl sim --console-pty`` and the tests.
* ``socket_path`` — a Unix stream socket (``/run/tablectl/console.sock`` under
  systemd); ``tablectl console --port /dev/ttyAMA0`` bridges the UART to it
  (systemd/tablectl-console@.service), and ``tablectl console`` alone attaches
  the terminal it runs in.

All sessions share one PIN store and one login lock-out.  Sessions run on their
own threads and reach the table only through ``Service.call``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
import tty
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from controller.console.auth import LOCK_FILE, LOCKOUT_S, MAX_FAILURES, PIN_FILE, Lockout, PinStore
from controller.console.lineio import Channel
from controller.console.session import Session
from controller.core.records import Kind

if TYPE_CHECKING:
    from controller.console.port import ConsoleService


@dataclass(frozen=True, slots=True)
class ConsoleLimits:
    """A console server's times and limits."""

    idle_s: float = 600.0  # a session idle this long is logged out
    lockout_s: float = LOCKOUT_S  # a role locked at this console after max_failures wrong PINs, for this long
    max_failures: int = MAX_FAILURES
    fail_delay_s: float = 1.0  # the pause after a wrong PIN
    call_timeout: float = 10.0  # a command's wait for the reactor
    diag_light_s: float = 2.0  # how long ``diag lights`` holds each light
    max_sessions: int = 4  # sessions at once


class ConsoleServer:
    def __init__(
        self,
        service: ConsoleService,
        *,
        pty: bool = False,
        socket_path: str | Path | None = None,
        pins_file: str | Path | None = None,
        limits: ConsoleLimits = ConsoleLimits(),
        clock: Callable[[], float] = time.monotonic,
    ):
        from controller import __version__

        # the command modules register themselves on import
        from controller.console import cmd_basic, cmd_config, cmd_diag, cmd_records  # noqa: F401

        self.service = service
        self.log = service.logctx.logger("console")
        self.version = __version__
        self.table_id = service.hw.table_id
        self.pins = PinStore(Path(pins_file) if pins_file else Path(service.hw.state_dir) / PIN_FILE)
        self.limits = limits
        self._lockout = Lockout(limits.max_failures, limits.lockout_s, clock)
        self.lock_file = Path(service.hw.state_dir) / LOCK_FILE
        self._lock_saved: dict[str, float] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._fds: list[int] = []
        self._sessions = 0
        self._pins_fp: str | None = None
        self.want_pty = pty
        self.socket_path = Path(socket_path) if socket_path else None
        self.pty_path: str | None = None
        self._listener: socket.socket | None = None

    # ------------------------------------------------------------------ ledger (read-only)
    @contextlib.contextmanager
    def reader(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection of this thread's own (WAL: readers beside the writer)."""
        from controller.books.history import open_readonly

        ledger = self.service.ledger
        if ledger is None:
            raise RuntimeError("the ledger is not open")
        conn = open_readonly(ledger.path)
        try:
            yield conn
        finally:
            conn.close()

    def _load_state(self) -> None:
        import json

        class _Ev:
            def __init__(self, kind: str, data: str):
                self.kind, self.data = kind, json.loads(data)

        with self.reader() as conn:
            rows = conn.execute(
                "SELECT kind, data FROM events WHERE kind IN (?, ?, ?) ORDER BY seq DESC LIMIT 5000",
                (Kind.CONSOLE_LOGIN, Kind.CONSOLE_LOCKED, Kind.CONSOLE_UNLOCKED),
            ).fetchall()
            self._lockout.load((_Ev(k, d) for k, d in rows), self._read_lock_file())
            row = conn.execute(
                "SELECT data FROM events WHERE kind = ? ORDER BY seq DESC LIMIT 1", (Kind.CONSOLE_PINS,)
            ).fetchone()
        self._pins_fp = json.loads(row[0]).get("fingerprint", "") if row else None

    # ------------------------------------------------------------------ login bookkeeping
    def _read_lock_file(self) -> dict[str, float] | None:
        """The remaining time of each lock at the last save; None when there is no file
        (a damaged file counts as none: the ledger's locks then apply in full)."""
        import json

        try:
            from controller.core.safefile import read_text_bounded

            doc = json.loads(read_text_bounded(self.lock_file))  # bounded, never through a link
            return {str(k): float(v) for k, v in dict(doc["remaining_s"]).items()}
        except FileNotFoundError:
            return None
        except (ValueError, TypeError, KeyError, OSError, UnicodeDecodeError) as e:
            self.log.warning("console.lock_file_unreadable", file=str(self.lock_file), error=str(e))
            return None

    def _save_locks(self) -> None:
        """Keep the remaining time of each lock (never an end time: clocks jump) on disk."""
        import json

        snap = self._lockout.snapshot()
        if snap == self._lock_saved:
            return
        tmp = self.lock_file.with_suffix(".tmp")
        try:
            tmp.write_text(json.dumps({"remaining_s": snap}), encoding="utf-8")
            os.replace(tmp, self.lock_file)
            self._lock_saved = snap
        except OSError as e:
            self.log.error("console.lock_file_write_failed", file=str(self.lock_file), error=str(e))

    def lockout_remaining(self, role: str, endpoint: str) -> float:
        with self._lock:
            left = self._lockout.remaining(role, endpoint)
            self._save_locks()
            return left

    def login_failed(self, role: str, endpoint: str) -> tuple[int, bool]:
        with self._lock:
            n, locked = self._lockout.fail(role, endpoint)
            self._save_locks()
            return n, locked

    def login_succeeded(self, role: str, endpoint: str) -> None:
        with self._lock:
            self._lockout.succeed(role, endpoint)

    def unlock(self, role: str) -> list[str]:
        """A technician's override of ``role``'s login locks (the caller records it)."""
        with self._lock:
            was = self._lockout.unlock(role)
            self._save_locks()
            return was

    def _tick_locks(self) -> None:
        """While a lock runs, its remaining time is saved every few seconds."""
        while not self._stop.wait(5.0):
            with self._lock:
                self._save_locks()

    def note_pin_file(self, session: Session) -> None:
        """Log a change of the PIN file (``tablectl pin set``) the first time a login sees it."""
        fp = self.pins.fingerprint()
        with self._lock:
            if fp == self._pins_fp:
                return
            self._pins_fp = fp
        session.log(Kind.CONSOLE_PINS, fingerprint=fp, roles=self.pins.roles_set())

    # ------------------------------------------------------------------ lifecycle
    def stopping(self) -> bool:
        return self._stop.is_set()

    def start(self) -> ConsoleServer:
        self._load_state()
        with self._lock:
            self._save_locks()
        ticker = threading.Thread(target=self._tick_locks, name="console-locks", daemon=True)
        ticker.start()
        self._threads.append(ticker)
        if self.want_pty:
            master, slave = os.openpty()
            tty.setraw(slave)
            self._fds += [master, slave]  # we keep the slave open: no EIO when nobody is attached
            self.pty_path = os.ttyname(slave)
            self._spawn(Channel(master, name="pty", eof_closes=False), "console-pty")
        if self.socket_path is not None:
            self._listen(self.socket_path)
        return self

    def _listen(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # stale socket of a previous run
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        old = os.umask(0o117)
        try:
            s.bind(str(path))
        finally:
            os.umask(old)
        s.listen(2)
        s.settimeout(0.2)
        self._listener = s
        t = threading.Thread(target=self._accept, name="console-accept", daemon=True)
        with self._lock:  # (a session it accepts at once replaces the list: _spawn)
            self._threads.append(t)
        t.start()

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                busy = self._sessions >= self.limits.max_sessions
            if busy:
                with contextlib.suppress(OSError):
                    conn.sendall(b"tablectl: too many console sessions\r\n")
                conn.close()
                continue
            conn.setblocking(False)
            self._spawn(Channel(conn.detach(), name="socket"), "console-socket", own_fd=True)

    def _spawn(self, chan: Channel, name: str, own_fd: bool = False) -> None:
        def run() -> None:
            with self._lock:
                self._sessions += 1
            try:
                Session(self, chan).run()
            finally:
                with self._lock:
                    self._sessions -= 1
                if own_fd:
                    with contextlib.suppress(OSError):
                        os.close(chan.fd)

        t = threading.Thread(target=run, name=name, daemon=True)
        t.start()
        with self._lock:  # the sessions that ended are let go: a year of connections is not kept
            self._threads = [*(old for old in self._threads if old.is_alive()), t]

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            self._save_locks()
        if self._listener is not None:
            self._listener.close()
        for t in self._threads:
            t.join(timeout=2)
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []
        if self.socket_path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.socket_path.unlink()
