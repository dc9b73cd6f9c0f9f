"""The HIL rig: simulated devices on ptys, gpiozero mock pins, and the real
controller service wired to them exactly as it is wired to hardware on a Pi.

The controller is configured through the same parser as ``tablectl run``
(:func:`controller.settings.hardware.parse_hardware`); only the pin factory (``mock``)
and the serial port paths differ: each simulator's pty is reached through a
symlink in a private directory, standing in for ``/dev/serial/by-id/...``, so a
simulated unplug/replug gives the controller a new pty under the same name.

Besides people's hands (``place``, ``remove``, ``press``) the rig offers what a
scenario (hil/scenario.py) needs to look at: the table's emitted events
(:attr:`Rig.emitted`), the ledger (:meth:`Rig.ledger_events`, through its own
read-only connection) and the controller's link statistics (:meth:`Rig.link_stats`).
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from controller.core.reactor import Event
from controller.daemon.options import StandIns, Trust, Uplink
from controller.daemon.service import Service
from controller.play.table import Table
from controller.settings.hardware import parse_hardware
from drivers.devicedefs import names as serial_devices
from drivers.gpio import HEADER_CHIP, PinAddr, PinFactories, parse_pin
from hil.devices import KeypadSim, ScriptedRng, ShakerSim, ShoeSim, SignSim
from hil.mockpins import mock_factory
from hil.simclock import SimClock

#: the rig's pin map (BCM), also the example wiring in config/examples/table.toml
PINS: dict[str, Any] = {
    "lockout": 17,
    "confirm": 27,
    "void": 22,
    "key_switch": 23,
    "door": 24,
    "beacon": 25,
    "start_game": 26,
    "spots": {"progressive": {"sensors": [5, 6, 12, 13, 16, 19], "lights": [4, 14, 15, 18, 20, 21]}},
}
BUTTONS = {
    "lockout": "lockout",
    "confirm": "confirm",
    "void": "void",
    "key": "key_switch",
    "door": "door",
    "start_game": "start_game",
}


def rig_key_file(state_dir: Path) -> Path:
    """The rig's throwaway ledger key: beside the state directory (it outlives a rig, as a
    table's key outlives a restart: bench crash restarts rigs on one state directory), where
    the ledger commands' ``--state-dir D`` look for it (controller/books/ledgerkey.py)."""
    from controller.books.ledgerkey import beside_key_file

    return beside_key_file(state_dir)


def rig_ledger_key(state_dir: Path) -> bytes:
    """The key of the rig's ledger in ``state_dir``, made (random, mode 0600) the first time."""
    from controller.books.ledgerkey import init_key, read_key

    path = rig_key_file(state_dir)
    if not path.exists():
        init_key(path)
    return read_key(path)


@dataclasses.dataclass(frozen=True, slots=True)
class TableSetup:
    """The table a rig wires, beyond its game: its id, its profile's overrides, its devices and pins."""

    table_id: str = "SIM-01"
    #: fields of the table profile to replace (e.g. ``start_method``)
    profile_overrides: Mapping[str, Any] | None = None
    #: add the dealer-keypad simulator (None: when the game's procedure needs the keypad)
    keypad: bool | None = None
    #: the ``[gpio]`` pin map (None: :data:`PINS`; expander lines as ``"chip2:5"`` with ``expanders``)
    pins: Mapping[str, Any] | None = None
    #: serial link settings for every device (``ack_timeout_ms``, ``retries``, ``heartbeat_ms``,
    #: ``lost_after_ms``, as in ``[serial.<dev>]``)
    link: Mapping[str, int] | None = None
    shake_s: float = 5.0  # the shaker simulator's shake
    link_socket: Path | None = None  # a linked progressive's uplink socket (docs/linked.md)


class Rig:
    def __init__(
        self,
        state_dir: Path,
        *,
        profile: str = "six-card-fortune-progressive",
        seed: int = 0,
        speed: float = 50.0,
        idle_skip: bool = True,
        setup: TableSetup | None = None,
    ):
        """``idle_skip``: let the game clock skip the time when everybody waits (hil/simclock.py;
        False: a plain clock at ``speed``); ``setup``: the table beyond its game (None: the defaults)."""

        from controller.settings import config as C

        setup = setup or TableSetup()
        table_id, keypad, link_socket = setup.table_id, setup.keypad, setup.link_socket

        self.state_dir = Path(state_dir)
        self.clock = SimClock(speed, skip=idle_skip)
        self.seed = seed
        self.dev_dir = Path(tempfile.mkdtemp(prefix="tablectl-hil-dev-"))
        from controller.games import procedure_for

        prof = C.load_profile(profile)
        proc = procedure_for(prof.game, prof)
        #: the shoe holds the game's deck (53 cards; 32 tiles; a multi-deck shoe for Over/Under)
        self.shoe = ShoeSim(self.clock, random.Random(f"{seed}/shoe"), deck_size=proc.deck, link_dir=self.dev_dir)
        self.shaker = ShakerSim(
            self.clock, random.Random(f"{seed}/shaker"), shake_s=setup.shake_s, link_dir=self.dev_dir
        )
        self.sign = SignSim(self.clock, random.Random(f"{seed}/sign"), link_dir=self.dev_dir)
        self.sims = [self.shoe, self.shaker, self.sign]
        self.keypad: KeypadSim | None = None
        if keypad is None:  # the dealer's keypad wherever the game needs keyed wagers or decisions
            keypad = proc.needs_keypad()
        if keypad:
            self.keypad = KeypadSim(self.clock, random.Random(f"{seed}/keypad"), link_dir=self.dev_dir)
            self.sims.append(self.keypad)
        self._sim_devices: set[str] = set()  # the devices whose messages the clock counts (_instrument)
        #: the mock pins: one MockFactory per gpiochip (the header's is ``factory``; expanders' made on use)
        self.pin_factories = PinFactories(lambda chip: mock_factory())  # pins with a bounded history (hil/mockpins.py)
        self.factory = self.pin_factories.chip(HEADER_CHIP)
        #: the pin map this rig wires (default :data:`PINS`; a table with expanders passes its own)
        self.pins: Mapping[str, Any] = setup.pins if setup.pins is not None else PINS
        serial: dict[str, Any] = {
            s.device: {"port": s.path, **dict(setup.link or {})} for s in self.sims if s.device in serial_devices()
        }
        self.ledger_key = rig_ledger_key(self.state_dir)
        doc = {
            "table": {
                "id": table_id,
                "profile": profile,
                # a relative --state-dir is taken from here (the configuration wants an absolute one)
                "state_dir": str(Path(state_dir).absolute()),
                # the simulator keeps its software record with its state (a table: root-owned, /etc/tablectl)
                "software_record": str(Path(state_dir).absolute() / "software.json"),
                # who and where, for the accounting report (`tablectl report`)
                "casino": "Simulated Casino (tablectl sim)",
                "asset": f"SIM-A-{table_id}",
                "location": "HIL rig",
            },
            "ledger": {"key_file": str(rig_key_file(self.state_dir).resolve())},
            "gpio": {"pin_factory": "mock", **self.pins},
            "serial": serial,
        }
        hw = parse_hardware(doc, "<hil rig>")
        if setup.profile_overrides:
            hw = dataclasses.replace(hw, profile=dataclasses.replace(hw.profile, **dict(setup.profile_overrides)))
        self.hw = hw
        #: the controller's RNG (§ 670a.5(i)(2)), scriptable; handed over when the service takes one
        self.rng = ScriptedRng(seed)
        self.service = Service(
            self.hw,
            # the scriptable RNG and the start-up self-test run on it (seeded, deterministic)
            stand_ins=StandIns(
                clock=self.clock,
                pin_factory=self.pin_factories,
                rng=self.rng,
                rng_test=lambda samples: self.rng.self_test(samples=samples),
            ),
            uplink=Uplink(socket=link_socket),  # a linked progressive's uplink socket (docs/linked.md)
            trust=Trust(ledger_key=self.ledger_key),
            instrument=self._instrument,  # the clock counts the work in flight
        )
        self.started = False
        self.emitted: list[tuple[str, dict[str, Any]]] = []
        self._emitted_cv = threading.Condition()

    @property
    def table(self) -> Table:
        """The service's table (once the rig has started)."""
        table = self.service.table
        if table is None:
            raise RuntimeError("the rig's service has not started")
        return table

    def start(self) -> Rig:
        # the thread that drives the rig (people, a scenario, a test) is a party of the
        # simulation: the clock skips only while it waits on the clock (or on the table)
        self.clock.register()
        for s in self.sims:
            s.start()
        self.service.start()
        self.table.listeners.append(self._on_emit)
        self.started = True
        return self

    def stop(self) -> None:
        if self.started:
            self.service.stop()
        for s in self.sims:
            s.stop()
        self.pin_factories.reset()
        self.started = False
        shutil.rmtree(self.dev_dir, ignore_errors=True)

    def __enter__(self) -> Rig:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ people's hands
    def pin(self, pin: int | str | PinAddr) -> Any:
        """The mock pin of a header BCM number or an expander line (``"chip2:5"``)."""
        return self.pin_factories.pin(parse_pin(pin) if isinstance(pin, str) else pin)

    def sensor_pin(self, seat: int, wager: str = "progressive") -> Any:
        return self.pin(self.pins["spots"][wager]["sensors"][seat - 1])

    def light_pin(self, seat: int, wager: str = "progressive") -> Any:
        return self.pin(self.pins["spots"][wager]["lights"][seat - 1])

    def light_mode(self, seat: int, wager: str = "progressive") -> str:
        return str(self.table.dev.lights.mode(f"light.{wager}.{seat}"))

    def place(self, seat: int, wager: str = "progressive") -> None:
        """A chip put on the seat's sensor for ``wager`` (the contact pulls the pin low)."""
        self.sensor_pin(seat, wager).drive_low()

    def remove(self, seat: int, wager: str = "progressive") -> None:
        self.sensor_pin(seat, wager).drive_high()

    def press(self, button: str, hold_s: float = 0.1) -> None:
        p = self.pin(self.pins[BUTTONS[button]])
        p.drive_low()
        self.clock.sleep(hold_s)
        p.drive_high()

    def press_activation(self, seat: int) -> bool:
        """A player presses the shaker's activation button at ``seat`` (§ 621a.2(f))."""
        return self.shaker.press_button(seat)

    def sim(self, device: str) -> Any:
        for s in self.sims:
            if s.device == device:
                return s
        raise KeyError(f"the rig has no {device!r} simulator")

    # ------------------------------------------------------------------ the clock's view of the work
    def _instrument(self, service: Service) -> None:
        """Called by the service once it is assembled and before anything runs: count the
        work handed between threads that are not parties of the simulation, so that the
        clock never skips while some of it is on its way (hil/simclock.py "flights"):

        * a message of the controller's to a simulator, from ``send`` until the simulator's
          handler has run (or the controller's link reports it dropped);
        * a simulator's message to the controller (counted in by the simulator), until the
          reactor dispatches it;
        * a ledger commit, from ``submit`` until its "durable" callback has run on the reactor.
        """
        clock = self.clock
        self._sim_devices = {s.device for s in self.sims}
        for dev in service.serial_devices:
            self._count_sends(dev)
        service.taps.append(self._tap)
        writer = service.writer
        assert writer is not None, "the service is assembled: its ledger writer exists"
        submit = writer.submit

        def counted_submit(records: Any, done: Any = None, *, hand_over: bool = False) -> None:
            clock.flight_begin("ledger")

            def landed(events: Any) -> None:
                try:
                    if done is not None:
                        done(events)
                finally:
                    clock.flight_end("ledger")

            try:
                submit(records, landed, hand_over=hand_over)
            except BaseException:
                clock.flight_end("ledger")
                raise

        setattr(writer, "submit", counted_submit)  # noqa: B010 - an instance's method, replaced
        # the service's reactor thread: a party once it runs, and the controller's: its timers (device
        # deadlines, debounce windows) are never skipped to, they come at the clock's speed as before
        clock.expect("reactor", skip_to=False)
        clock.armed = True

    def _count_sends(self, dev: Any) -> None:
        clock, send, key = self.clock, dev.send, f"ctl>{dev.device}"

        def counted_send(name: str, **fields: Any) -> None:
            clock.flight_begin(key)
            try:
                send(name, **fields)
            except BaseException:
                clock.flight_end(key)
                raise

        setattr(dev, "send", counted_send)  # noqa: B010 - an instance's method, replaced

    def _tap(self, ev: Event) -> None:  # reactor thread, before the table handles the event
        if ev.kind == ev.source and ev.kind in self._sim_devices and "msg" in ev.data:
            self.clock.flight_end(f"{ev.source}>ctl")
        elif ev.kind == "link" and ev.data.get("event") == "fault":  # the controller's link dropped one
            self.clock.flight_end(f"ctl>{ev.source}")

    def wait_until(self, pred: Any, timeout: float, what: str = "condition") -> Any:
        """Wait (idle, for the clock) until ``pred()`` is true; TimeoutError after ``timeout``
        real seconds."""
        v = self.clock.wait_for(pred, real_s=timeout)
        if not v:
            raise TimeoutError(f"{what} not seen within {timeout} s")
        return v

    # ------------------------------------------------------------------ what a tester sees
    def _on_emit(self, what: str, data: Mapping[str, Any]) -> None:  # reactor thread
        with self._emitted_cv:
            self.emitted.append((what, dict(data)))
            self._emitted_cv.notify_all()

    def emitted_count(self, what: str) -> int:
        with self._emitted_cv:
            return sum(1 for w, _ in self.emitted if w == what)

    def wait_emitted(self, what: str, count: int, timeout: float) -> None:
        if not self.clock.wait_for(lambda: self.emitted_count(what) >= count, real_s=timeout):
            raise TimeoutError(f"the table emitted {what!r} {self.emitted_count(what)} time(s), waited for {count}")

    def ledger_events(self, kinds: Iterable[str] | None = None) -> list[tuple[int, str, dict[str, Any]]]:
        """(round, kind, data) of every durable ledger record, oldest first, read through
        a separate read-only connection (the writer thread owns the service's)."""
        path = self.state_dir / "ledger.sqlite3"
        if not path.exists():
            return []
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT round, kind, data FROM events ORDER BY seq").fetchall()
        finally:
            db.close()
        want = set(kinds) if kinds is not None else None
        return [(r, k, json.loads(d)) for r, k, d in rows if want is None or k in want]

    def link_stats(self, device: str) -> Any:
        """The controller-side link statistics of ``device`` (drivers.link.LinkStats)."""
        for d in self.service.serial_devices:
            if d.device == device:
                return d.link.stats
        raise KeyError(f"the controller has no {device!r} link")
