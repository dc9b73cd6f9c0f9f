"""The floor view (issue 16): a read-only web page for the pit, served by the LAP controller.

- :class:`FloorData` reads the link's picture from the LAP's PostgreSQL schema: every member
  table (its asset, game, reported status, linked wager open or closed and why, tilts, when it
  was last heard from), every level's meter, pending and recent hits (validated by whom and
  when), the LAP's own heartbeat, and each level's meter over the gaming day with its hits.
- :class:`FloorServer` (stdlib ``ThreadingHTTPServer``: no framework, no build step) serves
  the page (controller/link/floor_page.py), ``/api/floor`` (the data, JSON, read fresh) and
  ``/events`` (Server-Sent Events: the data pushed as the LAP's notifications announce a change).
- Access: floor staff log in by name and PIN (:class:`StaffStore`, a TOML file of per-person
  salted scrypt hashes with the console's roles, controller/console/auth.py); only a
  ``floorperson`` or ``technician`` opens the page, a dealer's PIN does not; every attempt is
  recorded in the LAP's ``floor_logins`` (append-only).  Sessions expire; the cookie is
  HttpOnly and SameSite=Strict.  Nothing on the page changes anything: validation stays at the
  table.
"""

from __future__ import annotations

import json
import queue
import secrets
import threading
import time
import tomllib
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from controller.console.auth import ROLES, PinError, check_pin_format, check_role, hash_pin, verify_pin, write_private
from controller.link.floor_page import LOGIN_PAGE, PAGE
from controller.link.floorlock import Lockouts

FLOOR_ROLES = ("floorperson", "technician")  # a dealer's PIN does not open the floor view
COOKIE = "floor_session"
GAMING_DAY_START_H = 6  # the gaming day begins at 06:00 (server's local time)

Log = Callable[[str], None]


# ---------------------------------------------------------------------------------- staff
class StaffStore:
    """``floor-staff.toml``: ``[people.NAME]`` with ``role`` and ``hash`` (scrypt, as the console's)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def load(self) -> dict[str, dict[str, str]]:
        try:
            doc = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        people = doc.get("people", {})
        return {str(k): {a: str(b) for a, b in v.items()} for k, v in people.items() if isinstance(v, dict)}

    def set(self, person: str, role: str, pin: str) -> None:
        check_role(role)
        check_pin_format(pin)
        if not person.replace("-", "").replace("_", "").replace(".", "").isalnum() or len(person) > 40:
            raise PinError(f"a person's name: letters, digits, - _ . (max 40), got {person!r}")
        doc = self.load()
        doc[person] = {"role": role, "hash": hash_pin(pin), "set_at": datetime.now(UTC).isoformat(timespec="seconds")}
        lines = ["# tablectl floor staff: salted scrypt hashes, never the PINs (`tablectl lap --staff-pin`).", ""]
        for name in sorted(doc):
            lines += [f'[people."{name}"]'] + [f'{k} = "{v}"' for k, v in sorted(doc[name].items())] + [""]
        write_private(self.path, "\n".join(lines))

    def check(self, person: str, pin: str) -> tuple[str | None, str]:
        """(role, why): the role when the PIN is the person's and the role may see the floor."""
        entry = self.load().get(person)
        if entry is None or not verify_pin(pin, entry.get("hash", "")):
            return None, "wrong name or PIN"
        role = entry.get("role", "")
        if role not in ROLES:
            return None, f"unknown role {role!r}"
        if role not in FLOOR_ROLES:
            return None, f"a {role} may not open the floor view"
        return role, "ok"


@dataclass
class Session:
    person: str
    role: str
    expires: float


@dataclass
class Sessions:
    ttl_s: float
    now: Callable[[], float] = time.monotonic
    _by_token: dict[str, Session] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def new(self, person: str, role: str) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._by_token[token] = Session(person, role, self.now() + self.ttl_s)
        return token

    def get(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self._lock:
            s = self._by_token.get(token)
            if s is not None and s.expires <= self.now():
                del self._by_token[token]
                return None
            return s

    def end(self, token: str | None) -> None:
        with self._lock:
            self._by_token.pop(token or "", None)


# ---------------------------------------------------------------------------------- data
def gaming_day_start(now: datetime | None = None) -> datetime:
    now = now or datetime.now().astimezone()
    start = now.replace(hour=GAMING_DAY_START_H, minute=0, second=0, microsecond=0)
    return start if now >= start else start - timedelta(days=1)


class FloorData:
    """Reads the floor's picture; a few connections shared by the request threads."""

    def __init__(self, dsn: str, schema: str, pool: int = 4):
        self.dsn, self.schema = dsn, schema
        self._pool: queue.LifoQueue[psycopg.Connection] = queue.LifoQueue()
        self._sem = threading.Semaphore(pool)
        # the chart's per-minute contributions, re-read at most every SERIES_S (a chart of the
        # day by the minute; the meter's value now is always read fresh)
        self._series: tuple[float, float, list[dict[str, Any]]] = (0.0, 0.0, [])
        self._series_lock = threading.Lock()
        # the event streams share one picture, read at most once per push interval
        self._shared: tuple[float, bytes] = (0.0, b"")
        self._shared_lock = threading.Lock()

    SERIES_S = 10.0

    def shared(self, max_age_s: float) -> bytes:
        """The picture as JSON, shared by every event stream (one read per ``max_age_s``)."""
        with self._shared_lock:
            at, body = self._shared
            if time.monotonic() - at >= max_age_s or not body:
                try:
                    body = json.dumps(self.snapshot()).encode()
                except psycopg.Error as e:
                    body = json.dumps({"error": f"database: {str(e).strip()[:120]}"}).encode()
                self._shared = (time.monotonic(), body)
            return body

    @contextmanager
    def conn(self) -> Iterator[psycopg.Connection]:
        with self._sem:
            try:
                c = self._pool.get_nowait()
            except queue.Empty:
                c = psycopg.connect(self.dsn, autocommit=True, connect_timeout=3)
            ok = False
            try:
                yield c
                ok = True
            finally:
                if ok and not c.closed:
                    self._pool.put(c)
                else:
                    c.close()

    def close(self) -> None:
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                return

    def _rows(self, c: psycopg.Connection, text: str, params: Any = None) -> list[dict[str, Any]]:
        cur = c.cursor(row_factory=psycopg.rows.dict_row)
        return list(cur.execute(sql.SQL(text).format(s=sql.Identifier(self.schema)), params).fetchall())

    def snapshot(self) -> dict[str, Any]:
        """The whole page's data: one statement (one consistent picture, one round trip; the
        rows are made JSON by the server), plus the chart's series when due."""
        day = gaming_day_start()
        with self.conn() as c:
            row = c.execute(sql.SQL(_PICTURE_SQL).format(s=sql.Identifier(self.schema)), (day,)).fetchone()
            assert row is not None
            doc = row[0]
        with self._series_lock:
            at, for_day, series = self._series
            if time.monotonic() - at >= self.SERIES_S or for_day != day.timestamp():
                series = self._rows(
                    c,
                    "SELECT level, extract(epoch FROM max(at)) AS t, sum(to_meter / den) AS add"
                    " FROM {s}.contributions WHERE at >= %s GROUP BY level, date_trunc('minute', at)",
                    (day,),
                )
                self._series = (time.monotonic(), day.timestamp(), series)
        pic = _picture(float(doc["now"]), day, doc["link"] or [], doc["tables"], doc["levels"], doc["hits"], series)
        return {**pic, **_closures(doc)}


_PICTURE_SQL = """
SELECT json_build_object(
  'now', extract(epoch FROM clock_timestamp()),
  'link', (SELECT json_agg(json_build_object('group_name', group_name, 'state', state, 'reason', reason,
      'heartbeat_at', extract(epoch FROM heartbeat_at))) FROM {s}.link),
  'refusals', (SELECT coalesce(json_agg(x ORDER BY x.id DESC), '[]') FROM (
      SELECT id, table_id, seq, kind, reason, extract(epoch FROM at) AS at FROM {s}.refusals
      ORDER BY id DESC LIMIT 20) x),
  'tables', (SELECT coalesce(json_agg(json_build_object('table_id', m.table_id, 'asset', m.asset, 'game', m.game,
      'mismatch', m.mismatch, 'closed', m.closed, 'reconciled_seq', m.reconciled_seq,
      'last_seen', extract(epoch FROM m.last_seen),
      'state', s.state, 'round_no', s.round_no, 'progressive_open', s.progressive_open, 'reason', s.reason,
      'tilts', s.tilts, 'status_at', extract(epoch FROM s.at)) ORDER BY m.table_id), '[]')
      FROM {s}.members m LEFT JOIN {s}.table_status s USING (table_id)),
  'levels', (SELECT coalesce(json_agg(json_build_object('level', level, 'cents', div(value_num, den),
      'hits', hits, 'version', version) ORDER BY level), '[]') FROM {s}.levels),
  'hits', (SELECT coalesce(json_agg(x ORDER BY x.decided_at DESC), '[]') FROM (
      SELECT h.level, h.order_no, h.table_id, h.round_no, h.seat, h.hand, h.amount_cents, h.meter_cents_before,
        extract(epoch FROM h.decided_at) AS decided_at, extract(epoch FROM p.at) AS paid_at,
        e.data->>'by' AS validated_by
      FROM {s}.hits h LEFT JOIN {s}.payouts p ON p.table_id = h.table_id AND p.hit_seq = h.seq
      LEFT JOIN {s}.events e ON e.table_id = p.table_id AND e.seq = p.seq
      WHERE h.decided_at >= %s OR p.at IS NULL ORDER BY h.decided_at DESC LIMIT 50) x)
)
"""


def _closures(doc: dict[str, Any]) -> dict[str, Any]:
    """What closed linked wagers from the LAP's side (issue 21): the link inoperable and why, each
    table a refusal closed and why, the latest refusals."""
    link = (doc.get("link") or [{}])[0]
    return {
        "inoperable": link.get("reason") if link.get("state") == "inoperable" else None,
        "closed_by_lap": {t["table_id"]: t["closed"] for t in doc["tables"] if t.get("closed")},
        "refusals": [{k: r[k] for k in ("table_id", "seq", "kind", "reason", "at")} for r in doc.get("refusals") or []],
    }


def _epoch(t: Any) -> float | None:
    if isinstance(t, datetime):
        return t.timestamp()
    return float(t) if isinstance(t, (int, float)) else None


def _picture(
    n: float,
    day: datetime,
    link: list[dict[str, Any]],
    tables: list[dict[str, Any]],
    levels: list[dict[str, Any]],
    hits: list[dict[str, Any]],
    series: list[dict[str, Any]],
) -> dict[str, Any]:
    out_tables = []
    for t in tables:
        seen = [x for x in (_epoch(t["last_seen"]), _epoch(t["status_at"])) if x is not None]
        heard = max(seen) if seen else None
        out_tables.append(
            {
                "id": t["table_id"],
                "asset": t["asset"],
                "game": t["game"],
                "state": t["state"] or "not reported",
                "round": t["round_no"],
                "open": bool(t["progressive_open"]),
                "reason": t["reason"] or "",
                "tilts": t["tilts"] or {},
                "mismatch": t["mismatch"],
                "reconciled_seq": t["reconciled_seq"],
                "heard_s": None if heard is None else round(n - heard, 1),
            }
        )
    out_hits = [
        {
            "level": h["level"],
            "order": h["order_no"],
            "table": h["table_id"],
            "round": h["round_no"],
            "seat": h["seat"],
            "hand": h["hand"],
            "cents": int(h["amount_cents"]),
            "before": int(h["meter_cents_before"]),
            "decided_at": _epoch(h["decided_at"]),
            "pending": h["paid_at"] is None,
            "validated_by": h["validated_by"],
            "paid_at": _epoch(h["paid_at"]),
        }
        for h in hits
    ]
    out_levels = []
    for lv in levels:
        name, cents = lv["level"], int(lv["cents"])
        # the meter over the gaming day, backwards from its value now: minus each minute's
        # contributions, plus each hit's amount (a chart, not an account: rounded to cents)
        # (a hit: the meter stood at meter_cents_before just before it)
        # (times are epoch seconds; amounts stay exact, in cents, until rounded for the chart)
        events: list[tuple[float, Fraction, Fraction | None]] = [
            (float(s["t"]), Fraction(str(s["add"])), None) for s in series if s["level"] == name
        ]
        events += [
            (float(h["decided_at"]), Fraction(0), Fraction(str(h["before"]))) for h in out_hits if h["level"] == name
        ]
        events.sort(key=lambda e: e[0])
        v = Fraction(cents)
        pts: list[tuple[float, Fraction]] = [(n, v)]
        for at, add, before in reversed(events):
            pts.append((min(at, n), v))
            v = before if before is not None else v - add
        pts.append((day.timestamp(), v))
        pts.reverse()
        out_levels.append(
            {
                "level": name,
                "cents": cents,
                "hits": int(lv["hits"]),
                "version": int(lv["version"]),
                "chart": [[round(t), round(c)] for t, c in pts],
                "hit_marks": [[h["decided_at"], h["cents"]] for h in out_hits if h["level"] == name],
            }
        )
    lk = link[0] if link else {"group_name": "?", "state": "unknown", "heartbeat_at": None}
    hb = _epoch(lk["heartbeat_at"])
    return {
        "now": n,
        "day_start": day.timestamp(),
        "group": lk["group_name"],
        "link_state": lk["state"],
        "lap_heartbeat_s": None if hb is None else round(n - hb, 1),
        "tables": out_tables,
        "levels": out_levels,
        "hits": out_hits,
    }


# ---------------------------------------------------------------------------------- server
class FloorServer:
    """The HTTP server; :meth:`start` binds and serves on a thread, :meth:`stop` ends it."""

    def __init__(
        self,
        dsn: str,
        schema: str,
        bind: str,
        port: int,
        staff: Path,
        session_s: float = 8 * 3600,
        log: Log = print,
        push_s: float = 0.25,
    ):
        self.data = FloorData(dsn, schema)
        self.dsn, self.schema = dsn, schema
        self.staff = StaffStore(staff)
        self.sessions = Sessions(session_s)
        self.log = log
        self.push_s = push_s
        # failures and lock-outs per person live in the LAP's database (a restart lifts none)
        self.lockouts = Lockouts(self.data.conn, schema)
        self.stop_event = threading.Event()
        self.changed = threading.Condition()
        self.generation = 0
        self.httpd = ThreadingHTTPServer((bind, port), _handler(self))
        self.httpd.daemon_threads = True
        self._threads: list[threading.Thread] = []

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.httpd.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        """Serve (once; later calls do nothing)."""
        if self._threads:
            return
        for name, fn in (("http", self.httpd.serve_forever), ("listen", self._listen)):
            t = threading.Thread(target=fn, name=f"floor-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        self.log(f"lap: floor view on http://{self.address[0]}:{self.address[1]}/")

    def stop(self) -> None:
        self.stop_event.set()
        with self.changed:
            self.changed.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()
        for t in self._threads:
            t.join(5)
        self.data.close()

    def _listen(self) -> None:
        """Wake the event streams when the LAP announces a change (and at least every second)."""
        while not self.stop_event.is_set():
            try:
                with psycopg.connect(self.dsn, autocommit=True, connect_timeout=3) as c:
                    c.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.schema)))
                    while not self.stop_event.is_set():
                        list(c.notifies(timeout=1.0, stop_after=1))
                        self._bump()
            except psycopg.OperationalError:
                self._bump()
                self.stop_event.wait(1.0)

    def _bump(self) -> None:
        with self.changed:
            self.generation += 1
            self.changed.notify_all()

    # ---- login
    def audit(self, person: str, role: str | None, ok: bool, why: str, addr: str) -> None:
        try:
            with self.data.conn() as c:
                c.execute(
                    sql.SQL(
                        "INSERT INTO {}.floor_logins (person, role, ok, why, addr) VALUES (%s, %s, %s, %s, %s)"
                    ).format(sql.Identifier(self.schema)),
                    (person[:40], role, ok, why, addr),
                )
        except psycopg.Error as e:
            self.log(f"lap: floor login not recorded ({e}); refused")
            raise

    def login(self, person: str, pin: str, addr: str) -> tuple[str | None, str]:
        """(session token, message).  Failures per person lock that name for a while
        (controller/link/floorlock.py: counted in the LAP's database, ended by its clock)."""
        person = person.strip()[:40]
        try:
            locked = self.lockouts.attempt(person)
        except psycopg.Error as e:
            self.log(f"lap: floor login lock-out not readable ({e}); refused")
            return None, "the login could not be recorded"
        if locked:
            why = "locked after repeated failures"
            try:
                self.audit(person, None, False, why, addr)
            except psycopg.Error:
                pass  # refused either way
            return None, why
        role, why = self.staff.check(person, pin)
        try:
            if role is not None:
                self.lockouts.succeeded(person)
            self.audit(person, role, role is not None, why, addr)
        except psycopg.Error:
            return None, "the login could not be recorded"
        if role is None:
            return None, why
        return self.sessions.new(person, role), "ok"


def _handler(srv: FloorServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "tablectl-floor"
        protocol_version = "HTTP/1.1"
        # headers and body are two writes: without TCP_NODELAY the body waits for the client's
        # delayed ACK (~40 ms a response; bench floor p50 50 ms -> see docs/linked.md)
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
            pass

        def _session(self) -> Session | None:
            c = SimpleCookie(self.headers.get("Cookie", ""))
            m = c.get(COOKIE)
            return srv.sessions.get(m.value if m else None)

        def _send(self, code: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("X-Frame-Options", "DENY")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _html(self, code: int, page: str, headers: dict[str, str] | None = None) -> None:
            self._send(code, page.encode(), "text/html; charset=utf-8", headers)

        def do_GET(self) -> None:  # noqa: N802 - stdlib's name
            path = urllib.parse.urlsplit(self.path).path
            s = self._session()
            if path == "/":
                if s is None:
                    self._html(200, LOGIN_PAGE.replace("@MSG", ""))
                else:
                    self._html(200, PAGE.replace("@WHO", f"{s.person} ({s.role})"))
            elif path == "/api/floor":
                if s is None:
                    self._send(401, b'{"error": "log in"}', "application/json")
                    return
                self._send(200, json.dumps(srv.data.snapshot()).encode(), "application/json")
            elif path == "/events":
                if s is None:
                    self._send(401, b"log in", "text/plain")
                    return
                self._events(s)
            else:
                self._send(404, b"not found", "text/plain")

        def do_POST(self) -> None:  # noqa: N802 - stdlib's name
            path = urllib.parse.urlsplit(self.path).path
            n = min(int(self.headers.get("Content-Length") or 0), 4096)
            form = urllib.parse.parse_qs(self.rfile.read(n).decode("utf-8", "replace"))
            if path == "/login":
                token, why = srv.login(
                    form.get("person", [""])[0], form.get("pin", [""])[0], str(self.client_address[0])
                )
                if token is None:
                    self._html(403, LOGIN_PAGE.replace("@MSG", f'<p class="err" id="err">Refused: {_esc(why)}</p>'))
                    return
                cookie = f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={int(srv.sessions.ttl_s)}"
                self._send(303, b"", "text/plain", {"Location": "/", "Set-Cookie": cookie})
            elif path == "/logout":
                c = SimpleCookie(self.headers.get("Cookie", ""))
                m = c.get(COOKIE)
                srv.sessions.end(m.value if m else None)
                clear = f"{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
                self._send(303, b"", "text/plain", {"Location": "/", "Set-Cookie": clear})
            else:
                self._send(404, b"not found", "text/plain")

        def _events(self, s: Session) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            last: bytes | None = None
            seen = -1
            try:
                while not srv.stop_event.is_set():
                    if srv.sessions.get(_token(self)) is None:
                        self.wfile.write(b"event: expired\ndata: {}\n\n")
                        self.wfile.flush()
                        return
                    with srv.changed:
                        if srv.generation == seen:
                            srv.changed.wait(5.0)
                        seen = srv.generation
                    body = srv.data.shared(srv.push_s)
                    if body != last:
                        self.wfile.write(b"data: " + body + b"\n\n")
                        self.wfile.flush()
                        last = body
                    srv.stop_event.wait(srv.push_s)  # coalesce bursts
            except OSError:
                return

    return Handler


def _token(h: BaseHTTPRequestHandler) -> str | None:
    c = SimpleCookie(h.headers.get("Cookie", ""))
    m = c.get(COOKIE)
    return m.value if m else None


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
