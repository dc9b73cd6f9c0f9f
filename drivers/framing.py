"""One framing for every serial device (docs/protocols.md).

    +------+-----+-----+------+-------------+---------+
    | 0xA5 | LEN | SEQ | TYPE | PAYLOAD ... | CRC16   |
    +------+-----+-----+------+-------------+---------+
      1      1     1     1      LEN bytes     2 (big-endian)

* ``LEN`` is the payload length, 0..250.
* ``SEQ`` is the sender's sequence number 0..255 (wrapping); ACK/NAK frames
  carry the sequence number they answer in their payload.
* ``CRC16`` is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection,
  no final xor) over LEN, SEQ, TYPE and PAYLOAD.

:class:`FrameDecoder` turns an arbitrary byte stream into frames and protocol
errors: it never raises anything else and never hangs, and after any garbage a
valid frame is always recovered (it re-scans from the byte after a bad start).

This module is shared by the drivers (controller end) and the HIL simulators
(device end): both ends speak exactly the same code.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass

START = 0xA5
MAX_PAYLOAD = 250
HEADER = 4  # START LEN SEQ TYPE
OVERHEAD = HEADER + 2

# link-level message types, common to every device (0x00-0x0F)
ACK = 0x06
NAK = 0x0F
PING = 0x01  # heartbeat; the peer answers with ACK
HELLO = 0x02  # opens a session (always sequence 0); resets the peer's duplicate filter


def crc16_ccitt(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE; ``crc16_ccitt(b"123456789") == 0x29B1``.

    The standard library's ``binascii.crc_hqx`` is this CRC (poly 0x1021, MSB first,
    no reflection, no final xor) with the initial value as its argument, in C: tens
    of times faster than a table walk in Python (``tests/drivers/test_crc.py`` checks
    it against a bitwise reference)."""
    return binascii.crc_hqx(data, crc)


@dataclass(frozen=True)
class Frame:
    seq: int
    type: int
    payload: bytes = b""

    def encode(self) -> bytes:
        return encode_frame(self.seq, self.type, self.payload)


class FrameError(ValueError):
    """A protocol error found while decoding (bad CRC, bad length)."""


def encode_frame(seq: int, mtype: int, payload: bytes = b"") -> bytes:
    if not 0 <= seq <= 255:
        raise FrameError(f"sequence number {seq} out of range 0..255")
    if not 0 <= mtype <= 255:
        raise FrameError(f"message type {mtype} out of range 0..255")
    if len(payload) > MAX_PAYLOAD:
        raise FrameError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = bytes((len(payload), seq, mtype)) + bytes(payload)
    crc = crc16_ccitt(body)
    return bytes((START,)) + body + bytes((crc >> 8, crc & 0xFF))


class FrameDecoder:
    """Incremental decoder: ``feed(data)`` returns the frames and errors found, in order."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.frames_ok = 0
        self.errors = 0

    def feed(self, data: bytes) -> list[Frame | FrameError]:
        self._buf += data
        out: list[Frame | FrameError] = []
        buf = self._buf
        while True:
            i = buf.find(START)
            if i < 0:
                if buf:
                    out.append(FrameError(f"{len(buf)} byte(s) of noise before any start byte"))
                    self.errors += 1
                buf.clear()
                break
            if i > 0:
                out.append(FrameError(f"{i} byte(s) of noise before a start byte"))
                self.errors += 1
                del buf[:i]
            if len(buf) < 2:
                break
            length = buf[1]
            if length > MAX_PAYLOAD:
                out.append(FrameError(f"length {length} exceeds {MAX_PAYLOAD}"))
                self.errors += 1
                del buf[:1]
                continue
            total = OVERHEAD + length
            if len(buf) < total:
                break
            body = bytes(buf[1 : HEADER + length])
            got = (buf[total - 2] << 8) | buf[total - 1]
            want = crc16_ccitt(body)
            if got != want:
                out.append(
                    FrameError(f"CRC mismatch (got {got:04x}, computed {want:04x}) on seq {buf[2]} type 0x{buf[3]:02x}")
                )
                self.errors += 1
                del buf[:1]  # re-scan from the next byte: a start byte may hide inside
                continue
            out.append(Frame(seq=buf[2], type=buf[3], payload=bytes(buf[HEADER : HEADER + length])))
            self.frames_ok += 1
            del buf[:total]
        return out

    @property
    def pending(self) -> int:
        return len(self._buf)

    def resync(self) -> list[Frame | FrameError]:
        """Give up on a partial frame that missed its deadline: drop its start byte
        and re-scan what follows (a real frame may start inside it)."""
        if not self._buf:
            return []
        self.errors += 1
        del self._buf[:1]
        rest = bytes(self._buf)
        self._buf.clear()
        return [FrameError("partial frame missed its deadline")] + self.feed(rest)
