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


def _command_modules(only: str | None = None) -> list[ModuleType]:
    """Every sub-command's module, or only the one named ``only`` (a file in
    controller/commands): ``tablectl run`` imports nothing of the others (start-up time)."""
    mods = []
    for info in sorted(pkgutil.iter_modules(_commands_pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_") or (only is not None and info.name != only):
            continue
        mod = importlib.import_module(f"{_commands_pkg.__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    return mods


def _is_command_module(name: str) -> bool:
    return not name.startswith("_") and any(info.name == name for info in pkgutil.iter_modules(_commands_pkg.__path__))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablectl",
        description="Table controller and progressive table game system "
        "(58 Pa. Code 670a, 659a, 686a, 687a, 688a, 621a).",
    )
    parser.add_argument("--version", action="version", version=f"tablectl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for mod in _command_modules(only):
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # the command named first is the only one loaded when its module is named alike (run, sim...);
    # otherwise (--help, --version, a typo) every command is, for the full usage
    first = argv[0] if argv else ""
    parser = build_parser(first) if first.isidentifier() and _is_command_module(first) else build_parser()
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
