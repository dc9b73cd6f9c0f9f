"""``tablectl verify [--record]``: the software's SHA-256 digest (SPEC § 5).

``--record`` (at installation, as root; systemd/install.sh does it) stores the
digest and the per-file hashes in the configuration's ``[table] software_record``
(default ``/etc/tablectl/software.json``: root-owned, where the service cannot
write), or ``--record-file``; ``--state-dir D`` means ``D/software.json`` (the
simulator's).  The digest covers our packages and the whole virtualenv
(controller/selfcheck.py).  The service compares with it at every start-up, and a
mismatch is a tilt.  Without ``--record`` every installed file is read and
checked against the record: exit 0 on a match, 1 on a mismatch (the differing
files are listed), 2 when nothing is recorded."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "verify"
HELP = "print the software digest (SHA-256 over the installed files); --record stores it"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.audit import add_where_arguments

    p.add_argument("--record", action="store_true", help="record the digest of the installed files")
    add_where_arguments(p)  # --config, --state-dir (the record is STATE_DIR/software.json, the simulator's), ...
    p.add_argument("--record-file", type=Path, help="the record file (instead of reading --config)")
    p.add_argument(
        "--bytecode",
        action="store_true",
        help="with --record: list the compiled files (__pycache__) too, for a release compiled at installation "
        "(systemd/install.sh); a later check follows the record",
    )


def run(args: argparse.Namespace) -> int:
    import sys

    from controller import __version__
    from controller import selfcheck as S
    from controller.config import ConfigError
    from controller.hardware import load_hardware

    try:
        if args.record_file is not None:
            where = Path(args.record_file)
        elif args.state_dir is not None:
            where = Path(args.state_dir)
        else:
            where = S.software_record_of(load_hardware(args.config))
    except ConfigError as e:
        print(f"tablectl verify: configuration error: {e}", file=sys.stderr)
        return 2
    from controller.audit import refuse_damaged

    # a ledger failing its audit is refused (--record is an installation step: no key; a bare
    # --record-file names no ledger unless the configuration exists)
    if not args.record and (args.state_dir is not None or Path(args.config).exists()):
        refused = refuse_damaged(args, "tablectl verify", sys.stderr)
        if refused is not None:
            return refused
    if args.record:
        made = S.record_digest(where, bytecode=args.bytecode)
        print(
            f"version: {made.version}\nfiles: {len(made.files)}"
            + (" (compiled files included)" if made.bytecode else "")
            + f"\ndigest: {made.digest}\nrecorded: {S.record_path(where)}"
        )
        return 0
    if args.bytecode:
        print("tablectl verify: --bytecode goes with --record (a check follows the record)", file=sys.stderr)
        return 2
    rec = S.load_record(where)
    files = S.manifest(full=True, bytecode=rec is not None and rec.bytecode)
    now = S.digest_of(files)
    print(f"version: {__version__}\nfiles: {len(files)}\ndigest: {now}")
    if rec is None:
        print(f"recorded: none in {S.record_path(where)}")
        return 2
    print(f"recorded: {rec.digest} ({rec.version}, {rec.recorded})")
    if rec.digest == now:
        print("result: match")
        return 0
    diff = S.compare(rec.files, files)
    print("result: MISMATCH")
    for what in ("changed", "missing", "added"):
        for p in diff[what]:
            print(f"  {what}: {p}")
    return 1
