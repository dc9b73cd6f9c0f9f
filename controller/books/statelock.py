"""The state directory's lock: one holder of a table's ledger at a time.

The service takes it at start and keeps it until it stops; ``tablectl restore``
takes it while it replaces the ledger, so a restore is refused while the service
runs and the service refuses to start during a restore.  An advisory ``flock`` on
``<state_dir>/tablectl.lock``: the kernel releases it when the holder dies, so a
killed service never leaves a stale lock behind.  Readers (``history``, ``audit``,
``backup``, ``report``) never take it: WAL lets them read beside the writer.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_FILE = "tablectl.lock"


class StateLocked(RuntimeError):
    """Another process holds the state directory (names the directory and the holder's pid)."""


class StateLock:
    def __init__(self, state_dir: str | Path):
        self.path = Path(state_dir) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self, what: str = "tablectl") -> StateLock:
        """Non-blocking: :class:`StateLocked` when another process holds it."""
        if self._fd is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
            finally:
                os.close(fd)
            raise StateLocked(
                f"{self.path.parent}: the ledger is in use ({holder or 'another process'}); stop the service first"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{what}, pid {os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> StateLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def in_use(state_dir: str | Path) -> bool:
    """Whether another process holds the state directory's lock (without keeping it)."""
    lock = StateLock(state_dir)
    if not lock.path.exists():
        return False
    try:
        lock.acquire("probe")
    except StateLocked:
        return True
    lock.release()
    return False
