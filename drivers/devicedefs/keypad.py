"""The dealer's keypad (card entry when the shoe does not read cards, SPEC § 1)."""

from drivers.devicedefs import DeviceDecl
from drivers.protocol import msg

NAME = "keypad"

DEVICE = DeviceDecl(
    name=NAME,
    driver="drivers.keypad:SerialKeypad",
    simulator="hil.devices:KeypadSim",
    messages=(
        msg(NAME, "STATUS_REQ", 0x10),
        msg(NAME, "PROMPT", 0x11, ("prompt", "H"), tail="text:text"),
        msg(NAME, "STATUS", 0x30, ("flags", "B")),
        msg(NAME, "ENTRY", 0x31, ("prompt", "H"), tail="text:text"),
        msg(NAME, "ERROR", 0x36, ("code", "B"), tail="text:text"),
    ),
)
