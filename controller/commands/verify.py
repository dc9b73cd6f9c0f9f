"""``tablectl verify [--record]``: the software's SHA-256 digest (SPEC § 5).

``--record`` (at installation, as root; systemd/install.sh does it) stores the
digest and the per-file hashes in the configuration's ``[table] software_record``
(default ``/etc/tablectl/software.json``: root-owned, where the service cannot
write), or ``--record-file``; ``--state-dir D`` means ``D/software.json`` (the
simulator's).  The digest covers our packages and the whole virtualenv
(controller/boot/selfcheck.py).  The service compares with it at every start-up, and a
mismatch is a tilt.  Without ``--record`` every installed file is read and
checked against the record: exit 0 on a match, 1 on a mismatch (the differing
files are listed), 2 when nothing is recorded."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "verify"
HELP = "print the software digest (SHA-256 over the installed files); --record stores it"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.books.audit import add_where_arguments

    p.add_argument("--record", action="store_true", help="record the digest of the installed files")
    add_where_arguments(p)  # --config, --state-dir (the record is STATE_DIR/software.json, the simulator's), ...
    p.add_argument("--record-file", type=Path, help="the record file (instead of reading --config)")
    p.add_argument(
        "--bytecode",
        action="store_true",
        help="with --record: list the compiled files (__pycache__) too, for a release compiled at installation "
        "(systemd/install.sh); a later check follows the record",
    )


def _record_where(args: argparse.Namespace) -> Path | None:
    """Where the record is: ``--record-file``, ``--state-dir``'s, or the configuration's; None
    when no configuration is there (a checkout: the digest is still printed)."""
    from controller.books.audit import hardware_of
    from controller.boot import selfcheck as S

    if args.record_file is not None:
        return Path(args.record_file)
    if args.state_dir is not None:
        return Path(args.state_dir)
    if not Path(args.config).exists():
        return None
    return S.software_record_of(hardware_of(args))


def run(args: argparse.Namespace) -> int:
    import sys

    from controller.books.audit import CONFIG_HINT
    from controller.settings.config import ConfigError

    try:
        where = _record_where(args)
    except ConfigError as e:
        print(f"tablectl verify: configuration error: {e}", file=sys.stderr)
        return 2
    if where is None and args.record:
        print(f"tablectl verify: --record: {args.config}: {CONFIG_HINT}, or --record-file F", file=sys.stderr)
        return 2
    refused = None if args.record else _refuse_damaged_ledger(args)
    if refused is not None:
        return refused
    if args.record:
        assert where is not None
        return _record(where, args.bytecode)
    if args.bytecode:
        print("tablectl verify: --bytecode goes with --record (a check follows the record)", file=sys.stderr)
        return 2
    return _check(where)


def _refuse_damaged_ledger(args: argparse.Namespace) -> int | None:
    """A ledger failing its audit is refused (--record, an installation step, has no key and is not
    asked; a bare --record-file names no ledger unless the configuration exists)."""
    import sys

    from controller.books.audit import refuse_damaged

    if args.state_dir is None and not Path(args.config).exists():
        return None
    return refuse_damaged(args, "tablectl verify", sys.stderr)


def _record(where: Path, bytecode: bool) -> int:
    """``--record``: the installed software's digest written beside the configuration."""
    import sys

    from controller.boot import selfcheck as S

    try:
        made = S.record_digest(where, bytecode=bytecode)
    except FileNotFoundError as e:  # the record's directory is not there (a mistyped --record-file)
        print(f"tablectl verify: --record: {e.filename}: no such directory", file=sys.stderr)
        return 2
    print(
        f"version: {made.version}\nfiles: {len(made.files)}"
        + (" (compiled files included)" if made.bytecode else "")
        + f"\ndigest: {made.digest}\nrecorded: {S.record_path(where)}"
    )
    return 0


def _check(where: Path | None) -> int:
    from controller import __version__
    from controller.boot import selfcheck as S

    try:
        rec = S.load_record(where) if where is not None else None
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"tablectl verify: the record {S.record_path(where) if where else ''} cannot be read: {e}")
        rec = None
        where = None
    files = S.manifest(full=True, bytecode=rec is not None and rec.bytecode)
    now = S.digest_of(files)
    print(f"version: {__version__}\nfiles: {len(files)}\ndigest: {now}")
    if rec is None:
        print(_no_record(where))
        return 2
    print(f"recorded: {rec.digest} ({rec.version}, {rec.recorded})")
    if rec.digest == now:
        print("result: match")
        return 0
    print("result: MISMATCH")
    for line in S.difference_lines(S.compare(rec.files, files)):
        print(line)
    return 1


def _no_record(where: Path | None) -> str:
    from controller.boot import selfcheck as S

    if where is None:
        return "recorded: none (no configuration here: --config FILE, --state-dir D or --record-file F names one)"
    return f"recorded: none in {S.record_path(where)}"
