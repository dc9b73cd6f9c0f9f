"""The HIL rig: simulated devices on ptys, gpiozero mock pins, and the real
controller service wired to them exactly as it is wired to hardware on a Pi.

The controller is configured through the same parser as ``tablectl run``
(:func:`controller.config.parse_hardware`); only the pin factory (``mock``)
and the serial port paths (the ptys' slave ends) differ.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from controller.clock import ScaledClock
from controller.config import parse_hardware
from controller.service import Service
from hil.devices import ShakerSim, ShoeSim, SignSim

#: the rig's pin map (BCM), also the example wiring in config/examples/table.toml
PINS: dict[str, Any] = {
    "lockout": 17, "confirm": 27, "void": 22, "key_switch": 23, "door": 24, "beacon": 25,
    "spots": {"progressive": {"sensors": [5, 6, 12, 13, 16, 19], "lights": [4, 14, 15, 18, 20, 21]}},
}
BUTTONS = {"lockout": "lockout", "confirm": "confirm", "void": "void", "key": "key_switch", "door": "door"}


class Rig:
    def __init__(self, state_dir: Path, *, profile: str = "six-card-fortune", seed: int = 0,
                 speed: float = 50.0, table_id: str = "SIM-01", shake_s: float = 5.0):
        from gpiozero.pins.mock import MockFactory

        self.clock = ScaledClock(speed)
        self.seed = seed
        self.shoe = ShoeSim(self.clock, random.Random(f"{seed}/shoe"))
        self.shaker = ShakerSim(self.clock, random.Random(f"{seed}/shaker"), shake_s=shake_s)
        self.sign = SignSim(self.clock, random.Random(f"{seed}/sign"))
        self.sims = [self.shoe, self.shaker, self.sign]
        self.factory = MockFactory()
        doc = {
            "table": {"id": table_id, "profile": profile, "state_dir": str(state_dir)},
            "gpio": {"pin_factory": "mock", **PINS},
            "serial": {
                "shoe": {"port": self.shoe.path},
                "shaker": {"port": self.shaker.path},
                "sign": {"port": self.sign.path},
            },
        }
        self.hw = parse_hardware(doc, "<hil rig>")
        self.service = Service(self.hw, clock=self.clock, pin_factory=self.factory)
        self.started = False

    @property
    def table(self) -> Any:
        return self.service.table

    def start(self) -> "Rig":
        for s in self.sims:
            s.start()
        self.service.start()
        self.started = True
        return self

    def stop(self) -> None:
        if self.started:
            self.service.stop()
        for s in self.sims:
            s.stop()
        self.factory.reset()
        self.started = False

    def __enter__(self) -> "Rig":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ people's hands
    def pin(self, bcm: int) -> Any:
        return self.factory.pin(bcm)

    def sensor_pin(self, seat: int, wager: str = "progressive") -> Any:
        return self.pin(PINS["spots"][wager]["sensors"][seat - 1])

    def light_pin(self, seat: int, wager: str = "progressive") -> Any:
        return self.pin(PINS["spots"][wager]["lights"][seat - 1])

    def light_mode(self, seat: int, wager: str = "progressive") -> str:
        return self.table.dev.lights.mode(f"light.{wager}.{seat}")

    def place(self, seat: int, wager: str = "progressive") -> None:
        """A chip put on the seat's sensor for ``wager`` (the contact pulls the pin low)."""
        self.sensor_pin(seat, wager).drive_low()

    def remove(self, seat: int, wager: str = "progressive") -> None:
        self.sensor_pin(seat, wager).drive_high()

    def press(self, button: str, hold_s: float = 0.1) -> None:
        p = self.pin(PINS[BUTTONS[button]])
        p.drive_low()
        self.clock.sleep(hold_s)
        p.drive_high()
