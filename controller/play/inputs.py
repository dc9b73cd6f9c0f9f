"""Debouncing of GPIO inputs, in our own code, on the reactor thread.

gpiozero's mock pins do not bounce, and its own ``bounce_time`` would swallow
exactly the chatter that tests must be able to produce, so the drivers post
every raw edge (stamped with the game clock) and this module decides.

Algorithm (per input), "leading edge with resynchronisation":

* an edge that arrives when the input is *settled* is accepted at once — a
  lock-out press acts on its first edge, with no added latency;
* the input is then *unsettled* for ``window`` seconds: edges inside the window
  only update the raw level;
* when the window ends, the last raw level is compared with the accepted one;
  if they differ (the contact settled the other way) that level is accepted,
  and a new window starts.

So a burst of chatter produces at most one accepted change per window and the
accepted level always ends equal to the level the contact settled at.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from controller.core.reactor import Reactor


@dataclass
class _State:
    accepted: bool
    raw: bool
    settled_at: float = float("-inf")  # game time at which the current window ends
    pending: bool = False  # a resync timer is scheduled
    edges: int = 0
    ignored: int = 0


class Debouncer:
    def __init__(self, reactor: Reactor, window: float, on_change: Callable[[str, bool, float], None]):
        if window <= 0:
            raise ValueError("debounce window must be positive")
        self.reactor = reactor
        self.window = window
        self.on_change = on_change
        self._s: dict[str, _State] = {}

    def add(self, name: str, initial: bool) -> None:
        self._s[name] = _State(accepted=initial, raw=initial)

    def level(self, name: str) -> bool:
        return self._s[name].accepted

    def stats(self, name: str) -> tuple[int, int]:
        s = self._s[name]
        return s.edges, s.ignored

    def edge(self, name: str, active: bool, t: float) -> None:
        """A raw edge posted by a GPIO callback at game time ``t``."""
        s = self._s[name]
        s.edges += 1
        s.raw = active
        if t >= s.settled_at and not s.pending:
            if active != s.accepted:
                s.accepted = active
                s.settled_at = t + self.window
                self._arm(name, s)
                self.on_change(name, active, t)
            return
        s.ignored += 1
        if not s.pending:
            self._arm(name, s)

    def _arm(self, name: str, s: _State) -> None:
        s.pending = True
        delay = max(0.0, s.settled_at - self.reactor.clock.now())
        self.reactor.call_later(delay, self._resync, name)

    def _resync(self, name: str) -> None:
        s = self._s[name]
        s.pending = False
        if s.raw != s.accepted:
            now = self.reactor.clock.now()
            s.accepted = s.raw
            s.settled_at = now + self.window
            self._arm(name, s)
            self.on_change(name, s.raw, now)
