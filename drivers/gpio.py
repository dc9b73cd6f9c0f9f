"""GPIO devices through gpiozero: dealer buttons, bet sensors, key and door
switches (inputs); seat lights and the hit beacon (outputs).

The pin factory is chosen by configuration and set explicitly (also exported as
``GPIOZERO_PIN_FACTORY``) — never left to gpiozero's guessing.  Tests and the
simulator use gpiozero's ``MockFactory``.

Inputs only *post*: a gpiozero callback runs on a background thread, so it
stamps the edge with the game clock and hands ``Event(kind="input",
source=<name>, data={"active": bool})`` to the reactor, nothing more.
Debouncing is ours (controller/play/inputs.py), because mock pins do not bounce and
gpiozero's own ``bounce_time`` would hide the very chatter we must test.

Outputs show only what the controller has recorded: the controller calls
``set(name, mode)`` after the state behind it is durable.

Lines are :class:`PinAddr` (gpiochip, line): chip 0 is the Pi's header, its lines
the BCM numbers; a six-seat, three-spot table needs more lines than the header
has, so I/O expanders (MCP23017 over I²C, the kernel's ``mcp23017`` overlay: a
gpiochip of 16 lines each) carry the rest (docs/wiring.md).  :class:`PinFactories`
keeps one gpiozero pin factory per chip: ``LGPIOFactory(chip=N)`` on a Pi, a
``MockFactory`` per chip in tests and the simulator (the rig drives expander
lines through it just like header pins).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from drivers.base import Clock, LogContext, Post

OFF, ON, BLINK, BLINK_FAST = "off", "on", "blink", "blink-fast"
LIGHT_MODES = (OFF, ON, BLINK, BLINK_FAST)

#: gpiozero pin factories :func:`make_pin_factory` knows (``lgpio`` on a Pi, ``mock`` in tests)
PIN_FACTORIES = ("lgpio", "rpigpio", "pigpio", "native", "mock")
BCM_PINS = range(2, 28)  # usable BCM GPIOs on a 40-pin Raspberry Pi header
HEADER_CHIP = 0  # the Pi's own GPIO lines (BCM numbers); gpiozero picks gpiochip4 on a Pi 5's older kernels
I2C_PINS = (2, 3)  # BCM 2 = SDA1, BCM 3 = SCL1: the I²C bus the expanders hang on
#: I/O expanders the driver knows: type -> line count (MCP23017: GPA0..7 = lines 0..7, GPB0..7 = 8..15)
EXPANDER_TYPES = {"mcp23017": 16}
#: pin factories that drive an expander's gpiochip (RPi.GPIO and pigpio know only the header)
CHIP_FACTORIES = ("lgpio", "mock")


@dataclass(frozen=True, order=True)
class PinAddr:
    """One GPIO line: ``chip`` 0 is the header (``line`` is the BCM number), other chips are
    expanders (``line`` 0..15 on an MCP23017)."""

    chip: int
    line: int

    def __str__(self) -> str:
        return f"BCM {self.line}" if self.chip == HEADER_CHIP else f"chip{self.chip}:{self.line}"

    def port_name(self) -> str:
        """The MCP23017's own name for an expander line (``GPA5``, ``GPB0``); the header's BCM name."""
        if self.chip == HEADER_CHIP:
            return f"GPIO{self.line}"
        return f"GP{'AB'[self.line // 8]}{self.line % 8}"


#: a line as the driver accepts it: a :class:`PinAddr`, or a plain int for a header (BCM) pin
Pin = PinAddr | int

_CHIP_RE = re.compile(r"^chip(\d+):(?:(\d+)|GP([AB])([0-7]))$", re.IGNORECASE)


def parse_pin(text: str) -> PinAddr:
    """``"chip2:5"`` or ``"chip2:GPA5"`` -> ``PinAddr(2, 5)``; ``"chip2:GPB0"`` -> line 8.
    Range checks (which chips exist, how many lines) are the configuration's."""
    m = _CHIP_RE.match(text.strip())
    if not m:
        raise ValueError(f'{text!r} is not a pin: a BCM GPIO number, or "chipN:LINE" (LINE a number or GPA0..GPB7)')
    chip, num, bank, bit = m.groups()
    return PinAddr(int(chip), int(num) if num is not None else (8 if bank.upper() == "B" else 0) + int(bit))


def as_addr(pin: Pin) -> PinAddr:
    return pin if isinstance(pin, PinAddr) else PinAddr(HEADER_CHIP, pin)


@dataclass(frozen=True)
class GpioSettings:
    """What the GPIO driver needs: the pin factory, the named inputs and lights (header
    BCM numbers or expander lines) and the inputs' polarity.  The names are the
    controller's (``lockout``, ``bet.progressive.3``, ``beacon``...);
    controller/settings/hardware.py builds this from ``[gpio]``."""

    pin_factory: str
    inputs: Mapping[str, Pin] = field(default_factory=dict)
    lights: Mapping[str, Pin] = field(default_factory=dict)
    active_low: bool = True  # a closed switch pulls the pin low (the pin's pull-up is on)


class Inputs(Protocol):
    def names(self) -> Iterable[str]: ...
    def is_active(self, name: str) -> bool: ...
    def close(self) -> None: ...


class Lights(Protocol):
    def set(self, name: str, mode: str) -> None: ...
    def mode(self, name: str) -> str: ...
    def close(self) -> None: ...


def is_gpio_error(exc: BaseException) -> bool:
    """Whether ``exc`` is one of gpiozero's own errors (a pin that cannot be claimed, a pin
    library that cannot start): the service reports it as an expected start-up problem."""
    from gpiozero.exc import GPIOZeroError

    return isinstance(exc, GPIOZeroError)


def make_pin_factory(name: str, chip: int = HEADER_CHIP) -> Any:
    """Create the configured gpiozero pin factory (explicitly, never guessed) for
    ``chip``: the header's (0) or an expander's gpiochip (``lgpio`` and ``mock`` only)."""
    if name not in PIN_FACTORIES:
        raise ValueError(f"unknown pin factory {name!r} (one of {', '.join(PIN_FACTORIES)})")
    if chip != HEADER_CHIP and name not in CHIP_FACTORIES:
        raise ValueError(f"pin factory {name!r} drives only the header; expander lines (chip{chip}) need lgpio")
    os.environ["GPIOZERO_PIN_FACTORY"] = name
    module, cls = _FACTORY_CLASSES[name]
    factory = getattr(importlib.import_module(module), cls)
    return factory(chip=chip) if chip != HEADER_CHIP and name == "lgpio" else factory()


#: each of :data:`PIN_FACTORIES`' gpiozero class, imported on use (a library the table does not use
#: may be absent); lgpio's takes an expander's gpiochip, the mock one makes a pin of any chip
_FACTORY_CLASSES = {
    "lgpio": ("gpiozero.pins.lgpio", "LGPIOFactory"),
    "rpigpio": ("gpiozero.pins.rpigpio", "RPiGPIOFactory"),
    "pigpio": ("gpiozero.pins.pigpio", "PiGPIOFactory"),
    "native": ("gpiozero.pins.native", "NativeFactory"),
    "mock": ("gpiozero.pins.mock", "MockFactory"),
}


class PinFactories:
    """One gpiozero pin factory per gpiochip, made on first use: the header's and each
    expander's.  ``PinFactories.mock()`` is the tests' and the simulator's (a
    ``MockFactory`` per chip); :meth:`pin` gives the mock pin a test drives."""

    def __init__(self, make: Callable[[int], Any]):
        self._make = make
        self._made: dict[int, Any] = {}

    @classmethod
    def configured(cls, name: str) -> PinFactories:
        """The configured factory: the header's made now (an unknown or unloadable factory
        fails here, before any pin is claimed), each expander's on first use."""
        factories = cls(lambda chip: make_pin_factory(name, chip))
        factories.chip(HEADER_CHIP)
        return factories

    @classmethod
    def mock(cls) -> PinFactories:
        from gpiozero.pins.mock import MockFactory

        return cls(lambda chip: MockFactory())

    @classmethod
    def header_only(cls, factory: Any) -> PinFactories:
        """A single gpiozero factory for the header (an expander line is then refused)."""

        def make(chip: int) -> Any:
            if chip != HEADER_CHIP:
                raise ValueError(f"chip{chip}: this pin factory drives only the header")
            return factory

        return cls(make)

    def chip(self, chip: int) -> Any:
        f = self._made.get(chip)
        if f is None:
            f = self._made[chip] = self._make(chip)
        return f

    def pin(self, pin: Pin) -> Any:
        a = as_addr(pin)
        return self.chip(a.chip).pin(a.line)

    def chips(self) -> list[int]:
        return sorted(self._made)

    def reset(self) -> None:
        """Forget every mock pin (``MockFactory.reset``) on every chip made so far."""
        for f in self._made.values():
            f.reset()


def _factories(factory: Any) -> PinFactories:
    return factory if isinstance(factory, PinFactories) else PinFactories.header_only(factory)


class GpioInputs:
    """Buttons and sensors; each edge becomes a reactor event."""

    def __init__(
        self,
        pins: Mapping[str, Pin],
        factory: Any,
        post: Post,
        clock: Clock,
        logctx: LogContext,
        active_low: bool = True,
    ):
        # DigitalInputDevice, not Button: a Button runs a hold-timer thread per input that we
        # never use (and that takes ~0.1 s each to stop at close)
        from gpiozero import DigitalInputDevice

        self._post = post
        self._clock = clock
        self._logctx = logctx
        self._buttons: dict[str, Any] = {}
        factories = _factories(factory)
        for name, pin in pins.items():
            a = as_addr(pin)
            b = DigitalInputDevice(a.line, pull_up=active_low, bounce_time=None, pin_factory=factories.chip(a.chip))
            b.when_activated = self._callback(name, True)
            b.when_deactivated = self._callback(name, False)
            self._buttons[name] = b

    def _callback(self, name: str, active: bool) -> Callable[[], None]:
        post, clock, logctx = self._post, self._clock, self._logctx

        def cb() -> None:  # gpiozero callback thread: stamp and post, nothing else
            post("input", name, {"active": active}, logctx.snapshot(), clock.now())

        return cb

    def names(self) -> Iterable[str]:
        return self._buttons.keys()

    def is_active(self, name: str) -> bool:
        return bool(self._buttons[name].is_active)

    def close(self) -> None:
        for b in self._buttons.values():
            b.close()


class GpioLights:
    """LEDs that show the recorded state: off, on, blink (rejected/late), blink-fast (hit)."""

    def __init__(self, pins: Mapping[str, Pin], factory: Any):
        from gpiozero import LED

        factories = _factories(factory)
        self._leds: dict[str, Any] = {}
        try:
            for name, pin in pins.items():
                a = as_addr(pin)
                self._leds[name] = LED(a.line, pin_factory=factories.chip(a.chip))
        except BaseException:
            self.close()
            raise
        self._modes = {name: OFF for name in pins}

    def set(self, name: str, mode: str) -> None:
        if mode not in LIGHT_MODES:
            raise ValueError(f"light mode {mode!r} is not one of {', '.join(LIGHT_MODES)}")
        if self._modes[name] == mode:
            return
        led = self._leds[name]
        if mode == OFF:
            led.off()
        elif mode == ON:
            led.on()
        elif mode == BLINK:
            led.blink(on_time=0.5, off_time=0.5)
        else:
            led.blink(on_time=0.1, off_time=0.1)
        self._modes[name] = mode

    def mode(self, name: str) -> str:
        return self._modes[name]

    def close(self) -> None:
        for led in self._leds.values():
            led.close()


def open_gpio(
    settings: GpioSettings, post: Post, clock: Clock, logctx: LogContext, factory: Any = None
) -> tuple[GpioInputs, GpioLights]:
    """Claim the configured pins: the inputs (posting edges) and the lights.  ``factory``
    replaces the configured pin factories (the HIL rig's :class:`PinFactories` of mock
    chips, or one gpiozero factory for the header alone)."""
    if factory is None:
        factory = PinFactories.configured(settings.pin_factory)
    inputs = GpioInputs(settings.inputs, factory, post, clock, logctx, active_low=settings.active_low)
    try:
        lights = GpioLights(settings.lights, factory)
    except BaseException:
        inputs.close()
        raise
    return inputs, lights
