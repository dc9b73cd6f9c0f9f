"""structlog set-up: JSON lines when the log stream is not a terminal (journald,
CI, files), readable coloured lines when it is.

Under systemd the service's stdout is the journal.  Each line then starts with its
syslog priority (``<3>`` error and critical, ``<4>`` warning, ``<5>`` notice,
``<6>`` info, ``<7>`` debug), which journald strips and stores as the entry's
``PRIORITY`` (``SyslogLevelPrefix=`` is on by default; systemd/tablectl.service
leaves it on), so ``journalctl -u tablectl -p warning`` shows warnings and worse.
The prefix is added only when the stream *is* the journal: systemd sets
``JOURNAL_STREAM=<st_dev>:<st_ino>`` for a service whose output goes there, and
:func:`is_journal_stream` compares it with the stream's own ``fstat`` (as
sd_journal_stream_fd(3) and systemd.exec(5) describe) — on a terminal, in a pipe
or a file, and in tests, the lines stay bare.

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
import os
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


#: syslog priorities (RFC 5424) of the log methods, for journald's ``<N>`` line prefix
SYSLOG_PRIORITY = {
    "critical": 3,  # a critical line is an error of the table too: both file as "err"
    "fatal": 3,
    "exception": 3,
    "error": 3,
    "warning": 4,
    "warn": 4,
    "notice": 5,
    "info": 6,
    "msg": 6,
    "debug": 7,
}


def is_journal_stream(stream: Any) -> bool:
    """True when ``stream`` is connected to the systemd journal: ``JOURNAL_STREAM``
    (set by systemd, ``<device>:<inode>``) names the very file ``stream`` writes to.
    A child that inherited the variable but writes elsewhere gets False."""
    value = os.environ.get("JOURNAL_STREAM", "")
    dev, sep, ino = value.partition(":")
    if not sep or not dev.isdigit() or not ino.isdigit():
        return False
    try:
        st = os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError and a ValueError
        return False
    return (st.st_dev, st.st_ino) == (int(dev), int(ino))


def add_syslog_priority(_: Any, method_name: str, line: str) -> str:
    """After the renderer: prefix every line of a rendered entry with its syslog
    priority, so journald files it (and a traceback's continuation lines) at that level."""
    prefix = f"<{SYSLOG_PRIORITY.get(method_name, 6)}>"
    return "\n".join(prefix + part for part in line.split("\n"))


def _is_tty(stream: TextIO) -> bool:
    return hasattr(stream, "isatty") and bool(stream.isatty())


def _renderer(stream: TextIO, json: bool) -> Any:
    """JSON lines, or structlog's console lines (in colour on a terminal)."""
    if json:
        return structlog.processors.JSONRenderer(sort_keys=False)
    return structlog.dev.ConsoleRenderer(colors=_is_tty(stream))


def configure(
    stream: TextIO | None = None, level: str = "info", json: bool | None = None, journal: bool | None = None
) -> None:
    """Configure structlog once per process.  ``json``: JSON lines (default: when
    ``stream`` is not a terminal); ``journal``: prefix each line with its syslog
    priority (default: when ``stream`` is the systemd journal, :func:`is_journal_stream`)."""
    stream = stream or sys.stdout
    if json is None:
        json = not _is_tty(stream)
    if journal is None:
        journal = is_journal_stream(stream)
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
        _renderer(stream, json),
    ]
    if journal:
        processors.append(add_syslog_priority)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
