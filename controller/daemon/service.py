"""Service wiring: configuration → self-checks → ledger → devices → reactor → table.

The service composes its parts, each built, started and stopped by its own small module and
given only what it uses (docs/architecture.md "The service in parts"):

* the ledger stack (controller/daemon/ledgerstack.py): key, state lock, witness, ledger, lock-out
  journal, writer;
* the self-checks (controller/boot/startchecks.py) and what they found;
* the device set (controller/daemon/deviceset.py): pins, serial devices, the RNG, a linked table's
  link port;
* the consoles and the ledger-audit thread (controller/daemon/background.py);
* readiness (controller/daemon/readiness.py): the start-up's stage, READY=1, the status line, the
  watchdog.

Order matters and is the same on a Pi and in the simulator:

1. the configuration has already been parsed and range-checked (controller/settings/hardware.py,
   controller/settings/config.py) — nothing has touched a pin or a port;
2. self-checks (controller/boot/selfcheck.py): configuration, the ledger's hash chain
   and meters, the software digest, the RNG self-test — still no device or link
   traffic;
3. pins are claimed and serial links opened;
4. the reactor thread starts and the table takes over.  Failed self-checks put
   the table straight into a latched tilt;
5. READY=1 goes to systemd (controller/daemon/sdnotify.py) once the table has started,
   and the reactor loop pings the watchdog; the technician console starts
   (controller/console/).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, TypeVar, Unpack

from controller.books.audit import LEDGER_FILE as _LEDGER_FILE
from controller.books.audit import Where
from controller.books.ledger import Ledger, LedgerError, fault_of
from controller.books.ledgerwriter import LedgerWriter
from controller.books.statelock import StateLocked
from controller.boot.selfcheck import SelfCheckReport
from controller.boot.startchecks import StartChecks
from controller.core.clock import MonotonicClock
from controller.core.log import LogContext
from controller.core.reactor import Event, Reactor
from controller.core.records import Kind
from controller.daemon.background import Background, ConsoleOptions
from controller.daemon.deviceset import DeviceSet
from controller.daemon.ledgerstack import LedgerStack
from controller.daemon.options import StandIns, Trust, Uplink
from controller.daemon.readiness import UNRECORDED_STAGES, Readiness
from controller.games import procedure_for
from controller.play.table import Table, TableOptions
from controller.settings.hardware import HardwareConfig
from drivers.gpio import is_gpio_error
from drivers.rng import Rng
from drivers.serialdev import SerialDevice

if TYPE_CHECKING:
    from controller.console.server import ConsoleServer

LEDGER_FILE = _LEDGER_FILE  # where it always was; controller/books/audit.py names it now

T = TypeVar("T")


class Service:
    #: up to this many events start-up checks every sealed segment too (C speed: about 1 us an
    #: event here); beyond, the start-up check is the last seal and the events after it, and the
    #: audit thread's first run comes soon (controller/books/auditrun.py)
    START_FULL_EVENTS = 10_000
    #: exceptions a start-up expects from the machine (files, the database, the pin libraries):
    #: logged as one line; anything else is logged once with its traceback
    #: a ledger refused at open (another schema, a file not as this software made it) is expected too
    EXPECTED: tuple[type[BaseException], ...] = (OSError, sqlite3.Error, ImportError, ValueError, LedgerError)

    def __init__(
        self,
        hw: HardwareConfig,
        *,
        stand_ins: StandIns | None = None,
        console: ConsoleOptions | None = None,
        uplink: Uplink | None = None,
        trust: Trust | None = None,
        instrument: Callable[[Service], None] | None = None,
    ):
        """``console``: the technician console it starts (a ``socket_path``, a ``pty``), if any;
        controller/daemon/options.py the rest (None: a real table's)."""
        stand_ins, trust = stand_ins or StandIns(), trust or Trust()
        self.hw = hw
        self.clock = stand_ins.clock or MonotonicClock()
        self.logctx = LogContext(hw.table_id)
        self.log = self.logctx.logger("service")
        self.reactor = Reactor(self.clock, on_error=self._on_reactor_error)
        self.table: Table | None = None
        self.ledger_stack = LedgerStack(hw.ledger, hw.state_dir, hw.table_id, trust.ledger_key)
        self.checks = StartChecks(hw, require_digest=trust.require_digest, rng_test=stand_ins.rng_test)
        self.devices = DeviceSet(hw.gpio, hw.serial, self.clock, self.logctx, stand_ins, uplink)
        self.background = Background(hw.table_id, self.log, console)
        self.readiness = Readiness(self._table_status, stand_ins.notifier)
        self.taps: list[Callable[[Event], None]] = []  # reactor-thread observers of device events (console diag)
        #: a test rig's look at the assembled service before anything runs (hil/rig.py counts the
        #: work in flight for its clock); never set on a table
        self._instrument = instrument
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ the parts' state, read through
    @property
    def ledger(self) -> Ledger | None:
        return self.ledger_stack.ledger

    @property
    def writer(self) -> LedgerWriter | None:
        return self.ledger_stack.writer

    @property
    def serial_devices(self) -> list[SerialDevice]:
        return self.devices.serial

    @property
    def input_names(self) -> list[str]:
        return self.devices.input_names

    @property
    def light_names(self) -> list[str]:
        return self.devices.light_names

    @property
    def rng(self) -> Rng:
        """The starting-position RNG the table draws from."""
        return self.devices.rng

    @property
    def self_check(self) -> SelfCheckReport | None:
        return self.checks.report

    @property
    def started_monotonic(self) -> float | None:
        return self.checks.started_monotonic

    @property
    def config_values(self) -> dict[str, str]:
        """The configuration in effect (console ``config show``; ``config apply`` sets it)."""
        return self.checks.config_values

    @config_values.setter
    def config_values(self, values: dict[str, str]) -> None:
        self.checks.set_config_values(values)

    @property
    def ready(self) -> threading.Event:
        return self.readiness.ready

    @property
    def halted(self) -> str | None:
        """Why the start-up halted (``start(halt_on_error=True)``), or None."""
        return self.readiness.halted

    # ------------------------------------------------------------------ lifecycle
    def start(self, *, thread: bool = True, halt_on_error: bool = False) -> None:
        """Assemble and start the service.  ``halt_on_error`` (``tablectl run``): a problem
        while assembling (the ledger cannot be opened or written, the pins cannot be
        claimed, anything unexpected) does not end the process — the service halts
        with the table closed under a latched tilt, READY=1 sent with the tilt as its
        status and the watchdog pinged, until a technician fixes it and restarts the
        service (controller/boot/startup.py).  Without it (simulator, tests) it raises."""
        try:
            self._start()
        except Exception as exc:
            if not halt_on_error or isinstance(exc, StateLocked):
                raise  # (another process holds the state directory: it is the table, not this one)
            self.halt(exc)
        if thread:
            self._thread = threading.Thread(target=self.reactor.run, name="reactor", daemon=True)
            self._thread.start()

    def _start(self) -> None:
        hw, stage = self.hw, self.readiness.enter
        stage("configuration")
        procedure_for(hw.profile.game, hw.profile)  # a profile its game cannot play fails at this stage
        # 2. self-checks, before any device or link traffic
        self.checks.begin()
        self.readiness.notifier.status("self-checks")
        stage("ledger")
        ledger = self.ledger_stack.open()
        stage("self-check")
        full = self._self_checks(ledger)
        writer = self.ledger_stack.make_writer(self.reactor.call_soon_threadsafe, self._on_ledger_error)
        # 3. pins and ports
        stage("gpio")
        devices = self.devices.claim(self.reactor.post)
        stage("table")
        linked = hw.profile.progressive is not None and hw.profile.progressive.linked is not None
        link_send = self.devices.open_link(self.reactor.post, linked)
        self.table = Table(
            hw.profile,
            self.reactor,
            writer,
            devices,
            self.logctx,
            TableOptions(bounce_s=hw.gpio.bounce_ms / 1000, journal=self.ledger_stack.journal, link_send=link_send),
        )
        self.reactor.handler = self._dispatch
        self.devices.start_link()
        if self._instrument is not None:
            self._instrument(self)
        self.ledger_stack.start()
        self.devices.start()
        # 4. the table takes over on the reactor thread
        self.reactor.call_soon_threadsafe(self._started)
        self.devices.post_unopened(self.reactor.post)
        self.reactor.idle_hooks.append(self.readiness.idle)
        stage("console")
        self.background.start_consoles(self)
        self.background.start_audit(self._audit_run, soon=not full)
        self.background.start_tail_watch(self._tail_run)
        stage("running")
        self.log.info("service.started", game=hw.profile.game, state_dir=str(hw.state_dir))

    def _self_checks(self, ledger: Ledger) -> bool:
        """The start-up checks, the witness and the lock-out journal; whether the ledger was
        checked in full.  Start-up checks the last seal and every event after it, whatever the
        ledger's age, and every sealed segment too on a ledger of up to START_FULL_EVENTS
        events; on a longer one the audit thread's first pass starts at once (
        controller/books/auditrun.py)."""
        full = ledger.last_seq <= self.START_FULL_EVENTS
        self.checks.run(ledger, lambda: self.ledger_stack.check(full=full), self.devices.rng_test())
        problems, recovered = self.ledger_stack.after_check(ledger_ok=self.checks.ledger_passed())
        self.checks.add_problems(problems)
        if recovered:
            self.log.warning("lockout.recovered", round=recovered[0].round, events=len(recovered))
        self.logctx.set_round(ledger.last_round())
        self.checks.done(ledger, self.log)
        return full

    # ------------------------------------------------------------------ halted at start-up
    def halt(self, exc: BaseException) -> None:
        """The table stays closed under a latched tilt naming what failed; READY=1 goes to
        systemd with it as the status, the watchdog is pinged, nothing else runs.  Not
        retried: the problem is fixed and the service restarted by a technician."""
        stage = self.readiness.stage
        where = f" ({self.ledger_stack.ledger_path})" if stage == "ledger" else ""
        reason = f"{stage}{where}: {type(exc).__name__}: {exc}"
        if isinstance(exc, self.EXPECTED) or is_gpio_error(exc):
            self.log.error("startup.halted", stage=stage, error=f"{type(exc).__name__}: {exc}")
        else:
            from controller.boot.startup import log_unexpected

            log_unexpected(self.log, "startup.halted", exc, stage=stage)
        self._release(keep_ledger=True)
        self._record_halt(stage, reason)
        self._release()
        self.table = None
        # a fresh loop: nothing queued by the failed start-up runs; it only pings the watchdog
        stopping = self.reactor.stopped  # a SIGTERM during the start-up still stops it
        self.reactor = Reactor(self.clock, on_error=self._on_reactor_error)
        self.reactor.idle_hooks.append(self.readiness.idle)
        if stopping:
            self.reactor.stop()
        self.readiness.halt(reason)

    def _record_halt(self, stage: str, reason: str) -> None:
        """When the ledger itself is sound (the pins failed, say), the halt is a ``tilt.raised``
        in it: latched, so the table starts in tilt after the fix until a technician clears it."""
        if self.ledger_stack.ledger is None or stage in UNRECORDED_STAGES:
            return
        try:
            self.ledger_stack.record_tilt(stage, reason)
        except Exception as e:  # noqa: BLE001 - the halt stands; the log says the record is missing
            self.log.error("startup.halt_not_recorded", error=repr(e))

    def _release(self, *, keep_ledger: bool = False) -> None:
        """Let go of whatever a failed start-up had opened."""
        self.background.release()
        self.devices.release()
        self.ledger_stack.release(keep_ledger=keep_ledger)

    def run_forever(self) -> None:
        self.reactor.run()

    def stop(self) -> None:
        self.background.stop_audit()
        self.readiness.notifier.stopping()
        self.background.stop_consoles()
        self.reactor.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.devices.stop()  # after the reactor: the uplink's going is no news to record
        self.ledger_stack.stop()

    # ------------------------------------------------------------------ periodic ledger audit
    def audit_ledger(self) -> list[str]:
        """One audit run (controller/books/auditrun.py: the start-up check, the witness, the next slice
        of sealed segments) on a read-only connection of its own (any thread); problems not yet
        acknowledged by a technician (``ledger.acknowledged``) become a latched tilt through the
        reactor, and are returned."""
        return self._audit_run()

    def _audit_run(self) -> list[str]:
        """One periodic audit (the ``ledger-audit`` thread).  An audit that cannot run is itself a
        finding: it is logged and latched like the problems an audit finds, and the thread goes on
        (before stop 30 an exception outside the run's own handling ended the thread silently, and
        the periodic audits with it)."""
        return self._ledger_check(self.background.audit)

    def _tail_run(self) -> list[str]:
        """One tail check (the ``ledger-tail`` thread, every few seconds: the events since the
        last seal, the witness), its findings latched as the periodic audit's are."""
        return self._ledger_check(self.background.tail)

    def _ledger_check(self, run: Callable[[Callable[[], Where]], list[str]]) -> list[str]:
        try:
            problems = run(self.ledger_stack.where_for_audit)
        except Exception as e:  # noqa: BLE001 - faults latch: never swallowed, never the thread's end
            self.log.error("ledger.audit_failed", error=repr(e))
            problems = [f"the periodic audit could not run: {type(e).__name__}: {e}"]
        if problems and self.table is not None:
            self.reactor.call_soon_threadsafe(
                self.table.ledger_damaged, "ledger-audit", [f"ledger: {p}" for p in problems]
            )
        return problems

    # ------------------------------------------------------------------ the reactor's table
    def _dispatch(self, ev: Event) -> None:
        for tap in list(self.taps):
            try:
                tap(ev)
            except Exception as exc:  # noqa: BLE001 - an observer must never stop the table
                self.log.warning("tap.failed", error=repr(exc))
        self._live_table().handle(ev)

    def _live_table(self) -> Table:
        if self.table is None:
            raise RuntimeError("the service has not started its table")
        return self.table

    def _started(self) -> None:
        """On the reactor thread: start the table with the self-check results and the
        configuration among its start-up records (nothing is shown before they are
        durable: ``Table.start``), then tell systemd READY=1 — at once, a latched tilt
        included, so that systemd does not restart a table that is only waiting for a
        technician."""
        table = self._live_table()
        recs = [
            table.rec(Kind.SELFCHECK, **self.checks.records_data()),
            table.rec(Kind.CONFIG_LOADED, **self.checks.config_loaded),
        ]
        table.start(list(self.checks.problems), recs, then=self.readiness.send_ready)

    def _table_status(self) -> str:
        st = self.table.status if self.table is not None else {}
        line = f"{st.get('state', '?')} round {st.get('round', 0)}"
        tilts = st.get("tilts") or {}
        if tilts:
            line += " TILT " + "; ".join(f"{k}: {v}" for k, v in sorted(tilts.items()))
        return line

    # ------------------------------------------------------------------ other threads
    def start_console(self, **options: Unpack[ConsoleOptions]) -> ConsoleServer:
        """Start a technician console server (controller/console/) on this service:
        ``pty=True`` and/or ``socket_path=...``; returns it (``.pty_path``).
        Stopped by :meth:`stop`."""
        return self.background.start_console(self, **options)

    def post_command(self, cmd: str, **data: object) -> None:
        self.reactor.post("command", "service", {"cmd": cmd, **data}, self.logctx.snapshot())

    def call(self, fn: Callable[..., T], *args: object, timeout: float = 10.0) -> T:
        """Run ``fn(*args)`` on the reactor thread (the owner of the table's state) and
        return its result, or raise its exception.  For the console and other threads
        that need to act on the table; never call it from the reactor thread itself."""
        if self.reactor.in_reactor_thread():
            raise RuntimeError("Service.call from the reactor thread would deadlock; call fn directly")
        fut: Future[T] = Future()

        def job() -> None:
            if not fut.set_running_or_notify_cancel():
                return
            try:
                fut.set_result(fn(*args))
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                fut.set_exception(e)

        self.reactor.call_soon_threadsafe(job)
        return fut.result(timeout)

    # ------------------------------------------------------------------ latched errors
    def _on_reactor_error(self, exc: BaseException, detail: str) -> None:
        self.log.error("reactor.exception", error=repr(exc), detail=detail)
        if self.table is not None:
            self.table.raise_tilt("controller", f"internal error: {exc!r}")

    def _on_ledger_error(self, exc: BaseException) -> None:
        # called on the writer thread: hand it to the reactor
        self.reactor.call_soon_threadsafe(self._ledger_failed, exc)

    def _ledger_failed(self, exc: BaseException) -> None:
        writer = self.ledger_stack.writer
        if writer is not None and exc is writer.witness_error:
            # the ledger still works: a recorded tilt (a rollback would go unnoticed meanwhile)
            self.log.error("witness.write_failed", error=repr(exc))
            if self.table is not None:
                self.table.raise_tilt("witness", f"cannot write the witness of the ledger's head: {exc!r}")
            return
        recorded = bool(writer.fault_record) if writer is not None else False
        self.log.error("ledger.write_failed", error=repr(exc), fault_recorded=recorded)
        if self.table is not None:
            # the writer has stopped (its own fault record, if it fit, is the last record): latched and
            # shown now, not after a durable callback that will never come (Table.raise_tilt, durable=False)
            source, reason = fault_of(exc)
            self.table.raise_tilt(source, reason, durable=False)
        self.readiness.send_ready()
