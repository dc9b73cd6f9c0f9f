"""The service's threads beside the reactor (controller/daemon/service.py): the technician consoles
(controller/console/) and the periodic ledger audit (controller/books/auditrun.py) — started last,
once the table has been handed to the reactor, and stopped first (docs/architecture.md "The
service in parts").  Each reaches the table only through the reactor: a console through
``Service.call``, an audit's findings as a latched tilt posted by ``on_problems``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from controller.books.audit import Where
from controller.play.context import Log

if TYPE_CHECKING:
    from controller.books.auditrun import AuditRunner, AuditThread
    from controller.console.port import ConsoleService
    from controller.console.server import ConsoleLimits, ConsoleServer


class ConsoleOptions(TypedDict, total=False):
    """A console server's options (controller/console/server.py ``ConsoleServer``)."""

    pty: bool
    socket_path: str | Path | None
    pins_file: str | Path | None
    limits: ConsoleLimits
    clock: Callable[[], float]


class Background:
    """The consoles and the ledger-audit thread."""

    #: the audit thread's first run (a ledger checked in full at start-up), its runs after, and how
    #: many sealed events a run checks by their digests (controller/books/auditrun.py): every sealed event
    #: is checked again at least once every ceil(sealed events / AUDIT_SLICE_EVENTS) runs
    AUDIT_FIRST_S = 60.0
    AUDIT_SOON_S = 2.0  # the first run on a ledger whose older segments start-up did not check
    AUDIT_EVERY_S = 120.0
    AUDIT_SLICE_EVENTS = 250_000
    #: the tail watch: every TAIL_EVERY_S the events since the last seal (fewer than a segment,
    #: 2,000 events, whatever the ledger's age) walked again with the stored meters, the witness and
    #: the table, so that an edit of the day's events is found within seconds of play, not at
    #: the next audit run (docs/security.md "How soon an edit is found")
    TAIL_EVERY_S = 5.0

    def __init__(
        self,
        table_id: str,
        log: Log,
        console: ConsoleOptions | None = None,
    ):
        """``console``: the console the service starts (a ``socket_path``, a ``pty``), if any."""
        self._table_id = table_id
        self._log = log
        self._console_options: ConsoleOptions = console or {}
        self.consoles: list[ConsoleServer] = []
        self.auditor: AuditRunner | None = None
        self._audit: AuditThread | None = None
        self._tail: AuditThread | None = None

    # ------------------------------------------------------------------ consoles
    def start_consoles(self, service: ConsoleService) -> None:
        """The consoles the service was configured with (a socket, a pty), if any."""
        options = self._console_options
        if options.get("socket_path") is not None or options.get("pty", False):
            self.start_console(service, **options)

    def start_console(self, service: ConsoleService, **options: Unpack[ConsoleOptions]) -> ConsoleServer:
        """Start a technician console server on ``service``; stopped by :meth:`stop`."""
        from controller.console.server import ConsoleServer

        server = ConsoleServer(service, **options).start()
        self.consoles.append(server)
        return server

    # ------------------------------------------------------------------ the ledger audit
    def start_audit(self, run: Callable[[], list[str]], *, soon: bool) -> None:
        """The ``ledger-audit`` thread: ``run`` after AUDIT_FIRST_S (AUDIT_SOON_S when
        start-up did not check every sealed segment), then every AUDIT_EVERY_S."""
        from controller.books.auditrun import AuditThread

        first = self.AUDIT_SOON_S if soon else self.AUDIT_FIRST_S
        self._audit = AuditThread(run, first, self.AUDIT_EVERY_S).start()

    def start_tail_watch(self, run: Callable[[], list[str]]) -> None:
        """The ``ledger-tail`` thread: ``run`` every TAIL_EVERY_S (the first after as long)."""
        from controller.books.auditrun import AuditThread

        self._tail = AuditThread(run, self.TAIL_EVERY_S, self.TAIL_EVERY_S, name="ledger-tail").start()

    def tail(self, where: Callable[[], Where]) -> list[str]:
        """One tail check (controller/books/auditrun.py ``AuditRunner.tail_checked``), on the
        audit's runner (any thread: each run opens a read-only connection of its own)."""
        problems: list[str] = self._runner(where).tail_checked(self._log)
        return problems

    def audit(self, where: Callable[[], Where]) -> list[str]:
        """One audit run (controller/books/auditrun.py) on a read-only connection of its own (any
        thread): the problems not yet acknowledged by a technician."""
        runner = self._runner(where)
        problems: list[str] = runner.checked(self._log)
        _record_audit(runner, problems)
        return problems

    def _runner(self, where: Callable[[], Where]) -> AuditRunner:
        if self.auditor is None:
            from controller.books.auditrun import AuditRunner

            self.auditor = AuditRunner(where(), self._table_id, slice_events=self.AUDIT_SLICE_EVENTS)
        return self.auditor

    # ------------------------------------------------------------------ stopped
    def stop_audit(self) -> None:
        for t in (self._audit, self._tail):
            if t is not None:
                t.stop()

    def stop_consoles(self) -> None:
        for c in self.consoles:
            c.stop()

    def release(self) -> None:
        """A failed start-up: the consoles (errors ignored) and the audit thread stopped."""
        for c in self.consoles:
            with contextlib.suppress(Exception):
                c.stop()
        self.consoles = []
        self.stop_audit()


def _record_audit(auditor: AuditRunner, problems: list[str]) -> None:
    """The run's result where ``tablectl status`` reads it (controller/reports/auditstatus.py);
    a state directory that cannot take it costs the report, never the audit."""
    from controller.reports import auditstatus

    run = auditor.last
    covered = "the events since the last seal" + (
        f", seals {run.first_seal}-{run.last_seal} ({run.sealed:,} sealed events)" if run and run.last_seal else ""
    )  # what the run covered: never empty
    with contextlib.suppress(OSError):
        auditstatus.record(auditor.where.ledger_path.parent, problems, covered)
