"""Service wiring: configuration → self-checks → ledger → devices → reactor → table.

Order matters and is the same on a Pi and in the simulator:

1. the configuration has already been parsed and range-checked (controller/hardware.py,
   controller/config.py) — nothing has touched a pin or a port;
2. self-checks (controller/selfcheck.py): configuration, the ledger's hash chain
   and meters, the software digest, the RNG self-test — still no device or link
   traffic;
3. pins are claimed and serial links opened;
4. the reactor thread starts and the table takes over.  Failed self-checks put
   the table straight into a latched tilt;
5. READY=1 goes to systemd (controller/sdnotify.py) once the table has started,
   and the reactor loop pings the watchdog; the technician console starts
   (controller/console/).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from typing import Any

from controller.audit import LEDGER_FILE as _LEDGER_FILE
from controller.audit import Where, where_of
from controller.clock import Clock, MonotonicClock
from controller.games import procedure_for
from controller.hardware import HardwareConfig
from controller.ledger import Ledger, fault_of
from controller.ledgerwriter import LedgerWriter
from controller.lockjournal import LockoutJournal, open_at_start
from controller.log import LogContext
from controller.reactor import Event, Reactor
from controller.records import Kind
from controller.sdnotify import Notifier
from controller.statelock import StateLock, StateLocked
from controller.table import Devices, Table
from drivers.gpio import is_gpio_error, open_gpio
from drivers.keypad import SerialKeypad
from drivers.link import Port
from drivers.serialdev import SerialDevice, SerialSettings
from drivers.shaker import SerialShaker
from drivers.shoe import SerialShoe
from drivers.sign import SerialSign

LEDGER_FILE = _LEDGER_FILE  # where it always was; controller/audit.py names it now


class Service:
    def __init__(
        self,
        hw: HardwareConfig,
        *,
        clock: Clock | None = None,
        pin_factory: Any = None,
        open_port: Callable[[SerialSettings], Port] | None = None,
        require_digest: bool = False,
        notifier: Notifier | None = None,
        console_socket: str | Path | None = None,
        console_pty: bool = False,
        rng_test: Callable[[int], list[str]] | None = None,
        console_options: Mapping[str, Any] | None = None,
        rng: Any = None,
        instrument: Callable[[Service], None] | None = None,
        link_socket: str | Path | None = None,
        ledger_key: bytes | None = None,
        link_peer: int | None = None,
    ):
        self.hw = hw
        self.clock = clock or MonotonicClock()
        self._pin_factory = pin_factory
        self._open_port = open_port
        self.logctx = LogContext(hw.table_id)
        self.log = self.logctx.logger("service")
        self.reactor = Reactor(self.clock, on_error=self._on_reactor_error)
        self.table: Table | None = None
        self.ledger: Ledger | None = None
        self.writer: LedgerWriter | None = None
        self.journal: LockoutJournal | None = None  # the lock-out journal (controller/lockjournal.py)
        self.serial_devices: list[SerialDevice] = []
        self._thread: threading.Thread | None = None
        self.self_check_problems: list[str] = []
        self.self_check: Any = None  # controller.selfcheck.SelfCheckReport
        self.require_digest = require_digest  # a missing software record is a problem (real tables)
        self._rng_test = rng_test
        self.rng = rng  # the starting-position RNG (default drivers.rng.SecretsRng)
        #: a test rig's look at the assembled service before anything runs (hil/rig.py counts the
        #: work in flight for its clock); never set on a table
        self._instrument = instrument
        self.notifier = notifier or Notifier()
        self.ready = threading.Event()
        self.started_monotonic: float | None = None
        self.taps: list[Callable[[Event], None]] = []  # reactor-thread observers of device events (console diag)
        self.input_names: list[str] = []
        self.light_names: list[str] = []
        self._console_socket = console_socket
        #: a linked table's socket for its uplink (controller/linked.py LinkPort; docs/linked.md)
        self._link_socket = link_socket
        self._link_peer = link_peer  # the uplink's user id (SO_PEERCRED); None: the service's own
        self.link_port: Any = None
        self._console_pty = console_pty
        self._console_options = dict(console_options or {})
        self.consoles: list[Any] = []  # controller.console servers
        self._last_status = ""
        self.config_values: dict[str, str] = {}
        self.halted: str | None = None  # why the start-up halted (``start(halt_on_error=True)``)
        self._gpio: list[Any] = []  # the claimed inputs and lights (released if the start-up halts)
        #: the ledger's HMAC key (controller/ledgerkey.py); None: read it from the credential / key file at start
        self._ledger_key = ledger_key
        self.where: Where | None = None
        self.witness: Any = None  # controller.witness.Witness
        #: the state directory's lock, held from start to stop (controller/statelock.py: a restore
        #: is refused while the service runs, and the service does not start during one)
        self.state_lock: StateLock | None = None
        self.auditor: Any = None  # controller.auditrun.AuditRunner
        self._audit: Any = None  # its thread

    # ------------------------------------------------------------------ lifecycle
    def start(self, *, thread: bool = True, halt_on_error: bool = False) -> None:
        """Assemble and start the service.  ``halt_on_error`` (``tablectl run``): a problem
        while assembling (the ledger cannot be opened or written, the pins cannot be
        claimed, anything unexpected) does not end the process — the service halts
        with the table closed under a latched tilt, READY=1 sent with the tilt as its
        status and the watchdog pinged, until a technician fixes it and restarts the
        service (controller/startup.py).  Without it (simulator, tests) it raises."""
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
        hw = self.hw
        self._stage = "configuration"
        procedure = procedure_for(hw.profile.game, hw.profile)
        # 2. self-checks, before any device or link traffic
        from controller import selfcheck

        self.started_monotonic = time.monotonic()
        self.notifier.status("self-checks")
        self._stage = "ledger"
        from controller import witness as W
        from controller.ledgerkey import load_key

        key = self._ledger_key if self._ledger_key is not None else load_key(hw.ledger)
        self.state_lock = StateLock(hw.state_dir).acquire(f"tablectl service, table {hw.table_id}")
        self.where = where_of(hw, key)
        self.witness = W.Witness(self.where.witness_dir, hw.table_id)
        # the witness is read before the ledger is opened: opening creates a missing ledger
        witnessed = W.read_for_check(self.witness)
        self.ledger = Ledger(self.where.ledger_path, hw.table_id, key=key)
        ledger = self.ledger
        _probe_writable(ledger)
        if ledger.migrated_from is not None and witnessed is None:
            witnessed = ledger.head()  # the first keyed start: nothing to witness before it
        self._stage = "self-check"

        # start-up checks the last seal and every event after it, whatever the ledger's age, and every
        # sealed segment too on a ledger of up to START_FULL_EVENTS events; on a longer one the audit
        # thread's first pass starts at once (issue 26; controller/auditrun.py)
        full = ledger.last_seq <= self.START_FULL_EVENTS
        self._audit_first_s = self.AUDIT_FIRST_S if full else self.AUDIT_SOON_S

        def ledger_check() -> list[str]:
            return ledger.verify(full=full) + W.check(ledger, witnessed)

        if self.rng is None:
            from drivers.rng import SecretsRng

            self.rng = SecretsRng()
        rng_test = self._rng_test
        if rng_test is None and hasattr(self.rng, "self_test"):
            rng_test = lambda samples: list(self.rng.self_test(samples=samples))  # noqa: E731 - the RNG in use
        self.self_check = selfcheck.run_all(
            hw, self.ledger, require_digest=self.require_digest, rng_test=rng_test, ledger_check=ledger_check
        )
        self.self_check_problems = list(self.self_check.problems)
        if witnessed is None or isinstance(witnessed, W.WitnessError):
            # a witness from the start (found missing or unreadable: the self-check has said so and the
            # tilt is recorded): the writer only moves it on, so a running audit never finds none
            try:
                self.witness.write(ledger.head())
            except OSError as e:  # a latched tilt like any failed self-check, not a crash (and a restart loop)
                self.self_check_problems.append(f"witness: cannot write {self.witness.path}: {e}")
        self._open_journal(key)
        self.logctx.set_round(self.ledger.last_round())
        for p in self.self_check_problems:
            self.log.error("self_check.failed", problem=p)
        self.log.info("self_check.done", results=self.self_check.results, seconds=self.self_check.seconds)
        self.config_values = dict(self.self_check.config_values)  # what is in effect (console `config show`)
        self._config_loaded = self._config_loaded_data(self.ledger, self.self_check.config_values)
        self.writer = LedgerWriter(
            self.ledger, self.reactor.call_soon_threadsafe, self._on_ledger_error, witness=self.witness.write
        )
        # 3. pins and ports
        self._stage = "gpio"
        devices = self._make_devices()
        self._stage = "table"
        linked = hw.profile.progressive is not None and hw.profile.progressive.linked is not None
        if linked:
            from controller.linked import LinkPort

            if self._link_socket is None:
                self.log.warning("link.no_socket", detail="a linked table without a link socket stays closed")
            else:
                peers = None if self._link_peer is None else {self._link_peer}
                self.link_port = LinkPort(
                    self._link_socket, self.reactor.post, peers, log=self.logctx.logger("linkport")
                )
        self.table = Table(
            hw.profile,
            procedure,
            self.reactor,
            self.writer,
            devices,
            self.logctx,
            bounce_s=hw.gpio.bounce_ms / 1000,
            journal=self.journal,
            link_send=self.link_port.send if self.link_port is not None else None,
        )
        self.reactor.handler = self._dispatch
        if self.link_port is not None:
            self.link_port.start()
        if self._instrument is not None:
            self._instrument(self)
        self.writer.start()
        unopened: list[tuple[SerialDevice, BaseException]] = []
        for d in self.serial_devices:
            try:
                d.start()
            except Exception as e:  # noqa: BLE001 - a port that does not open is that device's fault
                d.stop()  # so that a technician's clear retries it once (SerialDevice.restart)
                unopened.append((d, e))
        # 4. the table takes over on the reactor thread
        self.reactor.call_soon_threadsafe(self._started)
        for d, err in unopened:
            # a missing port is the device's latched tilt, like a link that gave up (controller/table.py)
            detail = f"port {d.cfg.port} did not open: {err}"
            self.reactor.post("link", d.device, {"event": "gave-up", "detail": detail}, self.logctx.snapshot())
        self.reactor.idle_hooks.append(self._idle)
        self._stage = "console"
        self._start_consoles()
        self._start_audit()
        self._stage = "running"
        self.log.info("service.started", game=hw.profile.game, state_dir=str(hw.state_dir))

    def _open_journal(self, key: bytes) -> None:
        """The lock-out journal, and the lock-out it holds that the ledger lacks appended to the
        ledger before the table reads the round in play (controller/lockjournal.py ``open_at_start``)."""
        assert self.ledger is not None and self.witness is not None
        ok = self.self_check.results.get("ledger") == "pass"
        self.journal, problems, recovered = open_at_start(
            Path(self.hw.state_dir), self.hw.table_id, key, self.ledger, ledger_ok=ok
        )
        self.self_check_problems += problems  # logged with the self-check's, latched as its tilt
        if recovered:
            self.log.warning("lockout.recovered", round=recovered[0].round, events=len(recovered))
            self.witness.write(self.ledger.head())

    # ------------------------------------------------------------------ halted at start-up
    #: exceptions a start-up expects from the machine (files, the database, the pin libraries):
    #: logged as one line; anything else is logged once with its traceback
    EXPECTED: tuple[type[BaseException], ...] = (OSError, sqlite3.Error, ImportError, ValueError)

    def halt(self, exc: BaseException) -> None:
        """The table stays closed under a latched tilt naming what failed; READY=1 goes to
        systemd with it as the status, the watchdog is pinged, nothing else runs.  Not
        retried: the problem is fixed and the service restarted by a technician."""
        stage = getattr(self, "_stage", "start-up")
        where = f" ({Path(self.hw.state_dir) / LEDGER_FILE})" if stage == "ledger" else ""
        reason = f"{stage}{where}: {type(exc).__name__}: {exc}"
        self.halted = reason
        if isinstance(exc, self.EXPECTED) or is_gpio_error(exc):
            self.log.error("startup.halted", stage=stage, error=f"{type(exc).__name__}: {exc}")
        else:
            from controller.startup import log_unexpected

            log_unexpected(self.log, "startup.halted", exc, stage=stage)
        self._release(keep_ledger=True)
        self._record_halt(stage, reason)
        self._release()
        self.table = None
        # a fresh loop: nothing queued by the failed start-up runs; it only pings the watchdog
        stopping = self.reactor.stopped  # a SIGTERM during the start-up still stops it
        self.reactor = Reactor(self.clock, on_error=self._on_reactor_error)
        self.reactor.idle_hooks.append(self._idle)
        if stopping:
            self.reactor.stop()
        self.ready.set()
        self.notifier.ready(self._status_line())

    def _record_halt(self, stage: str, reason: str) -> None:
        """When the ledger itself is sound (the pins failed, say), the halt is a ``tilt.raised``
        in it: latched, so the table starts in tilt after the fix until a technician clears it."""
        if self.ledger is None or stage in ("configuration", "ledger", "self-check"):
            return
        try:
            from controller.ledger import Record

            self.ledger.append(
                [Record(Kind.TILT_RAISED, self.ledger.last_round(), {"source": stage, "reason": reason})]
            )
        except Exception as e:  # noqa: BLE001 - the halt stands; the log says the record is missing
            self.log.error("startup.halt_not_recorded", error=repr(e))

    def _release(self, *, keep_ledger: bool = False) -> None:
        """Let go of whatever a failed start-up had opened."""
        for c in self.consoles:
            with contextlib.suppress(Exception):
                c.stop()
        self.consoles = []
        if self._audit is not None:
            self._audit.stop()
        for d in self.serial_devices:
            with contextlib.suppress(Exception):
                d.stop()
        self.serial_devices = []
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.stop()
            self.writer = None
        for part in self._gpio:
            with contextlib.suppress(Exception):
                part.close()
        self._gpio = []
        if self.ledger is not None and not keep_ledger:
            with contextlib.suppress(Exception):
                self.ledger.close()
            self.ledger = None

    def run_forever(self) -> None:
        self.reactor.run()

    # ------------------------------------------------------------------ periodic ledger audit
    #: the audit thread's first run (a ledger checked in full at start-up), its runs after, and how
    #: many sealed events a run checks by their digests (controller/auditrun.py): every sealed event
    #: is checked again at least once every ceil(sealed events / AUDIT_SLICE_EVENTS) runs
    AUDIT_FIRST_S = 60.0
    AUDIT_SOON_S = 2.0  # the first run on a ledger whose older segments start-up did not check
    AUDIT_EVERY_S = 120.0
    AUDIT_SLICE_EVENTS = 250_000
    #: up to this many events start-up checks every sealed segment too (C speed: about 1 us an
    #: event here); beyond, the start-up check is the last seal and the events after it
    START_FULL_EVENTS = 10_000

    def _start_audit(self) -> None:
        from controller.auditrun import AuditThread

        first = getattr(self, "_audit_first_s", self.AUDIT_FIRST_S)
        self._audit = AuditThread(self.audit_ledger, first, self.AUDIT_EVERY_S).start()

    def audit_ledger(self) -> list[str]:
        """One audit run (controller/auditrun.py: the start-up check, the witness, the next slice
        of sealed segments) on a read-only connection of its own (any thread); problems not yet
        acknowledged by a technician (``ledger.acknowledged``) become a latched tilt through the
        reactor, and are returned."""
        if self.auditor is None:
            from controller.auditrun import AuditRunner

            where = self.where or where_of(self.hw, self._ledger_key)
            self.auditor = AuditRunner(where, self.hw.table_id, slice_events=self.AUDIT_SLICE_EVENTS)
        problems: list[str] = self.auditor.checked(self.log)
        if problems and self.table is not None:
            self.reactor.call_soon_threadsafe(
                self.table.ledger_damaged, "ledger-audit", [f"ledger: {p}" for p in problems]
            )
        return problems

    def stop(self) -> None:
        if self._audit is not None:
            self._audit.stop()
        self.notifier.stopping()
        for c in self.consoles:
            c.stop()
        self.reactor.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.link_port is not None:  # after the reactor: the uplink's going is no news to record
            self.link_port.close()
        for d in self.serial_devices:
            d.stop()
        if self.writer is not None:
            self.writer.stop()
        if self.table is not None:
            self.table.dev.inputs.close()
            self.table.dev.lights.close()
        if self.ledger is not None:
            self.ledger.close()
        if self.journal is not None:
            self.journal.close()
        if self.state_lock is not None:
            self.state_lock.release()

    # ------------------------------------------------------------------ readiness, watchdog, console
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
        sc = self.self_check
        table = self._live_table()
        recs = [
            table.rec(
                Kind.SELFCHECK,
                results=sc.results,
                problems=sc.problems,
                digest=sc.digest,
                recorded_digest=sc.recorded_digest,
                seconds=sc.seconds,
            )
        ]
        recs.append(table.rec(Kind.CONFIG_LOADED, **self._config_loaded))
        table.start(list(self.self_check_problems), recs, then=self._send_ready)

    def _send_ready(self) -> None:
        """READY=1 once the start-up records are durable and the table has opened or latched
        its tilt; or at once when the ledger fails (``_ledger_failed``): a table latched in
        tilt is up, and systemd must not restart it in a loop."""
        if self.ready.is_set():
            return
        self.ready.set()
        self.notifier.ready(self._status_line())

    def _config_loaded_data(self, ledger: Ledger, values: Mapping[str, str]) -> dict[str, Any]:
        """Data of the ``config.loaded`` record: every value when the configuration
        differs from the one in effect before (with the changes, old and new), else
        only its digest.  Read before the ledger writer starts."""
        from controller.selfcheck import config_digest

        digest = config_digest(values)
        last_values: dict[str, str] | None = None
        for ev in ledger.events(kinds=(Kind.CONFIG_LOADED, Kind.CONFIG_APPLIED), newest_first=True):
            if "values" in ev.data:
                last_values = dict(ev.data["values"])
                break
        if last_values is not None and config_digest(last_values) == digest:
            return {"file": self.hw.file, "digest": digest, "changed": {}}
        old = last_values or {}
        changed = {
            k: [old.get(k), values.get(k)] for k in sorted(set(old) | set(values)) if old.get(k) != values.get(k)
        }
        return {
            "file": self.hw.file,
            "digest": digest,
            "values": dict(values),
            "changed": changed if last_values is not None else {},
        }

    def _status_line(self) -> str:
        if self.halted is not None:
            return f"closed TILT {self.halted}; fix it and restart the service"[:200]
        st = self.table.status if self.table is not None else {}
        line = f"{st.get('state', '?')} round {st.get('round', 0)}"
        tilts = st.get("tilts") or {}
        if tilts:
            line += " TILT " + "; ".join(f"{k}: {v}" for k, v in sorted(tilts.items()))
        return line[:200]

    def _idle(self) -> None:
        """Every reactor loop turn: the watchdog ping comes from the loop that owns the
        state machine, so a hung loop stops pinging and systemd restarts it."""
        self.notifier.watchdog()
        if self.ready.is_set() and self.notifier.enabled:
            line = self._status_line()
            if line != self._last_status:
                self._last_status = line
                self.notifier.status(line)

    def _start_consoles(self) -> None:
        if self._console_socket is not None or self._console_pty:
            self.start_console(pty=self._console_pty, socket_path=self._console_socket, **self._console_options)

    def start_console(self, **options: Any) -> Any:
        """Start a technician console server (controller/console/) on this service:
        ``pty=True`` and/or ``socket_path=...``; returns it (``.pty_path``).
        Stopped by :meth:`stop`."""
        from controller.console import ConsoleServer

        server = ConsoleServer(self, **options).start()
        self.consoles.append(server)
        return server

    def post_command(self, cmd: str, **data: Any) -> None:
        self.reactor.post("command", "service", {"cmd": cmd, **data}, self.logctx.snapshot())

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float = 10.0) -> Any:
        """Run ``fn(*args)`` on the reactor thread (the owner of the table's state) and
        return its result, or raise its exception.  For the console and other threads
        that need to act on the table; never call it from the reactor thread itself."""
        if self.reactor.in_reactor_thread():
            raise RuntimeError("Service.call from the reactor thread would deadlock; call fn directly")
        fut: Future[Any] = Future()

        def job() -> None:
            if not fut.set_running_or_notify_cancel():
                return
            try:
                fut.set_result(fn(*args))
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                fut.set_exception(e)

        self.reactor.call_soon_threadsafe(job)
        return fut.result(timeout)

    # ------------------------------------------------------------------ devices
    def _make_devices(self) -> Devices:
        """Claim the pins and make the serial drivers from the drivers' own settings
        (controller/hardware.py reads them from the TOML); nothing is opened before the
        configuration and the self-checks are through."""
        settings = self.hw.gpio.driver_settings()
        self.input_names, self.light_names = list(settings.inputs), list(settings.lights)
        gin, gout = open_gpio(settings, self.reactor.post, self.clock, self.logctx, factory=self._pin_factory)
        self._gpio = [gin, gout]
        classes: dict[str, type[SerialDevice]] = {
            "shoe": SerialShoe,
            "shaker": SerialShaker,
            "sign": SerialSign,
            "keypad": SerialKeypad,
        }
        made: dict[str, SerialDevice] = {}
        for name, sc in self.hw.serial.items():
            opener: Callable[[], Port] | None = None
            if self._open_port is not None:
                opener = partial(self._open_port, sc)
            dev = classes[name](sc, self.reactor.post, self.logctx, open_port=opener)
            made[name] = dev
            self.serial_devices.append(dev)
        shoe, shaker, sign, keypad = (made.get(n) for n in ("shoe", "shaker", "sign", "keypad"))
        if not isinstance(shoe, SerialShoe) or not isinstance(sign, SerialSign):
            # the configuration parser requires both (TableProfile.required_devices)
            raise ValueError("the table needs its shoe ([serial.shoe]) and its sign ([serial.sign])")
        return Devices(
            shoe=shoe,
            shaker=shaker if isinstance(shaker, SerialShaker) else None,
            sign=sign,
            lights=gout,
            inputs=gin,
            rng=self.rng,
            keypad=keypad if isinstance(keypad, SerialKeypad) else None,
        )

    # ------------------------------------------------------------------ latched errors
    def _on_reactor_error(self, exc: BaseException, detail: str) -> None:
        self.log.error("reactor.exception", error=repr(exc), detail=detail)
        if self.table is not None:
            self.table.raise_tilt("controller", f"internal error: {exc!r}")

    def _on_ledger_error(self, exc: BaseException) -> None:
        # called on the writer thread: hand it to the reactor
        self.reactor.call_soon_threadsafe(self._ledger_failed, exc)

    def _ledger_failed(self, exc: BaseException) -> None:
        if self.writer is not None and exc is self.writer.witness_error:
            # the ledger still works: a recorded tilt (a rollback would go unnoticed meanwhile)
            self.log.error("witness.write_failed", error=repr(exc))
            if self.table is not None:
                self.table.raise_tilt("witness", f"cannot write the witness of the ledger's head: {exc!r}")
            return
        recorded = bool(self.writer.fault_record) if self.writer is not None else False
        self.log.error("ledger.write_failed", error=repr(exc), fault_recorded=recorded)
        if self.table is not None:
            # the writer has stopped (its own fault record, if it fit, is the last record): latched and
            # shown now, not after a durable callback that will never come (Table.raise_tilt, durable=False)
            source, reason = fault_of(exc)
            self.table.raise_tilt(source, reason, durable=False)
        self._send_ready()


def _probe_writable(ledger: Ledger) -> None:
    """Fail now, not at the first wager, when the ledger can be read but not written (a
    read-only file or directory): SQLite opens such a file read-only without a word."""
    (version,) = ledger.db.execute("PRAGMA user_version").fetchone()
    ledger.db.execute(f"PRAGMA user_version = {int(version)}")
