"""``tablectl report --day YYYY-MM-DD``: the accounting report of one gaming day
(controller/reports/report.py; docs/operations.md), as CSV (spreadsheets) or PDF (people).

The gaming day starts at ``--day-start`` (default 06:00) local time (``--tz``, default the
machine's time zone).  Read-only, safe while the service runs; refused for a ledger that
fails its audit (as ``history`` is)."""

from __future__ import annotations

import argparse
import sys
from datetime import date, time, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.reports.report import DayReport

NAME = "report"
HELP = "accounting report of a gaming day: meters at start and end, contributions, hits, voids, faults, chain head"


#: the days a report can be of (a gaming day runs into the next date; the ledger's times are after 1970)
FIRST_DAY, LAST_DAY = date(1970, 1, 2), date(9998, 12, 31)


#: ``--day today``: the gaming day running now (resolved once --day-start and --tz are known)
TODAY = "today"


def _day(s: str) -> date | str:
    if s.strip().lower() == TODAY:
        return TODAY
    try:
        d = date.fromisoformat(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a date YYYY-MM-DD") from None
    if not FIRST_DAY <= d <= LAST_DAY:
        raise argparse.ArgumentTypeError(f"{s}: a gaming day from {FIRST_DAY} to {LAST_DAY}")
    return d


def _hhmm(s: str) -> time:
    try:
        t = time.fromisoformat(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a time HH:MM") from None
    return t


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.books.audit import add_where_arguments

    p.add_argument(
        "--day",
        type=_day,
        required=True,
        help="the gaming day, YYYY-MM-DD (the date it starts on), or today (the one running now)",
    )
    p.add_argument("--format", choices=("csv", "pdf"), default="csv", help="csv (default) or pdf")
    p.add_argument("--out", type=Path, help="write here (default: stdout for csv; required for --format pdf)")
    p.add_argument("--day-start", type=_hhmm, default=time(6, 0), help="local time the gaming day starts (06:00)")
    p.add_argument("--tz", help="time zone of the gaming day, e.g. America/New_York (default: the machine's)")
    add_where_arguments(p)


class ReportFailed(Exception):
    """Why the report is not made, said on stderr, and the exit status: 2 for a usage or
    configuration error, 1 for a failure (no ledger, a write that did not finish)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def _tz(args: argparse.Namespace) -> tuple[tzinfo | None, str | None]:
    """(the --tz zone or None, or what is wrong with it)."""
    if not args.tz:
        return None, None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(args.tz), None
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None, f"--tz: unknown time zone {args.tz!r}"


def _current_day(day_start: time, tz: tzinfo | None) -> date:
    """The gaming day running now: today's date from ``day_start`` on, else yesterday's."""
    from datetime import datetime, timedelta

    now = datetime.now(tz).astimezone(tz)
    return now.date() if now.time() >= day_start else now.date() - timedelta(days=1)


def _out_problem(out: Path | None, *, required: bool = False) -> str | None:
    """What is wrong with --out before anything is read (a usage error), or None."""
    if out is None:
        # as `lap --report`: a PDF goes where it is told, never into whatever directory this runs in
        return "--format pdf needs --out FILE (a PDF is not for the terminal)" if required else None
    if out.is_dir():
        return f"--out {out}: is a directory; name the file to write"
    if not out.parent.is_dir():
        return f"--out {out}: there is no directory {out.parent}"
    return None


def _write(out: Path | None, data: bytes) -> str | None:
    """Write the report (``None``: standard output); what went wrong, or None.  A file this
    made and could not finish is removed (never half a report)."""
    if out is None:
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        except OSError as e:
            return f"cannot write the report to standard output: {e.strerror or e}"
        return None
    existed = out.exists()
    try:
        with open(out, "wb") as f:
            f.write(data)
    except OSError as e:
        if not existed and out.is_file():
            out.unlink(missing_ok=True)
        return f"--out {out}: cannot write: {e.strerror or e}"
    return None


def _build(args: argparse.Namespace, tz: tzinfo | None) -> DayReport:
    """The report of ``args.day`` from the ledger."""
    from controller.books.audit import where_from_args
    from controller.books.history import open_readonly
    from controller.reports import report as R
    from controller.settings.config import ConfigError

    try:
        where = where_from_args(args, with_key=False)
    except ConfigError as e:
        raise ReportFailed(f"configuration error: {e}", 2) from None
    try:
        conn = open_readonly(where.ledger_path)
    except FileNotFoundError as e:
        raise ReportFailed(str(e), 1) from None
    try:
        return R.build(conn, args.day, day_start=args.day_start, tz=tz)
    finally:
        conn.close()


def _render(args: argparse.Namespace, rep: DayReport, tz: tzinfo | None) -> tuple[Path | None, bytes]:
    """Where to write the report and its bytes (CSV or PDF)."""
    from controller.reports import reportview as V

    if args.format == "csv":
        return args.out, V.to_csv(rep, tz).encode("utf-8")
    try:
        from controller.reports.reportpdf import render
    except ModuleNotFoundError as e:  # the `report` extra (the release installs it)
        raise ReportFailed(f"--format pdf needs {e.name}: pip install 'tablectl[report]'", 2) from None
    return args.out, render(rep, tz)


def run(args: argparse.Namespace) -> int:
    from controller.books.audit import refuse_damaged, refuse_read

    tz, problem = _tz(args)
    problem = problem or _out_problem(args.out, required=args.format == "pdf")
    if args.day == TODAY:
        args.day = _current_day(args.day_start, tz)
    if problem is not None:
        print(f"tablectl report: {problem}", file=sys.stderr)
        return 2
    refused = refuse_damaged(args, "tablectl report", sys.stderr)  # never report from a ledger failing its audit
    if refused is not None:
        return refused
    try:
        rep = _build(args, tz)
        # the events the report was made from are checked too: their sealed segments, by digest
        refused = refuse_read(args, [(max(1, rep.read_from), rep.head.count)], "tablectl report", sys.stderr)
        if refused is not None:
            return refused
        out, data = _render(args, rep, tz)
    except ReportFailed as e:
        print(f"tablectl report: {e}", file=sys.stderr)
        return e.status
    problem = _write(out, data)
    if problem is not None:
        print(f"tablectl report: {problem}", file=sys.stderr)
        return 1
    if out is not None:
        print(out)
    return 0
