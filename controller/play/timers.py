"""The table's device response deadline: one timer at a time, on the reactor.

The table waits for one device answer at a time (the dice, a stack, the count of
the cards left).  :class:`DeviceTimer` holds that one deadline: setting it
replaces the one before, a fault cancels it, and when it expires its owner's
``on_expired(device, what)`` decides what the silence means (a void and a tilt,
controller/play/dealing.py).  Runs on the reactor thread only.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from controller.core.reactor import Reactor, TimerHandle

#: a response deadline is never shorter than this in real time
MIN_REAL_S = 2.0


class DeviceTimer:
    def __init__(self, reactor: Reactor, on_expired: Callable[[str, str], None]):
        self._reactor = reactor
        self._on_expired = on_expired
        self._handle: TimerHandle | None = None

    @property
    def pending(self) -> bool:
        return self._handle is not None

    def set(self, seconds: float, device: str, what: str) -> None:
        """A device response deadline: ``seconds`` of game time, and never less than
        ``MIN_REAL_S`` of real time — a device answers in real time, and a simulation
        running faster than real time must not turn a busy machine into a fault."""
        self.cancel()
        real_deadline = time.monotonic() + max(self._reactor.clock.to_real(seconds), MIN_REAL_S)
        self._handle = self._reactor.call_later(seconds, self._expire, device, what, real_deadline)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _expire(self, device: str, what: str, real_deadline: float) -> None:
        left = real_deadline - time.monotonic()
        if left > 0:
            speed = getattr(self._reactor.clock, "speed", 1.0)
            self._handle = self._reactor.call_later(left * speed, self._expire, device, what, real_deadline)
            return
        self._handle = None
        self._on_expired(device, what)
