"""``tablectl diagram``: write docs/state-machine.md (mermaid, from transitions'
own diagram support; no graphviz) or print it with --stdout.

Only a checkout has a docs/ to write into: in an installed tree (a table's release) the
default file would land in the virtualenv's site-packages, change the software digest
and latch the table's next start in a tilt.  There it refuses and says where to write."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "diagram"
HELP = "write the round state machine diagram (docs/state-machine.md in a checkout; --out FILE) or print it"

#: the checkout this module is in (None: an installed tree, where there is none)
_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PATH = _ROOT / "docs" / "state-machine.md"


def in_checkout(root: Path | None = None) -> bool:
    """The code runs from a source checkout (its pyproject.toml and docs/ beside the packages)."""
    root = _ROOT if root is None else root
    return (root / "pyproject.toml").is_file() and (root / "docs").is_dir()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stdout", action="store_true", help="print the diagram instead of writing the file")
    p.add_argument(
        "--out",
        "--output",
        dest="output",
        type=Path,
        help=f"file to write (default, in a checkout only: {DEFAULT_PATH})",
    )


def run(args: argparse.Namespace) -> int:
    from controller.play.machine import mermaid

    text = mermaid()
    if args.stdout:
        print(text, end="")
        return 0
    out = args.output
    if out is None:
        if not in_checkout():
            print(
                f"tablectl diagram: this tablectl is installed ({_ROOT}), not a checkout: writing "
                "docs/state-machine.md there would change the installed software (`tablectl verify`). "
                "Use --stdout, or --out FILE",
                file=sys.stderr,
            )
            return 2
        out = DEFAULT_PATH
    if out.is_dir():
        print(f"tablectl diagram: --out {out}: is a directory; name the file to write", file=sys.stderr)
        return 2
    if not out.parent.is_dir():
        print(f"tablectl diagram: --out {out}: there is no directory {out.parent}", file=sys.stderr)
        return 2
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")
    return 0
