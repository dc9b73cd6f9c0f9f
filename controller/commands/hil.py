"""``tablectl hil run [PATH...]``: run HIL scenario files (hil/scenarios/*.yaml) against
the real controller and the device simulators; print a pass/fail table; exit 1 if
any scenario fails, 2 if a file is not a valid scenario (docs/hil.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "hil"
HELP = "hardware-in-the-loop scenarios against the simulators (hil run [PATH...])"


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="hil_cmd", required=True)
    r = sub.add_parser("run", help="run scenario files or directories (default: hil/scenarios)")
    r.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="scenario files or directories (*.yaml directly inside; pending/ only when named)",
    )
    r.add_argument("-v", "--verbose", action="store_true", help="print every line of each failure")
    from controller.commands._argtypes import log_level

    r.add_argument(
        "--log-level",
        type=log_level,
        default="critical",
        help="the controller's log level on stderr (default critical)",
    )


def _default_dir() -> Path:
    import hil

    return Path(hil.__file__).resolve().parent / "scenarios"


def run(args: argparse.Namespace) -> int:
    from controller.commands._rigs import missing

    if (rc := missing(NAME)) is not None:
        return rc
    from controller.core.log import configure
    from hil.scenario import run_paths

    configure(stream=sys.stderr, level=args.log_level, json=True)
    paths = args.paths or [_default_dir()]
    return run_paths(paths, sys.stdout, verbose=args.verbose)
