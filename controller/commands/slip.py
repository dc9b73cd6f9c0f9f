"""``tablectl slip ROUND SEAT``: the payout slip (PDF) of the progressive hit at that round and seat,
from the table's ledger (controller/reports/slip.py), with signature lines for the dealer and the
floorperson who validated it.  Like ``history`` and ``report``: ``--config`` or ``--state-dir``,
read-only, refused for a ledger that fails its audit."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.reports.slip import Slip

NAME = "slip"
HELP = "print the payout slip (PDF) of a progressive hit: amount, table, seat, hand, meter, who validated, signatures"


def _positive(s: str) -> int:
    try:
        n = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{s}: at least 1")
    return n


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.books.audit import add_where_arguments

    p.add_argument(
        "round", metavar="ROUND", type=_positive, help="the round of the hit (`tablectl history --hits` lists them)"
    )
    p.add_argument("seat", metavar="SEAT", type=_positive, help="the winning seat")
    p.add_argument(
        "--out", metavar="F", type=Path, help="write the PDF here (default slip-<table>-round<R>-seat<S>.pdf)"
    )
    p.add_argument(
        "--tz", metavar="ZONE", help="time zone of the times printed, e.g. America/New_York (default: the machine's)"
    )
    add_where_arguments(p)


def run(args: argparse.Namespace) -> int:
    from controller.books.audit import refuse_damaged, refuse_read
    from controller.commands.report import _out_problem, _tz, _write

    tz, problem = _tz(args)
    problem = problem or _out_problem(args.out) or _no_reportlab()
    if problem is not None:
        print(f"tablectl slip: {problem}", file=sys.stderr)
        return 2
    from controller.reports.slippdf import render

    refused = refuse_damaged(args, "tablectl slip", sys.stderr)  # never print from a ledger failing its audit
    if refused is not None:
        return refused
    got = _slip(args, tz)
    if isinstance(got, int):
        return got
    slip, span = got
    refused = refuse_read(args, [span], "tablectl slip", sys.stderr)  # the round's records, checked too
    if refused is not None:
        return refused
    out = args.out or Path(f"slip-{slip.table}-round{slip.round_no}-seat{slip.seat}.pdf")
    problem = _write(out, render(slip, tz=tz))
    if problem is not None:
        print(f"tablectl slip: {problem}", file=sys.stderr)
        return 1
    print(out)
    return 0


def _no_reportlab() -> str | None:
    try:
        import reportlab  # noqa: F401 - only whether it is there
    except ModuleNotFoundError as e:  # the `report` extra (the release installs it)
        return f"the PDF needs {e.name}: pip install 'tablectl[report]'"
    return None


def _slip(args: argparse.Namespace, tz: object) -> tuple[Slip, tuple[int, int]] | int:
    """(the slip, its round's first and last events), or the exit status having said why not."""
    import sqlite3

    from controller.books.audit import where_from_args
    from controller.books.history import open_readonly
    from controller.reports.slip import SlipError, from_ledger
    from controller.settings.config import ConfigError

    try:
        where = where_from_args(args, with_key=False)
        conn = open_readonly(where.ledger_path)
    except ConfigError as e:
        print(f"tablectl slip: configuration error: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"tablectl slip: {e}", file=sys.stderr)
        return 1
    try:
        slip = from_ledger(conn, args.round, args.seat, tz)  # type: ignore[arg-type]  # a tzinfo or None
        lo, hi = conn.execute("SELECT min(seq), max(seq) FROM events WHERE round = ?", (args.round,)).fetchone()
    except SlipError as e:
        print(f"tablectl slip: {e}", file=sys.stderr)
        return 1
    except (sqlite3.Error, ValueError, KeyError) as e:
        print(f"tablectl slip: the ledger {where.ledger_path} cannot be read: {e}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    return slip, (int(lo), int(hi))
