"""``tablectl status``: the table's state from the ledger (read-only) and the service's
status from systemd when it can be asked — for a technician at a shell, without the
console (controller/reports/tablestatus.py)."""

from __future__ import annotations

import argparse

from controller.commands._ledgerargs import add_ledger_arguments, open_ledger, show

NAME = "status"
HELP = "table state, open/closed, tilts, meters and the sign, from the ledger; the service's status"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_ledger_arguments(p)
    p.add_argument("--unit", default="tablectl.service", help="the systemd unit to ask (default tablectl.service)")


def run(args: argparse.Namespace) -> int:
    from controller.reports.tablestatus import format_status, service_status

    ledger, where, rc = open_ledger(args, NAME)
    if ledger is None:
        return rc
    return show(NAME, ledger, lambda: format_status(ledger, service_status(args.unit), where.witness_dir))
