"""``tablectl verify [--record]``: the software's SHA-256 digest (SPEC § 5).

``--record`` (at installation; systemd/install.sh does it) stores the digest and
the per-file hashes in ``<state_dir>/software.json``; the service compares with
it at every start-up, and a mismatch is a tilt.  Without ``--record`` the
installed files are checked against the record: exit 0 on a match, 1 on a
mismatch (the differing files are listed), 2 when nothing is recorded."""

from __future__ import annotations

import argparse

NAME = "verify"
HELP = "print the software digest (SHA-256 over the installed files); --record stores it"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.audit import add_where_arguments

    p.add_argument("--record", action="store_true", help="record the digest of the installed files")
    add_where_arguments(p)


def run(args: argparse.Namespace) -> int:
    import sys

    from controller import __version__
    from controller import selfcheck as S
    from controller.commands.pin import state_dir_of
    from controller.config import ConfigError

    try:
        state_dir = state_dir_of(args)
    except ConfigError as e:
        print(f"tablectl verify: configuration error: {e}", file=sys.stderr)
        return 2
    from controller.audit import refuse_damaged

    if not args.record:  # (--record is an installation step, run as the service user: no key)
        refused = refuse_damaged(args, "tablectl verify", sys.stderr)  # a ledger failing its audit is refused
        if refused is not None:
            return refused
    if args.record:
        made = S.record_digest(state_dir)
        print(
            f"version: {made.version}\nfiles: {len(made.files)}\ndigest: {made.digest}\n"
            f"recorded: {S.record_path(state_dir)}"
        )
        return 0
    files = S.manifest()
    now = S.digest_of(files)
    print(f"version: {__version__}\nfiles: {len(files)}\ndigest: {now}")
    rec = S.load_record(state_dir)
    if rec is None:
        print(f"recorded: none in {S.record_path(state_dir)}")
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
