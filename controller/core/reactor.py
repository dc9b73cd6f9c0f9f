"""The reactor: the one thread that owns the table's state.

Modelled on Klipper's reactor.  Device threads (gpiozero callbacks, serial
readers, the ledger writer) never touch state: they call :meth:`Reactor.post`,
which only puts an :class:`Event` on a queue.  The reactor thread takes events
off the queue in order, runs due timers, and hands each event to the handler
(the table's state machine).  Because exactly one thread consumes the queue, a
plain ``transitions.Machine`` is safe here (its ``queued=True`` mode handles
transitions triggered from inside callbacks).

Log context is passed explicitly: every event carries the ``ctx`` it was
posted with (table id, round number, device), captured on the posting thread.
"""

from __future__ import annotations

import heapq
import itertools
import queue
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.core.clock import Clock


@dataclass(frozen=True)
class Event:
    kind: str  # e.g. "input", "shoe", "shaker", "link", "ledger.durable"
    source: str = ""  # device or component name
    data: Mapping[str, Any] = field(default_factory=dict)
    t: float = 0.0  # game-clock time at which the posting thread saw it
    ctx: Mapping[str, Any] = field(default_factory=dict)


def _wake() -> None:
    """Put on the queue by :meth:`Reactor.stop` to wake the loop; never called."""


class TimerHandle:
    __slots__ = ("when", "seq", "fn", "args", "cancelled")

    def __init__(self, when: float, seq: int, fn: Callable[..., Any], args: tuple[Any, ...]):
        self.when, self.seq, self.fn, self.args = when, seq, fn, args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def __lt__(self, other: TimerHandle) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)


class Reactor:
    def __init__(
        self,
        clock: Clock,
        handler: Callable[[Event], None] | None = None,
        on_error: Callable[[BaseException, str], None] | None = None,
    ):
        self.clock = clock
        self.handler = handler
        self.on_error = on_error
        self._q: queue.SimpleQueue[Event | tuple[Callable[..., Any], tuple[Any, ...]]] = queue.SimpleQueue()
        self._timers: list[TimerHandle] = []
        self._seq = itertools.count()
        self._stop = threading.Event()
        self._thread_id: int | None = None
        self.idle_hooks: list[Callable[[], None]] = []  # run every loop turn (watchdog)
        self.max_wait = 0.25  # real seconds between idle-hook runs at most

    # ---- any thread -------------------------------------------------------
    def post(
        self,
        kind: str,
        source: str = "",
        data: Mapping[str, Any] | None = None,
        ctx: Mapping[str, Any] | None = None,
        t: float | None = None,
    ) -> None:
        """Queue an event for the reactor thread.  Safe from any thread; never blocks."""
        self._q.put(Event(kind, source, dict(data or {}), self.clock.now() if t is None else t, dict(ctx or {})))

    def call_soon_threadsafe(self, fn: Callable[..., Any], *args: Any) -> None:
        self._q.put((fn, args))

    def stop(self) -> None:
        self._stop.set()
        self._wake()

    def _wake(self) -> None:
        self._q.put((_wake, ()))

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def in_reactor_thread(self) -> bool:
        return threading.get_ident() == self._thread_id

    # ---- reactor thread only ---------------------------------------------
    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> TimerHandle:
        h = TimerHandle(self.clock.now() + max(0.0, delay), next(self._seq), fn, args)
        heapq.heappush(self._timers, h)
        return h

    def _run_timers(self) -> None:
        now = self.clock.now()
        while self._timers and self._timers[0].when <= now:
            h = heapq.heappop(self._timers)
            if not h.cancelled:
                self._guard(h.fn, h.args, f"timer {getattr(h.fn, '__name__', h.fn)!s}")

    def _guard(self, fn: Callable[..., Any], args: tuple[Any, ...], what: str) -> None:
        try:
            fn(*args)
        except Exception as exc:  # latched: the table goes to tilt; never swallowed
            if self.on_error is None:
                raise
            self.on_error(exc, f"{what}: {exc!r}\n{traceback.format_exc()}")

    def run_once(self, block: bool = True) -> None:
        self._thread_id = threading.get_ident()
        for hook in self.idle_hooks:
            hook()
        self._run_timers()
        try:
            item = self._next_item(block)
        except queue.Empty:
            return
        while True:
            self._dispatch(item)
            self._run_timers()
            try:
                item = self._q.get_nowait()
            except queue.Empty:
                break

    def _next_due(self) -> float | None:
        """When the next live timer is due (cancelled ones at the head are dropped), or None."""
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0].when if self._timers else None

    def _next_item(self, block: bool) -> Event | tuple[Callable[..., Any], tuple[Any, ...]]:
        """The next event or call; with ``block``, idle until the next timer or an event (a
        simulator's clock may skip to it).  Raises queue.Empty when there is none."""
        due = self._next_due()
        if not block:
            return self._q.get_nowait()
        timeout = self.max_wait
        if due is not None:
            timeout = min(timeout, self.clock.to_real(due - self.clock.now()))
        with self.clock.idle(due, lambda: not self._q.empty(), self._wake):
            return self._q.get(timeout=max(0.0, timeout))

    def _dispatch(self, item: Event | tuple[Callable[..., Any], tuple[Any, ...]]) -> None:
        """An event to the handler, or a call made (the reactor's own wake-up call does nothing)."""
        if isinstance(item, Event):
            if self.handler is not None:
                self._guard(self.handler, (item,), f"event {item.kind}/{item.source}")
            return
        fn, args = item
        if fn is not _wake:
            self._guard(fn, args, f"call {getattr(fn, '__name__', fn)!s}")

    def run(self, until: Callable[[], bool] | None = None) -> None:
        """Run until :meth:`stop` (or ``until()`` becomes true)."""
        self._thread_id = threading.get_ident()
        while not self._stop.is_set():
            if until is not None and until():
                break
            self.run_once()
