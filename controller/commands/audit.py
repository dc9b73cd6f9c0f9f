"""``tablectl audit [--state-dir D]``: verify the whole ledger.

From the first event to the last: the chain and every MAC, every checkpoint and its
meters, the stored meters, and the witness of the chain's head (controller/books/audit.py).
Exit 0 when sound; 1 naming the first bad event (damage a technician already
acknowledged is listed but does not fail the audit again); 2 when the configuration or
the key cannot be read."""

from __future__ import annotations

import argparse
import sys

NAME = "audit"
HELP = "verify the ledger's chain, MACs, checkpoints, meters and witness from the first event to the last"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.books.audit import add_where_arguments

    add_where_arguments(p)


def run(args: argparse.Namespace) -> int:
    from controller.books.audit import audit, split_acknowledged, where_from_args
    from controller.books.ledgerkey import LedgerKeyError
    from controller.settings.config import ConfigError

    try:
        where = where_from_args(args)
    except ConfigError as e:
        print(f"tablectl audit: configuration error: {e}", file=sys.stderr)
        return 2
    except LedgerKeyError as e:
        print(f"tablectl audit: {e}", file=sys.stderr)
        return 2
    from controller.core.progress import Progress

    with Progress("audit: every MAC of the ledger"):  # a year's ledger takes a while (stderr, a terminal only)
        problems = audit(where)
    new, ack = split_acknowledged(where, problems)
    print(f"ledger: {where.ledger_path}\nwitness: {where.witness_dir}")
    for p in ack:
        print(f"acknowledged: {p}")
    if new:
        print(f"FAILED: {new[0]}")
        for p in new[1:]:
            print(f"  {p}")
        return 1
    print("result: ok")
    return 0
