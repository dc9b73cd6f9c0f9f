"""The drivers stand alone behind their Protocols (docs/architecture.md "Layers"):
``drivers/`` imports nothing from ``controller/``, each driver implements its device
Protocol, and every method the controller and the HIL rig call on a device is declared
by that device's Protocol (``restart`` included: a technician's clear restarts a serial
device that gave up)."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from drivers.gpio import GpioInputs, GpioLights, Inputs, Lights
from drivers.keypad import Keypad, SerialKeypad
from drivers.rng import Rng, SecretsRng
from drivers.shaker import SerialShaker, Shaker
from drivers.shoe import SerialShoe, Shoe
from drivers.sign import SerialSign, Sign

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = sorted((ROOT / "drivers").glob("*.py"))

#: the controller's name for each device (``Devices`` in controller/play/table.py) -> its Protocol
PROTOCOLS: dict[str, type] = {
    "shoe": Shoe,
    "shaker": Shaker,
    "sign": Sign,
    "keypad": Keypad,
    "lights": Lights,
    "inputs": Inputs,
    "rng": Rng,
}
SERIAL = ("shoe", "shaker", "sign", "keypad")


def members(proto: type) -> set[str]:
    return {n for n, v in vars(proto).items() if callable(v) and not n.startswith("_")}


def test_importing_every_driver_loads_no_controller_module():
    code = (
        "import sys\n"
        "import drivers.base, drivers.framing, drivers.link, drivers.protocol, drivers.serialdev\n"
        "import drivers.shoe, drivers.gpio, drivers.sign, drivers.shaker, drivers.keypad, drivers.rng\n"
        "bad = sorted(m for m in sys.modules if m == 'controller' or m.startswith('controller.'))\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("path", DRIVERS, ids=lambda p: p.name)
def test_no_import_of_controller_anywhere_in_drivers(path):
    """Lazy imports inside functions included (the fresh-interpreter test cannot see those)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "controller"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "controller":
            found.append(node.module or "")
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            found += [str(a.value) for a in node.args if isinstance(a, ast.Constant) and "controller" in str(a.value)]
    assert not found, f"{path.name} imports {found}"


@pytest.mark.parametrize(
    "proto,impl",
    [
        (Shoe, SerialShoe),
        (Shaker, SerialShaker),
        (Sign, SerialSign),
        (Keypad, SerialKeypad),
        (Inputs, GpioInputs),
        (Lights, GpioLights),
        (Rng, SecretsRng),
    ],
    ids=lambda c: c.__name__,
)
def test_each_driver_implements_its_protocol(proto, impl):
    for name in members(proto):
        fn = inspect.getattr_static(impl, name, None)
        assert fn is not None and fn is not vars(proto)[name], f"{impl.__name__} lacks {name}()"
        want = list(inspect.signature(vars(proto)[name]).parameters)
        got = list(inspect.signature(fn).parameters)
        assert got[: len(want)] == want, f"{impl.__name__}.{name}{got} vs {proto.__name__}.{name}{want}"


def test_hil_rng_implements_the_rng_protocol():
    from hil.devices import ScriptedRng

    assert list(inspect.signature(ScriptedRng.draw).parameters) == ["self", "n"]


@pytest.mark.parametrize("device", SERIAL)
def test_serial_devices_declare_restart(device):
    assert "restart" in members(PROTOCOLS[device])


def test_every_device_call_is_declared_by_its_protocol():
    """``grep -rhoE "dev\\.(shoe|...)\\.[a-z_]+" controller hil``: each method found is a member
    of that device's Protocol, so a typed ``Devices`` catches a misspelt call."""
    pattern = re.compile(r"\bdev\.(" + "|".join(PROTOCOLS) + r")\.([a-z_]+)\b")
    calls: set[tuple[str, str]] = set()
    for top in ("controller", "hil"):
        for path in (ROOT / top).rglob("*.py"):
            calls.update(pattern.findall(path.read_text(encoding="utf-8")))
    assert len({dev for dev, _ in calls}) >= 5, calls  # the pattern still finds the controller's calls
    undeclared = sorted(
        f"{dev}.{m}"
        for dev, m in calls
        if m not in members(PROTOCOLS[dev]) | set(vars(PROTOCOLS[dev]).get("__annotations__", {}))
    )
    assert not undeclared, f"called but not declared by the device Protocol: {undeclared}"
