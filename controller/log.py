"""structlog set-up: JSON lines when the log stream is not a terminal (journald,
CI, files), readable coloured lines when it is.

Every log event carries the table id and the round number.  They live in a
:class:`LogContext` that the service creates once and passes *explicitly* to
every component, including the ones whose methods run on device threads
(gpiozero callbacks, serial readers, the ledger writer).  Only the reactor thread
changes the round number; other threads read an immutable snapshot.  Events
posted to the reactor carry the snapshot taken on the posting thread, so a log
line about a pin edge names the round in which the edge happened, not the round
in which it was processed.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any, TextIO

import structlog


class LogContext:
    """Table id and round number, shared explicitly across threads."""

    def __init__(self, table: str, round_no: int = 0):
        self._snap: Mapping[str, Any] = {"table": table, "round": round_no}

    def snapshot(self) -> Mapping[str, Any]:
        return self._snap  # replaced wholesale, never mutated: safe to read from any thread

    def set_round(self, round_no: int) -> None:
        self._snap = {**self._snap, "round": round_no}

    @property
    def table(self) -> str:
        return str(self._snap["table"])

    @property
    def round(self) -> int:
        return int(self._snap["round"])

    def logger(self, component: str, **kw: Any) -> Any:
        """A logger for ``component`` that stamps table and round on every event."""
        return structlog.get_logger(component).bind(component=component, _logctx=self, **kw)


def _stamp_context(_: Any, __: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    ctx = event_dict.pop("_logctx", None)
    if isinstance(ctx, LogContext):
        snap = ctx.snapshot()
        event_dict.setdefault("table", snap["table"])
        event_dict.setdefault("round", snap["round"])
    return event_dict


def configure(stream: TextIO | None = None, level: str = "info", json: bool | None = None) -> None:
    """Configure structlog once per process."""
    stream = stream or sys.stdout
    if json is None:
        json = not (hasattr(stream, "isatty") and stream.isatty())
    lvl = logging.getLevelName(level.upper())
    if not isinstance(lvl, int):
        raise ValueError(f"unknown log level {level!r}")
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        _stamp_context,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
        structlog.processors.format_exc_info,
    ]
    if json:
        processors.append(structlog.processors.JSONRenderer(sort_keys=False))
    else:
        processors.append(structlog.dev.ConsoleRenderer(colors=stream.isatty() if hasattr(stream, "isatty") else False))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
