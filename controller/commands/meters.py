"""``tablectl meters``: every progressive meter in full, exactly, from the ledger
(read-only; safe while the service runs), checked against the ledger's snapshot."""

from __future__ import annotations

import argparse

from controller.commands._ledgerargs import add_ledger_arguments, open_ledger, show

NAME = "meters"
HELP = "progressive meters from the ledger: amount, seed, rate, hidden remainder, hits, paid"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_ledger_arguments(p)


def run(args: argparse.Namespace) -> int:
    from controller.reports.tablestatus import format_meters

    ledger, _where, rc = open_ledger(args, NAME)
    if ledger is None:
        return rc
    return show(NAME, ledger, lambda: format_meters(ledger))
