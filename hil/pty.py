"""Pseudo-terminals for the HIL rig: the simulated device holds the master end;
the controller opens the slave's path with pyserial, exactly as it would open
``/dev/ttyUSB0``."""

from __future__ import annotations

import errno
import os
import select
import termios
import tty


class PtyEnd:
    """The device end of a pty; implements the ``drivers.link.Port`` protocol."""

    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave, termios.TCSANOW)   # no echo, no line discipline, 8 bits
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
            if e.errno == errno.EIO:      # no slave open at the moment
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
