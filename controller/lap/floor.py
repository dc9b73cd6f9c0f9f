"""The floor view's data: what the pit sees, read from the LAP's PostgreSQL schema.

:class:`FloorData` reads the link's picture: every member table (asset, game, reported state in
words, round, linked wager open or closed and why, tilts, what its sign's message line says, when
it was last heard from, and its progressive coin-in, wagers and hands for the gaming day), every
level's meter with its parameters (seed, reset, limit and the distance to it, reserve), pending
and recent hits (validated by whom, acknowledged on the floor by whom), the LAP's heartbeat, and
each level's meter over the gaming day with its hits; and the common progressive sign's smaller
picture (meters, link state, the hits of the last moments).  The hit history over a range of days,
the tilt and event log and the CSV exports are in controller/lap/floor_history.py; the web server
is controller/lap/floor_server.py (this module does no I/O but PostgreSQL).

Every field a table can write is bounded here as well as where it is written (schema.py
``report_status``): a table cannot make the picture large.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

import psycopg
from psycopg import sql

from controller.lap import pgconn
from controller.lap.reconnect import Lending
from controller.lap.signinfo import product
from controller.reports.words import game_title, hand_name

GAMING_DAY_START_H = 6  # the gaming day begins at 06:00 (server's local time)
#: the chart's per-minute contributions and the tables' day figures are re-read at most this often
SLOW_S = 5.0
#: a statement of the floor view never holds a worker longer than this
STATEMENT_TIMEOUT_MS = pgconn.FLOOR.statement_timeout_ms

#: the round machine's states (controller/play/machine.py) as a pit supervisor says them
STATE_LABELS = {
    "self_test": "Self-test",
    "open_for_wagers": "Open for wagers",
    "no_more_bets": "No more bets",
    "bank_selection": "Selecting the bank",
    "starting_position": "Rolling for start",
    "dice_wagers": "Dice wagers",
    "dispensing": "Dealing",
    "dealing_tiles": "Dealing tiles",
    "first_card": "Dealing first card",
    "two_more_cards": "Dealing two more cards",
    "stub_check": "Checking the stub",
    "shoe_count": "Counting the shoe",
    "counting_tiles": "Counting tiles",
    "setting_hands": "Players setting hands",
    "dealer_sets_surrender": "Dealer setting / surrender",
    "raise_or_fold": "Raise or fold",
    "over_under_decisions": "Over/under decisions",
    "settlement": "Settling",
    "hand_entry": "Dealer keying hands",
    "floor_validation": "Awaiting floor validation",
    "round_complete": "Round complete",
    "round_void": "Round voided",
    "tilt": "TILT",
}


def state_label(state: str | None) -> str:
    if not state:
        return "Not reported"
    return STATE_LABELS.get(state, state.replace("_", " ").capitalize())


def gaming_day_start(now: datetime | None = None) -> datetime:
    now = now or datetime.now().astimezone()
    start = now.replace(hour=GAMING_DAY_START_H, minute=0, second=0, microsecond=0)
    return start if now >= start else start - timedelta(days=1)


def gaming_day_of(d: date) -> tuple[datetime, datetime]:
    """[start, end) of the gaming day that begins on calendar day ``d`` (server's local time)."""
    start = datetime(d.year, d.month, d.day, GAMING_DAY_START_H).astimezone()
    return start, start + timedelta(days=1)


class _Shared:
    """One read per generation of the LAP's changes, shared by every event stream: a stream asks
    for the generation it saw announced, and gets a picture read after that announcement."""

    def __init__(self, read: Callable[[], dict[str, Any]]):
        self._read = read
        self._lock = threading.Lock()
        self._gen = -1
        self._body = b""

    def get(self, gen: int) -> bytes:
        with self._lock:
            if gen > self._gen or not self._body:
                try:
                    body = json.dumps(self._read()).encode()
                except psycopg.Error as e:
                    body = json.dumps({"error": f"database: {str(e).strip()[:120]}"}).encode()
                self._gen, self._body = gen, body
            return self._body


class FloorData:
    """Reads the floor's picture; a few connections shared by the server's worker threads."""

    def __init__(self, dsn: str, schema: str, pool: int = 4, stale_s: float = 3.0, sign_hold_s: float = 30.0):
        self.dsn, self.schema = dsn, schema
        self.stale_s, self.sign_hold_s = stale_s, sign_hold_s
        self._pool: queue.LifoQueue[psycopg.Connection] = queue.LifoQueue()
        self._sem = threading.Semaphore(pool)
        #: a statement unanswered 2 s past the server's own deadline: its connection is shut
        #: (a network that holds bytes would keep a worker thread, then every one)
        self._stop = threading.Event()
        self.guard = Lending("floor-db-guard", STATEMENT_TIMEOUT_MS / 1000 + 2.0, self._stop)
        self._slow: tuple[float, float, list[dict[str, Any]], list[dict[str, Any]]] = (0.0, 0.0, [], [])
        self._slow_lock = threading.Lock()
        self.floor_shared = _Shared(self.snapshot)
        self.sign_shared = _Shared(self.sign)

    @contextmanager
    def conn(self) -> Iterator[psycopg.Connection]:
        with self._sem:
            try:
                c = self._pool.get_nowait()
            except queue.Empty:
                c = pgconn.connect(self.dsn, pgconn.FLOOR)
            ok = False
            self.guard.lend(c)
            try:
                yield c
                ok = True
            finally:
                kept = ok and not c.closed and not c.broken
                self.guard.back(c, kept)
                if kept:
                    self._pool.put(c)
                else:
                    c.close()

    def close(self) -> None:
        self._stop.set()
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                return

    def q(self, text: str) -> sql.Composed:
        return sql.SQL(text).format(s=sql.Identifier(self.schema))

    def rows(self, c: psycopg.Connection, text: str, params: Any = None) -> list[dict[str, Any]]:
        cur = c.cursor(row_factory=psycopg.rows.dict_row)
        return list(cur.execute(self.q(text), params).fetchall())

    def _doc(self, c: psycopg.Connection, text: str, params: Any = None) -> dict[str, Any]:
        row = c.execute(self.q(text), params).fetchone()
        assert row is not None
        return dict(row[0])

    def snapshot(self) -> dict[str, Any]:
        """The whole page's data: one statement (one consistent picture, one round trip; the
        rows are made JSON by the server), plus the slower figures of the day when due."""
        day = gaming_day_start()
        with self.conn() as c:
            doc = self._doc(c, _PICTURE_SQL, (day,))
            series, stats = self._day_figures(c, day)
        return {**_picture(float(doc["now"]), day, doc, series, stats, self.stale_s), **_closures(doc)}

    def _day_figures(self, c: psycopg.Connection, day: datetime) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        with self._slow_lock:
            at, for_day, series, stats = self._slow
            if time.monotonic() - at >= SLOW_S or for_day != day.timestamp():
                series = self.rows(c, _SERIES_SQL, {"day": day})
                stats = self.rows(c, _DAY_SQL, (day,))
                self._slow = (time.monotonic(), day.timestamp(), series, stats)
            return series, stats

    def sign(self) -> dict[str, Any]:
        """The common progressive sign's picture: every level's meter, whether the link is live,
        and the hits decided within the last ``sign_hold_s`` (winning table, asset, amount)."""
        with self.conn() as c:
            doc = self._doc(c, _SIGN_SQL, (self.sign_hold_s,))
        now = float(doc["now"])
        live, state = _link_live(doc.get("link"), now, self.stale_s)
        last = doc.get("last")
        return {
            "now": now,
            "live": live,
            "link_state": state,
            "hold_s": self.sign_hold_s,
            "levels": [{"level": lv["level"], "cents": int(lv["cents"])} for lv in doc["levels"]],
            "hits": [_sign_hit(h) for h in doc["hits"]],
            # the product: the game's name, the progressive wager's pay table, the last winner
            **product(tuple(doc.get("games") or ())),
            "last": None if not last else _sign_hit(last),
        }

    def acknowledge(self, level: str, order: int, person: str, role: str, addr: str) -> str | None:
        """Record that ``person`` acknowledged the pending hit (level, order) on the floor view
        (append-only ``floor_acks``).  None when recorded, else why not (no such hit, already paid)."""
        with self.conn() as c, c.transaction():
            row = c.execute(
                self.q(
                    "SELECT h.table_id, p.seq FROM {s}.hits h LEFT JOIN {s}.payouts p"
                    " ON p.table_id = h.table_id AND p.hit_seq = h.seq WHERE h.level = %s AND h.order_no = %s"
                ),
                (level, order),
            ).fetchone()
            if row is None:
                return "no such hit"
            if row[1] is not None:
                return "that hit is already paid"
            c.execute(
                self.q("INSERT INTO {s}.floor_acks (level, order_no, person, role, addr) VALUES (%s, %s, %s, %s, %s)"),
                (level, order, person, role, addr[:64]),
            )
        return None


_PICTURE_SQL = """
SELECT json_build_object(
  'now', extract(epoch FROM clock_timestamp()),
  'link', (SELECT json_build_object('group_name', left(group_name, 40), 'state', state,
      'reason', left(reason, 300), 'replication', left(replication, 300),
      'heartbeat_at', extract(epoch FROM heartbeat_at)) FROM {s}.link),
  'lease', (SELECT json_build_object('holder', left(holder, 120), 'epoch', epoch, 'pid', pid,
      'left_s', extract(epoch FROM expires_at - clock_timestamp())) FROM {s}.lap_lease),
  'refusals', (SELECT coalesce(json_agg(x ORDER BY x.id DESC), '[]') FROM (
      SELECT id, table_id, seq, left(kind, 40) AS kind, left(reason, 300) AS reason, extract(epoch FROM at) AS at
      FROM {s}.refusals ORDER BY id DESC LIMIT 20) x),
  'recoveries', (SELECT coalesce(json_agg(x ORDER BY x.id DESC), '[]') FROM (
      SELECT id, table_id, left(kind, 40) AS kind, left(detail, 300) AS detail, seq, level, cents,
        extract(epoch FROM at) AS at FROM {s}.recoveries ORDER BY id DESC LIMIT 20) x),
  'tables', (SELECT coalesce(json_agg(json_build_object('table_id', m.table_id, 'asset', left(m.asset, 40),
      'game', left(m.game, 40), 'mismatch', left(m.mismatch, 300), 'closed', left(m.closed, 300),
      'reconciled_seq', m.reconciled_seq,
      'last_seen', extract(epoch FROM m.last_seen), 'state', left(s.state, 40), 'round_no', s.round_no,
      'progressive_open', s.progressive_open, 'reason', left(s.reason, 200), 'tilts', {s}.bounded_tilts(s.tilts),
      'sign', left(s.sign, 80), 'status_at', extract(epoch FROM s.at)) ORDER BY m.table_id), '[]')
      FROM {s}.members m LEFT JOIN {s}.table_status s USING (table_id)),
  'levels', (SELECT coalesce(json_agg(json_build_object('level', level, 'cents', div(value_num, den),
      'hits', hits, 'version', version, 'seed_cents', seed_cents, 'reset_cents', reset_cents,
      'limit_cents', limit_cents, 'at_limit', at_limit, 'rate_num', rate_num, 'rate_den', rate_den,
      'reserve_num', reserve_num, 'reserve_den', reserve_den, 'reserve_cents', div(reserve_acc, den),
      'overflow_cents', div(overflow_acc, den)) ORDER BY level), '[]') FROM {s}.levels),
  'hits', (SELECT coalesce(json_agg(x ORDER BY x.decided_at DESC), '[]') FROM (
      SELECT h.level, h.order_no, h.table_id, left(m.asset, 40) AS asset, h.round_no, h.seat,
        left(h.hand, 40) AS hand, h.amount_cents, h.meter_cents_before,
        extract(epoch FROM h.decided_at) AS decided_at, extract(epoch FROM p.at) AS paid_at,
        left(e.data->>'by', 60) AS validated_by,
        (SELECT json_build_object('person', a.person, 'at', extract(epoch FROM a.at)) FROM {s}.floor_acks a
          WHERE a.level = h.level AND a.order_no = h.order_no ORDER BY a.id LIMIT 1) AS ack
      FROM {s}.hits h LEFT JOIN {s}.payouts p ON p.table_id = h.table_id AND p.hit_seq = h.seq
      LEFT JOIN {s}.events e ON e.table_id = p.table_id AND e.seq = p.seq
      LEFT JOIN {s}.members m ON m.table_id = h.table_id
      WHERE h.decided_at >= %s OR p.at IS NULL ORDER BY h.decided_at DESC LIMIT 50) x)
)
"""

# the chart's series: each level's contributions summed per bucket, the buckets about 1/300 of the
# time since the day's first contribution (at least 5 s): a short session still has a shape
_SERIES_SQL = (
    "WITH f AS (SELECT min(at) AS first FROM {s}.contributions WHERE at >= %(day)s)"
    " SELECT level, extract(epoch FROM max(at)) AS t, sum(to_meter / den) AS add FROM {s}.contributions, f"
    " WHERE at >= %(day)s GROUP BY level, date_bin(make_interval(secs =>"
    " greatest(5, extract(epoch FROM clock_timestamp() - f.first) / 300)), at, f.first)"
)

# per table for the gaming day: progressive coin-in (wagers not voided), wagers, hands (rounds
# with a progressive wager), the first wager's time (the rates are per hour of play since then)
_DAY_SQL = (
    "SELECT c.table_id, count(*) AS wagers, sum(c.wager_cents) AS coin_in, count(DISTINCT c.round_no) AS hands,"
    " extract(epoch FROM min(c.at)) AS first_at FROM {s}.contributions c WHERE c.at >= %s AND NOT EXISTS"
    " (SELECT 1 FROM {s}.voids v WHERE v.table_id = c.table_id AND v.of_seq = c.seq) GROUP BY c.table_id"
)

_SIGN_SQL = """
SELECT json_build_object(
  'now', extract(epoch FROM clock_timestamp()),
  'link', (SELECT json_build_object('state', state, 'heartbeat_at', extract(epoch FROM heartbeat_at)) FROM {s}.link),
  'levels', (SELECT coalesce(json_agg(json_build_object('level', level, 'cents', div(value_num, den))
      ORDER BY level), '[]') FROM {s}.levels),
  'hits', (SELECT coalesce(json_agg(x ORDER BY x.decided_at DESC), '[]') FROM (
      SELECT h.level, h.order_no, h.table_id, left(m.asset, 40) AS asset, h.amount_cents, h.seat,
        left(h.hand, 40) AS hand, h.fraction_num = h.fraction_den AS full,
        extract(epoch FROM h.decided_at) AS decided_at
      FROM {s}.hits h LEFT JOIN {s}.members m USING (table_id)
      WHERE h.decided_at >= clock_timestamp() - make_interval(secs => %s)
      ORDER BY h.decided_at DESC LIMIT 6) x),
  'last', (SELECT row_to_json(x) FROM (
      SELECT h.level, h.order_no, h.table_id, left(m.asset, 40) AS asset, h.amount_cents, h.seat,
        left(h.hand, 40) AS hand, h.fraction_num = h.fraction_den AS full,
        extract(epoch FROM h.decided_at) AS decided_at
      FROM {s}.hits h LEFT JOIN {s}.members m USING (table_id) ORDER BY h.decided_at DESC LIMIT 1) x),
  'games', (SELECT coalesce(json_agg(g ORDER BY first), '[]') FROM (
      SELECT left(game, 40) AS g, min(table_id) AS first FROM {s}.members GROUP BY left(game, 40) LIMIT 8) y)
)
"""


def _sign_hit(h: dict[str, Any]) -> dict[str, Any]:
    """A hit as the sign shows it: the winning table (id, asset), seat, hand, amount."""
    return {
        "level": h["level"],
        "order": int(h["order_no"]),
        "table": h["table_id"],
        "asset": h["asset"],
        "seat": h.get("seat"),
        "hand": hand_name(h.get("hand")),
        "cents": int(h["amount_cents"]),
        "full": bool(h.get("full")),  # the whole meter (100 %), not a share of it
        "decided_at": float(h["decided_at"]),
    }


def _closures(doc: dict[str, Any]) -> dict[str, Any]:
    """What closed linked wagers from the LAP's side: the link inoperable and why, each
    table a refusal closed and why, the latest refusals; the replication check and the latest
    recoveries."""
    link = doc.get("link") or {}
    return {
        "inoperable": link.get("reason") if link.get("state") == "inoperable" else None,
        "closed_by_lap": {t["table_id"]: t["closed"] for t in doc["tables"] if t.get("closed")},
        "refusals": [{k: r[k] for k in ("table_id", "seq", "kind", "reason", "at")} for r in doc.get("refusals") or []],
        # the LAP's replication check, and what the tables found of the LAP's memory
        # (behind them, another database, a paid hit re-established, caught up again)
        "replication": link.get("replication"),
        "active_lap": _active_lap(doc.get("lease")),
        "recoveries": [
            {k: r[k] for k in ("table_id", "kind", "detail", "seq", "level", "cents", "at")}
            for r in doc.get("recoveries") or []
        ],
    }


def _active_lap(row: dict[str, Any] | None) -> str:
    """Which host's LAP holds the lease (controller/lap/lease.py), in a technician's words."""
    from controller.lap.lease import LeaseState

    if not row:
        return "unknown"
    return LeaseState(str(row["holder"]), int(row["epoch"]), row.get("pid"), float(row["left_s"])).line()


def _epoch(t: Any) -> float | None:
    if isinstance(t, datetime):
        return t.timestamp()
    return float(t) if isinstance(t, (int, float, Decimal)) else None


def _link_live(link: dict[str, Any] | None, now: float, stale_s: float) -> tuple[bool, str]:
    """(live, state): the link is live while it is ``running`` and the LAP's heartbeat is fresh."""
    if not link:
        return False, "unknown"
    hb = _epoch(link.get("heartbeat_at"))
    live = link.get("state") == "running" and hb is not None and now - hb <= stale_s
    return live, str(link.get("state"))


#: a table's rates per hour are shown once it has played this long since its first progressive
#: wager of the day: two wagers in the first minute are not "120 an hour" to a pit supervisor
MIN_RATE_S = 900.0


def _per_hour(n: int, first_at: float | None, now: float) -> float | None:
    """A count per hour of play since ``first_at``; None until it has played :data:`MIN_RATE_S`."""
    if first_at is None or now - first_at < MIN_RATE_S:
        return None
    return round(n * 3600 / (now - first_at), 1)


def _table(t: dict[str, Any], day: dict[str, Any] | None, n: float) -> dict[str, Any]:
    seen = [x for x in (_epoch(t["last_seen"]), _epoch(t["status_at"])) if x is not None]
    heard = max(seen) if seen else None
    day = day or {}
    return {
        **_identity(t),
        **_day_figures(day, n),
        "state": t["state"] or "not reported",
        "state_label": state_label(t["state"]),
        "round": t["round_no"],
        "open": bool(t["progressive_open"]),
        "reason": t["reason"] or "",
        "tilts": t["tilts"] or {},
        "sign": t["sign"] or "",
        "mismatch": t["mismatch"],
        "reconciled_seq": t["reconciled_seq"],
        "heard_s": None if heard is None else round(n - heard, 1),
    }


def _identity(t: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": t["table_id"],
        "asset": t["asset"],
        "game": t["game"],
        "game_name": game_title(t["game"]) if t["game"] else "",
    }


def _day_figures(day: dict[str, Any], n: float) -> dict[str, Any]:
    """A table's progressive play in the gaming day: coin-in, wagers, hands, and their rates per hour."""
    wagers, hands = int(day.get("wagers") or 0), int(day.get("hands") or 0)
    first = _epoch(day.get("first_at"))
    return {
        "coin_in_cents": int(day.get("coin_in") or 0),
        "wagers": wagers,
        "hands": hands,
        "wagers_per_hour": _per_hour(wagers, first, n),
        "hands_per_hour": _per_hour(hands, first, n),
        "played_s": None if first is None else round(n - first, 1),  # since the day's first progressive wager
    }


def _hit(h: dict[str, Any]) -> dict[str, Any]:
    ack = h.get("ack") or None
    return {
        "level": h["level"],
        "order": h["order_no"],
        "table": h["table_id"],
        "asset": h["asset"],
        "round": h["round_no"],
        "seat": h["seat"],
        "hand": h["hand"],
        "hand_name": hand_name(h["hand"]),
        "cents": int(h["amount_cents"]),
        "before": int(h["meter_cents_before"]),
        "decided_at": _epoch(h["decided_at"]),
        "pending": h["paid_at"] is None,
        "validated_by": h["validated_by"],
        "paid_at": _epoch(h["paid_at"]),
        "ack_by": ack["person"] if ack else None,
        "ack_at": _epoch(ack["at"]) if ack else None,
    }


def _chart(
    name: str, cents: int, n: float, day: datetime, series: list[dict[str, Any]], hits: list[dict[str, Any]]
) -> list[list[int]]:
    """The meter over the gaming day, backwards from its value now: minus each minute's
    contributions, plus each hit's amount (a chart, not an account: rounded to cents)."""
    events: list[tuple[float, Fraction, Fraction | None]] = [
        (float(s["t"]), Fraction(str(s["add"])), None) for s in series if s["level"] == name
    ]
    events += [(float(h["decided_at"]), Fraction(0), Fraction(h["before"])) for h in hits if h["level"] == name]
    events.sort(key=lambda e: e[0])
    v = Fraction(cents)
    pts: list[tuple[float, Fraction]] = [(n, v)]
    for at, add, before in reversed(events):
        if at < day.timestamp():
            break  # a pending hit from an earlier day: not on today's chart
        pts.append((min(at, n), v))
        v = before if before is not None else v - add
    pts.append((day.timestamp(), v))
    pts.reverse()
    return [[round(t), round(c)] for t, c in pts]


def _level(
    lv: dict[str, Any], n: float, day: datetime, series: list[dict[str, Any]], hits: list[dict[str, Any]]
) -> dict[str, Any]:
    name, cents = lv["level"], int(lv["cents"])
    limit = None if lv["limit_cents"] is None else int(lv["limit_cents"])
    return {
        "level": name,
        "cents": cents,
        "hits": int(lv["hits"]),
        "version": int(lv["version"]),
        "seed_cents": int(lv["seed_cents"]),
        "reset_cents": int(lv["reset_cents"]),
        "limit_cents": limit,
        "to_limit_cents": None if limit is None else max(limit - cents, 0),
        "at_limit": lv["at_limit"],
        "rate": _percent(int(lv["rate_num"]), int(lv["rate_den"])),
        "reserve_rate": _percent(int(lv["reserve_num"]), int(lv["reserve_den"])),
        "reserve_cents": int(lv["reserve_cents"]),
        "overflow_cents": int(lv["overflow_cents"]),
        "chart": _chart(name, cents, n, day, series, hits),
        "hit_marks": [[h["decided_at"], h["cents"]] for h in hits if h["level"] == name],
    }


def _percent(num: int, den: int) -> str:
    """An exact rate as a person reads it: 21%, 0.5%, 33.333…%"""
    f = Fraction(num, den) * 100
    if f.denominator == 1:
        return f"{f.numerator}%"
    s = f"{float(f):.3f}".rstrip("0").rstrip(".")
    return s + ("%" if Fraction(s) == f else "…%")


def _picture(
    n: float,
    day: datetime,
    doc: dict[str, Any],
    series: list[dict[str, Any]],
    stats: list[dict[str, Any]],
    stale_s: float,
) -> dict[str, Any]:
    by_table = {s["table_id"]: s for s in stats}
    hits = [_hit(h) for h in doc["hits"]]
    lk = doc.get("link") or {"group_name": "?", "state": "unknown", "heartbeat_at": None}
    hb = _epoch(lk["heartbeat_at"])
    live, _state = _link_live(lk, n, stale_s)
    return {
        "now": n,
        "day_start": day.timestamp(),
        "group": lk["group_name"],
        "link_state": lk["state"],
        "link_live": live,
        "lap_heartbeat_s": None if hb is None else round(n - hb, 1),
        "rates_after_s": MIN_RATE_S,
        "tables": [_table(t, by_table.get(t["table_id"]), n) for t in doc["tables"]],
        "levels": [_level(lv, n, day, series, hits) for lv in doc["levels"]],
        "hits": hits,
    }
