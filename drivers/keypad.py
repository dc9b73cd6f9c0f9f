"""The dealer's keypad over serial (SPEC § 1: "a keypad for entering a winning hand
when the shoe cannot read cards").  The keypad has its own line editor and display:
the controller sends a PROMPT ("SEAT 3 CARDS?"), the dealer keys the cards and
presses enter, and the keypad sends the whole line as one ENTRY.  The driver only
carries text: parsing the cards and deciding what they mean is the controller's
job (``controller.rules.cards.parse_cards``)."""

from __future__ import annotations

from typing import Protocol

from drivers.serialdev import SerialDevice


class Keypad(Protocol):
    def request_status(self) -> None: ...
    def prompt(self, text: str) -> None: ...
    def restart(self) -> bool: ...


class SerialKeypad(SerialDevice):
    device = "keypad"

    def request_status(self) -> None:
        self.send("STATUS_REQ")

    def prompt(self, text: str) -> None:
        self.send("PROMPT", text=text)
