"""A progress line on a terminal for a command that runs longer than a few seconds.

A plain status line (rewritten in place with ``\\r``, cleared at the end) rather than a
library such as tqdm or rich: what it shows is one line of counts and seconds, it must add
nothing to a table's release, and it must stay off anything that is not a terminal (a pipe,
a file, the journal), where a command's output is what scripts read.  Off a terminal it
prints nothing unless asked for a plain line every ``line_every_s`` seconds (a long
simulation's log).  Thread-safe; it polls ``count()`` on a thread of its own, so the work
it watches needs no hook but a counter."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TextIO

#: a command quieter than this shows a progress line
AFTER_S = 3.0


@dataclass(frozen=True, slots=True)
class Pace:
    """When a progress line first shows (a command quieter than ``after_s`` shows none) and how
    often a terminal's status line is redrawn."""

    after_s: float | None = None  # None: AFTER_S as it is when the line is made
    every_s: float = 0.5


class Progress:
    """``with Progress("analyze dj-wild bad-beat"):`` shows ``analyze dj-wild bad-beat: 12 s``
    after :data:`AFTER_S`; with ``count`` and ``total``: ``...: 37/60, 12 s``."""

    def __init__(
        self,
        what: str,
        *,
        count: Callable[[], int] | None = None,
        total: int | None = None,
        stream: TextIO | None = None,
        pace: Pace = Pace(),
        line_every_s: float | None = None,
    ) -> None:
        self.what, self.count, self.total = what, count, total
        self.stream = stream if stream is not None else sys.stderr
        self.after_s = AFTER_S if pace.after_s is None else pace.after_s
        self.every_s = pace.every_s
        self.line_every_s = line_every_s
        self.tty = _is_tty(self.stream)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._shown = False  # a status line is on the terminal
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()

    def text(self) -> str:
        """The line as it stands: what, how far (when counted) and the seconds so far."""
        elapsed = time.monotonic() - self._t0
        done = "" if self.count is None else f"{self.count()}" + ("" if self.total is None else f"/{self.total}") + ", "
        return f"{self.what}: {done}{elapsed:.0f} s"

    def __enter__(self) -> Progress:
        if self.tty or self.line_every_s is not None:
            self._thread = threading.Thread(target=self._run, name="progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        if self._shown:
            self._write("\r\x1b[K")

    def _run(self) -> None:
        period = self.every_s if self.tty else float(self.line_every_s or 10.0)
        wait = self.after_s
        while not self._stop.wait(wait):
            self._shown, wait = self.tty, period  # a status line to clear (a plain line stays)
            self._write(f"\r\x1b[K{self.text()}" if self.tty else f"{self.text()}\n")

    def say(self, line: str, out: TextIO) -> None:
        """Print ``line`` on ``out`` (stdout, say) with the progress line cleared first when both
        are on one terminal: a figure never lands after the status text; the next tick redraws it."""
        with self._lock:
            if self._shown:
                self._write_locked("\r\x1b[K")
            print(line, file=out, flush=True)

    def _write(self, s: str) -> None:
        with self._lock:
            self._write_locked(s)

    def _write_locked(self, s: str) -> None:
        try:
            self.stream.write(s)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or full stream: progress is never worth a failure
            self._stop.set()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
