"""The device fakes of tests/integration/harness.py implement exactly their driver's Protocol
(drivers/), as do the real serial drivers, so a device call the table makes that no
Protocol declares — or a misspelt one — fails in the harness as it would on the
floor ("the test fakes implement the same Protocols")."""

from __future__ import annotations

import inspect
import typing

import pytest

from drivers.gpio import GpioInputs, GpioLights, Inputs, Lights
from drivers.keypad import Keypad, SerialKeypad
from drivers.rng import Rng, SecretsRng
from drivers.shaker import SerialShaker, Shaker
from drivers.shoe import SerialShoe, Shoe
from drivers.sign import SerialSign, Sign
from tests.integration.harness import FakeInputs, FakeKeypad, FakeLights, FakeShaker, FakeShoe, FakeSign, FixedRng


def members(proto: type) -> dict[str, inspect.Signature]:
    """The methods a Protocol declares, with their signatures."""
    out = {}
    for name, value in vars(proto).items():
        if not name.startswith("_") and callable(value):
            out[name] = inspect.signature(value)
    return out


def public_methods(cls: type) -> set[str]:
    return {n for n, v in inspect.getmembers(cls) if not n.startswith("_") and callable(v)}


PAIRS = [
    (Shoe, FakeShoe),
    (Shaker, FakeShaker),
    (Sign, FakeSign),
    (Keypad, FakeKeypad),
    (Lights, FakeLights),
    (Inputs, FakeInputs),
    (Rng, FixedRng),
]


@pytest.mark.parametrize("proto,fake", PAIRS, ids=[p.__name__ for p, _ in PAIRS])
def test_fake_has_exactly_the_protocols_methods(proto, fake):
    declared = members(proto)
    assert declared, f"{proto.__name__} declares nothing"
    assert public_methods(fake) == set(declared), (
        f"{fake.__name__} methods {sorted(public_methods(fake))} != {proto.__name__} {sorted(declared)}"
    )
    for name, sig in declared.items():
        got = inspect.signature(getattr(fake, name))
        assert list(got.parameters) == list(sig.parameters), f"{fake.__name__}.{name}{got} != {proto.__name__}{sig}"


@pytest.mark.parametrize(
    "proto,real",
    [
        (Shoe, SerialShoe),
        (Shaker, SerialShaker),
        (Sign, SerialSign),
        (Keypad, SerialKeypad),
        (Lights, GpioLights),
        (Inputs, GpioInputs),
        (Rng, SecretsRng),
    ],
)
def test_real_driver_implements_its_protocol(proto, real):
    for name, sig in members(proto).items():
        assert hasattr(real, name), f"{real.__name__} lacks {proto.__name__}.{name}"
        got = inspect.signature(getattr(real, name))
        assert list(got.parameters) == list(sig.parameters), f"{real.__name__}.{name}{got} != {sig}"


def test_restart_is_declared_by_every_serial_device():
    """Table.clear_tilt restarts a link that gave up (drivers/link.py Link.restart)."""
    for proto in (Shoe, Shaker, Sign, Keypad):
        assert "restart" in members(proto)
        assert typing.get_type_hints(proto.restart)["return"] is bool


def test_a_misspelt_call_fails():
    with pytest.raises(AttributeError):
        FakeSign("sign").mesage("TILT")  # type: ignore[attr-defined]
