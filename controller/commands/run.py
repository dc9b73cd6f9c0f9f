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
    p.add_argument(
        "--check",
        action="store_true",
        help="only check the configuration, the ledger key and the ledger (`tablectl audit`), then exit",
    )
    p.add_argument(
        "--config-only",
        action="store_true",
        help="with --check: the configuration and the key only (systemd's ExecStartPre: a damaged ledger is "
        "the service's latched tilt, not a start that fails and restarts)",
    )
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
    from controller.ledgerkey import LedgerKeyError, load_key

    try:
        key = load_key(hw.ledger)
    except LedgerKeyError as e:
        print(f"tablectl: configuration error: {hw.file}: [ledger] key_credential / key_file: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if args.check:
        if not args.config_only:
            from controller.audit import refuse_damaged

            args.state_dir, args.key_file, args.witness_dir = None, None, None
            refused = refuse_damaged(args, "tablectl run --check", sys.stderr)
            if refused is not None:
                return refused
        print(f"{args.config}: OK (table {hw.table_id}, game {hw.profile.game}, profile {hw.profile.file})")
        return 0
    from controller.log import configure
    from controller.service import Service

    configure(stream=sys.stdout, level=args.log_level)
    # a real table must have recorded its software digest at installation (tablectl verify --record)
    svc = Service(hw, require_digest=True, console_socket=args.console_socket, ledger_key=key)

    def _term(signum: int, _frame: object) -> None:
        svc.reactor.stop()

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    from controller.statelock import StateLocked

    try:
        svc.start(thread=False)
    except StateLocked as e:  # another service, or a restore, holds the ledger
        print(f"tablectl: {e}", file=sys.stderr)
        svc.stop()
        return 1
    try:
        svc.run_forever()
    finally:
        svc.stop()
    return 0
