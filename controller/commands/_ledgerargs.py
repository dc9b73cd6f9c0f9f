"""The ``--config`` / ``--state-dir`` options of the commands that read the ledger
(``history``, ``status``, ``meters``) and the read-only ledger they name."""

from __future__ import annotations

import argparse
import sys
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


def witness_dir_of(args: argparse.Namespace) -> Path | None:
    """The witness directory for ``--config`` / ``--state-dir`` (``[ledger] witness_dir``,
    else beside the state directory); None when the configuration cannot say."""
    from controller.witness import default_witness_dir

    if args.state_dir is not None:
        return default_witness_dir(Path(args.state_dir))
    from controller.config import ConfigError
    from controller.hardware import load_hardware

    try:
        hw = load_hardware(args.config)
    except ConfigError:
        return None  # open_ledger has said why
    return hw.ledger.witness_dir or default_witness_dir(Path(hw.state_dir))


def open_ledger(args: argparse.Namespace, prog: str) -> tuple[Any, int]:
    """(the read-only ledger, 0), or (None, exit status) after saying why on stderr."""
    from controller.service import LEDGER_FILE
    from controller.tablestatus import ReadOnlyLedger

    state_dir = args.state_dir
    if state_dir is None:
        from controller.config import ConfigError
        from controller.hardware import load_hardware

        try:
            state_dir = load_hardware(args.config).state_dir
        except ConfigError as e:
            print(f"tablectl {prog}: configuration error: {e}", file=sys.stderr)
            return None, 2
    try:
        return ReadOnlyLedger(Path(state_dir) / LEDGER_FILE), 0
    except FileNotFoundError as e:
        print(f"tablectl {prog}: {e}", file=sys.stderr)
        return None, 1
