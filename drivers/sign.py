"""Progressive sign / meter display over serial: meter amounts per level, hand
lights ("the appropriate light on the progressive table game system",
§ 670a.11(h)(3)(i)(B)(II)), seat/position lights and a message line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from drivers.serialdev import SerialDevice


class Sign(Protocol):
    def show_meters(self, levels: Sequence[tuple[int, int]]) -> None: ...
    def hand_light(self, hand: int, mode: int) -> None: ...
    def seat_light(self, position: int, mode: int) -> None: ...
    def message(self, text: str) -> None: ...
    def clear(self) -> None: ...
    def restart(self) -> bool: ...


class SerialSign(SerialDevice):
    device = "sign"

    def show_meters(self, levels: Sequence[tuple[int, int]]) -> None:
        self.send("METERS", levels=list(levels))

    def hand_light(self, hand: int, mode: int) -> None:
        self.send("HAND_LIGHT", hand=hand, mode=mode)

    def seat_light(self, position: int, mode: int) -> None:
        self.send("SEAT_LIGHT", position=position, mode=mode)

    def message(self, text: str) -> None:
        self.send("MESSAGE", text=text)

    def clear(self) -> None:
        self.send("CLEAR")
