"""``tablectl status``: the table's state from the ledger (read-only) and the service's
status from systemd when it can be asked — for a technician at a shell, without the
console (controller/reports/tablestatus.py).

It says what was checked and no more: every event since the last seal by its MAC, the
stored meters and the witness of the head when the key can be read (else that they were
not checked), the service's periodic audit's last result and its age
(controller/reports/auditstatus.py), and the tilts the ledger has latched.  A ledger
failing the check is never shown as an open table; exit 1 then."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from controller.commands._ledgerargs import add_ledger_arguments, open_ledger, show

NAME = "status"
HELP = "table state, open/closed, tilts, meters and the sign, from the ledger; its check; the service's status"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_ledger_arguments(p)
    p.add_argument(
        "--key-file", type=Path, help="the ledger key file (default: [ledger] key_file, or beside --state-dir)"
    )
    p.add_argument("--witness-dir", type=Path, help="the witness directory (default: beside the state directory)")
    p.add_argument("--unit", default="tablectl.service", help="the systemd unit to ask (default tablectl.service)")


def checked(args: argparse.Namespace, where: Any) -> Any:
    """What the check found (controller/reports/tablestatus.py ``Checked``)."""
    from controller.books.audit import audit, recorded_findings, split_acknowledged, where_from_args
    from controller.books.ledgerkey import LedgerKeyError
    from controller.reports import auditstatus
    from controller.reports.tablestatus import Checked

    service_audit = auditstatus.line(where.ledger_path.parent)
    try:
        keyed = where_from_args(args)
    except LedgerKeyError as e:
        return Checked(None, str(e), service_audit)
    problems, _ack = split_acknowledged(keyed, audit(keyed, full=False) + recorded_findings(keyed))
    what = "every event since the last seal by its MAC, the stored meters, the witness of the head"
    return Checked(problems, what, service_audit)


def run(args: argparse.Namespace) -> int:
    from controller.reports.tablestatus import format_status, service_status

    ledger, where, rc = open_ledger(args, NAME)
    if ledger is None:
        return rc
    found = checked(args, where)  # its own reading of the ledger: an unreadable one is a finding, never a raise
    rc = show(NAME, ledger, lambda: format_status(ledger, service_status(args.unit), where.witness_dir, found))
    return 1 if rc == 0 and found.problems else rc
