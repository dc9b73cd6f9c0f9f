"""The service's periodic audit, a bounded slice of the ledger per run.

Every run (``Background.AUDIT_EVERY_S``, controller/daemon/background.py; on the ``ledger-audit`` thread,
on a read-only connection of its own, one read transaction):

1. what the start-up checks, whatever the ledger's age (controller/books/ledgercheck.py ``quick``):
   the last seal, every event after it, the stored meters — and the witness of the head
   (a rollback, a cut tail, an empty or replaced ledger);
2. the next sealed segments, by their digests (``ledgercheck.segments``), from where the
   previous run stopped, up to ``slice_events`` events (plus the rest of the segment it is
   in); after the last seal it starts again from the first: a *pass*.

So a run costs at most about ``slice_events`` + 2 segments of events, and every sealed event
is checked again at least once every ``runs_per_pass`` runs:
``ceil(sealed events / slice_events)`` (the bound in docs/security.md).  The cursor is kept
in memory only: a restart begins a pass from the first segment again.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.books import ledgercheck
from controller.books import seals as S
from controller.books.audit import Where, table_problems
from controller.books.ledger import Ledger, LedgerError
from controller.books.witness import Witness, check, read_for_check

#: sealed events checked by one run (measured: about 0.5 s of CPU here, 1.6-1.9 s under
#: ``bench startup --pi-like``; SQLite and the HMAC release the GIL for nearly all of it)
SLICE_EVENTS = 250_000


@dataclass(frozen=True)
class Run:
    """What one run checked."""

    seconds: float
    cpu_seconds: float  # this thread's CPU time: the rest of ``seconds`` waited (for the disk, a core)
    first_seal: int  # the first seal checked (0: none)
    last_seal: int
    events: int  # sealed events checked by their digests
    sealed: int  # sealed events in the ledger
    pass_done: bool  # this run reached the last seal


@dataclass(frozen=True)
class Tail:
    """What one tail check took."""

    seconds: float
    cpu_seconds: float
    events: int  # the events after the last seal it walked


class AuditRunner:
    def __init__(self, where: Where, table_id: str, *, slice_events: int = SLICE_EVENTS):
        self.where = where
        self.table_id = table_id
        self.slice_events = max(1, slice_events)
        self.next_seal = 1
        self.passes = 0
        self.last: Run | None = None
        self.last_tail: Tail | None = None

    def runs_per_pass(self) -> int:
        """How many runs a whole pass takes now (the audit's bound), from the last run."""
        if self.last is None or self.last.sealed == 0:
            return 1
        return max(1, math.ceil(self.last.sealed / self.slice_events))

    def run(self, *, tail_only: bool = False) -> list[str]:
        """One run (see the module docstring); the problems found, [] when sound.  ``tail_only``:
        step 1 alone (the events since the last seal, the stored meters, the witness, the table),
        what the tail watch runs every few seconds (:meth:`tail_checked`)."""
        t0 = (time.perf_counter(), time.thread_time())
        witnessed = read_for_check(Witness(self.where.witness_dir, self.table_id, self.where.key))
        try:
            led = Ledger.open_readonly(self.where.ledger_path, self.table_id, key=self.where.key)
        except LedgerError:
            return check_missing(self.where, witnessed)
        try:
            # segments are read once, in order: a small page cache (the default is 2 MB) serves that as well
            led.db.execute("PRAGMA cache_size = -256")
            led.db.execute("BEGIN")
            problems = ledgercheck.quick(led) + check(led, witnessed)
            problems += table_problems(led, self.table_id, Witness(self.where.witness_dir, self.table_id))
            if tail_only:
                tail = led.last_seq - (seal.last if (seal := S.last_seal(led.db)) is not None else 0)
                self.last_tail = Tail(time.perf_counter() - t0[0], time.thread_time() - t0[1], tail)
            else:
                problems += self._slice(led, t0)
        except Exception as e:  # noqa: BLE001 - a ledger SQLite cannot read is the finding
            problems = [f"cannot read the ledger {self.where.ledger_path}: {e}"]
        finally:
            led.close()
        return problems

    def tail_checked(self, log: Any) -> list[str]:
        """One tail check (``run(tail_only=True)``), less what a technician has acknowledged;
        logged only when it finds something (it runs every few seconds)."""
        from controller.books.audit import split_acknowledged

        problems, _ack = split_acknowledged(self.where, self.run(tail_only=True))
        if problems:
            log.error("ledger.tail_check", problems=problems[:5])
        return problems

    def checked(self, log: Any) -> list[str]:
        """One run, less what a technician has acknowledged (those do not re-tilt at every
        audit), logged with what it covered."""
        from controller.books.audit import split_acknowledged

        problems, _ack = split_acknowledged(self.where, self.run())
        room = space(self.where.ledger_path)
        if room is not None and room.days_left < LOW_SPACE_DAYS:
            log.warning("ledger.space_low", free_mb=room.free_bytes // 10**6, days_left=round(room.days_left, 1))
        run = self.last
        log.info(
            "ledger.audit",
            problems=len(problems),
            seconds=round(run.seconds, 3) if run else None,
            seals=f"{run.first_seal}-{run.last_seal}" if run else None,
            runs_per_pass=self.runs_per_pass(),
        )
        return problems

    def _slice(self, led: Ledger, t0: tuple[float, float]) -> list[str]:
        top = S.last_seal(led.db)
        if top is None:
            self.last = Run(time.perf_counter() - t0[0], time.thread_time() - t0[1], 0, 0, 0, 0, True)
            self.passes += 1
            return []
        if self.next_seal > top.n:
            self.next_seal = 1
        chosen: list[S.Seal] = []
        events = 0
        for seal in S.seals_from(led.db, self.next_seal, top.n - self.next_seal + 1):
            chosen.append(seal)
            events += seal.events
            if events >= self.slice_events:
                break
        before = S.seal_number(led.db, self.next_seal - 1) if self.next_seal > 1 else None
        _h, keyed_from = ledgercheck.header(led)
        problems = ledgercheck.segments(led, chosen, before, keyed_from)
        last = chosen[-1].n if chosen else top.n
        done = last >= top.n
        first = chosen[0].n if chosen else 0
        self.last = Run(time.perf_counter() - t0[0], time.thread_time() - t0[1], first, last, events, top.last, done)
        self.next_seal = 1 if done else last + 1
        self.passes += done
        return problems


def check_missing(where: Where, witnessed: object) -> list[str]:
    """No ledger file at all: a problem when the witness says events were recorded."""
    from controller.books.ledger import Head

    if isinstance(witnessed, Head) and witnessed.count > 0:
        n = witnessed.count
        return [f"the ledger {where.ledger_path} is missing, but the witness says {n} events were recorded"]
    if isinstance(witnessed, Exception):
        return [f"no ledger at {where.ledger_path}", str(witnessed)]
    return []


class AuditThread:
    """The ``ledger-audit`` thread (or another ``name``): ``run()`` after ``first_s``, then every ``every_s``."""

    def __init__(self, run: object, first_s: float, every_s: float, *, name: str = "ledger-audit"):
        import threading

        self._run = run
        self._first_s, self._every_s = first_s, every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> AuditThread:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        wait = self._first_s
        while not self._stop.wait(wait):
            wait = self._every_s
            try:
                self._run()  # type: ignore[operator]
            finally:
                release_free_memory()


def release_free_memory() -> bool:
    """After an audit run: the C library's free memory given back to the system (glibc's
    ``malloc_trim(0)``: the whole pages of every arena's free chunks).  A run reads up to a
    slice of the ledger (SQLite's pages, the rows a piece at a time) on a thread whose arena
    the allocator keeps at its peak afterwards, about 0.8 MB held free and more at each run
    while the ledger grows towards a slice; this hands those pages back every run (measured:
    0.3-0.5 MB of the RSS, 0.12 ms; bench/_memory.py).  False where the C library has no such
    call (nothing done)."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None (another C library, no ctypes)."""
    try:
        import ctypes

        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except (ImportError, OSError):
        return None


#: fewer days of play than this left on the state directory's disk, at the ledger's growth so
#: far, is logged by every audit run (``ledger.space_low``; docs/operations.md)
LOW_SPACE_DAYS = 60


@dataclass(frozen=True)
class Space:
    free_bytes: int
    ledger_bytes: int
    bytes_per_day: float  # the ledger's growth: its size over the days it spans (at least one)

    @property
    def days_left(self) -> float:
        return self.free_bytes / self.bytes_per_day if self.bytes_per_day > 0 else float("inf")


def space(ledger_path: Path) -> Space | None:
    """The state directory's free space and the ledger's growth (None when it cannot be read)."""
    import os
    import sqlite3
    from datetime import datetime

    try:
        st = os.statvfs(ledger_path.parent)
        size = ledger_path.stat().st_size
        db = sqlite3.connect(f"file:{ledger_path}?mode=ro", uri=True)
        try:
            first = db.execute("SELECT ts FROM events ORDER BY seq LIMIT 1").fetchone()
            last = db.execute("SELECT ts FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        finally:
            db.close()
        days = 1.0
        if first and last:
            span = datetime.fromisoformat(last[0]) - datetime.fromisoformat(first[0])
            days = max(1.0, span.total_seconds() / 86400)
    except (OSError, sqlite3.Error, ValueError):
        return None
    return Space(st.f_bavail * st.f_frsize, size, size / days)
