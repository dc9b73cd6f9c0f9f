"""A tiny scheduler thread on the shared game clock: simulated devices use it
for their delays (the 5-second shake, the time to dispense a stack), so the
simulation runs as fast as the clock says."""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable
from typing import Any

from controller.clock import Clock


class Scheduler:
    def __init__(self, clock: Clock, name: str):
        self.clock = clock
        self._heap: list[tuple[float, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = itertools.count()
        self._cv = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=f"sim-{name}", daemon=True)
        self._thread.start()
        self.errors: list[BaseException] = []

    def later(self, delay: float, fn: Callable[..., Any], *args: Any) -> None:
        with self._cv:
            heapq.heappush(self._heap, (self.clock.now() + max(0.0, delay), next(self._seq), fn, args))
            self._cv.notify()

    def stop(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()
        self._thread.join(timeout=2)

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._stop:
                    if self._heap:
                        wait = self._heap[0][0] - self.clock.now()
                        if wait <= 0:
                            break
                        self._cv.wait(self.clock.to_real(wait))
                    else:
                        self._cv.wait()
                if self._stop:
                    return
                _, _, fn, args = heapq.heappop(self._heap)
            try:
                fn(*args)
            except Exception as e:  # noqa: BLE001 - kept for the test to see
                self.errors.append(e)
