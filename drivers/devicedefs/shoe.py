"""The automated dealing shoe (§ 670a.10, § 670a.13(f),(h),(k),(m); multi-deck: § 686a.3, § 686a.7(c),(d))."""

from drivers.devicedefs import DeviceDecl
from drivers.protocol import msg

NAME = "shoe"

DEVICE = DeviceDecl(
    name=NAME,
    driver="drivers.shoe:SerialShoe",
    simulator="hil.devices:ShoeSim",
    diagnostics="controller.console.cmd_diag:diag_shoe",
    out_of_order=("manual",),  # dealt by hand
    messages=(
        msg(NAME, "STATUS_REQ", 0x10),
        msg(NAME, "SHUFFLE", 0x11),
        msg(NAME, "DISPENSE", 0x12, ("stack", "B"), ("cards", "B")),
        msg(NAME, "COUNT_REQ", 0x13),
        # card counts are u16: a six-deck Over/Under shoe holds 312 cards (§ 686a.3(a))
        msg(NAME, "STATUS", 0x30, ("flags", "B"), ("remaining", "H"), ("stacks", "B")),
        msg(NAME, "SHUFFLED", 0x31, ("cards", "H"), ("cover", "H")),
        msg(NAME, "STACK", 0x32, ("stack", "B"), ("count", "B"), ("remaining", "H"), tail="bytes:cards"),
        msg(NAME, "REMAINING", 0x33, ("remaining", "H"), ("stacks", "B")),
        msg(NAME, "JAM", 0x34, ("stack", "B"), ("dispensed", "B")),
        msg(NAME, "FACE_UP", 0x35, ("stack", "B"), ("card", "B")),
        msg(NAME, "ERROR", 0x36, ("code", "B"), tail="text:text"),
        msg(NAME, "SHUFFLE_FAILED", 0x37, ("code", "B"), ("cards", "H")),
        # the cover card came out while dealing ``stack`` after ``dealt`` of its cards (§ 686a.7(d))
        msg(NAME, "COVER", 0x38, ("stack", "B"), ("dealt", "B"), ("remaining", "H")),
    ),
)
