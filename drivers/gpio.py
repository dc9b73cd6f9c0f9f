"""GPIO devices through gpiozero: dealer buttons, bet sensors, key and door
switches (inputs); seat lights and the hit beacon (outputs).

The pin factory is chosen by configuration and set explicitly (also exported as
``GPIOZERO_PIN_FACTORY``) — never left to gpiozero's guessing.  Tests and the
simulator use gpiozero's ``MockFactory``.

Inputs only *post*: a gpiozero callback runs on a background thread, so it
stamps the edge with the game clock and hands ``Event(kind="input",
source=<name>, data={"active": bool})`` to the reactor, nothing more.
Debouncing is ours (controller/inputs.py), because mock pins do not bounce and
gpiozero's own ``bounce_time`` would hide the very chatter we must test.

Outputs show only what the controller has recorded: the controller calls
``set(name, mode)`` after the state behind it is durable.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from drivers.base import Clock, LogContext, Post

OFF, ON, BLINK, BLINK_FAST = "off", "on", "blink", "blink-fast"
LIGHT_MODES = (OFF, ON, BLINK, BLINK_FAST)

#: gpiozero pin factories :func:`make_pin_factory` knows (``lgpio`` on a Pi, ``mock`` in tests)
PIN_FACTORIES = ("lgpio", "rpigpio", "pigpio", "native", "mock")
BCM_PINS = range(2, 28)  # usable BCM GPIOs on a 40-pin Raspberry Pi header


@dataclass(frozen=True)
class GpioSettings:
    """What the GPIO driver needs: the pin factory, the named inputs and lights (BCM
    pins) and the inputs' polarity.  The names are the controller's (``lockout``,
    ``bet.progressive.3``, ``beacon``...); controller/config.py builds this from
    ``[gpio]``."""

    pin_factory: str
    inputs: Mapping[str, int] = field(default_factory=dict)
    lights: Mapping[str, int] = field(default_factory=dict)
    active_low: bool = True  # a closed switch pulls the pin low (the pin's pull-up is on)


class Inputs(Protocol):
    def names(self) -> Iterable[str]: ...
    def is_active(self, name: str) -> bool: ...
    def close(self) -> None: ...


class Lights(Protocol):
    def set(self, name: str, mode: str) -> None: ...
    def mode(self, name: str) -> str: ...
    def close(self) -> None: ...


def make_pin_factory(name: str) -> Any:
    """Create the configured gpiozero pin factory (explicitly, never guessed)."""
    if name not in PIN_FACTORIES:
        raise ValueError(f"unknown pin factory {name!r} (one of {', '.join(PIN_FACTORIES)})")
    os.environ["GPIOZERO_PIN_FACTORY"] = name
    if name == "mock":
        from gpiozero.pins.mock import MockFactory

        return MockFactory()
    if name == "lgpio":
        from gpiozero.pins.lgpio import LGPIOFactory

        return LGPIOFactory()
    if name == "rpigpio":
        from gpiozero.pins.rpigpio import RPiGPIOFactory

        return RPiGPIOFactory()
    if name == "pigpio":
        from gpiozero.pins.pigpio import PiGPIOFactory

        return PiGPIOFactory()
    if name == "native":
        from gpiozero.pins.native import NativeFactory

        return NativeFactory()
    raise AssertionError(name)  # PIN_FACTORIES and the branches above name the same factories


class GpioInputs:
    """Buttons and sensors; each edge becomes a reactor event."""

    def __init__(
        self,
        pins: Mapping[str, int],
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
        for name, pin in pins.items():
            b = DigitalInputDevice(pin, pull_up=active_low, bounce_time=None, pin_factory=factory)
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

    def __init__(self, pins: Mapping[str, int], factory: Any):
        from gpiozero import LED

        self._leds = {name: LED(pin, pin_factory=factory) for name, pin in pins.items()}
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
    replaces the configured pin factory (the HIL rig's ``MockFactory``)."""
    if factory is None:
        factory = make_pin_factory(settings.pin_factory)
    inputs = GpioInputs(settings.inputs, factory, post, clock, logctx, active_low=settings.active_low)
    try:
        lights = GpioLights(settings.lights, factory)
    except BaseException:
        inputs.close()
        raise
    return inputs, lights
