"""``tablectl diagram``: write docs/state-machine.md (mermaid, from transitions'
own diagram support; no graphviz) or print it with --stdout."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "diagram"
HELP = "write the round state machine diagram (docs/state-machine.md) or print it"

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "docs" / "state-machine.md"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stdout", action="store_true", help="print the diagram instead of writing the file")
    p.add_argument("--output", type=Path, default=DEFAULT_PATH, help=f"file to write (default {DEFAULT_PATH})")


def run(args: argparse.Namespace) -> int:
    from controller.machine import mermaid

    text = mermaid()
    if args.stdout:
        print(text, end="")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0
