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
    from controller.console.server import ConsoleServer


class ConsoleOptions(TypedDict, total=False):
    """A console server's options (controller/console/server.py ``ConsoleServer``)."""

    pty: bool
    socket_path: str | Path | None
    pins_file: str | Path | None
    idle_s: float
    lockout_s: float
    max_failures: int
    fail_delay_s: float
    call_timeout: float
    diag_light_s: float
    max_sessions: int
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

    def __init__(
        self,
        table_id: str,
        log: Log,
        *,
        console_socket: str | Path | None = None,
        console_pty: bool = False,
        console_options: ConsoleOptions | None = None,
    ):
        self._table_id = table_id
        self._log = log
        self._console_socket = console_socket
        self._console_pty = console_pty
        self._console_options: ConsoleOptions = console_options or {}
        self.consoles: list[ConsoleServer] = []
        self.auditor: AuditRunner | None = None
        self._audit: AuditThread | None = None

    # ------------------------------------------------------------------ consoles
    def start_consoles(self, service: ConsoleService) -> None:
        """The consoles the service was configured with (a socket, a pty), if any."""
        if self._console_socket is not None or self._console_pty:
            options: ConsoleOptions = {
                **self._console_options,
                "pty": self._console_pty,
                "socket_path": self._console_socket,
            }
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

    def audit(self, where: Callable[[], Where]) -> list[str]:
        """One audit run (controller/books/auditrun.py) on a read-only connection of its own (any
        thread): the problems not yet acknowledged by a technician."""
        if self.auditor is None:
            from controller.books.auditrun import AuditRunner

            self.auditor = AuditRunner(where(), self._table_id, slice_events=self.AUDIT_SLICE_EVENTS)
        problems: list[str] = self.auditor.checked(self._log)
        return problems

    # ------------------------------------------------------------------ stopped
    def stop_audit(self) -> None:
        if self._audit is not None:
            self._audit.stop()

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
