"""``tablectl`` entry point: discovers the sub-commands in controller/commands."""

from __future__ import annotations

import argparse
import errno
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path
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
    args = _parser_for(argv).parse_args(argv)
    try:
        rc = int(args._run(args) or 0)
        sys.stdout.flush()  # here, where a failure can still be said (not at the interpreter's exit)
        return rc
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # e.g. `tablectl diagram --stdout | head`
        _drop_stdout()
        return 0
    except OSError as e:
        return _os_error(args.command, e)
    except Exception as e:  # noqa: BLE001 - the last line of defence: a message, never a traceback
        return _fault(args.command, e)


def _parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """The command named first is the only one loaded when its module is named alike (run, sim...);
    otherwise (--help, --version, a typo) every command is, for the full usage."""
    first = argv[0] if argv else ""
    return build_parser(first) if first.isidentifier() and _is_command_module(first) else build_parser()


#: errors of the machine, not of tablectl: said in one line, exit 1
_WORLD = {errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


def _os_error(command: str, e: OSError) -> int:
    """The machine's doing (a full disk, stdout on /dev/full, no permission): said, exit 1;
    any other OSError is a fault of tablectl's."""
    if e.errno not in _WORLD:
        return _fault(command, e)
    if _stdout_failed() or e.filename is None:
        _drop_stdout()
    print(f"tablectl {command}: {e.filename or 'the output'}: {e.strerror}", file=sys.stderr)
    return 1


#: said (with the error) when a command fails in a way nobody foresaw: tests look for it
FAULT = "this is a fault in tablectl"


def _fault(command: str, e: BaseException) -> int:
    """An exception no command foresaw: one line saying what and where, exit 1; the traceback
    only with TABLECTL_TRACEBACK=1 (a developer)."""
    import os
    import traceback

    if os.environ.get("TABLECTL_TRACEBACK"):
        traceback.print_exception(e)
    tb = traceback.extract_tb(e.__traceback__)
    at = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    print(f"tablectl {command}: {type(e).__name__}: {e}{at}; {FAULT} (TABLECTL_TRACEBACK=1 shows it)", file=sys.stderr)
    return 1


def _stdout_failed() -> bool:
    try:
        sys.stdout.flush()
    except OSError:
        return True
    return False


def _drop_stdout() -> None:
    """What is left in stdout's buffer is not written at exit (a second error there)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
