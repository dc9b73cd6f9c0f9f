"""The floor view's web server: aiohttp on one asyncio loop in a thread of ``tablectl lap``.

Why aiohttp (README, dependencies): a connection costs a socket and a few objects on the loop, not
a thread, so many slow or half-open clients cannot exhaust the process; it speaks HTTP/1.1 with
keep-alive, streams (the Server-Sent Events of the page and the sign) and TLS from the standard
library's ``ssl``; it is pure asyncio with no build step, and needs no ASGI server beside it.
The database work (psycopg, scrypt) runs on a small fixed pool of worker threads.

Bounds: at most ``max_connections`` connections held (``per_address`` from one address); more are
answered 503 and closed at once.  A connection that sends no complete request within
``idle_s`` (headers dribbled, nothing sent, a TLS handshake not finished) is closed.  A request
body is at most :data:`MAX_BODY` bytes and must arrive within ``body_s``; a ``Content-Length``
that is not a number or is negative is a 400, one too large a 413 (answered before any of it is
read, and the connection closed).  Every POST must come from the page's own origin (``Origin``,
else ``Referer``) and, once logged in, carry the session's CSRF token.

The routes (controller/lap/floor_routes.py): the page and its data for the logged-in floor
staff, and ``/sign``, the common progressive sign (no login, read only), also on an address of
its own when ``[sign]`` in lap.toml gives one.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from aiohttp import web
from psycopg import sql

from controller.lap import pgconn
from controller.lap.floor import FloorData
from controller.lap.floor_auth import Login, Sessions, StaffStore
from controller.lap.floorlock import Lockouts
from controller.lap.reconnect import Reconnect

MAX_BODY = 4096
#: the floor view's listening connection is probed this often, and must answer within it
PROBE_S = 5.0
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\nConnection: close\r\n\r\nbusy\n"

Log = Callable[[str], None]
T = TypeVar("T")
#: aiohttp's access log, off (below INFO nothing is written): the LAP logs logins, not requests
_QUIET = logging.getLogger("tablectl.floor.access")
_QUIET.setLevel(logging.WARNING)


@dataclass(frozen=True)
class Limits:
    max_connections: int = 256
    per_address: int = 32
    idle_s: float = 15.0  # no complete request (or TLS handshake) within this: closed
    body_s: float = 5.0  # a request's body must arrive within this
    write_s: float = 10.0  # an event stream's reader must take each push within this
    workers: int = 6  # threads for the database and scrypt
    login_burst: float = 20  # login attempts one address may make at once ...
    login_per_s: float = 2.0  # ... and then a second


@dataclass(frozen=True, slots=True)
class FloorSettings:
    """The floor view's server as the LAP's configuration sets it (``[floor]``, ``[sign]``,
    ``[link] casino``; controller/commands/lap.py) and the tests tune it."""

    bind: str
    port: int
    staff: Path  # the staff's PINs (controller/lap/floor_auth.py)
    session_s: float = 8 * 3600
    sign_at: tuple[str, int] | None = None  # [sign]: the sign on an address of its own; None: /sign only
    sign_hold_s: float = 30.0
    stale_s: float = 3.0  # a table not heard from for this long is shown stale
    casino: str = ""  # on the payout slips
    push_s: float = 0.25  # an event stream's pushes coalesced over this
    limits: Limits = Limits()


class _Gate:
    """Counts the connections held, in total and per address (on the loop's thread only)."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.held = 0
        self.peak = 0  # the most held at once
        self.admitted = 0
        self.refused = 0
        self.by_addr: dict[str, int] = {}

    def admit(self, transport: Any) -> str | None:
        peer = transport.get_extra_info("peername")
        addr = str(peer[0]) if peer else "?"
        if self.held >= self.limits.max_connections or self.by_addr.get(addr, 0) >= self.limits.per_address:
            self.refused += 1
            return None
        self.held += 1
        self.admitted += 1
        self.peak = max(self.peak, self.held)
        self.by_addr[addr] = self.by_addr.get(addr, 0) + 1
        return addr

    def release(self, addr: str) -> None:
        self.held -= 1
        left = self.by_addr.get(addr, 1) - 1
        if left > 0:
            self.by_addr[addr] = left
        else:
            self.by_addr.pop(addr, None)


def _handler_class(gate: _Gate) -> type[web.RequestHandler]:
    class Handler(web.RequestHandler):
        """aiohttp's connection handler, admitted by the gate (refused: 503 and closed)."""

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self._gate_addr = gate.admit(transport)
            if self._gate_addr is None:
                tr: Any = transport
                tr.write(_BUSY)
                tr.close()
                return
            super().connection_made(transport)

        def connection_lost(self, exc: BaseException | None) -> None:
            addr = getattr(self, "_gate_addr", None)
            if addr is None:
                return  # refused: nothing was set up
            gate.release(addr)
            super().connection_lost(exc)

    return Handler


class _GatedSite(web.SockSite):
    """A listening socket whose connections pass the gate; TLS handshakes end within ``idle_s``."""

    def __init__(self, runner: web.AppRunner, sock: socket.socket, tls: ssl.SSLContext | None, gate: _Gate):
        super().__init__(runner, sock, ssl_context=tls, backlog=128)
        self._gate = gate

    async def start(self) -> None:
        await web.BaseSite.start(self)
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None
        cls = _handler_class(self._gate)
        lim = self._gate.limits

        def factory() -> web.RequestHandler:
            return cls(
                server,
                loop=loop,
                keepalive_timeout=lim.idle_s,
                access_log=_QUIET,
                max_line_size=4096,
                max_field_size=4096,
                max_headers=64,
                lingering_time=1.0,
            )

        extra: dict[str, Any] = {}
        if self._ssl_context is not None:
            extra = {"ssl_handshake_timeout": lim.idle_s, "ssl_shutdown_timeout": 2.0}
        self._server = await loop.create_server(
            factory, sock=self._sock, ssl=self._ssl_context, backlog=self._backlog, **extra
        )


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """The server's TLS context (TLS 1.2 or later) from PEM files; ssl.SSLError/OSError if unusable."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(cert), str(key))
    return ctx


def _listen_socket(bind: str, port: int) -> socket.socket:
    infos = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, addr = infos[0]
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(addr)
        s.listen(128)
        s.setblocking(False)
    except OSError:
        s.close()
        raise
    return s


class FloorServer:
    """The floor view and the sign: :meth:`start` serves on a thread of its own, :meth:`stop` ends
    it in any state (before :meth:`start`, while the database was never reached, while serving)."""

    def __init__(
        self,
        dsn: str,
        schema: str,
        settings: FloorSettings,
        log: Log = print,
        *,
        tls: ssl.SSLContext | None = None,
    ):
        self.data = FloorData(dsn, schema, stale_s=settings.stale_s, sign_hold_s=settings.sign_hold_s)
        self.casino = settings.casino  # on the payout slips (``[link] casino``)
        self.dsn, self.schema = dsn, schema
        self.log = log
        self.push_s = settings.push_s
        self.tls = tls
        self.limits = settings.limits
        self.login = Login(self.data.conn, schema, StaffStore(settings.staff), Sessions(settings.session_s), log)
        self.gate = _Gate(self.limits)
        self.generation = 0
        self.stopping = False
        self._socks = [_listen_socket(settings.bind, settings.port)]
        if settings.sign_at is not None:
            try:
                self._socks.append(_listen_socket(*settings.sign_at))
            except OSError:
                self._socks[0].close()
                raise
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._done: asyncio.Event | None = None
        self._tick: asyncio.Event | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._ready = threading.Event()
        self._stopped = False

    # ---- the login's parts (controller/lap/floor_auth.py), read through
    @property
    def staff(self) -> StaffStore:
        return self.login.staff

    @property
    def sessions(self) -> Sessions:
        return self.login.sessions

    @property
    def lockouts(self) -> Lockouts:
        return self.login.lockouts

    # ---- addresses
    @property
    def address(self) -> tuple[str, int]:
        host, port = self._socks[0].getsockname()[:2]
        return str(host), int(port)

    @property
    def sign_address(self) -> tuple[str, int]:
        """Where the sign is served on its own (the floor's address when ``[sign]`` gave none)."""
        host, port = self._socks[-1].getsockname()[:2]
        return str(host), int(port)

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    # ---- life
    def start(self) -> None:
        """Serve (once; later calls do nothing)."""
        if self._thread is not None or self._stopped:
            return
        self._thread = threading.Thread(target=self._run, name="floor-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        self.log(f"lap: floor view on {self.scheme}://{self.address[0]}:{self.address[1]}/")
        if len(self._socks) > 1:
            self.log(f"lap: progressive sign on {self.scheme}://{self.sign_address[0]}:{self.sign_address[1]}/sign")

    def stop(self, timeout: float = 3.0) -> None:
        """End serving, whatever the state; returns within about ``timeout`` seconds."""
        if self._stopped:
            return
        self._stopped = True
        self.stopping = True
        loop, done = self._loop, self._done
        if self._thread is not None and loop is not None and done is not None:
            try:
                loop.call_soon_threadsafe(done.set)
            except RuntimeError:
                pass  # the loop already ended
            self._thread.join(timeout)
        for s in self._socks:
            s.close()
        self.data.close()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        finally:
            self._ready.set()

    async def _main(self) -> None:
        from controller.lap.floor_routes import floor_app, sign_app

        self._loop = asyncio.get_running_loop()
        self._done = asyncio.Event()
        self._tick = asyncio.Event()
        self._pool = ThreadPoolExecutor(self.limits.workers, thread_name_prefix="floor-worker")
        runners = [web.AppRunner(floor_app(self), handle_signals=False, shutdown_timeout=1.0, access_log=None)]
        if len(self._socks) > 1:
            runners.append(web.AppRunner(sign_app(self), handle_signals=False, shutdown_timeout=1.0, access_log=None))
        listener = asyncio.create_task(self._listen())
        try:
            for runner, sock in zip(runners, self._socks):
                await runner.setup()
                await _GatedSite(runner, sock, self.tls, self.gate).start()
            self._ready.set()
            await self._done.wait()
        finally:
            self.stopping = True
            self.bump()
            listener.cancel()
            for runner in runners:
                await runner.cleanup()
            self._pool.shutdown(wait=False, cancel_futures=True)

    # ---- changes announced by the LAP
    async def _listen(self) -> None:
        """Wake the event streams when the LAP announces a change, and at least every second.

        The listening connection goes through the link's reconnect state machine
        (controller/lap/reconnect.py: back-off with jitter between attempts), and is asked a
        ``SELECT 1`` every :data:`PROBE_S` seconds, which must be answered within as long (the
        machine's progress deadline, and a client-side bound on the await): a network that
        holds or swallows bytes, which neither keepalives nor ``tcp_user_timeout`` find behind a
        middlebox that acknowledges them, would otherwise leave it listening to nothing for good."""
        relink = Reconnect("the floor view's listener", PROBE_S, pgconn.Backoff(0.5, 5.0))
        while not self.stopping:
            try:
                relink.begin()
                async with await pgconn.connect_async(self.dsn) as c:
                    relink.opened(c)
                    await c.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.schema)))
                    await self._hear(c, relink)
            except (psycopg.Error, TimeoutError) as e:
                self.bump()
                await asyncio.sleep(relink.fail(f"{type(e).__name__}: {e}"))

    async def _hear(self, c: psycopg.AsyncConnection, relink: Reconnect) -> None:
        probed = time.monotonic()
        while not self.stopping:
            async for _ in c.notifies(timeout=1.0, stop_after=1):
                pass
            self.bump()
            relink.enforce()
            if time.monotonic() - probed >= PROBE_S:
                relink.waiting()
                await asyncio.wait_for(c.execute("SELECT 1"), PROBE_S)
                relink.progressed()
                probed = time.monotonic()

    def bump(self) -> None:
        self.generation += 1
        if self._tick is not None:
            self._tick.set()
            self._tick = asyncio.Event()

    async def changed(self, seen: int, timeout: float) -> None:
        """Return once the generation passed ``seen`` (or after ``timeout``)."""
        if self.generation != seen or self._tick is None:
            return
        try:
            await asyncio.wait_for(self._tick.wait(), timeout)
        except TimeoutError:
            pass

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Blocking work (the database, scrypt) on the worker threads."""
        assert self._pool is not None
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
