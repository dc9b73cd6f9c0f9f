"""The GPIO driver on gpiozero's MockFactory, with nothing from controller/: its own
settings type, and a clock, post and log context that only satisfy drivers/base.py's
Protocols (docs/protocols.md section 8)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from drivers.gpio import BLINK, BLINK_FAST, OFF, ON, GpioSettings, open_gpio


class Clock:
    def __init__(self) -> None:
        self.t = 12.5

    def now(self) -> float:
        return self.t


class Ctx:
    def snapshot(self) -> Mapping[str, Any]:
        return {"table": "T9", "round": 4}

    def logger(self, component: str, **kw: Any) -> Any:
        raise AssertionError("the GPIO driver does not log from a callback thread")


SETTINGS = GpioSettings("mock", inputs={"lockout": 17, "bet.progressive.1": 5}, lights={"light.progressive.1": 4})


@pytest.fixture
def gpio():
    posted: list[tuple[Any, ...]] = []
    factory = MockFactory()
    clock = Clock()
    inputs, lights = open_gpio(SETTINGS, lambda *a: posted.append(a), clock, Ctx(), factory=factory)
    yield factory, clock, inputs, lights, posted
    inputs.close()
    lights.close()


def test_an_edge_is_posted_with_the_game_clock_and_the_context(gpio):
    factory, clock, inputs, _, posted = gpio
    assert sorted(inputs.names()) == ["bet.progressive.1", "lockout"]
    factory.pin(17).drive_low()  # active low: pressed
    clock.t = 13.0
    factory.pin(17).drive_high()
    assert posted == [
        ("input", "lockout", {"active": True}, {"table": "T9", "round": 4}, 12.5),
        ("input", "lockout", {"active": False}, {"table": "T9", "round": 4}, 13.0),
    ]
    factory.pin(5).drive_low()
    assert inputs.is_active("bet.progressive.1") and not inputs.is_active("lockout")


def test_active_high_inputs(gpio):
    factory = MockFactory()
    posted: list[tuple[Any, ...]] = []
    s = GpioSettings("mock", inputs={"door": 24}, active_low=False)
    inputs, lights = open_gpio(s, lambda *a: posted.append(a), Clock(), Ctx(), factory=factory)
    try:
        factory.pin(24).drive_high()
        assert posted[-1][:3] == ("input", "door", {"active": True}) and inputs.is_active("door")
    finally:
        inputs.close()
        lights.close()


def test_lights_show_the_mode_they_are_set_to(gpio):
    factory, _, _, lights, _ = gpio
    pin = factory.pin(4)
    assert lights.mode("light.progressive.1") == OFF and pin.state is False
    lights.set("light.progressive.1", ON)
    assert pin.state is True and lights.mode("light.progressive.1") == ON
    for mode in (BLINK, BLINK_FAST, OFF):
        lights.set("light.progressive.1", mode)
        assert lights.mode("light.progressive.1") == mode
    assert pin.state is False
    with pytest.raises(ValueError, match="light mode 'dim' is not one of off, on, blink, blink-fast"):
        lights.set("light.progressive.1", "dim")
    assert lights.mode("light.progressive.1") == OFF


def test_an_unknown_pin_factory_is_refused_and_changes_nothing(monkeypatch):
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    with pytest.raises(ValueError, match="unknown pin factory 'nope' \\(one of lgpio, "):
        open_gpio(GpioSettings("nope"), lambda *a: None, Clock(), Ctx())
    assert os.environ["GPIOZERO_PIN_FACTORY"] == "mock"
