"""The dealer's keypad over serial (SPEC § 1: "a keypad for entering a winning hand
when the shoe cannot read cards").  The keypad has its own line editor and display:
the controller sends a PROMPT ("SEAT 3 CARDS?"), the dealer keys the cards and
presses enter, and the keypad sends the whole line as one ENTRY.  The driver only
carries text: parsing the cards and deciding what they mean is the controller's
job (``controller.rules.cards.parse_cards``).

Every PROMPT carries a number (1..65535, wrapping; 0 = nothing shown yet) and the
keypad stamps each ENTRY with the number of the prompt on its display when enter was
pressed, so the controller applies an entry only to the prompt it answers: a line
received twice (a double enter) or keyed before a newer prompt arrived is refused
(controller/play/deciding.py)."""

from __future__ import annotations

from typing import Protocol

from drivers.serialdev import SerialDevice


class Keypad(Protocol):
    prompt_id: int  # the number of the last prompt sent (0: none yet)

    def request_status(self) -> None: ...
    def prompt(self, text: str) -> int: ...
    def restart(self) -> bool: ...


MAX_PROMPT_ID = 0xFFFF


class SerialKeypad(SerialDevice):
    device = "keypad"
    prompt_id = 0

    def request_status(self) -> None:
        self.send("STATUS_REQ")

    def prompt(self, text: str) -> int:
        """Show ``text``; returns its prompt number (called on the reactor thread only)."""
        self.prompt_id = self.prompt_id % MAX_PROMPT_ID + 1
        self.send("PROMPT", prompt=self.prompt_id, text=text)
        return self.prompt_id
