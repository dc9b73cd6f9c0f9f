"""``tablectl key init [--key-file F | --config C]``: make the ledger's key (docs/security.md).

A random 32-byte key in a new file, mode 0600, owned by whoever runs it (root, at
installation: systemd/install.sh); systemd hands it to the service with
``LoadCredential=``.  An existing key is never replaced (``--force`` does, and makes
the old ledger unverifiable).  The file is the one ``--key-file`` names, else the table's
configuration's ``[ledger] key_file``; with neither (a checkout, a build machine) nothing
is written: a key under /etc belongs to an installed table, never to a stray run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "key"
HELP = "make the ledger's HMAC key (root-only file, handed to the service by systemd LoadCredential=)"

DEFAULT_CONFIG = Path("/etc/tablectl/table.toml")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["init"])
    p.add_argument(
        "--key-file",
        type=Path,
        help="the key file to make (default: the configuration's [ledger] key_file, /etc/tablectl/ledger.key)",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=DEFAULT_CONFIG,
        help=f"the table's configuration naming the key file (default {DEFAULT_CONFIG}); without one, --key-file",
    )
    p.add_argument("--force", action="store_true", help="replace an existing key (the old ledger becomes unverifiable)")


def _key_file(args: argparse.Namespace) -> Path | str:
    """The key file to make, or why there is none to make (a usage error)."""
    from controller.settings.config import ConfigError
    from controller.settings.hardware import load_hardware

    if args.key_file is not None:
        return Path(args.key_file)
    if not args.config.exists():
        return (
            f"no configuration at {args.config} (a checkout?): nothing written; name the key file with "
            "--key-file F (install.sh does), or the table's configuration with --config FILE"
        )
    try:
        return Path(load_hardware(args.config).ledger.key_file)
    except ConfigError as e:
        return f"configuration error: {e}"


def _not_a_file(path: Path) -> bool:
    """Something other than a regular file is there: ``--force`` on /dev/null would chmod the device."""
    import stat

    try:
        return not stat.S_ISREG(path.lstat().st_mode)
    except FileNotFoundError:
        return False


def run(args: argparse.Namespace) -> int:
    from controller.books.ledgerkey import LedgerKeyError, init_key

    key_file = _key_file(args)
    if isinstance(key_file, Path) and _not_a_file(key_file):
        key_file = f"{key_file}: not a regular file (a device, a directory or a link): a key is never written there"
    if isinstance(key_file, str):
        print(f"tablectl key: {key_file}", file=sys.stderr)
        return 2
    try:
        path = init_key(key_file, overwrite=args.force)
    except LedgerKeyError as e:
        print(f"tablectl key: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"tablectl key: {key_file}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"key: {path} (mode 0600)")
    return 0
