"""``tablectl key init [--key-file F]``: make the ledger's key (issue 13; docs/security.md).

A random 32-byte key in a new file, mode 0600, owned by whoever runs it (root, at
installation: systemd/install.sh); systemd hands it to the service with
``LoadCredential=``.  An existing key is never replaced (``--force`` does, and makes
the old ledger unverifiable)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "key"
HELP = "make the ledger's HMAC key (root-only file, handed to the service by systemd LoadCredential=)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.settings.hardware import DEFAULT_KEY_FILE

    p.add_argument("action", choices=["init"])
    p.add_argument("--key-file", type=Path, default=Path(DEFAULT_KEY_FILE), help=f"default {DEFAULT_KEY_FILE}")
    p.add_argument("--force", action="store_true", help="replace an existing key (the old ledger becomes unverifiable)")


def run(args: argparse.Namespace) -> int:
    from controller.books.ledgerkey import LedgerKeyError, init_key

    try:
        path = init_key(args.key_file, overwrite=args.force)
    except LedgerKeyError as e:
        print(f"tablectl key: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"tablectl key: {args.key_file}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"key: {path} (mode 0600)")
    return 0
