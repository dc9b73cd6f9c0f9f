"""Pseudo-terminals for the HIL rig: the simulated device holds the master end;
the controller opens the slave's path with pyserial, exactly as it would open
``/dev/ttyUSB0``."""

from __future__ import annotations

import errno
import os
import select
import termios
import tty
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drivers.framing import FrameDecoder

from drivers.framing import ACK, NAK, Frame, FrameDecoder, encode_frame


class PtyEnd:
    """The device end of a pty; implements the ``drivers.link.Port`` protocol."""

    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave, termios.TCSANOW)  # no echo, no line discipline, 8 bits
        self.path = os.ttyname(self._slave)
        self.closed = False
        self.read_timeout = 0.02

    def read(self, size: int = 1) -> bytes:
        if self.closed:
            raise OSError(errno.EBADF, "pty closed")
        r, _, _ = select.select([self.master], [], [], self.read_timeout)
        if not r:
            return b""
        try:
            return os.read(self.master, size)
        except OSError as e:
            if e.errno == errno.EIO:  # no slave open at the moment
                return b""
            raise

    def write(self, data: bytes) -> int:
        if self.closed:
            raise OSError(errno.EBADF, "pty closed")
        view = memoryview(data)
        while view:
            n = os.write(self.master, view)
            view = view[n:]
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for fd in (self.master, self._slave):
                try:
                    os.close(fd)
                except OSError:
                    pass


class SimPort:
    """The port a simulator's :class:`drivers.link.Link` reads and writes: the current
    :class:`PtyEnd`, with wire-level fault injection (docs/hil.md):

    * ``mute`` — the device is dead: nothing it receives is read, nothing is sent
      (no ACKs either);
    * ``corrupt_next`` / ``corrupt_all`` — outgoing frames get their CRC damaged
      (one frame per ``write``; the controller must NAK them);
    * ``nak_all`` — a NAK storm: every frame received is answered with NAK and
      never reaches the device;
    * ``end = None`` — unplugged (see ``SimDevice.unplug``): reads return nothing,
      writes vanish, the link above never notices.
    """

    def __init__(self, end: PtyEnd):
        self.end: PtyEnd | None = end
        self.mute = False
        self.corrupt_next = 0
        self.corrupt_all = False
        self.nak_all = False
        self.corrupted = 0
        self.naks = 0
        self._nak_decoder: FrameDecoder | None = None

    def read(self, size: int = 1) -> bytes:
        import time

        end = self.end
        if end is None:
            time.sleep(0.02)
            return b""
        try:
            data = end.read(size)
        except OSError:
            if end is not self.end:  # unplugged or replaced under us
                return b""
            raise
        if not data or self.mute:
            return b""
        if self.nak_all:
            self._nak_every_frame(data)
            return b""
        self._nak_decoder = None
        return data

    def _nak_every_frame(self, data: bytes) -> None:
        """``nak_all``: every frame the controller sends (but its ACKs and NAKs) is NAKed, none delivered."""
        if self._nak_decoder is None:
            self._nak_decoder = FrameDecoder()
        for item in self._nak_decoder.feed(data):
            if isinstance(item, Frame) and item.type not in (ACK, NAK):
                self.naks += 1
                self._write(encode_frame(0, NAK, b""))

    def write(self, data: bytes) -> int:
        if self.mute:
            return len(data)
        if self.corrupt_all or self.corrupt_next > 0:
            if self.corrupt_next > 0:
                self.corrupt_next -= 1
            self.corrupted += 1
            b = bytearray(data)
            b[-1] ^= 0x5A  # the CRC's low byte: the frame must fail its check
            data = bytes(b)
        return self._write(data)

    def _write(self, data: bytes) -> int:
        end = self.end
        if end is None:
            return len(data)
        try:
            return end.write(data)
        except OSError:
            if end is not self.end:
                return len(data)
            raise

    def close(self) -> None:
        end, self.end = self.end, None
        if end is not None:
            end.close()
