"""Automated shuffler and dealing shoe (§ 670a.10) over serial.

The shoe reports its status (loaded, shuffled, door, jammed, reads cards), each
stack it dispenses (with the cards it read, or ``CARD_UNREAD``: card reading is
optional and the dealer's keypad then supplies them), the cards remaining, jams
(§ 670a.13(m)), cards found face up (§ 670a.13(f)) and failed shuffles
(§ 670a.13(l)).  The shoe never decides anything about a wager: every message is
posted to the controller as it comes (drivers/serialdev.py)."""

from __future__ import annotations

from typing import Protocol

from drivers.serialdev import SerialDevice


class Shoe(Protocol):
    def request_status(self) -> None: ...
    def shuffle(self) -> None: ...
    def dispense(self, stack: int, cards: int) -> None: ...
    def request_count(self) -> None: ...
    def restart(self) -> bool: ...


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
