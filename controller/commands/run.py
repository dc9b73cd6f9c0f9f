"""``tablectl run --config PATH``: the controller service on real hardware.

The configuration (hardware file and table profile) is parsed and range-checked
first; any error is printed naming file, section and key, and the command exits
with status 2 before any pin or serial port is touched."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

NAME = "run"
HELP = "run the table controller service on real hardware"

EXIT_CONFIG = 2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        type=Path,
        default=Path("/etc/tablectl/table.toml"),
        help="hardware configuration file (default /etc/tablectl/table.toml)",
    )
    p.add_argument("--check", action="store_true", help="only check the configuration, then exit")
    p.add_argument("--log-level", default="info")
    p.add_argument(
        "--console-socket",
        type=Path,
        help="serve the technician console on this Unix socket (systemd: /run/tablectl/console.sock; "
        "`tablectl console --port /dev/ttyAMA0` bridges the UART to it)",
    )


def run(args: argparse.Namespace) -> int:
    from controller.config import ConfigError, load_hardware

    try:
        hw = load_hardware(args.config)
    except ConfigError as e:
        print(f"tablectl: configuration error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        # the game's own options ([game.options], the progressive's paytable) are checked
        # by its procedure (controller/games/), here as at start-up
        from controller.games import procedure_for

        procedure_for(hw.profile.game, hw.profile)
    except ValueError as e:
        print(f"tablectl: configuration error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if args.check:
        from controller.pins import budget_lines

        print(f"{args.config}: OK (table {hw.table_id}, game {hw.profile.game}, profile {hw.profile.file})")
        print("\n".join(budget_lines(hw.gpio)))  # every line in use and by what, the free ones (issue 15)
        return 0
    from controller.log import configure
    from controller.service import Service

    configure(stream=sys.stdout, level=args.log_level)
    # a real table must have recorded its software digest at installation (tablectl verify --record)
    svc = Service(hw, require_digest=True, console_socket=args.console_socket)

    def _term(signum: int, _frame: object) -> None:
        svc.reactor.stop()

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    svc.start(thread=False)
    try:
        svc.run_forever()
    finally:
        svc.stop()
    return 0
