"""Application messages of each serial device, as data (docs/protocols.md).

Each message is a :class:`MsgSpec`: a type byte and a list of fixed fields
(``struct`` formats, big-endian) optionally followed by one variable-length
tail (a list of card bytes, a UTF-8 text, or a list of meter records).  Both
the drivers and the HIL simulators encode and decode through this table, so the
two ends cannot drift apart, and the documentation examples are checked against
it by a test.

Type ranges: 0x00-0x0F link layer (drivers/framing.py), 0x10-0x2F host to
device, 0x30-0x4F device to host.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drivers.framing import MAX_PAYLOAD

# card byte: cards.py numbering 0..51, 52 = joker, 0xFF = not read
CARD_UNREAD = 0xFF
NO_COVER = 0  # SHUFFLED.cover: the stack has no cover card (a single deck shuffled every round)
MAX_TEXT = 200  # bytes of UTF-8 in a text tail


class ProtocolError(ValueError):
    """A payload that does not match its message's layout."""


@dataclass(frozen=True)
class MsgSpec:
    device: str
    name: str
    type: int
    fields: tuple[tuple[str, str], ...] = ()
    tail: str | None = None  # None | "bytes:<name>" | "text:<name>" | "meters:<name>"
    direction: str = "host"  # "host" (host -> device) or "device" (device -> host)

    @property
    def fmt(self) -> str:
        return ">" + "".join(f for _, f in self.fields)

    def encode(self, **values: Any) -> bytes:
        try:
            head = struct.pack(self.fmt, *(values[n] for n, _ in self.fields))
        except KeyError as e:
            raise ProtocolError(f"{self.device}.{self.name}: missing field {e.args[0]!r}") from None
        except struct.error as e:
            raise ProtocolError(f"{self.device}.{self.name}: {e}") from None
        if self.tail is None:
            return head
        kind, name = self.tail.split(":")
        v = values.get(name, b"" if kind != "meters" else [])
        try:
            tail = _TAIL_ENCODERS[kind](v)
        except (ValueError, TypeError, struct.error) as e:
            raise ProtocolError(f"{self.device}.{self.name}: {name}: {e}") from None
        if len(head) + len(tail) > MAX_PAYLOAD:
            raise ProtocolError(
                f"{self.device}.{self.name}: payload of {len(head) + len(tail)} bytes exceeds {MAX_PAYLOAD}"
            )
        return head + tail

    def decode(self, payload: bytes) -> dict[str, Any]:
        n = struct.calcsize(self.fmt)
        if len(payload) < n or (self.tail is None and len(payload) != n):
            raise ProtocolError(
                f"{self.device}.{self.name}: payload of {len(payload)} byte(s), layout needs "
                f"{n}{'+' if self.tail else ''}"
            )
        out: dict[str, Any] = dict(zip((f for f, _ in self.fields), struct.unpack(self.fmt, payload[:n])))
        if self.tail is not None:
            kind, name = self.tail.split(":")
            try:
                out[name] = _TAIL_DECODERS[kind](payload[n:])
            except ValueError as e:
                raise ProtocolError(f"{self.device}.{self.name}: {e}") from None
        return out


def _encode_text(v: Any) -> bytes:
    """At most :data:`MAX_TEXT` bytes of UTF-8, cut on a character boundary."""
    return str(v).encode("utf-8")[:MAX_TEXT].decode("utf-8", "ignore").encode("utf-8")


def _encode_meters(v: Any) -> bytes:
    """A list of (level, cents), 5 bytes each."""
    return b"".join(struct.pack(">BI", lvl, cents) for lvl, cents in v)


def _decode_text(rest: bytes) -> str:
    try:
        return rest.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("text is not UTF-8") from None


def _decode_meters(rest: bytes) -> list[tuple[Any, ...]]:
    if len(rest) % 5:
        raise ValueError("meter records must be 5 bytes each")
    return [struct.unpack(">BI", rest[i : i + 5]) for i in range(0, len(rest), 5)]


#: a message's variable tail ("bytes:", "text:" or "meters:" in its layout), to and from bytes
_TAIL_ENCODERS: dict[str, Callable[[Any], bytes]] = {"bytes": bytes, "text": _encode_text, "meters": _encode_meters}
_TAIL_DECODERS: dict[str, Callable[[bytes], Any]] = {"bytes": list, "text": _decode_text, "meters": _decode_meters}


def _m(device: str, name: str, type_: int, *fields: tuple[str, str], tail: str | None = None) -> MsgSpec:
    return MsgSpec(device, name, type_, tuple(fields), tail, "host" if type_ < 0x30 else "device")


MESSAGES: tuple[MsgSpec, ...] = (
    # ---- automated dealing shoe (§ 670a.10, § 670a.13(f),(h),(k),(m); multi-deck: § 686a.3, § 686a.7(c),(d))
    _m("shoe", "STATUS_REQ", 0x10),
    _m("shoe", "SHUFFLE", 0x11),
    _m("shoe", "DISPENSE", 0x12, ("stack", "B"), ("cards", "B")),
    _m("shoe", "COUNT_REQ", 0x13),
    # card counts are u16: a six-deck Over/Under shoe holds 312 cards (§ 686a.3(a))
    _m("shoe", "STATUS", 0x30, ("flags", "B"), ("remaining", "H"), ("stacks", "B")),
    _m("shoe", "SHUFFLED", 0x31, ("cards", "H"), ("cover", "H")),
    _m("shoe", "STACK", 0x32, ("stack", "B"), ("count", "B"), ("remaining", "H"), tail="bytes:cards"),
    _m("shoe", "REMAINING", 0x33, ("remaining", "H"), ("stacks", "B")),
    _m("shoe", "JAM", 0x34, ("stack", "B"), ("dispensed", "B")),
    _m("shoe", "FACE_UP", 0x35, ("stack", "B"), ("card", "B")),
    _m("shoe", "ERROR", 0x36, ("code", "B"), tail="text:text"),
    _m("shoe", "SHUFFLE_FAILED", 0x37, ("code", "B"), ("cards", "H")),
    # the cover card came out while dealing ``stack`` after ``dealt`` of its cards (§ 686a.7(d))
    _m("shoe", "COVER", 0x38, ("stack", "B"), ("dealt", "B"), ("remaining", "H")),
    # ---- dice shaker (§ 670a.5(i)(1), § 621a.2(f), § 621a.10)
    _m("shaker", "STATUS_REQ", 0x10),
    _m("shaker", "ARM", 0x11, ("who", "B")),
    _m("shaker", "ACTIVATE", 0x12, ("who", "B")),
    _m("shaker", "DISARM", 0x13),
    _m("shaker", "STATUS", 0x30, ("flags", "B")),
    _m("shaker", "SHAKING", 0x31, ("who", "B"), ("planned_ms", "H")),
    _m("shaker", "RESULT", 0x32, ("d1", "B"), ("d2", "B"), ("d3", "B"), ("red", "B"), ("shake_ms", "H")),
    _m("shaker", "NO_ROLL", 0x33, ("reason", "B"), ("shake_ms", "H")),
    _m("shaker", "LID", 0x34, ("open", "B")),
    _m("shaker", "ERROR", 0x36, ("code", "B"), tail="text:text"),
    # ---- progressive sign / meter display (§ 670a.11(h)(3)(i)(B)(II))
    _m("sign", "STATUS_REQ", 0x10),
    _m("sign", "METERS", 0x11, tail="meters:levels"),
    _m("sign", "HAND_LIGHT", 0x12, ("hand", "B"), ("mode", "B")),
    _m("sign", "SEAT_LIGHT", 0x13, ("position", "B"), ("mode", "B")),
    _m("sign", "MESSAGE", 0x14, tail="text:text"),
    _m("sign", "CLEAR", 0x15),
    _m("sign", "STATUS", 0x30, ("flags", "B")),
    _m("sign", "ERROR", 0x36, ("code", "B"), tail="text:text"),
    # ---- dealer keypad (card entry when the shoe does not read cards, SPEC § 1)
    _m("keypad", "STATUS_REQ", 0x10),
    _m("keypad", "PROMPT", 0x11, ("prompt", "H"), tail="text:text"),
    _m("keypad", "STATUS", 0x30, ("flags", "B")),
    _m("keypad", "ENTRY", 0x31, ("prompt", "H"), tail="text:text"),
    _m("keypad", "ERROR", 0x36, ("code", "B"), tail="text:text"),
)

DEVICES: tuple[str, ...] = ("shoe", "shaker", "sign", "keypad")

BY_TYPE: dict[tuple[str, int], MsgSpec] = {(m.device, m.type): m for m in MESSAGES}
BY_NAME: dict[tuple[str, str], MsgSpec] = {(m.device, m.name): m for m in MESSAGES}

# shoe STATUS flags
SHOE_LOADED, SHOE_SHUFFLED, SHOE_DOOR_OPEN, SHOE_JAMMED, SHOE_READS_CARDS = 0x01, 0x02, 0x04, 0x08, 0x10
# shoe SHUFFLE_FAILED codes (§ 670a.13(l): jams, stops shuffling, fails to complete a cycle)
SHUFFLE_JAM, SHUFFLE_STOPPED, SHUFFLE_INCOMPLETE = 1, 2, 3
# ERROR codes, every device
ERR_BAD_MESSAGE, ERR_BAD_STATE, ERR_HARDWARE, ERR_DOOR_OPEN = 1, 2, 3, 4
# shaker STATUS flags
SHAKER_LID_CLOSED, SHAKER_SEALED, SHAKER_ARMED, SHAKER_SHAKING = 0x01, 0x02, 0x04, 0x08
# shaker NO_ROLL reasons (§ 670a.13(a),(b); § 621a.10(a))
NO_ROLL_NOT_FLAT, NO_ROLL_DIE_OUT, NO_ROLL_SHORT_SHAKE, NO_ROLL_LID_OPEN = 1, 2, 3, 4
# keypad STATUS flags
KEYPAD_READY = 0x01
# sign light modes
LIGHT_OFF, LIGHT_ON, LIGHT_BLINK = 0, 1, 2
# shaker "who": 0 = dealer, 1..8 = the activation button at that betting position
DEALER = 0


def spec(device: str, name: str) -> MsgSpec:
    try:
        return BY_NAME[(device, name)]
    except KeyError:
        raise ProtocolError(f"no message {name!r} for device {device!r}") from None


def encode(device: str, name: str, **values: Any) -> tuple[int, bytes]:
    s = spec(device, name)
    return s.type, s.encode(**values)


def decode(device: str, mtype: int, payload: bytes) -> tuple[str, dict[str, Any]]:
    s = BY_TYPE.get((device, mtype))
    if s is None:
        raise ProtocolError(f"{device}: unknown message type 0x{mtype:02x}")
    return s.name, s.decode(payload)
