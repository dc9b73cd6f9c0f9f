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
It resynchronises at once, without waiting for the frame deadline: a start byte
whose header cannot begin a frame (``TYPE`` above 0x4F, ``LEN`` above 250) is
dropped as noise on the spot, and while a partial frame is pending, a complete
valid frame that starts at a later start byte shows the pending one was noise.

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
HELLO = 0x02  # opens a session (always sequence 0); resets the peer's replay window
MAX_TYPE = 0x4F  # 0x00-0x0F link, 0x10-0x2F host -> device, 0x30-0x4F device -> host


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
    """A protocol error found while decoding.  ``kind``: ``noise`` (bytes that are not a
    frame), ``header`` (a start byte whose LEN or TYPE cannot begin a frame), ``crc`` (a
    plausible frame that fails its CRC: worth a NAK), ``deadline`` (a partial frame that
    never completed), ``encode`` (a frame we refused to build)."""

    def __init__(self, message: str, kind: str = "encode"):
        super().__init__(message)
        self.kind = kind


def encode_frame(seq: int, mtype: int, payload: bytes = b"") -> bytes:
    if not 0 <= seq <= 255:
        raise FrameError(f"sequence number {seq} out of range 0..255")
    if not 0 <= mtype <= MAX_TYPE:
        raise FrameError(f"message type {mtype} out of range 0..0x{MAX_TYPE:02X}")
    if len(payload) > MAX_PAYLOAD:
        raise FrameError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = bytes((len(payload), seq, mtype)) + bytes(payload)
    crc = crc16_ccitt(body)
    return bytes((START,)) + body + bytes((crc >> 8, crc & 0xFF))


def _frame_at(buf: bytearray, i: int) -> int:
    """Length of a complete frame with a valid CRC starting at ``buf[i]`` (a start byte), else 0."""
    if len(buf) - i < OVERHEAD:
        return 0
    length, mtype = buf[i + 1], buf[i + 3]
    if length > MAX_PAYLOAD or mtype > MAX_TYPE:
        return 0
    total = OVERHEAD + length
    if len(buf) - i < total:
        return 0
    got = (buf[i + total - 2] << 8) | buf[i + total - 1]
    return total if got == crc16_ccitt(bytes(buf[i + 1 : i + HEADER + length])) else 0


class FrameDecoder:
    """Incremental decoder: ``feed(data)`` returns the frames and errors found, in order."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.frames_ok = 0
        self.errors = 0
        self.resyncs = 0  # pending partial frames given up at once for a valid frame behind them

    def _error(self, out: list[Frame | FrameError], msg: str, kind: str) -> None:
        out.append(FrameError(msg, kind))
        self.errors += 1

    def _frame_behind(self) -> int:
        """The offset of the first complete valid frame behind a pending partial one (0: none).
        (A frame-like run inside a real frame's payload passes its CRC by chance once in
        65,536, and only while the real frame is still incomplete.)"""
        buf = self._buf
        i = buf.find(START, 1)
        while i > 0:
            if _frame_at(buf, i):
                return i
            i = buf.find(START, i + 1)
        return 0

    def feed(self, data: bytes) -> list[Frame | FrameError]:
        self._buf += data
        out: list[Frame | FrameError] = []
        buf = self._buf
        while True:
            i = buf.find(START)
            if i < 0:
                if buf:
                    self._error(out, f"{len(buf)} byte(s) of noise before any start byte", "noise")
                buf.clear()
                break
            if i > 0:
                self._error(out, f"{i} byte(s) of noise before a start byte", "noise")
                del buf[:i]
            if len(buf) < 2:
                break
            length = buf[1]
            if length > MAX_PAYLOAD:
                self._error(out, f"length {length} exceeds {MAX_PAYLOAD}", "header")
                del buf[:1]
                continue
            if len(buf) >= HEADER and buf[3] > MAX_TYPE:
                self._error(out, f"type 0x{buf[3]:02x} is not a message type (0x00..0x{MAX_TYPE:02x})", "header")
                del buf[:1]
                continue
            total = OVERHEAD + length
            if len(buf) < total:
                j = self._frame_behind()
                if j:  # the pending start byte was noise: resynchronise now, not at the deadline
                    self._error(out, f"{j} byte(s) of an unfinished frame before a valid frame", "noise")
                    self.resyncs += 1
                    del buf[:j]
                    continue
                break
            body = bytes(buf[1 : HEADER + length])
            got = (buf[total - 2] << 8) | buf[total - 1]
            want = crc16_ccitt(body)
            if got != want:
                self._error(
                    out, f"CRC mismatch (got {got:04x}, computed {want:04x}) on seq {buf[2]} type 0x{buf[3]:02x}", "crc"
                )
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
        return [FrameError("partial frame missed its deadline", "deadline")] + self.feed(rest)
