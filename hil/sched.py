"""A tiny scheduler thread on the shared game clock: simulated devices use it
for their delays (the 5-second shake, the time to dispense a stack), so the
simulation runs as fast as the clock says.  It waits through :meth:`Clock.idle`,
so the simulator's clock (hil/simclock.py) knows when it is due next and may skip
straight to it."""

from __future__ import annotations

import heapq
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any

from controller.core.clock import Clock


class Scheduler:
    def __init__(self, clock: Clock, name: str):
        from hil.simclock import SimClock

        self.clock = clock
        self._heap: list[tuple[float, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._kick: queue.SimpleQueue[None] = queue.SimpleQueue()  # wakes the thread (lock-free)
        self._stop = False
        self.errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, name=f"sim-{name}", daemon=True)
        if isinstance(clock, SimClock):
            clock.register(self._thread)  # a party of the simulation from the start
        self._thread.start()

    def later(self, delay: float, fn: Callable[..., Any], *args: Any) -> None:
        with self._lock:
            heapq.heappush(self._heap, (self.clock.now() + max(0.0, delay), next(self._seq), fn, args))
        self._kick.put(None)

    def stop(self) -> None:
        self._stop = True
        self._kick.put(None)
        self._thread.join(timeout=2)

    def _wake(self) -> None:
        self._kick.put(None)

    def _run(self) -> None:
        while not self._stop:
            with self._lock:
                due = self._heap[0][0] if self._heap else None
                item = heapq.heappop(self._heap) if due is not None and due <= self.clock.now() else None
            if item is not None:
                _, _, fn, args = item
                try:
                    fn(*args)
                except Exception as e:  # noqa: BLE001 - kept for the test to see
                    self.errors.append(e)
                continue
            self._wait(due)

    def _wait(self, due: float | None) -> None:
        heap = self._heap

        def ready() -> bool:  # stopping, or something due earlier came in (read without the lock: one item)
            return self._stop or (bool(heap) and (due is None or heap[0][0] < due))

        timeout = None if due is None else self.clock.to_real(due - self.clock.now())
        with self.clock.idle(due, ready, self._wake):
            try:
                self._kick.get(timeout=timeout)
            except queue.Empty:
                pass
        while True:  # the kicks that came meanwhile are answered by this turn
            try:
                self._kick.get_nowait()
            except queue.Empty:
                break
