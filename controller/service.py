"""Service wiring: configuration → self-checks → ledger → devices → reactor → table.

Order matters and is the same on a Pi and in the simulator:

1. the configuration has already been parsed and range-checked (controller/config.py)
   — nothing has touched a pin or a port;
2. self-checks: the ledger's hash chain and meters (controller/ledger.py) — still no
   device or link traffic;
3. pins are claimed and serial links opened;
4. the reactor thread starts and the table takes over.  Failed self-checks put
   the table straight into a latched tilt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from controller.clock import Clock, MonotonicClock
from controller.config import HardwareConfig, SerialConfig
from controller.games import procedure_for
from controller.ledger import Ledger, LedgerWriter
from controller.log import LogContext
from controller.reactor import Reactor
from controller.table import Devices, Table

LEDGER_FILE = "ledger.sqlite3"


class Service:
    def __init__(self, hw: HardwareConfig, *, clock: Clock | None = None, pin_factory: Any = None,
                 open_port: Callable[[SerialConfig], Any] | None = None):
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
        self.serial_devices: list[Any] = []
        self._thread: threading.Thread | None = None
        self.self_check_problems: list[str] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self, *, thread: bool = True) -> None:
        hw = self.hw
        procedure = procedure_for(hw.profile.game, hw.profile)
        # 2. self-checks, before any device or link traffic
        self.ledger = Ledger(Path(hw.state_dir) / LEDGER_FILE, hw.table_id)
        self.self_check_problems = self.ledger.verify()
        self.logctx.set_round(self.ledger.last_round())
        for p in self.self_check_problems:
            self.log.error("self_check.failed", check="ledger", problem=p)
        self.writer = LedgerWriter(self.ledger, self.reactor.call_soon_threadsafe, self._on_ledger_error)
        # 3. pins and ports
        devices = self._make_devices()
        self.table = Table(hw.profile, procedure, self.reactor, self.writer, devices, self.logctx,
                           bounce_s=hw.gpio.bounce_ms / 1000)
        self.reactor.handler = self.table.handle
        self.writer.start()
        for d in self.serial_devices:
            d.start()
        # 4. the table takes over on the reactor thread
        self.reactor.call_soon_threadsafe(self.table.start, list(self.self_check_problems))
        self.log.info("service.started", game=hw.profile.game, state_dir=str(hw.state_dir))
        if thread:
            self._thread = threading.Thread(target=self.reactor.run, name="reactor", daemon=True)
            self._thread.start()

    def run_forever(self) -> None:
        self.reactor.run()

    def stop(self) -> None:
        self.reactor.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for d in self.serial_devices:
            d.stop()
        if self.writer is not None:
            self.writer.stop()
        if self.table is not None:
            self.table.dev.inputs.close()
            self.table.dev.lights.close()
        if self.ledger is not None:
            self.ledger.close()

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
        from drivers.gpio import GpioInputs, GpioLights, make_pin_factory
        from drivers.shaker import SerialShaker
        from drivers.shoe import SerialShoe
        from drivers.sign import SerialSign

        g = self.hw.gpio
        factory = self._pin_factory or make_pin_factory(g.pin_factory)
        inputs = {"lockout": g.lockout, "confirm": g.confirm, "void": g.void, "key": g.key_switch}
        if g.door is not None:
            inputs["door"] = g.door
        if g.start_game is not None:
            inputs["start_game"] = g.start_game
        lights: dict[str, int] = {}
        for wager, spot in g.spots.items():
            for i, pin in enumerate(spot.sensors, 1):
                inputs[f"bet.{wager}.{i}"] = pin
            for i, pin in enumerate(spot.lights, 1):
                lights[f"light.{wager}.{i}"] = pin
        if g.beacon is not None:
            lights["beacon"] = g.beacon
        gin = GpioInputs(inputs, factory, self.reactor.post, self.clock, self.logctx, active_low=g.active_low)
        gout = GpioLights(lights, factory)
        classes = {"shoe": SerialShoe, "shaker": SerialShaker, "sign": SerialSign}
        made: dict[str, Any] = {}
        for name, sc in self.hw.serial.items():
            opener = (lambda sc=sc: self._open_port(sc)) if self._open_port else None
            dev = classes[name](sc, self.reactor.post, self.logctx, open_port=opener)
            made[name] = dev
            self.serial_devices.append(dev)
        return Devices(shoe=made.get("shoe"), shaker=made.get("shaker"), sign=made.get("sign"),
                       lights=gout, inputs=gin)

    # ------------------------------------------------------------------ latched errors
    def _on_reactor_error(self, exc: BaseException, detail: str) -> None:
        self.log.error("reactor.exception", error=repr(exc), detail=detail)
        if self.table is not None:
            self.table.raise_tilt("controller", f"internal error: {exc!r}")

    def _on_ledger_error(self, exc: BaseException) -> None:
        # called on the writer thread: hand it to the reactor
        self.reactor.call_soon_threadsafe(self._ledger_failed, exc)

    def _ledger_failed(self, exc: BaseException) -> None:
        self.log.error("ledger.write_failed", error=repr(exc))
        if self.table is not None:
            self.table.tilts["ledger"] = f"ledger write failed: {exc!r}"
            if self.table.state != "tilt":
                self.table.fault()
