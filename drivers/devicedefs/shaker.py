"""The dice shaker (§ 670a.5(i)(1), § 621a.2(f), § 621a.10)."""

from drivers.devicedefs import DeviceDecl
from drivers.protocol import msg

NAME = "shaker"

DEVICE = DeviceDecl(
    name=NAME,
    driver="drivers.shaker:SerialShaker",
    simulator="hil.devices:ShakerSim",
    diagnostics="controller.console.cmd_diag:diag_shaker",
    out_of_order=("rng",),  # the starting position by RNG (§ 670a.5(i)(2))
    messages=(
        msg(NAME, "STATUS_REQ", 0x10),
        msg(NAME, "ARM", 0x11, ("who", "B")),
        msg(NAME, "ACTIVATE", 0x12, ("who", "B")),
        msg(NAME, "DISARM", 0x13),
        msg(NAME, "STATUS", 0x30, ("flags", "B")),
        msg(NAME, "SHAKING", 0x31, ("who", "B"), ("planned_ms", "H")),
        msg(NAME, "RESULT", 0x32, ("d1", "B"), ("d2", "B"), ("d3", "B"), ("red", "B"), ("shake_ms", "H")),
        msg(NAME, "NO_ROLL", 0x33, ("reason", "B"), ("shake_ms", "H")),
        msg(NAME, "LID", 0x34, ("open", "B")),
        msg(NAME, "ERROR", 0x36, ("code", "B"), tail="text:text"),
    ),
)
