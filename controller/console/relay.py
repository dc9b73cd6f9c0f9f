"""The console relay: moves bytes between a serial UART (or this terminal) and
the controller's console socket.  It knows nothing of logins or commands —
the controller does all of that and logs it — so it needs no access to the
ledger, the pins or the table: only its UART and the socket
(systemd/tablectl-console@.service).

When the controller is not running (restarting, stopped) the relay says so on
the UART once and keeps retrying, so a technician at the console sees why
nothing answers.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import termios
import threading
import tty
from dataclasses import dataclass
from pathlib import Path

RETRY_S = 1.0


def open_uart(path: str, baud: int) -> int:
    """Open a UART raw at ``baud`` (8N1, no flow control, no modem control)."""
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        tty.setraw(fd)
    except termios.error as e:  # not a terminal (a file, /dev/full...)
        os.close(fd)
        raise ValueError(f"not a serial port or terminal ({e.args[-1]})") from None
    attrs = termios.tcgetattr(fd)
    speed = getattr(termios, f"B{baud}", None)
    if speed is None:
        os.close(fd)
        raise ValueError(f"unsupported baud rate {baud}")
    attrs[2] |= termios.CLOCAL | termios.CREAD
    attrs[2] &= ~termios.CRTSCTS if hasattr(termios, "CRTSCTS") else ~0
    attrs[4] = attrs[5] = speed
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
            view = view[n:]
        except BlockingIOError:
            select.select([], [fd], [], 1.0)


def _connect(path: Path) -> socket.socket | None:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        s.connect(str(path))
    except OSError:
        s.close()
        return None
    s.setblocking(False)
    return s


@dataclass(frozen=True, slots=True)
class Terminal:
    """The relay's end away from the controller: a UART (one descriptor both ways) or this
    terminal (stdin, stdout, and a byte that detaches)."""

    in_fd: int
    out_fd: int
    detach: bytes | None = None  # typed, it ends the relay (a terminal's Ctrl-]); None: never


def relay(
    term: Terminal,
    sock_path: Path,
    stop: threading.Event | None = None,
    retry_s: float = RETRY_S,
    give_up_s: float | None = None,
) -> bool:
    """Pump bytes between ``term`` and the console socket until ``stop``
    (or until the terminal's ``detach`` byte is typed).  ``give_up_s``: a controller
    that has not answered for this long (never, or since it went away) ends the relay;
    False then, True otherwise."""
    import time

    in_fd, out_fd, detach = term.in_fd, term.out_fd, term.detach
    stop = stop or threading.Event()
    down_since: float | None = None
    while not stop.is_set():
        sock = _connect(sock_path)
        if sock is None:
            if down_since is None:
                down_since = time.monotonic()
                _write_all(out_fd, _down_message(sock_path, give_up_s))
            if give_up_s is not None and time.monotonic() - down_since >= give_up_s:
                return False
            if _drain(in_fd, retry_s, detach):
                return True
            continue
        down_since = None
        if _pump(in_fd, out_fd, sock, stop, detach):
            return True
    return True


def _down_message(sock_path: Path, give_up_s: float | None) -> bytes:
    how_long = "" if give_up_s is None else f" for {give_up_s:g} s"
    return f"\r\ntablectl: the controller is not running; retrying{how_long} (socket {sock_path})...\r\n".encode()


def _drain(in_fd: int, retry_s: float, detach: bytes | None) -> bool:
    """While the controller is down: drain what is typed (nobody can act on it); True when the
    user detached."""
    r, _, _ = select.select([in_fd], [], [], retry_s)
    if r:
        with contextlib.suppress(BlockingIOError):
            typed = os.read(in_fd, 1024)
            if detach and detach in typed:
                return True
            if not typed:  # input at its end (/dev/null): readable at once, so wait here instead
                select.select([], [], [], retry_s)
    return False


def _pump(in_fd: int, out_fd: int, sock: socket.socket, stop: threading.Event, detach: bytes | None) -> bool:
    """Pump both ways until ``stop`` or the controller goes away (False: reconnect); True when
    our terminal closed or the user detached.  Closes ``sock``."""
    sock_fd = sock.fileno()
    try:
        while not stop.is_set():
            r, _, _ = select.select([in_fd, sock_fd], [], [], 0.2)
            if in_fd in r and _from_terminal(in_fd, sock, detach):
                return True  # our terminal closed, or the user detached
            if sock_fd in r and not _from_socket(sock, out_fd):
                return False  # controller went away: reconnect
    except OSError:
        pass
    finally:
        sock.close()
    return False


def _from_terminal(in_fd: int, sock: socket.socket, detach: bytes | None) -> bool:
    """Send what was typed; True when the terminal closed or the detach byte was typed."""
    try:
        data = os.read(in_fd, 1024)
    except BlockingIOError:
        return False
    if data == b"" or (detach and detach in data):
        return True
    _send(sock, data)
    return False


def _from_socket(sock: socket.socket, out_fd: int) -> bool:
    """Write what the controller sent; False when it went away."""
    try:
        data = sock.recv(4096)
    except BlockingIOError:
        return True
    if not data:
        return False
    _write_all(out_fd, data)
    return True


def _send(sock: socket.socket, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[sock.send(view) :]
        except BlockingIOError:
            select.select([], [sock], [], 1.0)
