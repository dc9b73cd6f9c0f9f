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
    from controller.commands._argtypes import int_range

    p.add_argument("--baud", type=int_range(50, 4_000_000), default=115200, help="UART speed (default 115200)")


def run(args: argparse.Namespace) -> int:
    from controller.console.relay import open_uart, relay

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.port:
        try:
            fd = open_uart(args.port, args.baud)
        except (OSError, ValueError) as e:
            print(f"tablectl console: cannot open {args.port}: {e}", file=sys.stderr)
            return 1
        try:
            relay(fd, fd, args.socket, stop)
        finally:
            os.close(fd)
        return 0
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    if saved is not None:
        tty.setraw(fd)
        print("(tablectl console: Ctrl-] to detach)\r", flush=True)
    try:
        relay(fd, sys.stdout.fileno(), args.socket, stop, detach=b"\x1d")
    finally:
        if saved is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    return 0
