"""The console's byte stream and line editor.

A :class:`Channel` is one end of a serial line: the master of a pty, a
connected socket (bridged to the UART by ``tablectl console``), or a UART.  The
terminal on the other end is raw, so the console does its own line editing:
echo, backspace, Ctrl-U (kill line), Ctrl-C (cancel), Ctrl-D (logout on an
empty line), tab completion, and hidden input for PINs.  The up and down arrow
keys recall earlier command lines (``history=True`` prompts only: never a PIN);
other escape sequences are swallowed.  Lines are ASCII, at most :data:`MAX_LINE`
long: a longer line is refused with a message when enter is pressed (nothing is
cut silently).
"""

from __future__ import annotations

import errno
import os
import select
import time
from collections.abc import Callable

MAX_LINE = 200
MAX_HISTORY = 50
CRLF = b"\r\n"


class Closed(Exception):
    """The other end went away (socket closed)."""


class Idle(Exception):
    """Nothing typed for the idle period."""


class Cancelled(Exception):
    """Ctrl-C."""


class Channel:
    """Non-blocking byte I/O on a file descriptor (pty master, socket, tty)."""

    def __init__(self, fd: int, *, name: str, eof_closes: bool = True, write_timeout: float = 1.0):
        self.fd = fd
        self.name = name
        self.eof_closes = eof_closes  # a pty master held open by us never "closes"
        self.write_timeout = write_timeout
        os.set_blocking(fd, False)
        self._pending = b""

    def read(self, timeout: float) -> bytes:
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        r, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not r:
            return b""
        try:
            data = os.read(self.fd, 256)
        except BlockingIOError:
            return b""
        except OSError as e:
            if e.errno == errno.EIO and not self.eof_closes:  # pty with nobody attached
                time.sleep(min(timeout, 0.1))
                return b""
            raise Closed(str(e)) from None
        if not data:
            if self.eof_closes:
                raise Closed("end of stream")
            return b""
        return data

    def unread(self, data: bytes) -> None:
        self._pending = data + self._pending

    def write(self, data: bytes) -> None:
        """Write everything, or drop what nobody reads within ``write_timeout``
        (a UART or pty with no terminal attached must never block the console)."""
        view = memoryview(data)
        deadline = time.monotonic() + self.write_timeout
        while view:
            try:
                n = os.write(self.fd, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except OSError as e:
                if e.errno == errno.EIO and not self.eof_closes:
                    return
                raise Closed(str(e)) from None
            left = deadline - time.monotonic()
            if left <= 0:
                return
            select.select([], [self.fd], [], left)


Completer = Callable[[str], list[str]]


class LineEditor:
    def __init__(self, chan: Channel, *, stop: Callable[[], bool] = lambda: False):
        self.chan = chan
        self.stop = stop
        self.history: list[str] = []  # command lines of this session, oldest first

    def write(self, text: str) -> None:
        """ASCII only (any serial terminal shows it): "§" is written "Sec."."""
        text = text.replace("§ ", "Sec. ").replace("§", "Sec.")
        self.chan.write(text.replace("\r\n", "\n").replace("\n", "\r\n").encode("ascii", "replace"))

    def println(self, text: str = "") -> None:
        self.write(text + "\n")

    def readline(
        self,
        prompt: str,
        *,
        echo: bool = True,
        idle_s: float | None = None,
        complete: Completer | None = None,
        mask_digits: bool = False,
        history: bool = False,
    ) -> str:
        """One line.  Raises :class:`Idle`, :class:`Cancelled` (Ctrl-C),
        :class:`Closed`, or EOFError (Ctrl-D on an empty line)."""
        self.write(prompt)
        buf = ""
        last = time.monotonic()
        esc = 0
        too_long = False
        back = 0  # how far up the history the arrows went (0: the line being typed)
        use_history = history and echo
        while True:
            if self.stop():
                raise Closed("console stopping")
            data = self.chan.read(0.2)
            if not data:
                if idle_s is not None and time.monotonic() - last > idle_s:
                    raise Idle()
                continue
            last = time.monotonic()
            for i, b in enumerate(data):
                if esc:  # ESC [ ... final byte
                    final = esc == 2 and 0x40 <= b <= 0x7E
                    esc = 0 if final or (esc == 1 and b != ord("[")) else 2
                    if final and use_history and b in (ord("A"), ord("B")) and self.history:
                        back = min(back + 1, len(self.history)) if b == ord("A") else max(back - 1, 0)
                        new = self.history[-back] if back else ""
                        self.write("\b \b" * len(buf) + new)
                        buf, too_long = new, False
                    continue
                if b == 0x1B:
                    esc = 1
                elif b in (0x0D, 0x0A):
                    rest = data[i + 1 :]
                    if b == 0x0D and rest[:1] == b"\n":
                        rest = rest[1:]
                    if rest:
                        self.chan.unread(rest)  # type-ahead: next line
                    self.write("\n")
                    if too_long:  # refused whole, never cut: a cut command could mean something else
                        self.write(f"error: line longer than {MAX_LINE} characters refused; nothing was done\n")
                        return self.readline(
                            prompt,
                            echo=echo,
                            idle_s=idle_s,
                            complete=complete,
                            mask_digits=mask_digits,
                            history=history,
                        )
                    if use_history and buf.strip() and (not self.history or self.history[-1] != buf):
                        self.history = (self.history + [buf])[-MAX_HISTORY:]
                    return buf
                elif b in (0x7F, 0x08):
                    if buf:
                        buf = buf[:-1]
                        if echo:
                            self.write("\b \b")
                elif b == 0x15:  # Ctrl-U
                    if echo:
                        self.write("\b \b" * len(buf))
                    buf, too_long = "", False
                elif b == 0x03:  # Ctrl-C
                    self.write("^C\n")
                    raise Cancelled()
                elif b == 0x04:  # Ctrl-D
                    if not buf:
                        self.write("\n")
                        raise EOFError()
                elif b == 0x09:
                    if complete is not None and echo:
                        buf = self._complete(prompt, buf, complete)
                elif 0x20 <= b < 0x7F and len(buf) >= MAX_LINE:
                    too_long = True
                elif 0x20 <= b < 0x7F:
                    buf += chr(b)
                    if echo:
                        self.write("*" if mask_digits and chr(b).isdigit() else chr(b))

    def _complete(self, prompt: str, buf: str, complete: Completer) -> str:
        words = buf.split(" ")
        prefix = words[-1]
        cands = complete(buf)
        if not cands:
            return buf
        common = os.path.commonprefix(cands)
        if len(cands) == 1:
            common += " "
        if len(common) > len(prefix):
            add = common[len(prefix) :]
            self.write(add)
            return buf + add
        self.write("\n" + "  ".join(cands) + "\n" + prompt + buf)
        return buf

    def interrupted(self) -> bool:
        """Non-blocking: did the user type Ctrl-C (or anything) to stop a running command?"""
        data = self.chan.read(0)
        return bool(data)
