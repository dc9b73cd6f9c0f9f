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
from dataclasses import dataclass

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
            pending, self._pending = self._pending, b""
            return pending
        r, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not r:
            return b""
        data = self._read_some(timeout)
        if data is None:
            return b""
        if not data:
            if self.eof_closes:
                raise Closed("end of stream")
            return b""
        return data

    def _write_some(self, view: memoryview) -> int | None:
        """Bytes written now (0: the other end is not reading); None: nobody is attached to the pty."""
        try:
            return os.write(self.fd, view)
        except BlockingIOError:
            return 0
        except OSError as e:
            if e.errno == errno.EIO and not self.eof_closes:
                return None
            raise Closed(str(e)) from None

    def _read_some(self, timeout: float) -> bytes | None:
        """What the fd has (b"": its end); None when there is nothing after all, or nobody is
        attached to the pty (then after a short pause, not to spin)."""
        try:
            return os.read(self.fd, 256)
        except BlockingIOError:
            return None
        except OSError as e:
            if e.errno == errno.EIO and not self.eof_closes:  # pty with nobody attached
                time.sleep(min(timeout, 0.1))
                return None
            raise Closed(str(e)) from None

    def unread(self, data: bytes) -> None:
        self._pending = data + self._pending

    def write(self, data: bytes) -> None:
        """Write everything, or drop what nobody reads within ``write_timeout``
        (a UART or pty with no terminal attached must never block the console)."""
        view = memoryview(data)
        deadline = time.monotonic() + self.write_timeout
        while view:
            n = self._write_some(view)
            if n is None:
                return
            if n:
                view = view[n:]
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                return
            select.select([], [self.fd], [], left)


Completer = Callable[[str], list[str]]


@dataclass
class _Line:
    """The line being typed in :meth:`LineEditor.readline`, and how it is read."""

    prompt: str
    echo: bool
    idle_s: float | None
    complete: Completer | None
    mask_digits: bool
    history: bool
    buf: str = ""
    esc: int = 0  # 1: after ESC, 2: inside ESC [ ...
    too_long: bool = False
    back: int = 0  # how far up the history the arrows went (0: the line being typed)

    @property
    def use_history(self) -> bool:
        return self.history and self.echo


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
        ln = _Line(prompt, echo, idle_s, complete, mask_digits, history)
        last = time.monotonic()
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
                if self._byte(ln, b):
                    return self._end_line(ln, b, data[i + 1 :])

    def _byte(self, ln: _Line, b: int) -> bool:
        """Apply one typed byte to the line; True at the end of the line (CR or LF)."""
        if ln.esc:  # ESC [ ... final byte
            self._escape(ln, b)
            return False
        if b in (0x0D, 0x0A):
            return True
        key = _KEYS.get(b)
        if key is not None:
            key(self, ln)
        elif 0x20 <= b < 0x7F:
            self._printable(ln, b)
        return False

    def _end_line(self, ln: _Line, b: int, rest: bytes) -> str:
        if b == 0x0D and rest[:1] == b"\n":
            rest = rest[1:]
        if rest:
            self.chan.unread(rest)  # type-ahead: next line
        self.write("\n")
        if ln.too_long:  # refused whole, never cut: a cut command could mean something else
            self.write(f"error: line longer than {MAX_LINE} characters refused; nothing was done\n")
            return self.readline(
                ln.prompt,
                echo=ln.echo,
                idle_s=ln.idle_s,
                complete=ln.complete,
                mask_digits=ln.mask_digits,
                history=ln.history,
            )
        self._remember(ln)
        return ln.buf

    def _remember(self, ln: _Line) -> None:
        """A line entered joins the history (not blank, not the same as the last one)."""
        if ln.use_history and ln.buf.strip() and (not self.history or self.history[-1] != ln.buf):
            self.history = (self.history + [ln.buf])[-MAX_HISTORY:]

    def _escape(self, ln: _Line, b: int) -> None:
        """One byte of an escape sequence (ESC [ ... final byte); at its end, up and down walk the
        history (when the line keeps one), any other sequence is dropped."""
        final = ln.esc == 2 and 0x40 <= b <= 0x7E
        ln.esc = 0 if final or (ln.esc == 1 and b != ord("[")) else 2
        if final and ln.use_history and b in (ord("A"), ord("B")) and self.history:
            self._recall(ln, up=b == ord("A"))

    def _recall(self, ln: _Line, *, up: bool) -> None:
        """The arrows: up/down the history (0: the line being typed)."""
        ln.back = min(ln.back + 1, len(self.history)) if up else max(ln.back - 1, 0)
        new = self.history[-ln.back] if ln.back else ""
        self.write("\b \b" * len(ln.buf) + new)
        ln.buf, ln.too_long = new, False

    def _printable(self, ln: _Line, b: int) -> None:
        if len(ln.buf) >= MAX_LINE:
            ln.too_long = True
            return
        ln.buf += chr(b)
        if ln.echo:
            self.write("*" if ln.mask_digits and chr(b).isdigit() else chr(b))

    def _esc_start(self, ln: _Line) -> None:
        ln.esc = 1

    def _backspace(self, ln: _Line) -> None:
        if ln.buf:
            ln.buf = ln.buf[:-1]
            if ln.echo:
                self.write("\b \b")

    def _kill_line(self, ln: _Line) -> None:  # Ctrl-U
        if ln.echo:
            self.write("\b \b" * len(ln.buf))
        ln.buf, ln.too_long = "", False

    def _interrupt(self, ln: _Line) -> None:  # Ctrl-C
        self.write("^C\n")
        raise Cancelled()

    def _end_of_file(self, ln: _Line) -> None:  # Ctrl-D
        if not ln.buf:
            self.write("\n")
            raise EOFError()

    def _tab(self, ln: _Line) -> None:
        if ln.complete is not None and ln.echo:
            ln.buf = self._complete(ln.prompt, ln.buf, ln.complete)

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


# the control keys of LineEditor.readline
_KEYS: dict[int, Callable[[LineEditor, _Line], None]] = {
    0x1B: LineEditor._esc_start,
    0x7F: LineEditor._backspace,
    0x08: LineEditor._backspace,
    0x15: LineEditor._kill_line,
    0x03: LineEditor._interrupt,
    0x04: LineEditor._end_of_file,
    0x09: LineEditor._tab,
}
