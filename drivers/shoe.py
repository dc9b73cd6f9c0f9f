"""Automated dealing shoe (§ 670a.10) over serial.  Card reading is optional:
cards the shoe did not read come back as ``CARD_UNREAD`` and the dealer's keypad
supplies them.  The shoe never decides anything about a wager."""

from __future__ import annotations

from typing import Protocol

from drivers.serialdev import SerialDevice


class Shoe(Protocol):
    def request_status(self) -> None: ...
    def shuffle(self) -> None: ...
    def dispense(self, stack: int, cards: int) -> None: ...
    def request_count(self) -> None: ...


class SerialShoe(SerialDevice):
    device = "shoe"

    def request_status(self) -> None:
        self.send("STATUS_REQ")

    def shuffle(self) -> None:
        self.send("SHUFFLE")

    def dispense(self, stack: int, cards: int) -> None:
        self.send("DISPENSE", stack=stack, cards=cards)

    def request_count(self) -> None:
        self.send("COUNT_REQ")
