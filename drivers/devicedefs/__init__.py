"""The serial devices, each declared once in a module of this package (the file is the
registry: found by the loader, listed nowhere).  A module here holds one :class:`DeviceDecl`
named ``DEVICE``; every list of devices (the protocol's message tables, the hardware file's
``[serial.*]`` sections, the drivers the service makes, the devices a floorperson may mark
out of order, the console's diagnostics, the HIL rig's simulators and fault keys) is read
from :func:`devices`.

A declaration names its driver, simulator and diagnostics by dotted path
(``"package.module:Name"``, imported on use), so reading the list imports no driver, no
simulator and no console.  Adding a device: docs/architecture.md "Adding a game / a device".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from drivers.discovery import discover, resolve

if TYPE_CHECKING:
    from drivers.protocol import MsgSpec

__all__ = ["DeviceDecl", "devices", "names", "out_of_order", "rescan", "resolve"]


@dataclass(frozen=True, slots=True)
class DeviceDecl:
    """One serial device as the table knows it."""

    name: str  # as its ``[serial.<name>]`` section, its link events and its messages name it
    #: the driver the service makes for it (a drivers.serialdev.SerialDevice), ``"module:Class"``
    driver: str
    #: its application messages (drivers/protocol.py ``msg``), both directions
    messages: tuple[MsgSpec, ...]
    #: the HIL rig's simulator of it (a hil.devices.SimDevice), ``"module:Class"``
    simulator: str = ""
    #: the technician console's ``diag <name>`` (``fn(ctx) -> str``), ``"module:function"``; empty: none
    diagnostics: str = ""
    #: the methods used instead while it is marked out of order (§ 670a.13(n)); empty: it may not be
    out_of_order: tuple[str, ...] = ()


@cache
def devices() -> dict[str, DeviceDecl]:
    """Every declared serial device by name, in the order of their modules' names."""
    out = discover(__name__, __path__, "DEVICE", DeviceDecl, lambda d: d.name)
    for decl in out.values():
        wrong = [m.name for m in decl.messages if m.device != decl.name]
        if wrong:
            raise RuntimeError(f"device {decl.name!r} declares messages of another device: {wrong}")
    return out


def names() -> tuple[str, ...]:
    """The serial devices a table may have."""
    return tuple(devices())


def out_of_order() -> dict[str, tuple[str, ...]]:
    """The devices a floorperson or technician may mark out of order, each with its alternatives."""
    return {n: d.out_of_order for n, d in devices().items() if d.out_of_order}


def rescan() -> None:
    """Forget what was found (a test that adds a module to the package)."""
    from drivers import protocol

    devices.cache_clear()
    protocol.forget()
