"""Time for the table: one clock that the controller's timers and the simulators share.

On real hardware it is the monotonic clock.  In the simulator it is a
:class:`ScaledClock` that runs ``speed`` times faster than real time, so the
5-second shake (§ 621a.2(f)(2)) and device delays don't make 20 rounds take
minutes; ``tablectl sim --realtime`` uses speed 1.

Two kinds of time are kept apart on purpose:

* *game time* (this clock): betting periods, shake duration, dealing delays,
  validation timeouts — everything a person at the table experiences;
* *wire time* (always real monotonic time): serial ACK deadlines, heartbeats and
  the device-lost rule (drivers/link.py).  A serial line does not get faster
  because the simulation does, and a loaded CI machine must not turn into a
  false "device lost".

A thread that waits for something another party does (an event on the reactor's
queue, a status change) or for a moment of game time declares it with
:meth:`Clock.idle`.  On a real table that changes nothing; the simulator's clock
(:class:`hil.simclock.SimClock`) uses it to skip idle time: when every party of
the simulation waits, it jumps straight to the earliest moment one of them waits
for, instead of sleeping until then.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic game clock."""

    def sleep(self, seconds: float) -> None:
        """Block the calling thread for ``seconds`` of game time."""

    def to_real(self, seconds: float) -> float:
        """Real seconds corresponding to ``seconds`` of game time (for blocking waits)."""

    def wait(self, event: threading.Event, seconds: float | None) -> bool:
        """Wait on ``event`` for at most ``seconds`` of game time."""

    def idle(
        self,
        until: float | None = None,
        ready: Callable[[], bool] | None = None,
        wake: Callable[[], None] | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        """The calling thread is idle inside this block: it waits for game time ``until``
        (None: no time) or for ``ready()`` to become true (something another thread does).
        ``ready`` must be cheap and take no lock; ``wake`` (non-blocking, no lock) makes the
        thread look at the clock again.  Real clocks: no effect."""


class MonotonicClock:
    """Real time: the clock used on a Pi."""

    speed = 1.0

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def to_real(self, seconds: float) -> float:
        return max(0.0, seconds)

    def wait(self, event: threading.Event, seconds: float | None) -> bool:
        return event.wait(None if seconds is None else max(0.0, seconds))

    def idle(
        self,
        until: float | None = None,
        ready: Callable[[], bool] | None = None,
        wake: Callable[[], None] | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


class ScaledClock(MonotonicClock):
    """Game time running ``speed`` times faster than real time (the simulator's clock)."""

    def __init__(self, speed: float = 50.0):
        if not speed > 0:
            raise ValueError(f"clock speed must be > 0, got {speed!r}")
        self.speed = float(speed)
        self._real0 = time.monotonic()

    def now(self) -> float:
        return (time.monotonic() - self._real0) * self.speed

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds / self.speed)

    def to_real(self, seconds: float) -> float:
        return max(0.0, seconds / self.speed)

    def wait(self, event: threading.Event, seconds: float | None) -> bool:
        return event.wait(None if seconds is None else self.to_real(seconds))
