"""``tablectl`` entry point: discovers the sub-commands in controller/commands."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

from controller import __version__
from controller import commands as _commands_pkg


def _command_modules() -> list[ModuleType]:
    mods = []
    for info in sorted(pkgutil.iter_modules(_commands_pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{_commands_pkg.__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    return mods


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablectl",
        description="Table controller and progressive table game system "
        "(58 Pa. Code 670a, 659a, 686a, 687a, 688a, 621a).",
    )
    parser.add_argument("--version", action="version", version=f"tablectl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for mod in _command_modules():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # e.g. `tablectl diagram --stdout | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
