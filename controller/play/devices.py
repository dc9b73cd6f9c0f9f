"""The table's devices, each typed by its driver's ``typing.Protocol`` (drivers/).

The table only ever calls what these Protocols declare, so a driver, a HIL
simulator's counterpart or a test fake that lacks a method (or misspells one)
is a type error, not a surprise on the floor.  Which devices a table has comes
from its configuration (controller/settings/config.py ``TableProfile.required_devices``);
the shaker, the RNG and the keypad are optional.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from drivers.gpio import Inputs, Lights
from drivers.keypad import Keypad
from drivers.rng import Rng
from drivers.shaker import Shaker
from drivers.shoe import Shoe
from drivers.sign import Sign


class SerialPart(Protocol):
    """What the table asks of any serial device it does not otherwise drive: a restart when a
    technician clears a tilt it gave up in (drivers/serialdev.py ``SerialDevice.restart``)."""

    def restart(self) -> bool: ...


@dataclass
class Devices:
    shoe: Shoe
    shaker: Shaker | None
    sign: Sign
    lights: Lights
    inputs: Inputs
    rng: Rng | None = None  # the starting position by RNG (§ 670a.5(i)(2))
    keypad: Keypad | None = None  # the dealer's entries
    #: declared serial devices (drivers/devicedefs/) the table has but drives through no role of its own
    others: Mapping[str, SerialPart] = field(default_factory=dict)

    def serial(self, name: str) -> SerialPart | None:
        """The serial device called ``name`` (as its link events name it), if the table has it."""
        if name in ("shoe", "shaker", "sign", "keypad"):
            part: SerialPart | None = getattr(self, name)
            return part
        return self.others.get(name)


class SignLine:
    """The table's sign, remembering the message line it was last told (``text``), so that a
    linked hit's announcement is shown beside what the line said, never instead of it
    (controller/play/linking.py).  Every call passes through to the sign's driver."""

    def __init__(self, sign: Sign):
        self.sign = sign
        self.text = ""

    def show_meters(self, levels: Sequence[tuple[int, int]]) -> None:
        self.sign.show_meters(levels)

    def hand_light(self, hand: int, mode: int) -> None:
        self.sign.hand_light(hand, mode)

    def seat_light(self, position: int, mode: int) -> None:
        self.sign.seat_light(position, mode)

    def message(self, text: str) -> None:
        self.text = text
        self.sign.message(text)

    def clear(self) -> None:
        self.text = ""
        self.sign.clear()

    def restart(self) -> bool:
        return self.sign.restart()


class DeviceRegistry:
    """Which serial links are down (``lost``, ``disconnected``, ``gave-up``: from link events).
    Which devices are marked out of order is the floor's (controller/play/floor.py ``OutOfOrder``)."""

    def __init__(self) -> None:
        self.down: dict[str, str] = {}  # device -> lost | disconnected | gave-up

    def link_event(self, device: str, what: str) -> None:
        if what in ("lost", "disconnected", "gave-up"):
            self.down[device] = what
        elif what == "restored" or (what == "up" and self.down.get(device) == "disconnected"):
            self.down.pop(device, None)

    def blocking(self, out_of_order: Mapping[str, str]) -> dict[str, str]:
        """Devices the table needs that cannot be reached (down and not out of order)."""
        return {d: w for d, w in self.down.items() if d not in out_of_order}
