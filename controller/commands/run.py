"""``tablectl run --config PATH``: the controller service on real hardware.

The configuration (hardware file and table profile, and the game's own options)
is parsed and range-checked first; any error is printed naming file, section and
key, and the command exits with status 2 before any pin or serial port is
touched.  ``--check`` then loads the pin factory and opens and closes every
serial port (controller/startup.py, ``preflight``), exit 2 naming the key that
cannot be used.  Problems after that (the ledger, the pins, a device) never stop
the process: the table stays closed under a latched tilt (controller/startup.py).
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

NAME = "run"
HELP = "run the table controller service on real hardware"

EXIT_CONFIG = 2  # controller.startup.EXIT_CONFIG (not imported here: every command module loads at parse time)


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
        help="check the configuration, load the pin factory and open and close every serial port, then exit",
    )
    p.add_argument(
        "--offline",
        action="store_true",
        help="with --check: the files only, not the pins and ports (checking a configuration away from the table)",
    )
    p.add_argument("--log-level", default="info")
    p.add_argument(
        "--console-socket",
        type=Path,
        help="serve the technician console on this Unix socket (systemd: /run/tablectl/console.sock; "
        "`tablectl console --port /dev/ttyAMA0` bridges the UART to it)",
    )


def _fail(msg: str) -> int:
    print(f"tablectl: configuration error: {msg}", file=sys.stderr)
    return EXIT_CONFIG


def run(args: argparse.Namespace) -> int:
    from controller.config import ConfigError
    from controller.startup import load_config, preflight

    try:
        hw, _procedure = load_config(args.config)
    except ConfigError as e:
        return _fail(str(e))
    except Exception as e:  # noqa: BLE001 - a fault of ours reading a file: logged once, still exit 2, no loop
        import traceback

        print("".join(traceback.format_exception(e)).rstrip(), file=sys.stderr)
        return _fail(f"{args.config}: could not be read ({type(e).__name__}: {e}); this is a fault in tablectl")
    if args.check:
        if not args.offline:
            rep = preflight(hw)
            for line in rep.lines:
                print(f"  {line}")
            if rep.errors:
                for err in rep.errors:
                    _fail(str(err))
                return EXIT_CONFIG
        print(f"{args.config}: OK (table {hw.table_id}, game {hw.profile.game}, profile {hw.profile.file})")
        return 0
    from pathlib import Path

    from controller.log import configure
    from controller.service import Service
    from controller.stateowner import act_as_owner

    # root at a shell runs the table as the service user (issue 15): its ledger stays the service's
    act_as_owner(Path(hw.state_dir), "run")

    configure(stream=sys.stdout, level=args.log_level)
    # a real table must have recorded its software digest at installation (tablectl verify --record)
    svc = Service(hw, require_digest=True, console_socket=args.console_socket)

    def _term(signum: int, _frame: object) -> None:
        svc.reactor.stop()

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    # a problem from here on is a latched tilt with the table closed, READY sent, never an exit
    svc.start(thread=False, halt_on_error=True)
    try:
        svc.run_forever()
    finally:
        svc.stop()
    return 0
