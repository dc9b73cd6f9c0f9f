"""The floor view's routes (controller/lap/floor_server.py serves them).

Floor staff, logged in: ``/`` (the page, or the login form), ``/api/floor`` (the picture, JSON,
read fresh), ``/events`` (the picture pushed as the LAP announces changes), ``/api/hits`` and
``/api/events`` (hits and the tilt and event log over a range of gaming days), ``/export/*.csv``,
``/slip/<level>/<order>.pdf`` (a hit's payout slip),
``POST /api/ack`` (a pending hit acknowledged under the person's name), ``POST /logout``.
Anyone: ``POST /login``, and the common progressive sign, ``/sign`` with ``/sign/events``.

Every response carries a strict Content-Security-Policy (the pages load only their own script
and style files; every value is put in with ``textContent``), no caching, no framing.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

import psycopg
from aiohttp import web

from controller.lap import floor_history as hist
from controller.lap.floor import gaming_day_of, gaming_day_start
from controller.lap.floor_auth import Session
from controller.lap.floor_page import LOGIN_PAGE, PAGE, SIGN_PAGE, STATIC, esc
from controller.lap.floor_server import MAX_BODY

if TYPE_CHECKING:
    from controller.lap.floor_server import FloorServer

COOKIE = "floor_session"
MAX_RANGE_DAYS = 366
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';"
    " base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": _CSP,
}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
FORM = web.RequestKey("form", dict)  # a POST's fields (the guard parsed them)


# ------------------------------------------------------------------------------ middleware
@web.middleware
async def _headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        resp = await handler(request)
    except psycopg.Error as e:  # the database away or refusing: said, not a traceback
        resp = _json({"error": "database: " + _first_line(e)}, 503)
    except web.HTTPException as e:
        for k, v in _HEADERS.items():
            e.headers.setdefault(k, v)
        raise
    for k, v in _HEADERS.items():
        resp.headers.setdefault(k, v)
    return resp


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:160] if text else type(e).__name__


def _same_origin(request: web.Request) -> bool:
    """The POST comes from this server's own pages: its Origin (else Referer) is this origin."""
    want = f"{request.scheme}://{request.host}"
    if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = request.headers.get("Origin")
    if origin is not None:
        return hmac.compare_digest(origin, want)
    ref = request.headers.get("Referer")
    if ref:
        p = urllib.parse.urlsplit(ref)
        return hmac.compare_digest(f"{p.scheme}://{p.netloc}", want)
    return False


def _posts(srv: FloorServer) -> Callable[..., Any]:
    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every POST: from our own origin, a small body that arrives in time (parsed into
        ``request["form"]``)."""
        if request.method != "POST":
            return await handler(request)
        if not _same_origin(request):
            return web.Response(status=403, text="refused: a cross-origin (or unidentified) POST\n")
        if (request.content_length or 0) > MAX_BODY:
            resp = web.Response(status=413, text=f"refused: a body over {MAX_BODY} bytes\n")
            resp.force_close()
            return resp
        try:
            body = await asyncio.wait_for(request.read(), srv.limits.body_s)
        except TimeoutError:
            resp = web.Response(status=408, text="the request's body did not arrive in time\n")
            resp.force_close()
            return resp
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"), max_num_fields=8)
        request[FORM] = {k: v[0] for k, v in form.items()}
        return await handler(request)

    return guard


# ------------------------------------------------------------------------------ helpers
def _token(request: web.Request) -> str | None:
    return request.cookies.get(COOKIE)


def _session(srv: FloorServer, request: web.Request) -> Session | None:
    return srv.sessions.get(_token(request))


def _need(srv: FloorServer, request: web.Request) -> Session:
    s = _session(srv, request)
    if s is None:
        raise web.HTTPUnauthorized(text='{"error": "log in"}', content_type="application/json")
    return s


def _csrf_ok(request: web.Request, s: Session) -> bool:
    got = request.get(FORM, {}).get("csrf") or request.headers.get("X-CSRF-Token", "")
    return hmac.compare_digest(str(got), s.csrf)


def _addr(request: web.Request) -> str:
    return str(request.remote or "?")


def _json(doc: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=json.dumps(doc).encode(), content_type="application/json")


def _range(request: web.Request) -> tuple[datetime, datetime]:
    """[start, end) of the gaming days ``from``..``to`` (YYYY-MM-DD; default today), at most a year."""
    today = gaming_day_start().date()
    try:
        d0 = date.fromisoformat(request.query.get("from", "") or today.isoformat())
        d1 = date.fromisoformat(request.query.get("to", "") or d0.isoformat())
    except ValueError:
        raise web.HTTPBadRequest(text="from/to: write dates as YYYY-MM-DD\n") from None
    if d1 < d0 or (d1 - d0).days >= MAX_RANGE_DAYS:
        raise web.HTTPBadRequest(text=f"from/to: 'to' on or after 'from', at most {MAX_RANGE_DAYS} days\n")
    return gaming_day_of(d0)[0], gaming_day_of(d1)[1]


def _csv(body: bytes, name: str) -> web.Response:
    return web.Response(
        body=body,
        content_type="text/csv",
        charset="utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


async def _write(srv: FloorServer, resp: web.StreamResponse, chunk: bytes) -> None:
    await asyncio.wait_for(resp.write(chunk), srv.limits.write_s)


class _Bucket:
    """Login attempts per client address: a burst of ``burst``, then ``per_s`` a second (the loop's
    thread only).  Bounds the scrypt work and the ``floor_logins`` rows one address can cause; the
    least recently seen addresses are forgotten past ``max_addrs``.  Per address, not per name, so
    it tells nothing about names."""

    def __init__(self, burst: float = 20, per_s: float = 2.0, max_addrs: int = 4096):
        self.burst, self.per_s, self.max_addrs = burst, per_s, max_addrs
        self._by: dict[str, tuple[float, float]] = {}

    def take(self, addr: str) -> bool:
        now = time.monotonic()
        tokens, at = self._by.pop(addr, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.per_s)
        ok = tokens >= 1
        self._by[addr] = (tokens - 1 if ok else tokens, now)
        if len(self._by) > self.max_addrs:
            del self._by[next(iter(self._by))]
        return ok


# ------------------------------------------------------------------------------ the page
class _Floor:
    def __init__(self, srv: FloorServer):
        self.srv = srv
        self.logins = _Bucket(srv.limits.login_burst, srv.limits.login_per_s)

    async def index(self, request: web.Request) -> web.Response:
        s = _session(self.srv, request)
        if s is None:
            return web.Response(text=LOGIN_PAGE.replace("@MSG", ""), content_type="text/html")
        page = PAGE.replace("@WHO", esc(f"{s.person} ({s.role})")).replace("@CSRF", esc(s.csrf))
        return web.Response(text=page, content_type="text/html")

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        ctype, body = STATIC[name]
        return web.Response(body=body, content_type=ctype)

    async def login(self, request: web.Request) -> web.Response:
        form = request[FORM]
        if not self.logins.take(_addr(request)):
            page = LOGIN_PAGE.replace("@MSG", '<p class="err" id="err">Refused: too many attempts; wait a minute</p>')
            return web.Response(status=429, text=page, content_type="text/html")
        token, why = await self.srv.run(self.srv.login, form.get("person", ""), form.get("pin", ""), _addr(request))
        if token is None:
            page = LOGIN_PAGE.replace("@MSG", f'<p class="err" id="err">Refused: {esc(why)}</p>')
            return web.Response(status=403, text=page, content_type="text/html")
        secure = "; Secure" if self.srv.tls else ""
        cookie = f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={int(self.srv.sessions.ttl_s)}{secure}"
        return web.Response(status=303, headers={"Location": "/", "Set-Cookie": cookie})

    async def logout(self, request: web.Request) -> web.Response:
        s = _session(self.srv, request)
        if s is not None and not _csrf_ok(request, s):
            return web.Response(status=403, text="refused: the form's CSRF token is missing or wrong\n")
        self.srv.sessions.end(_token(request))
        clear = f"{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
        return web.Response(status=303, headers={"Location": "/", "Set-Cookie": clear})

    async def ack(self, request: web.Request) -> web.Response:
        s = _need(self.srv, request)
        if not _csrf_ok(request, s):
            return _json({"error": "the CSRF token is missing or wrong"}, 403)
        form = request[FORM]
        try:
            level, order = str(form["level"])[:40], int(form["order"])
        except (KeyError, ValueError):
            return _json({"error": "level and order (a number) are needed"}, 400)
        why = await self.srv.run(self.srv.data.acknowledge, level, order, s.person, s.role, _addr(request))
        if why is not None:
            return _json({"error": why}, 409)
        self.srv.bump()
        return _json({"ok": True, "by": s.person})

    async def api_floor(self, request: web.Request) -> web.Response:
        _need(self.srv, request)
        return _json(await self.srv.run(self.srv.data.snapshot))

    async def api_hits(self, request: web.Request) -> web.Response:
        _need(self.srv, request)
        since, until = _range(request)
        return _json({"hits": await self.srv.run(hist.hits_between, self.srv.data, since, until)})

    async def api_events(self, request: web.Request) -> web.Response:
        _need(self.srv, request)
        since, until = _range(request)
        kinds = [k for k in request.query.get("kind", "").split(",") if k] or None
        return _json({"events": await self.srv.run(hist.events, self.srv.data, since, until, kinds, 500)})

    async def export(self, request: web.Request) -> web.Response:
        _need(self.srv, request)
        what = request.match_info["what"]
        if what == "tables":
            pic = await self.srv.run(self.srv.data.snapshot)
            day = datetime.fromtimestamp(pic["day_start"]).date()
            return _csv(hist.tables_csv(pic), f"tables-{day}.csv")
        since, until = _range(request)
        name = f"{what}-{since.date()}-to-{(until - timedelta(days=1)).date()}.csv"
        if what == "hits":
            rows = await self.srv.run(hist.hits_between, self.srv.data, since, until)
            return _csv(hist.hits_csv(rows), name)
        if what == "events":
            rows = await self.srv.run(hist.events, self.srv.data, since, until, None, hist.MAX_EVENTS)
            return _csv(hist.events_csv(rows), name)
        raise web.HTTPNotFound()

    async def slip(self, request: web.Request) -> web.Response:
        """The payout slip (PDF) of a hit, for the floorperson to print and sign."""
        _need(self.srv, request)
        level = request.match_info["level"][:40]
        try:
            order = int(request.match_info["order"])
        except ValueError:
            raise web.HTTPNotFound() from None
        try:
            pdf, name = await self.srv.run(_slip_pdf, self.srv, level, order)
        except ModuleNotFoundError as e:  # the `report` extra
            return web.Response(status=501, text=f"the slip needs {e.name}: pip install 'tablectl[report]'\n")
        except LookupError as e:
            return web.Response(status=404, text=f"{e}\n")
        return web.Response(
            body=pdf,
            content_type="application/pdf",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    async def events(self, request: web.Request) -> web.StreamResponse:
        _need(self.srv, request)
        token = _token(request)
        return await _stream(
            self.srv,
            request,
            self.srv.data.floor_shared.get,
            alive=lambda: self.srv.sessions.get(token) is not None,
        )


def _slip_pdf(srv: FloorServer, level: str, order: int) -> tuple[bytes, str]:
    """(the slip's PDF, its file name); LookupError for no such hit (worker thread)."""
    from controller.lap.floor_slip import slip_of
    from controller.reports.slippdf import render

    slip = slip_of(srv.data, level, order, srv.casino)
    return render(slip), f"slip-{slip.table}-round{slip.round_no}-seat{slip.seat}.pdf"


async def _stream(
    srv: FloorServer, request: web.Request, read: Callable[[int], bytes], alive: Callable[[], bool] = lambda: True
) -> web.StreamResponse:
    """Server-Sent Events: the picture as the LAP announces changes (one shared read per change,
    pushes at most every ``push_s``); ``expired`` when the session ends."""
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", **_HEADERS})
    await resp.prepare(request)
    last = b""
    try:
        while not srv.stopping:
            if not alive():
                await _write(srv, resp, b"event: expired\ndata: {}\n\n")
                break
            seen = srv.generation
            body = await srv.run(read, seen)
            if body != last:
                await _write(srv, resp, b"data: " + body + b"\n\n")
                last = body
            await asyncio.sleep(srv.push_s)  # coalesce bursts
            await srv.changed(seen, 5.0)
    except (ConnectionError, TimeoutError, RuntimeError):
        pass  # the reader went away or stopped reading
    return resp


# ------------------------------------------------------------------------------ the sign
class _Sign:
    def __init__(self, srv: FloorServer):
        self.srv = srv

    async def page(self, request: web.Request) -> web.Response:
        return web.Response(text=SIGN_PAGE, content_type="text/html")

    async def api(self, request: web.Request) -> web.Response:
        # the shared picture (one read per change, whoever asks how often): no login here
        body = await self.srv.run(self.srv.data.sign_shared.get, self.srv.generation)
        return web.Response(body=body, content_type="application/json")

    async def events(self, request: web.Request) -> web.StreamResponse:
        return await _stream(self.srv, request, self.srv.data.sign_shared.get)


def _sign_routes(app: web.Application, srv: FloorServer) -> None:
    sign = _Sign(srv)
    floor = _Floor(srv)
    app.router.add_get("/sign", sign.page)
    app.router.add_get("/sign/events", sign.events)
    app.router.add_get("/api/sign", sign.api)
    app.router.add_get("/static/{name}", floor.static)


def floor_app(srv: FloorServer) -> web.Application:
    app = web.Application(middlewares=[_headers, _posts(srv)], client_max_size=MAX_BODY)
    f = _Floor(srv)
    app.router.add_get("/", f.index)
    app.router.add_post("/login", f.login)
    app.router.add_post("/logout", f.logout)
    app.router.add_post("/api/ack", f.ack)
    app.router.add_get("/api/floor", f.api_floor)
    app.router.add_get("/api/hits", f.api_hits)
    app.router.add_get("/api/events", f.api_events)
    app.router.add_get("/export/{what}.csv", f.export)
    app.router.add_get("/slip/{level}/{order}.pdf", f.slip)
    app.router.add_get("/events", f.events)
    _sign_routes(app, srv)
    return app


def sign_app(srv: FloorServer) -> web.Application:
    """The sign alone (its own bind address, ``[sign]`` in lap.toml): nothing else is served there."""
    app = web.Application(middlewares=[_headers, _posts(srv)], client_max_size=MAX_BODY)
    _sign_routes(app, srv)
    app.router.add_get("/", _to_sign)
    return app


async def _to_sign(request: web.Request) -> web.Response:
    raise web.HTTPFound("/sign")
