"""Range-checked numbers for command lines: a number past what the ledger (SQLite's 64-bit
integers) or the command can hold is a usage error naming the range, never an OverflowError."""

from __future__ import annotations

import argparse
from collections.abc import Callable

#: SQLite's INTEGER: the largest round, event or seat number a ledger can hold
INT64_MAX = 2**63 - 1


def int_range(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer from ``lo`` to ``hi``."""

    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not a whole number") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{s}: must be from {lo} to {hi}")
        return v

    parse.__name__ = "number"  # argparse names the type in its message
    return parse


def seconds(hi: float) -> Callable[[str], float]:
    """An argparse ``type``: a number of seconds above 0, at most ``hi`` (never inf or nan)."""

    def parse(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not a number of seconds") from None
        if not 0 < v <= hi:  # nan fails this too
            raise argparse.ArgumentTypeError(f"{s}: must be above 0 and at most {hi:g} seconds")
        return v

    parse.__name__ = "seconds"
    return parse


def astray(pairs: list[tuple[str, object, str, object]]) -> str | None:
    """The first option given without the mode it belongs to, said (a usage error: an option
    a mode cannot honour is refused, never ignored); None when each is where it belongs.
    ``pairs``: (the option, whether it was given, the mode's option, whether that was given)."""
    for opt, given, mode, on in pairs:
        if given and not on:
            return f"{opt} goes with {mode}, not given: nothing would use it"
    return None


#: the log levels a command takes (``--log-level``), in order
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def log_level(s: str) -> str:
    """An argparse ``type``: a log level, any case (an unknown one is a usage error naming them)."""
    if s.lower() not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{s!r}: one of {', '.join(LOG_LEVELS)}")
    return s.lower()


def dsn(s: str) -> str:
    """An argparse ``type``: a PostgreSQL connection string psycopg can read (a URI or key=value pairs)."""
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(s)
    except ProgrammingError as e:
        raise argparse.ArgumentTypeError(f"not a PostgreSQL connection string: {str(e).strip()}") from None
    return s
