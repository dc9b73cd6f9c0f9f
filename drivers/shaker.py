"""Dice shaker, dealer- or player-activated (§ 670a.5(i)(1), § 621a.2(f)) over serial.
It reports three dice and which one is red, or "no roll" (§ 670a.13(a),(b); § 621a.10(a))."""

from __future__ import annotations

from typing import Protocol

from drivers.serialdev import SerialDevice


class Shaker(Protocol):
    def request_status(self) -> None: ...
    def arm(self, who: int) -> None: ...
    def activate(self, who: int) -> None: ...
    def disarm(self) -> None: ...
    def restart(self) -> bool: ...


class SerialShaker(SerialDevice):
    device = "shaker"

    def request_status(self) -> None:
        self.send("STATUS_REQ")

    def arm(self, who: int) -> None:
        self.send("ARM", who=who)

    def activate(self, who: int) -> None:
        self.send("ACTIVATE", who=who)

    def disarm(self) -> None:
        self.send("DISARM")
