"""``tablectl restore SRC``: put an audited backup in place of the ledger, with the
service stopped (controller/books/backup.py; docs/operations.md).

Refused (exit 1) while the service runs, for a copy that does not audit clean, and for a
copy older than the witness says unless ``--override-reason "..."`` (recorded in the
ledger as its own ``ledger.restored`` event).  Exit 2 when the configuration or the key
cannot be read."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "restore"
HELP = "restore the ledger from a backup (service stopped; refused for an older copy unless overridden)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.books.audit import add_where_arguments

    p.add_argument("src", type=Path, help="the backup (a file `tablectl backup` made)")
    add_where_arguments(p)
    p.add_argument(
        "--override-reason",
        help="restore a copy older than the witness says anyway, for this reason (recorded in the ledger)",
    )
    p.add_argument("--by", default="technician", help="who restores (recorded with the restore)")


def run(args: argparse.Namespace) -> int:
    from controller.books.audit import where_from_args
    from controller.books.backup import BackupError, restore
    from controller.books.ledgerkey import LedgerKeyError
    from controller.books.statelock import StateLocked
    from controller.settings.config import ConfigError

    try:
        where = where_from_args(args)
    except ConfigError as e:
        print(f"tablectl restore: configuration error: {e}", file=sys.stderr)
        return 2
    except LedgerKeyError as e:
        print(f"tablectl restore: {e}", file=sys.stderr)
        return 2
    try:
        res = restore(where, args.src, override_reason=args.override_reason, by=args.by)
    except StateLocked as e:
        print(f"tablectl restore: refused: {e}", file=sys.stderr)
        return 1
    except (BackupError, OSError) as e:
        print(f"tablectl restore: {e}", file=sys.stderr)
        return 1
    if res.overridden:
        print(f"overridden: {res.overridden[0]}")
    if res.replaced is not None:
        print(f"the ledger it replaced is kept as {res.replaced}")
    print(f"restored: table {res.table_id}, {res.head.count} events, head {res.head.mac}; witness updated")
    return 0
