"""``tablectl console``: attach to the technician console of the running service.

``tablectl console --port /dev/ttyAMA0`` bridges a UART to the console socket
(run by systemd/tablectl-console@.service); without ``--port`` it attaches the
terminal it runs in (e.g. over ssh on the Pi).  Login, roles and commands are
handled, and logged, by the service itself (controller/console/)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

NAME = "console"
HELP = "attach a UART (--port) or this terminal to the running service's technician console"
DEFAULT_SOCKET = Path("/run/tablectl/console.sock")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--socket", type=Path, default=DEFAULT_SOCKET, help=f"console socket (default {DEFAULT_SOCKET})")
    p.add_argument("--port", help="serial UART to bridge (e.g. /dev/ttyAMA0); default: this terminal")
    from controller.commands._argtypes import int_range, seconds

    p.add_argument(
        "--wait",
        type=seconds(86400),
        metavar="S",
        help="give up when the controller has not answered for S seconds (default: 30 on this terminal; "
        "with --port, for ever: the UART's bridge waits for the service it belongs to)",
    )
    p.add_argument("--baud", type=int_range(50, 4_000_000), default=115200, help="UART speed (default 115200)")


#: how long an interactive console waits for a controller that does not answer
TERMINAL_WAIT_S = 30.0


def _gave_up(args: argparse.Namespace, wait_s: float) -> int:
    print(
        f"tablectl console: no controller answered on {args.socket} within {wait_s:g} s; is the service running "
        "(`systemctl status tablectl`)?  A simulator's console: `tablectl sim --console-pty` prints the pty to "
        "attach to (`pyserial-miniterm PTY`), or its socket with --socket",
        file=sys.stderr,
    )
    return 1


def run(args: argparse.Namespace) -> int:
    from controller.console.relay import Terminal, open_uart, relay

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.port:
        try:
            fd = open_uart(args.port, args.baud)
        except (OSError, ValueError) as e:
            print(f"tablectl console: cannot open {args.port}: {e}", file=sys.stderr)
            return 1
        try:
            answered = relay(Terminal(fd, fd), args.socket, stop, give_up_s=args.wait)
        finally:
            os.close(fd)
        return 0 if answered else _gave_up(args, args.wait)
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    if saved is not None:
        tty.setraw(fd)
        print("(tablectl console: Ctrl-] to detach)\r", flush=True)
    wait_s = args.wait if args.wait is not None else TERMINAL_WAIT_S
    try:
        answered = relay(Terminal(fd, sys.stdout.fileno(), detach=b"\x1d"), args.socket, stop, give_up_s=wait_s)
    finally:
        if saved is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    return 0 if answered else _gave_up(args, wait_s)
