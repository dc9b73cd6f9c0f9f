"""``tablectl history [ROUND]``: the last 10 rounds, or one round in full, from the
ledger (read-only; safe while the service runs)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

NAME = "history"
HELP = "recall the last 10 rounds, or one round in full, from the ledger"

#: the most rounds one listing shows (a day's play on a busy table is a few thousand)
LAST_MAX = 100_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.books.audit import add_where_arguments
    from controller.commands._argtypes import INT64_MAX, int_range

    p.add_argument("round", nargs="?", type=int_range(1, INT64_MAX), help="round number to show in full")
    add_where_arguments(p)
    p.add_argument(
        "--last",
        type=int_range(1, LAST_MAX),
        default=10,
        help=f"how many rounds to list (default 10, at most {LAST_MAX})",
    )
    p.add_argument(
        "--hits",
        action="store_true",
        help="list the last 25 progressive hits (meter hits and fixed pays) instead ($, local time)",
    )


def run(args: argparse.Namespace) -> int:
    from controller.books import history as H
    from controller.books.audit import refuse_damaged, refuse_read

    refused = refuse_damaged(args, "tablectl history", sys.stderr)  # never recall from a ledger failing its audit
    if refused is not None:
        return refused

    from controller.books.audit import where_from_args
    from controller.settings.config import ConfigError

    try:
        where = where_from_args(args, with_key=False)
    except ConfigError as e:
        print(f"tablectl history: configuration error: {e}", file=sys.stderr)
        return 2
    try:
        conn = H.open_readonly(where.ledger_path)
    except FileNotFoundError as e:
        print(f"tablectl history: {e}", file=sys.stderr)
        return 1
    lines, ranges, status = _recall(H, conn, args)
    if status:
        return status
    # what is shown is checked too: the sealed segments it was read from, by their digests
    refused = refuse_read(args, ranges, "tablectl history", sys.stderr)
    if refused is not None:
        return refused
    for line in lines:
        print(line)
    return 0


def _hit_line(h: Mapping[str, Any]) -> str:
    """A meter hit (a share of the meter, paid by an attendant) or a fixed pay (from the table):
    amounts in dollars and cents, times in this machine's time zone (the ledger keeps UTC)."""
    from controller.core.money import format_cents
    from controller.reports.tablestatus import local_time

    return (
        f"{local_time(h['ts'])}  round {h['round']:>5}  seat {h['seat']}  {h['hand']:<16} "
        f"{format_cents(h['cents']):>13}  "
        f"{'meter hit' if h['paid_by'] == 'attendant' else 'fixed pay'}, paid by the {h['paid_by']}"
        f"  (event #{h['seq']})"
    )


def _recall(H: Any, conn: Any, args: argparse.Namespace) -> tuple[list[str], list[tuple[int, int]], int]:
    """(the lines to print, the event ranges they were read from, an exit status)."""
    if args.hits:
        hits = H.hits(conn)
        return [_hit_line(h) for h in hits], [(h["seq"], h["seq"]) for h in hits], 0
    if args.round is not None:
        rec = H.round_detail(conn, args.round)
        if rec is None:
            print(f"tablectl history: no round {args.round} in the ledger", file=sys.stderr)
            return [], [], 1
        return [H.format_detail(rec)], H.spans(conn, [args.round]), 0
    recs = H.rounds(conn, args.last)
    return [H.format_summary(rec) for rec in recs], H.spans(conn, [r.number for r in recs]), 0
