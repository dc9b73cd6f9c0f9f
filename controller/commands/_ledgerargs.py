"""The ``--config`` / ``--state-dir`` options of the commands that read the ledger
(``history``, ``status``, ``meters``) and the read-only ledger they name."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_ledger_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        type=Path,
        default=Path("/etc/tablectl/table.toml"),
        help="hardware configuration (for the state directory)",
    )
    p.add_argument("--state-dir", type=Path, help="state directory holding ledger.sqlite3 (overrides --config)")


def open_ledger(args: argparse.Namespace, prog: str) -> tuple[Any, Any, int]:
    """(the read-only ledger, where it is — controller/books/audit.py ``Where``, its witness
    directory too — and 0), or (None, None, exit status) after saying why on stderr."""
    from controller.books.audit import where_from_args
    from controller.reports.tablestatus import ReadOnlyLedger
    from controller.settings.config import ConfigError

    try:
        where = where_from_args(args, with_key=False)
    except ConfigError as e:
        print(f"tablectl {prog}: configuration error: {e}", file=sys.stderr)
        return None, None, 2
    try:
        return ReadOnlyLedger(where.ledger_path), where, 0
    except FileNotFoundError as e:
        print(f"tablectl {prog}: {e}", file=sys.stderr)
        return None, None, 1


def show(prog: str, ledger: Any, fn: Callable[[], str]) -> int:
    """Print what ``fn`` makes of the read-only ledger; a ledger SQLite cannot read (truncated,
    garbage, not a ledger) is said in one line, exit 1, never a traceback."""
    import sqlite3

    try:
        text = fn()
    except (sqlite3.Error, ValueError, KeyError, TypeError) as e:
        print(
            f"tablectl {prog}: the ledger {ledger.path} cannot be read: {e} "
            "(`tablectl audit` with the same options says more)",
            file=sys.stderr,
        )
        return 1
    finally:
        ledger.close()
    print(text)
    return 0
