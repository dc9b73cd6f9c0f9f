"""What systemd is told of the service (controller/daemon/service.py; controller/daemon/sdnotify.py): the
start-up's stage, READY=1 once (after the start-up records are durable and the table has
opened or latched its tilt; at once when the start-up halts or the ledger fails), the status
line when it changes, the watchdog pinged from the reactor's loop, STOPPING=1
(docs/architecture.md "The service in parts")."""

from __future__ import annotations

import threading
from collections.abc import Callable

from controller.daemon.sdnotify import Notifier

#: the stages of a start-up, in order; a halt names the one it stopped in
STAGES = ("start-up", "configuration", "ledger", "self-check", "gpio", "table", "console", "running")
#: a halt in these stages leaves no ledger sound enough to record it in
UNRECORDED_STAGES = ("configuration", "ledger", "self-check")


class Readiness:
    """The service's readiness and its status line; ``status`` gives the running table's."""

    def __init__(self, status: Callable[[], str], notifier: Notifier | None = None):
        self.notifier = notifier or Notifier()
        self.ready = threading.Event()
        self.stage = "start-up"
        self.halted: str | None = None  # why the start-up halted (``Service.start(halt_on_error=True)``)
        self._status = status
        self._last_status = ""

    def use(self, notifier: Notifier) -> None:
        """Tell systemd through ``notifier`` (a test's socket) from now on."""
        self.notifier = notifier

    def enter(self, stage: str) -> None:
        if stage not in STAGES:
            raise ValueError(f"{stage!r} is not a stage of the start-up ({', '.join(STAGES)})")
        self.stage = stage

    def halt(self, reason: str) -> None:
        """The start-up halted: READY=1 at once with the halt as the status."""
        self.halted = reason
        self.send_ready()

    def status_line(self) -> str:
        if self.halted is not None:
            return f"closed TILT {self.halted}; fix it and restart the service"[:200]
        return self._status()[:200]

    def send_ready(self) -> None:
        """READY=1, once."""
        if self.ready.is_set():
            return
        self.ready.set()
        self.notifier.ready(self.status_line())

    def idle(self) -> None:
        """Every reactor loop turn: the watchdog ping comes from the loop that owns the
        state machine, so a hung loop stops pinging and systemd restarts it."""
        self.notifier.watchdog()
        if self.ready.is_set() and self.notifier.enabled:
            line = self.status_line()
            if line != self._last_status:
                self._last_status = line
                self.notifier.status(line)
