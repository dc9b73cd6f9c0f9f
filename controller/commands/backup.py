"""``tablectl backup DEST``: an online copy of the ledger, audited, named with the table id,
the last event number and the date (controller/books/backup.py; docs/operations.md).

Safe while the service runs.  Exit 0 printing the copy's path; 1 when the copy does not
audit clean (it is removed); 2 when DEST is missing (``--mkdir`` makes it), or the
configuration or the key cannot be read."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "backup"
HELP = "copy the ledger while the service runs (SQLite online backup), audit the copy, name it"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.books.audit import add_where_arguments

    p.add_argument("dest", type=Path, help="directory to put the copy in (it must exist; --mkdir makes it)")
    p.add_argument(
        "--mkdir",
        action="store_true",
        help="make DEST (and its parents) when missing; without it a missing DEST is refused (a mistyped "
        "path would otherwise hold the copy where nobody looks for it)",
    )
    p.add_argument(
        "--incremental",
        action="store_true",
        help="bring the newest copy in DEST up to date (only what was added is copied and audited: the copy's older "
        "events are not read again, and the output says so) "
        "instead of making a whole new copy; a whole copy when there is none to bring up to date",
    )
    add_where_arguments(p)


def _dest_problem(args: argparse.Namespace) -> str | None:
    dest: Path = args.dest
    if dest.is_dir() or args.mkdir:
        return None
    if dest.exists():
        return f"{dest}: is not a directory"
    return f"{dest}: no such directory (mistyped? `--mkdir` makes it)"


def run(args: argparse.Namespace) -> int:
    from controller.books.audit import where_from_args
    from controller.books.backup import BackupError, backup
    from controller.books.ledgerkey import LedgerKeyError
    from controller.core.progress import Progress
    from controller.settings.config import ConfigError

    try:
        where = where_from_args(args)
    except ConfigError as e:
        print(f"tablectl backup: configuration error: {e}", file=sys.stderr)
        return 2
    except LedgerKeyError as e:
        print(f"tablectl backup: {e}", file=sys.stderr)
        return 2
    problem = _dest_problem(args)
    if problem is not None:
        print(f"tablectl backup: {problem}", file=sys.stderr)
        return 2
    try:
        with Progress("backup: copying and auditing the copy"):  # minutes on a year's ledger (a terminal only)
            res = backup(where, args.dest, incremental=args.incremental)
    except (BackupError, OSError) as e:
        print(f"tablectl backup: {e}", file=sys.stderr)
        return 1
    print(f"{res.path}\ntable {res.table_id}, {res.head.count} events, head {res.head.mac}, audit ok ({res.audited})")
    return 0
