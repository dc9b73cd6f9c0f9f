"""``tablectl migrate [--state-dir D | --config F] [--key-file K]``: bring a table's ledger to
this software's schema (an upgrade's step: systemd/install.sh runs it after backing the ledger
up and before switching ``current``; docs/install.md).

Opening the ledger with its key migrates it (controller/books/ledgermigrate.py); a schema-1 SHA-256
chain only with ``--key-unkeyed --by NAME --reason TEXT`` (a technician's order, recorded in the
keyed ``ledger.keyed`` record it gets; refused when the witness or the ledger's records say it was
ever keyed: keying signs its history as it stands, so a forged one would be signed); the witness of
the head is then brought up to date and the whole ledger audited.  The key is read first (as
root, at installation); everything after is done as the state directory's owner
(controller/daemon/stateowner.py), so no file the service cannot read is left behind.  Exit 0 when
the ledger audits clean after it, 1 when not (naming the first problem), 2 for a configuration
or key problem.  A state directory with no ledger yet has nothing to migrate (exit 0)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "migrate"
HELP = "bring the ledger to this version's schema (an upgrade's step), then audit it"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.books.audit import add_where_arguments

    add_where_arguments(p)
    p.add_argument(
        "--key-unkeyed",
        action="store_true",
        help="key a ledger written before the key (schema 1): signs its history as it stands, so only after a "
        "technician has checked it; refused when its witness or records say it was ever keyed; needs --by and --reason",
    )
    p.add_argument("--by", default="", help="with --key-unkeyed: the technician ordering it (recorded)")
    p.add_argument("--reason", default="", help="with --key-unkeyed: why (recorded)")


def _key_order(args: argparse.Namespace, where: object, path: Path) -> tuple[object, str | None]:
    """(the technician's order to key an unkeyed ledger, or None; why it is refused, or None)."""
    import sqlite3

    from controller.books.ledgerfile import connect_ro
    from controller.books.ledgermigrate import KeyUnkeyed, ever_keyed

    if not args.key_unkeyed:
        return None, None
    if not args.by.strip() or not args.reason.strip():
        return None, "--key-unkeyed needs --by NAME and --reason TEXT (both recorded in the ledger)"
    ro = connect_ro(path)
    try:
        evidence = ever_keyed(ro, where.witness_dir / "witness.json", where.state_dir)  # type: ignore[attr-defined]
    except sqlite3.Error as e:
        return None, f"{path}: cannot read the ledger: {e}"
    finally:
        ro.close()
    if evidence is not None:
        return None, f"{path}: refused to key it: {evidence}; a ledger once keyed is restored from a backup instead"
    return KeyUnkeyed(args.by.strip()[:80], args.reason.strip()[:400]), None


def _last_table_id(path: Path) -> str:
    """The table the ledger's last event was recorded by ("unknown" in an empty one)."""
    from controller.books.ledgerfile import connect_ro

    ro = connect_ro(path)
    try:
        row = ro.execute("SELECT table_id FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    finally:
        ro.close()
    return str(row[0]) if row else "unknown"


def run(args: argparse.Namespace) -> int:
    import sqlite3

    from controller.books.audit import audit, where_from_args
    from controller.books.ledger import SCHEMA_VERSION, Ledger, LedgerError
    from controller.books.ledgerkey import LedgerKeyError
    from controller.books.witness import Witness, sign_if_unsigned
    from controller.daemon.stateowner import act_as_owner
    from controller.settings.config import ConfigError

    try:
        where = where_from_args(args)  # the key is read here, before any privilege is dropped
    except (ConfigError, LedgerKeyError) as e:
        print(f"tablectl migrate: {e}", file=sys.stderr)
        return 2
    path = where.ledger_path
    if not path.is_file():
        print(f"tablectl migrate: no ledger in {where.state_dir}: nothing to migrate")
        return 0
    act_as_owner(where.state_dir, "migrate")
    assert where.key is not None
    table_id = where.table_id or _last_table_id(path)
    order, refused = _key_order(args, where, path)
    if refused is not None:
        print(f"tablectl migrate: {refused}", file=sys.stderr)
        return 1
    try:
        led = Ledger(path, table_id, key=where.key, key_unkeyed=order)  # type: ignore[arg-type]
    except (LedgerError, sqlite3.Error) as e:
        print(f"tablectl migrate: {path}: {e}", file=sys.stderr)
        return 1
    try:
        before = led.migrated_from
        head = led.head()
        if sign_if_unsigned(where.witness_dir, table_id, where.key, led.db):
            print(f"tablectl migrate: {where.witness_dir}: the witness (unsigned, matching the ledger) is now signed")
        if before is not None:
            # the keyed record is the new head: the witness follows it (a witness behind is no rollback)
            Witness(where.witness_dir, table_id, where.key).write(head)
    finally:
        led.close()
    done = f"migrated from schema {before} to {SCHEMA_VERSION}" if before is not None else f"schema {SCHEMA_VERSION}"
    problems = audit(where)
    if problems:
        print(f"tablectl migrate: {path}: {done}, but the ledger fails its audit: {problems[0]}", file=sys.stderr)
        return 1
    print(f"tablectl migrate: {path}: {done}; {head.count} events; audit ok")
    return 0
