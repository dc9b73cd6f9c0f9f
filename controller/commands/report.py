"""``tablectl report --day YYYY-MM-DD``: the accounting report of one gaming day
(controller/report.py; docs/operations.md), as CSV (spreadsheets) or PDF (people).

The gaming day starts at ``--day-start`` (default 06:00) local time (``--tz``, default the
machine's time zone).  Read-only, safe while the service runs; refused for a ledger that
fails its audit (as ``history`` is)."""

from __future__ import annotations

import argparse
import sys
from datetime import date, time
from pathlib import Path

NAME = "report"
HELP = "accounting report of a gaming day: meters at start and end, contributions, hits, voids, faults, chain head"


def _day(s: str) -> date:
    try:
        return date.fromisoformat(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a date YYYY-MM-DD") from None


def _hhmm(s: str) -> time:
    try:
        t = time.fromisoformat(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a time HH:MM") from None
    return t


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.audit import add_where_arguments

    p.add_argument("--day", type=_day, required=True, help="the gaming day, YYYY-MM-DD (the date it starts on)")
    p.add_argument("--format", choices=("csv", "pdf"), default="csv", help="csv (default) or pdf")
    p.add_argument("--out", type=Path, help="write here (default: stdout for csv; report-<table>-<day>.pdf for pdf)")
    p.add_argument("--day-start", type=_hhmm, default=time(6, 0), help="local time the gaming day starts (06:00)")
    p.add_argument("--tz", help="time zone of the gaming day, e.g. America/New_York (default: the machine's)")
    add_where_arguments(p)


def run(args: argparse.Namespace) -> int:
    from controller import report as R
    from controller.audit import refuse_damaged, refuse_read, where_from_args
    from controller.config import ConfigError
    from controller.history import open_readonly

    tz = None
    if args.tz:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            tz = ZoneInfo(args.tz)
        except (ZoneInfoNotFoundError, ValueError):
            print(f"tablectl report: --tz: unknown time zone {args.tz!r}", file=sys.stderr)
            return 2
    refused = refuse_damaged(args, "tablectl report", sys.stderr)  # never report from a ledger failing its audit
    if refused is not None:
        return refused
    try:
        where = where_from_args(args, with_key=False)
    except ConfigError as e:
        print(f"tablectl report: configuration error: {e}", file=sys.stderr)
        return 2
    try:
        conn = open_readonly(where.ledger_path)
    except FileNotFoundError as e:
        print(f"tablectl report: {e}", file=sys.stderr)
        return 1
    try:
        rep = R.build(conn, args.day, day_start=args.day_start, tz=tz)
    finally:
        conn.close()
    # the events the report was made from are checked too: their sealed segments, by digest
    refused = refuse_read(args, [(max(1, rep.read_from), rep.head.count)], "tablectl report", sys.stderr)
    if refused is not None:
        return refused
    if args.format == "csv":
        text = R.to_csv(rep, tz)
        if args.out is None:
            sys.stdout.write(text)
        else:
            args.out.write_text(text, encoding="utf-8")
            print(args.out)
        return 0
    from controller.pdf import render

    out = args.out or Path(f"report-{rep.table_id or 'table'}-{args.day.isoformat()}.pdf")
    title = f"table {rep.table_id} gaming day {args.day.isoformat()}"
    out.write_bytes(render(R.to_lines(rep, tz), title=title))
    print(out)
    return 0
