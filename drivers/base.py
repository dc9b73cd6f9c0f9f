"""What a driver needs from outside, as small Protocols: the drivers import nothing
from ``controller/`` (docs/architecture.md, "Layers"), so the controller's reactor,
game clock and log context are described here by the few methods the drivers call.

* :class:`Clock` — the game clock that stamps a GPIO edge (``controller.core.clock``'s
  clocks satisfy it); wire timing in drivers/link.py is real ``time.monotonic``.
* :class:`Post` — hands an event to the one owner of state
  (``controller.core.reactor.Reactor.post``); a device thread only ever posts.
* :class:`LogContext` — the table id and round number, passed explicitly across
  threads (``controller.core.log.LogContext``): a driver takes an immutable
  :meth:`~LogContext.snapshot` on its own thread and logs through
  :meth:`~LogContext.logger`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic game clock."""
        ...


class Post(Protocol):
    def __call__(
        self,
        kind: str,
        source: str = "",
        data: Mapping[str, Any] | None = None,
        ctx: Mapping[str, Any] | None = None,
        t: float | None = None,
    ) -> None:
        """Queue an event for the state's owner; safe from any thread, never blocks.
        ``t`` is the game-clock time of the event (default: when it is queued)."""
        ...


class Logger(Protocol):
    """The part of a structlog bound logger the drivers use."""

    def debug(self, event: str, **kw: Any) -> Any: ...
    def info(self, event: str, **kw: Any) -> Any: ...
    def warning(self, event: str, **kw: Any) -> Any: ...
    def error(self, event: str, **kw: Any) -> Any: ...


class LogContext(Protocol):
    def snapshot(self) -> Mapping[str, Any]:
        """The table id and round number now, immutable: safe to take on any thread."""
        ...

    def logger(self, component: str, **kw: Any) -> Logger:
        """A logger for ``component`` that stamps table and round on every line."""
        ...
