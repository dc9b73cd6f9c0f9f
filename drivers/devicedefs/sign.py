"""The progressive sign / meter display (§ 670a.11(h)(3)(i)(B)(II))."""

from drivers.devicedefs import DeviceDecl
from drivers.protocol import msg

NAME = "sign"

DEVICE = DeviceDecl(
    name=NAME,
    driver="drivers.sign:SerialSign",
    simulator="hil.devices:SignSim",
    out_of_order=("none",),  # nothing stands in for it
    messages=(
        msg(NAME, "STATUS_REQ", 0x10),
        msg(NAME, "METERS", 0x11, tail="meters:levels"),
        msg(NAME, "HAND_LIGHT", 0x12, ("hand", "B"), ("mode", "B")),
        msg(NAME, "SEAT_LIGHT", 0x13, ("position", "B"), ("mode", "B")),
        msg(NAME, "MESSAGE", 0x14, tail="text:text"),
        msg(NAME, "CLEAR", 0x15),
        msg(NAME, "STATUS", 0x30, ("flags", "B")),
        msg(NAME, "ERROR", 0x36, ("code", "B"), tail="text:text"),
    ),
)
