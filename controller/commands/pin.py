"""``tablectl pin set ROLE``: set a console PIN (dealer, floorperson, technician).

The PIN (4-12 digits, different for each role) is asked twice without echo, or
read from standard input with ``--stdin`` (scripts).  Only a salted scrypt hash
is stored, in ``<state_dir>/pins.toml`` (mode 0600); the service logs the change
(``console.pins``) the next time someone logs in.  ``tablectl pin list`` shows
which roles have a PIN."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.console.auth import PinStore

NAME = "pin"
HELP = "set or list the technician console's PINs (per role, stored as scrypt hashes)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("set", "list"))
    p.add_argument("role", nargs="?", help="dealer, floorperson or technician (for set)")
    p.add_argument(
        "--config",
        type=Path,
        default=Path("/etc/tablectl/table.toml"),
        help="hardware configuration naming the state directory (default /etc/tablectl/table.toml)",
    )
    p.add_argument("--state-dir", type=Path, help="state directory (instead of reading --config)")
    p.add_argument("--stdin", action="store_true", help="read the PIN from standard input (one line)")


def state_dir_of(args: argparse.Namespace) -> Path:
    if args.state_dir is not None:
        return Path(args.state_dir)
    from controller.books.audit import hardware_of

    return Path(hardware_of(args).state_dir)


def run(args: argparse.Namespace) -> int:
    from controller.console.auth import PIN_FILE, PinError, PinStore, check_role
    from controller.daemon.stateowner import act_as_owner
    from controller.settings.config import ConfigError

    try:
        state_dir = state_dir_of(args)
    except ConfigError as e:
        print(f"tablectl pin: configuration error: {e}", file=sys.stderr)
        return 2
    # root writes the PIN file as the service user: never a root-owned file it cannot read
    if args.action == "set":
        act_as_owner(state_dir, "pin")
    store = PinStore(state_dir / PIN_FILE)
    if args.action == "list":
        return _list(store)
    try:
        role = check_role(args.role or "")
        pin = sys.stdin.readline().strip() if args.stdin else _ask_pin(role)
        if pin is None:
            print("tablectl pin: the PINs differ; nothing changed", file=sys.stderr)
            return 1
        store.set(role, pin)
    except PinError as e:
        print(f"tablectl pin: {e}; nothing changed", file=sys.stderr)
        return 1
    except (UnicodeDecodeError, ValueError, OSError) as e:  # stdin or the PIN file not text, not TOML...
        print(f"tablectl pin: cannot read the PIN or {store.path}: {e}; nothing changed", file=sys.stderr)
        return 1
    print(f"PIN set for {role} in {store.path}")
    return 0


def _list(store: PinStore) -> int:
    """``tablectl pin list``: which roles have a PIN."""
    from controller.console.auth import ROLES

    try:
        have = store.roles_set()
    except (OSError, ValueError) as e:  # UnicodeDecodeError and TOMLDecodeError are ValueErrors
        print(f"tablectl pin: {store.path}: cannot be read: {e}", file=sys.stderr)
        return 1
    for r in ROLES:
        print(f"{r}: {'set' if r in have else 'not set'}")
    return 0


def _ask_pin(role: str) -> str | None:
    """The new PIN typed twice at the terminal (not echoed), or None when the two differ."""
    import getpass

    from controller.console.auth import check_pin_format

    pin = getpass.getpass(f"new PIN for {role}: ")
    check_pin_format(pin)
    return pin if getpass.getpass("again: ") == pin else None
