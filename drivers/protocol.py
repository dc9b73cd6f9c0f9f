"""Application messages of each serial device, as data (docs/protocols.md), each device's table
in its declaration (drivers/devicedefs/).

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

import functools
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


def msg(device: str, name: str, type_: int, *fields: tuple[str, str], tail: str | None = None) -> MsgSpec:
    """One message of ``device``'s table (its declaration, drivers/devicedefs/): host to device
    below 0x30, device to host from 0x30."""
    return MsgSpec(device, name, type_, tuple(fields), tail, "host" if type_ < 0x30 else "device")


@functools.cache
def _tables() -> tuple[tuple[MsgSpec, ...], dict[tuple[str, int], MsgSpec], dict[tuple[str, str], MsgSpec]]:
    """Every declared device's messages (drivers/devicedefs/), by type and by name."""
    from drivers.devicedefs import devices

    messages = tuple(m for d in devices().values() for m in d.messages)
    return messages, {(m.device, m.type): m for m in messages}, {(m.device, m.name): m for m in messages}


def forget() -> None:
    """Read the declarations again (a test that adds a device)."""
    _tables.cache_clear()


def messages() -> tuple[MsgSpec, ...]:
    """Every message of every declared device."""
    return _tables()[0]


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
        return _tables()[2][(device, name)]
    except KeyError:
        raise ProtocolError(f"no message {name!r} for device {device!r}") from None


def encode(device: str, name: str, **values: Any) -> tuple[int, bytes]:
    s = spec(device, name)
    return s.type, s.encode(**values)


def decode(device: str, mtype: int, payload: bytes) -> tuple[str, dict[str, Any]]:
    s = _tables()[1].get((device, mtype))
    if s is None:
        raise ProtocolError(f"{device}: unknown message type 0x{mtype:02x}")
    return s.name, s.decode(payload)
