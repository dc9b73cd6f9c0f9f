"""The table's published status: a snapshot other threads may read and wait on.

The reactor thread owns the table; the console, the HIL people, the simulator's
reporter and the tests only ever look at the last snapshot it published.
:meth:`StatusBoard.publish` takes a new snapshot (built by the table's
``snapshot`` function, on the reactor thread) and wakes every waiter;
:attr:`StatusBoard.status` and :meth:`StatusBoard.wait_for` are safe from any
thread.  A snapshot is never mutated after it is published.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

from controller.core.clock import Clock

Snapshot = Mapping[str, Any]


class StatusBoard:
    def __init__(self, snapshot: Callable[[], Snapshot], clock: Clock | None = None):
        self._snapshot = snapshot
        self._clock = clock
        self._published: Snapshot = {}
        self._cv = threading.Condition()

    def publish(self) -> None:
        """Take a new snapshot (reactor thread) and wake every waiter."""
        snap = self._snapshot()
        with self._cv:
            self._published = snap
            self._cv.notify_all()

    @property
    def status(self) -> Snapshot:
        """The last snapshot published, safe to read from any thread."""
        return self._published

    def wait_for(self, pred: Callable[[Snapshot], bool], timeout: float) -> Snapshot:
        """Block until a published snapshot satisfies ``pred`` (any thread but the reactor's)."""
        # a thread waiting on the table is idle for the simulator's clock (hil/simclock.py)
        idle = self._clock.idle(ready=lambda: pred(self._published)) if self._clock else contextlib.nullcontext()
        with idle, self._cv:
            if not self._cv.wait_for(lambda: pred(self._published), timeout):
                raise TimeoutError(f"table did not reach the expected state; status: {self._published}")
            return self._published
