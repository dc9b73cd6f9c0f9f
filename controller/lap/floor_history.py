"""The floor view's history: hits over a range of gaming days, the tilt and event log, and
the CSV exports of both and of the tables' figures for the day.

The event log reads the LAP's recorded events generically: each source in :data:`EVENT_SOURCES`
is one SELECT giving ``at, kind, table_id, text`` over a time range (newest first, bounded); the
log is their union.  A new kind of record (a refusal, a failover) is one more entry here.
Text from a table is bounded as it is read, and a CSV cell never starts a spreadsheet formula.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from controller.lap.floor import FloorData, _epoch
from controller.lap.floor_words import change_sentence

#: rows at most in one answer (a page, a CSV export)
MAX_HITS = 2000
MAX_EVENTS = 2000

_MONEY = "'$' || to_char({}::numeric / 100, 'FM999,999,999,990.00')"
#: a hand as players say it (``four-of-a-kind`` -> ``Four of a Kind``: controller/reports/words.py)
_HAND = "replace(replace(initcap(translate(left({}, 40), '-_', '  ')), ' Of ', ' of '), ' A ', ' a ')"

#: kind -> one SELECT of (at, kind, table_id, text) between %(since)s and %(until)s, newest first
EVENT_SOURCES: dict[str, str] = {
    "link": (  # the change as recorded (the LAP's own rows); put in words by change_sentence
        "SELECT at, CASE WHEN what = 'link' THEN 'link' ELSE 'parameter' END AS kind,"
        " CASE WHEN what = 'members' THEN left(key, 40) END AS table_id,"
        " left(json_build_object('what', what, 'key', key, 'old', old, 'new', new, 'by', by_role)::text, 4000)"
        " FROM {s}.param_changes WHERE at >= %(since)s AND at < %(until)s ORDER BY at DESC LIMIT %(n)s"
    ),
    "tilt": (  # a table's tilts and its linked wager opened or closed
        "SELECT at, CASE WHEN state = 'tilt' OR tilts <> '{{}}'::jsonb THEN 'tilt' ELSE 'wager' END AS kind,"
        " table_id, left(CASE WHEN tilts <> '{{}}'::jsonb THEN 'TILT ' || (SELECT string_agg(key || ': ' || value,"
        " '; ') FROM jsonb_each_text(tilts)) || '; ' WHEN state = 'tilt' THEN 'TILT; ' ELSE '' END"
        " || 'linked wager ' || CASE WHEN progressive_open THEN 'open' ELSE 'closed (' || reason || ')' END, 400)"
        " FROM {s}.table_status_log WHERE at >= %(since)s AND at < %(until)s ORDER BY at DESC LIMIT %(n)s"
    ),
    "hit": (
        "SELECT decided_at, 'hit', table_id, left('Seat ' || seat || ': ' || "
        + _HAND.format("hand")
        + " || ' hit ' || "
        + _MONEY.format("amount_cents")
        + " || ' (' || level || ' hit #' || order_no || ', round ' || round_no || ')', 400) FROM {s}.hits"
        " WHERE decided_at >= %(since)s AND decided_at < %(until)s ORDER BY decided_at DESC LIMIT %(n)s"
    ),
    "paid": (
        "SELECT p.at, 'paid', p.table_id, left('paid ' || h.level || ' hit #' || h.order_no || ' '"
        " || " + _MONEY.format("p.cents") + " || ', validated by ' || coalesce(e.data->>'by', '?'), 400)"
        " FROM {s}.payouts p JOIN {s}.hits h ON h.table_id = p.table_id AND h.seq = p.hit_seq"
        " LEFT JOIN {s}.events e ON e.table_id = p.table_id AND e.seq = p.seq"
        " WHERE p.at >= %(since)s AND p.at < %(until)s ORDER BY p.at DESC LIMIT %(n)s"
    ),
    "ack": (
        "SELECT a.at, 'acknowledged', h.table_id, left(a.level || ' hit #' || a.order_no || ' acknowledged by '"
        " || a.person || ' (' || a.role || ')', 400) FROM {s}.floor_acks a JOIN {s}.hits h USING (level, order_no)"
        " WHERE a.at >= %(since)s AND a.at < %(until)s ORDER BY a.at DESC LIMIT %(n)s"
    ),
    "mismatch": (
        "SELECT received_at, 'mismatch', table_id, left('reconciliation: ' || problem, 400) FROM {s}.batches"
        " WHERE problem IS NOT NULL AND received_at >= %(since)s AND received_at < %(until)s"
        " ORDER BY received_at DESC LIMIT %(n)s"
    ),
    "login": (
        "SELECT at, 'login', NULL::text, left(CASE WHEN ok THEN person || ' (' || role || ') logged in'"
        " ELSE 'login refused for ' || person || ': ' || why END || ' from ' || addr, 400) FROM {s}.floor_logins"
        " WHERE at >= %(since)s AND at < %(until)s ORDER BY at DESC LIMIT %(n)s"
    ),
}


def events(
    data: FloorData, since: datetime, until: datetime, kinds: Iterable[str] | None = None, n: int = 200
) -> list[dict[str, Any]]:
    """The tilt and event log between ``since`` and ``until``, newest first (at most ``n`` rows)."""
    n = max(1, min(n, MAX_EVENTS))
    chosen = [k for k in (kinds or EVENT_SOURCES) if k in EVENT_SOURCES]
    if not chosen:
        return []
    union = " UNION ALL ".join(f"({EVENT_SOURCES[k]})" for k in chosen)
    text = f"SELECT * FROM ({union}) x(at, kind, table_id, text) ORDER BY at DESC LIMIT %(n)s"
    with data.conn() as c:
        rows = data.rows(c, text, {"since": since, "until": until, "n": n})
    return [
        {
            "at": _epoch(r["at"]),
            "kind": r["kind"],
            "table": r["table_id"],
            "text": change_sentence(r["text"]) if r["kind"] in ("link", "parameter") else r["text"],
        }
        for r in rows
    ]


_HITS_SQL = """
SELECT h.level, h.order_no, h.table_id, left(m.asset, 40) AS asset, h.round_no, h.seat, left(h.hand, 40) AS hand,
  h.amount_cents, h.meter_cents_before, h.decided_at, p.at AS paid_at, left(e.data->>'by', 60) AS validated_by,
  a.person AS ack_by, a.at AS ack_at
FROM {s}.hits h LEFT JOIN {s}.payouts p ON p.table_id = h.table_id AND p.hit_seq = h.seq
LEFT JOIN {s}.events e ON e.table_id = p.table_id AND e.seq = p.seq
LEFT JOIN {s}.members m ON m.table_id = h.table_id
LEFT JOIN LATERAL (SELECT person, at FROM {s}.floor_acks x WHERE x.level = h.level AND x.order_no = h.order_no
  ORDER BY x.id LIMIT 1) a ON true
WHERE h.decided_at >= %s AND h.decided_at < %s ORDER BY h.decided_at DESC LIMIT %s
"""


def hits_between(data: FloorData, since: datetime, until: datetime, n: int = MAX_HITS) -> list[dict[str, Any]]:
    """Every hit decided in [since, until), newest first (at most ``n``)."""
    with data.conn() as c:
        rows = data.rows(c, _HITS_SQL, (since, until, max(1, min(n, MAX_HITS))))
    return [
        {
            "level": r["level"],
            "order": int(r["order_no"]),
            "table": r["table_id"],
            "asset": r["asset"],
            "round": int(r["round_no"]),
            "seat": int(r["seat"]),
            "hand": r["hand"],
            "cents": int(r["amount_cents"]),
            "before": int(r["meter_cents_before"]),
            "decided_at": _epoch(r["decided_at"]),
            "pending": r["paid_at"] is None,
            "paid_at": _epoch(r["paid_at"]),
            "validated_by": r["validated_by"],
            "ack_by": r["ack_by"],
            "ack_at": _epoch(r["ack_at"]),
        }
        for r in rows
    ]


# ------------------------------------------------------------------------------------- CSV
def dollars(cents: int | None) -> str:
    if cents is None:
        return ""
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def when(t: float | None) -> str:
    return "" if t is None else datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")


def _cell(v: Any) -> str:
    """A CSV cell; text that a spreadsheet would take for a formula is quoted with a leading '."""
    s = "" if v is None else str(v)
    return "'" + s if s[:1] in ("=", "+", "-", "@", "\t", "\r") else s


def to_csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow(header)
    for r in rows:
        w.writerow([_cell(v) for v in r])
    return out.getvalue().encode("utf-8")


HITS_HEADER = (
    "level",
    "hit number",
    "table",
    "asset",
    "round",
    "seat",
    "hand",
    "amount",
    "meter before",
    "decided at",
    "status",
    "validated by",
    "paid at",
    "acknowledged by",
    "acknowledged at",
)


def hits_csv(hits: Iterable[dict[str, Any]]) -> bytes:
    return to_csv(
        HITS_HEADER,
        (
            (
                h["level"],
                h["order"],
                h["table"],
                h["asset"],
                h["round"],
                h["seat"],
                h["hand"],
                dollars(h["cents"]),
                dollars(h["before"]),
                when(h["decided_at"]),
                "pending" if h["pending"] else "paid",
                h["validated_by"],
                when(h["paid_at"]),
                h["ack_by"],
                when(h["ack_at"]),
            )
            for h in hits
        ),
    )


def events_csv(rows: Iterable[dict[str, Any]]) -> bytes:
    return to_csv(("at", "kind", "table", "what"), ((when(r["at"]), r["kind"], r["table"], r["text"]) for r in rows))


def tables_csv(picture: dict[str, Any]) -> bytes:
    day = when(picture["day_start"])
    return to_csv(
        (
            "gaming day from",
            "table",
            "asset",
            "game",
            "state",
            "linked wager",
            "progressive coin-in",
            "progressive wagers",
            "hands",
            "wagers per hour",
            "hands per hour",
            "sign shows",
        ),
        (
            (
                day,
                t["id"],
                t["asset"],
                t.get("game_name") or t["game"],
                t["state_label"],
                "open" if t["open"] else f"closed ({t['reason']})",
                dollars(t["coin_in_cents"]),
                t["wagers"],
                t["hands"],
                t["wagers_per_hour"],
                t["hands_per_hour"],
                t["sign"],
            )
            for t in picture["tables"]
        ),
    )
