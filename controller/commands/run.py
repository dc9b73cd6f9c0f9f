"""``tablectl run --config PATH``: the controller service on real hardware.

The configuration (hardware file and table profile, and the game's own options)
is parsed and range-checked first; any error is printed naming file, section and
key, and the command exits with status 2 before any pin or serial port is
touched.  ``--check`` then loads the pin factory and opens and closes every
serial port (controller/boot/startup.py, ``preflight``), exit 2 naming the key that
cannot be used.  Problems after that (the ledger, the pins, a device) never stop
the process: the table stays closed under a latched tilt (controller/boot/startup.py).
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.boot.startup import Report
    from controller.settings.hardware import HardwareConfig

NAME = "run"
HELP = "run the table controller service on real hardware"

EXIT_CONFIG = 2  # controller.boot.startup.EXIT_CONFIG (not imported here: every command module loads at parse time)


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
        help="check the configuration, the ledger key and the ledger (`tablectl audit`), load the pin factory "
        "and open and close every serial port, then exit",
    )
    p.add_argument(
        "--offline",
        action="store_true",
        help="with --check: not the pins and ports (checking a configuration away from the table)",
    )
    p.add_argument(
        "--config-only",
        action="store_true",
        help="with --check: not the ledger (systemd's ExecStartPre: a damaged ledger is the service's latched "
        "tilt, not a start that fails and restarts)",
    )
    # (choices here, not controller/commands/_argtypes.py: `tablectl run` imports no other command module)
    p.add_argument(
        "--log-level",
        type=str.lower,
        choices=("debug", "info", "warning", "error", "critical"),
        default="info",
        help="the service's log level (default info)",
    )
    p.add_argument(
        "--console-socket",
        type=Path,
        help="serve the technician console on this Unix socket (systemd: /run/tablectl/console.sock; "
        "`tablectl console --port /dev/ttyAMA0` bridges the UART to it)",
    )
    _link_arg(p)


def _link_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--link-socket",
        type=Path,
        help="a linked progressive's socket for its uplink (systemd: /run/tablectl/link.sock; docs/linked.md)",
    )
    p.add_argument(
        "--link-peer",
        metavar="USER",
        help="the only user whose process may speak on the link socket (SO_PEERCRED; default: the service's own "
        "user, which the shipped units run the uplink as)",
    )


def _peer_uid(user: str | None) -> int | None:
    """``--link-peer``: a user name or a numeric id (None: the service's own user)."""
    if user is None:
        return None
    if user.isdigit():
        return int(user)
    import pwd

    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        raise ValueError(f"--link-peer: no user {user!r}") from None


def _fail(msg: str) -> int:
    print(f"tablectl: configuration error: {msg}", file=sys.stderr)
    return EXIT_CONFIG


def run(args: argparse.Namespace) -> int:
    from controller.boot.startup import load_config, preflight
    from controller.settings.config import ConfigError

    if (args.offline or args.config_only) and not args.check:
        astray = "--offline" if args.offline else "--config-only"
        print(f"tablectl run: {astray} goes with --check, not given: nothing would use it", file=sys.stderr)
        return EXIT_CONFIG
    try:
        hw, _procedure = load_config(args.config)
    except ConfigError as e:
        return _fail(str(e))
    except Exception as e:  # noqa: BLE001 - a fault of ours reading a file: logged once, still exit 2, no loop
        import traceback

        print("".join(traceback.format_exception(e)).rstrip(), file=sys.stderr)
        return _fail(f"{args.config}: could not be read ({type(e).__name__}: {e}); this is a fault in tablectl")
    from controller.books.ledgerkey import LedgerKeyError, load_key

    if args.check and not args.offline and not _preflight_ok(preflight(hw)):
        return EXIT_CONFIG
    if args.check and args.config_only:
        return _check(args, hw)  # the configuration only: no ledger, so no key to read (it may be root's)
    try:
        key = load_key(hw.ledger)
    except LedgerKeyError as e:
        return _fail(f"{hw.file}: [ledger] key_credential / key_file: {e}")
    if args.check:
        return _check(args, hw)
    return _serve(args, hw, key)


def _preflight_ok(rep: Report) -> bool:
    """Print the preflight's lines and its errors; whether there were none."""
    for line in rep.lines:
        print(f"  {line}")
    for err in rep.errors:
        _fail(str(err))
    return not rep.errors


def _check(args: argparse.Namespace, hw: HardwareConfig) -> int:
    """``--check``: the configuration (and, unless ``--config-only``, the ledger's audit) without running."""
    if not args.config_only:
        from controller.books.audit import refuse_damaged

        args.state_dir, args.key_file, args.witness_dir = None, None, None
        refused = refuse_damaged(args, "tablectl run --check", sys.stderr)
        if refused is not None:
            return refused
    from controller.settings.pins import budget_lines

    print(f"{args.config}: OK (table {hw.table_id}, game {hw.profile.game}, profile {hw.profile.file})")
    print("\n".join(budget_lines(hw.gpio)))  # every line in use and by what, the free ones
    return 0


def _serve(args: argparse.Namespace, hw: HardwareConfig, key: bytes) -> int:
    """The table service in the foreground until SIGTERM or SIGINT."""
    from pathlib import Path

    from controller.core.log import configure
    from controller.daemon.options import Trust, Uplink
    from controller.daemon.service import Service
    from controller.daemon.stateowner import act_as_owner

    # root at a shell runs the table as the service user: its ledger stays the service's
    act_as_owner(Path(hw.state_dir), "run")

    configure(stream=sys.stdout, level=args.log_level)
    # a real table must have recorded its software digest at installation (tablectl verify --record)
    try:
        peer = _peer_uid(args.link_peer)
    except ValueError as e:
        return _fail(str(e))
    svc = Service(
        hw,
        console={"socket_path": args.console_socket},
        uplink=Uplink(socket=args.link_socket, peer=peer),
        trust=Trust(ledger_key=key, require_digest=True),
    )

    def _term(signum: int, _frame: object) -> None:
        svc.reactor.stop()

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    from controller.books.statelock import StateLocked

    try:
        # a problem from here on is a latched tilt with the table closed, READY sent, never an exit
        svc.start(thread=False, halt_on_error=True)
    except StateLocked as e:  # another service, or a restore, holds the ledger: this one is not the table's
        print(f"tablectl: {e}", file=sys.stderr)
        svc.stop()
        return 1
    try:
        svc.run_forever()
    finally:
        svc.stop()
    return 0
