"""The rig's mock pins: gpiozero's ``MockPin`` with a bounded history.

``MockPin`` keeps every state a pin has been in (``states``, for tests that assert on a
pin's history) in a list that grows by one entry at every change for as long as the pin
lives.  On the rig a seat light blinks for every wager awaiting its count and every hit, so
over a long session (a bench's 10,000 rounds) that list grew without end — memory that
belonged to the simulator, not to the service — and now and then Python grew it by copying
it whole, on whichever thread changed the pin (the reactor's, setting a light).  Here the
history keeps the last :data:`HISTORY` changes (``collections.deque``: appending never
copies); the rig's tests read the pin's current state, never older history.
"""

from __future__ import annotations

from collections import deque
from time import monotonic
from typing import Any

from gpiozero.pins.mock import MockFactory, MockPin, PinState

HISTORY = 256


class BoundedMockPin(MockPin):  # type: ignore[misc]  # (gpiozero has no type hints)
    def clear_states(self) -> None:
        self._last_change = monotonic()
        self.states: Any = deque([PinState(0.0, self._state)], maxlen=HISTORY)


def mock_factory() -> MockFactory:
    """A ``MockFactory`` making :class:`BoundedMockPin` pins."""
    return MockFactory(pin_class=BoundedMockPin)
