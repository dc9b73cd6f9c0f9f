"""Console commands that read the event log: history, hits, events.

They read through a read-only SQLite connection of their own (WAL lets readers
run beside the ledger writer) and the round recall of controller/books/history.py,
so what they show is what the ledger holds (SPEC § 5; § 670a.11(j))."""

from __future__ import annotations

import json
from collections.abc import Mapping

from controller.console.registry import FLOOR, CommandError, Ctx, command, parse_int, want_args

EVENTS_DEFAULT, EVENTS_MAX = 20, 500


@command("history", FLOOR, "history [ROUND]", "the last 10 rounds, or one round in full")
def cmd_history(ctx: Ctx, args: list[str]) -> str:
    from controller.books import history as H

    want_args(args, 0, 1, "history [ROUND]")
    with ctx.server.reader() as conn:
        if args:
            n = parse_int(args[0], "ROUND", 1, 10**9)
            r = H.round_detail(conn, n)
            if r is None:
                raise CommandError(f"no round {n} in the event log")
            return H.format_detail(r)
        rs = H.rounds(conn, H.ROUNDS_KEPT)
    if not rs:
        return "no rounds yet"
    return "\n".join(H.format_summary(r) for r in rs)


@command("hits", FLOOR, "hits [LEVEL]", "the last 25 progressive hits of each level (or of one)")
def cmd_hits(ctx: Ctx, args: list[str]) -> str:
    from controller.books import history as H
    from controller.books.meters import HIT_HISTORY
    from controller.core.money import plural

    want_args(args, 0, 1, "hits [LEVEL]")
    levels = sorted(ctx.call(lambda: list(ctx.table().meters)))
    if args:
        if args[0] not in levels:
            raise CommandError(f"no progressive level {args[0]!r} (levels: {', '.join(levels) or 'none'})")
        levels = [args[0]]
    if not levels:
        return "no progressive meters on this table"
    out = []
    with ctx.server.reader() as conn:
        for level in levels:
            hs = H.hits(conn, level, HIT_HISTORY)
            out.append(
                f"{level}: last {plural(len(hs), 'progressive hit')} (meter hits and fixed pays)" + (":" if hs else "")
            )
            out += [_hit_line(h) for h in hs]
    return "\n".join(out)


def _hit_line(h: Mapping[str, object]) -> str:
    from controller.core.money import format_cents

    cents = h["cents"]
    if not isinstance(cents, int):
        raise ValueError(f"a hit of round {h['round']} without its amount in cents")
    return (
        f"  round {h['round']!s:>5}  seat {h['seat']}  {h['hand']!s:<16} {format_cents(cents):>12}  "
        f"{'meter hit' if h['paid_by'] == 'attendant' else 'fixed pay'}, paid by the {h['paid_by']!s:<9} "
        f"{str(h['ts'])[:19]} UTC"
    )


@command(
    "events",
    FLOOR,
    "events [COUNT] [KIND]",
    "the last events (default 20), optionally only one kind or family (e.g. tilt, console.login)",
    args=[("10", "20", "50", "100", "tilt", "console", "round", "wager", "meter", "dice", "config", "selfcheck")],
)
def cmd_events(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 0, 2, "events [COUNT] [KIND]")
    count, kind = _events_args(args)
    q = "SELECT seq, ts, round, kind, data FROM events"
    params: list[object] = []
    if kind is not None:
        q += " WHERE kind = ? OR kind LIKE ? ESCAPE '\\'"
        params += [kind, kind.replace("_", "\\_") + ".%"]
    q += " ORDER BY seq DESC LIMIT ?"
    params.append(count)
    with ctx.server.reader() as conn:
        rows = conn.execute(q, params).fetchall()
    if not rows:
        return "no events" + (f" of kind {kind!r}" if kind else "")
    return "\n".join(_event_line(*row) for row in reversed(rows))


def _events_args(args: list[str]) -> tuple[int, str | None]:
    """``events``' (count, kind): a number and/or an event kind or family, in either order."""
    count, kind = EVENTS_DEFAULT, None
    for a in args:
        if a.isdigit():
            count = parse_int(a, "COUNT", 1, EVENTS_MAX)
        elif kind is None and a.replace(".", "").replace("_", "").replace("-", "").isalnum():
            kind = a
        else:
            raise CommandError(f"bad argument {a!r}: give a count (1..{EVENTS_MAX}) and/or an event kind")
    return count, kind


def _event_line(seq: int, ts: str, rnd: int, k: str, data: str) -> str:
    """One event on one line (at most 400 characters), its data as key=JSON pairs."""
    d = json.loads(data)
    detail = " ".join(f"{key}={json.dumps(v, separators=(',', ':'))}" for key, v in d.items())
    return f"#{seq} {ts[:19]} r{rnd} {k} {detail}"[:400]
