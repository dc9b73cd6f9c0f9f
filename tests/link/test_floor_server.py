"""The floor view's server survives what a hostile or broken client on the network sends.

- 500 half-open connections: no thread per connection; at most ``per_address`` (or
  ``max_connections``) held, the rest answered 503 and closed; another client still served; the
  half-open ones closed once ``idle_s`` passes.
- malformed ``Content-Length`` (-1, 10^9, ``abc``) and a body that never arrives: 400/413/408 at
  once, no traceback, nothing held.
- a cross-origin POST (a page elsewhere posting to the floor view), or one that names no origin:
  refused before anything is done; the acknowledgement and logout need the session's CSRF token.
- a stop in every state: before start, before the database was ever reached (within 2 s), and
  ``tablectl lap`` stopped by SIGTERM while its database is unreachable.
- TLS from lap.toml's certificate and key; a broken pair named at ``lap --check``.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from controller.lap.floor_server import FloorServer, FloorSettings, Limits


def _host_port(srv: Any) -> tuple[str, int]:
    host, port = srv.address
    return str(host), int(port)


def _post(
    srv: FloorServer,
    path: str,
    form: dict[str, str],
    cookie: str = "",
    headers: Mapping[str, str | None] | None = None,
) -> Any:
    c = http.client.HTTPConnection(*_host_port(srv), timeout=10)
    given: dict[str, str | None] = {"Content-Type": "application/x-www-form-urlencoded", "Origin": _origin(srv)}
    if cookie:
        given["Cookie"] = cookie
    given.update(headers or {})
    h = {k: v for k, v in given.items() if v is not None}
    c.request("POST", path, urllib.parse.urlencode(form), h)
    r: Any = c.getresponse()  # the response, with its body read (``r.body``)
    r.body = r.read()
    c.close()
    return r


def _origin(srv: FloorServer, scheme: str = "http") -> str:
    return f"{scheme}://{srv.address[0]}:{srv.address[1]}"


def _get(srv: FloorServer, path: str, cookie: str = "", source: str | None = None) -> Any:
    c = http.client.HTTPConnection(*_host_port(srv), timeout=10, source_address=(source, 0) if source else None)
    c.request("GET", path, headers={"Cookie": cookie} if cookie else {})
    r: Any = c.getresponse()  # the response, with its body read (``r.body``)
    r.body = r.read()
    c.close()
    return r


def _login(srv: FloorServer) -> str:
    r = _post(srv, "/login", {"person": "alice", "pin": "4821"})
    assert r.status == 303, r.body
    return str(r.getheader("Set-Cookie")).split(";")[0]


def _raw(srv: FloorServer, data: bytes, timeout: float = 5) -> bytes:
    """Send raw bytes; what the server answers before it closes (or the timeout)."""
    with socket.create_connection(srv.address, timeout=timeout) as s:
        s.sendall(data)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except TimeoutError:
            pass
    return out


def _threads() -> int:
    return threading.active_count()


# ------------------------------------------------------------------------ connections
@pytest.mark.slow
def test_500_half_open_connections_are_bounded_and_do_not_cost_threads(make_floor: Any) -> None:
    _lap, srv = make_floor(limits=Limits(per_address=32, idle_s=2.0))
    _get(srv, "/sign")  # the worker pool is up
    before, admitted0 = _threads(), srv.gate.admitted
    socks: list[socket.socket] = []
    try:
        for _ in range(500):
            s = socket.create_connection(srv.address, timeout=5)
            s.sendall(b"GET /api/floor HTTP/1.1\r\nHost: x\r\n")  # and never the end of the headers
            socks.append(s)
        end = time.monotonic() + 10
        while srv.gate.admitted - admitted0 + srv.gate.refused < 500 and time.monotonic() < end:
            time.sleep(0.1)
        assert _threads() - before <= 2, "a thread per connection"
        # (opening 500 takes a while: those idle for 2 s were closed meanwhile, and others admitted)
        assert srv.gate.peak == 32 and srv.gate.admitted - admitted0 + srv.gate.refused == 500, vars(srv.gate)
        assert srv.gate.refused >= 500 - 3 * 32
        # another client (another address) is served meanwhile
        t0 = time.monotonic()
        assert _get(srv, "/sign", source="127.0.0.2").status == 200
        assert time.monotonic() - t0 < 2
        # the half-open ones are closed once idle_s passes
        end = time.monotonic() + 10
        while srv.gate.held and time.monotonic() < end:
            time.sleep(0.1)
        assert srv.gate.held == 0
        assert socks[0].recv(100) == b""  # closed by the server, nothing answered
    finally:
        for s in socks:
            s.close()
    assert _get(srv, "/sign").status == 200


def test_the_total_of_connections_is_capped_too(make_floor: Any) -> None:
    _lap, srv = make_floor(limits=Limits(max_connections=20, per_address=1000, idle_s=30))
    socks = [socket.create_connection(srv.address, timeout=5) for _ in range(60)]
    try:
        time.sleep(0.3)
        assert srv.gate.held == 20
        busy = socks[-1].recv(200)
        assert busy.startswith(b"HTTP/1.1 503"), busy
    finally:
        for s in socks:
            s.close()


# ------------------------------------------------------------------------ request bodies
def test_a_malformed_content_length_is_answered_at_once(make_floor: Any) -> None:
    _lap, srv = make_floor()
    origin = _origin(srv)
    for length, status in (("-1", b" 400 "), ("abc", b" 400 "), ("1000000000", b" 413 "), ("1e3", b" 400 ")):
        t0 = time.monotonic()
        out = _raw(
            srv,
            f"POST /login HTTP/1.1\r\nHost: {origin[7:]}\r\nOrigin: {origin}\r\n"
            f"Content-Length: {length}\r\n\r\nperson=a".encode(),
        )
        assert time.monotonic() - t0 < 3, f"{length}: the connection was held"
        assert status in out.split(b"\r\n")[0] + b" ", (length, out[:200])
        assert b"Traceback" not in out
    assert _get(srv, "/sign").status == 200


@pytest.mark.slow
def test_a_body_that_never_arrives_is_given_up(make_floor: Any, lap_schema: str) -> None:
    lap, srv = make_floor(limits=Limits(body_s=0.5))
    origin = _origin(srv)
    t0 = time.monotonic()
    out = _raw(
        srv,
        f"POST /login HTTP/1.1\r\nHost: {origin[7:]}\r\nOrigin: {origin}\r\n"
        "Content-Length: 100\r\n\r\nperson=".encode(),
    )
    assert out.startswith(b"HTTP/1.1 408"), out[:200]
    assert time.monotonic() - t0 < 3
    n = lap.store.conn.execute(sql.SQL("SELECT count(*) FROM {}.floor_logins").format(sql.Identifier(lap_schema)))
    assert n.fetchone()[0] == 0  # nothing was tried


# ------------------------------------------------------------------------ origin and CSRF
def test_a_cross_origin_post_is_refused_and_changes_nothing(make_floor: Any, lap_schema: str) -> None:
    lap, srv = make_floor()
    s = sql.Identifier(lap_schema)
    cases: list[dict[str, str | None]] = [
        {"Origin": "http://evil.example"},
        {"Origin": None, "Referer": "http://evil.example/page"},
        {"Origin": None},  # no origin named at all
        {"Sec-Fetch-Site": "cross-site"},
    ]
    for headers in cases:
        r = _post(srv, "/login", {"person": "alice", "pin": "4821"}, headers=headers)
        assert r.status == 403 and b"cross-origin" in r.body and r.getheader("Set-Cookie") is None, headers
    assert lap.store.conn.execute(sql.SQL("SELECT count(*) FROM {}.floor_logins").format(s)).fetchone()[0] == 0
    # a same-origin Referer (no Origin) is the page's own
    assert (
        _post(
            srv,
            "/login",
            {"person": "alice", "pin": "4821"},
            headers={"Origin": None, "Referer": _origin(srv) + "/"},
        ).status
        == 303
    )
    # logged in, a cross-origin acknowledgement is refused; a same-origin one needs the CSRF token
    jar = _login(srv)
    lap.claim("T1", 1, 1, 1, "royal")
    form = {"level": "primary", "order": "1"}
    assert _post(srv, "/api/ack", form, cookie=jar, headers={"Origin": "http://evil.example"}).status == 403
    r = _post(srv, "/api/ack", form, cookie=jar)
    assert r.status == 403 and b"CSRF" in r.body
    assert lap.store.conn.execute(sql.SQL("SELECT count(*) FROM {}.floor_acks").format(s)).fetchone()[0] == 0
    page = _get(srv, "/", cookie=jar).body.decode()
    csrf = page.split('name="csrf" content="')[1].split('"')[0]
    r = _post(srv, "/api/ack", {**form, "csrf": csrf}, cookie=jar)
    assert r.status == 200 and json.loads(r.body) == {"ok": True, "by": "alice"}
    rows = lap.store.conn.execute(sql.SQL("SELECT level, order_no, person, role FROM {}.floor_acks").format(s))
    assert rows.fetchall() == [("primary", 1, "alice", "floorperson")]


def test_login_attempts_from_one_address_are_rate_limited(make_floor: Any, lap_schema: str) -> None:
    lap, srv = make_floor(limits=Limits(login_burst=5, login_per_s=0.05))
    answers = [_post(srv, "/login", {"person": f"guess{i}", "pin": "0000"}).status for i in range(20)]
    assert answers[:5] == [403] * 5 and answers.count(429) >= 13 and set(answers) == {403, 429}, answers
    n = lap.store.conn.execute(sql.SQL("SELECT count(*) FROM {}.floor_logins").format(sql.Identifier(lap_schema)))
    assert n.fetchone()[0] == answers.count(403)  # the refused-unchecked ones cost nothing
    # another address is not held back
    c = http.client.HTTPConnection(*_host_port(srv), timeout=10, source_address=("127.0.0.2", 0))
    c.request("POST", "/login", "person=alice&pin=4821", {"Origin": _origin(srv)})
    r = c.getresponse()
    r.read()
    c.close()
    assert r.status == 303


def test_every_response_forbids_framing_scripts_from_elsewhere_and_caching(make_floor: Any) -> None:
    _lap, srv = make_floor()
    for path in ("/", "/sign", "/api/floor", "/nowhere"):
        r = _get(srv, path)
        csp = r.getheader("Content-Security-Policy") or ""
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, (path, csp)
        assert r.getheader("X-Frame-Options") == "DENY" and r.getheader("Cache-Control") == "no-store"
    assert _get(srv, "/static/../floor.py").status == 404
    assert _get(srv, "/static/floor.js").status == 200


# ------------------------------------------------------------------------ stopping
def test_stop_before_start_and_before_the_database_was_ever_reached(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on: the database is never reached
        s.bind(("127.0.0.1", 0))
        dead = f"host=127.0.0.1 port={s.getsockname()[1]} dbname=x connect_timeout=2"
    srv = FloorServer(dead, "lap_x", FloorSettings("127.0.0.1", 0, tmp_path / "staff.toml"), log=lambda m: None)
    t0 = time.monotonic()
    srv.stop()  # never started
    assert time.monotonic() - t0 < 0.5
    srv = FloorServer(dead, "lap_x", FloorSettings("127.0.0.1", 0, tmp_path / "staff.toml"), log=lambda m: None)
    srv.start()
    assert _get(srv, "/sign").status == 200  # the page is served; its data says the database is away
    r = _get(srv, "/api/sign")
    assert json.loads(r.body)["error"].startswith("database: "), r.body
    t0 = time.monotonic()
    srv.stop()
    assert time.monotonic() - t0 < 2.0
    srv.stop()  # again: nothing
    with pytest.raises(OSError):
        socket.create_connection(srv.address, timeout=1)


@pytest.mark.slow
def test_tablectl_lap_stops_within_2s_when_its_database_was_never_reached(tmp_path: Path) -> None:
    from tests.link.conftest import lap_doc

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"postgresql://nobody@127.0.0.1:{s.getsockname()[1]}/x"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = _lap_toml(tmp_path, lap_doc("lap_x"), f"[floor]\nport = {port}\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "lap", "--sim", "--db", dead, "--config", str(cfg)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        end = time.monotonic() + 20
        out = ""
        while "database unreachable" not in out and time.monotonic() < end:
            out += proc.stdout.readline() if proc.stdout else ""
        assert "database unreachable" in out, out
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and took < 2.0, (proc.returncode, took)


def _lap_toml(tmp_path: Path, doc: dict[str, Any], extra: str) -> Path:
    lines = [f'[link]\ngroup = "pit"\nschema = "{doc["link"]["schema"]}"\nheartbeat = "100ms"\n']
    lines.append(
        '[levels.primary]\nseed = "$1,000"\nreset = "$1,000"\nincrement_rate = "21%"\n'
        'max_wager = "$5"\nmeter_pays = ["100%", "10%"]\n'
    )
    for tid, t in doc["tables"].items():
        lines.append(f'[tables.{tid}]\nasset = "{t["asset"]}"\ngame = "{t["game"]}"\n')
    lines.append(extra)
    p = tmp_path / "lap.toml"
    p.write_text("\n".join(lines))
    return p


def test_tablectl_lap_without_aiohttp_says_what_to_install(tmp_path: Path) -> None:
    from tests.link.conftest import lap_doc

    cfg = _lap_toml(tmp_path, lap_doc("lap_x"), "[floor]\nport = 8080\n")
    code = (
        "import sys; sys.modules['aiohttp'] = None; from controller.cli import main; "
        f"sys.exit(main(['lap', '--sim', '--db', 'postgresql://x@127.0.0.1:1/x', '--config', {str(cfg)!r}]))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "pip install 'tablectl[lap]'" in r.stderr and "[floor]" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


# ------------------------------------------------------------------------ TLS
def _cert(tmp_path: Path, name: str = "floor") -> tuple[Path, Path]:
    crt, key = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(crt),
        ],
        check=True,
        capture_output=True,
    )
    return crt, key


@pytest.mark.skipif(not os.path.exists("/usr/bin/openssl"), reason="no openssl to make a test certificate")
def test_tls_when_configured(make_floor: Any, tmp_path: Path) -> None:
    from controller.lap.floor_server import tls_context

    crt, key = _cert(tmp_path)
    _lap, srv = make_floor(tls=tls_context(crt, key))
    ctx = ssl.create_default_context(cafile=str(crt))
    ctx.check_hostname = False
    c = http.client.HTTPSConnection(*_host_port(srv), timeout=10, context=ctx)
    body = "person=alice&pin=4821"
    c.request(
        "POST",
        "/login",
        body,
        {"Content-Type": "application/x-www-form-urlencoded", "Origin": _origin(srv, "https")},
    )
    r = c.getresponse()
    r.read()
    assert r.status == 303 and "; Secure" in str(r.getheader("Set-Cookie"))
    # plain HTTP to the TLS port gets nothing served
    out = _raw(srv, b"GET /sign HTTP/1.1\r\nHost: x\r\n\r\n", timeout=3)
    assert b"LINKED PROGRESSIVE" not in out


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/usr/bin/openssl"), reason="no openssl to make a test certificate")
def test_lap_check_names_the_tls_option_that_is_wrong(tmp_path: Path) -> None:
    from tests.link.conftest import lap_doc

    crt, key = _cert(tmp_path)
    crt2, _key2 = _cert(tmp_path, "other")
    cases = [
        (f'tls_cert = "{crt}"\n', "tls_key", "go together"),
        (f'tls_cert = "{crt}"\ntls_key = "{tmp_path / "missing.key"}"\n', "tls_key", "cannot read"),
        (f'tls_cert = "{tmp_path / "nope.crt"}"\ntls_key = "{key}"\n', "tls_cert", "cannot read"),
        (f'tls_cert = "{crt2}"\ntls_key = "{key}"\n', "tls_key", "not a PEM certificate and its private key"),
    ]
    for extra, option, words in cases:
        cfg = _lap_toml(tmp_path, lap_doc("lap_x"), "[floor]\nport = 8443\n" + extra)
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "controller.cli",
                "lap",
                "--sim",
                "--db",
                "postgresql://x@127.0.0.1:1/x",
                "--config",
                str(cfg),
                "--check",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 2 and option in r.stderr and words in r.stderr, (extra, r.stderr)
    cfg = _lap_toml(tmp_path, lap_doc("lap_x"), f'[floor]\nport = 8443\ntls_cert = "{crt}"\ntls_key = "{key}"\n')
    from controller.lap.config import load_lap

    f = load_lap(cfg).floor
    assert f is not None and (f.tls_cert, f.tls_key) == (crt, key)


# ------------------------------------------------------------------------ a silent network
@pytest.mark.slow
@pytest.mark.soak
def test_the_floor_view_finds_its_silent_database_connections_dead_and_recovers(make_floor: Any, pg_dsn: str) -> None:
    """Bytes swallowed without a reset (hil/netproxy.py ``blackhole``) between the floor
    view and its database.  Neither keepalives nor ``tcp_user_timeout`` find it (the proxy's
    kernel acknowledges everything): a pooled connection's statement is ended by the pool's
    lending guard (2 s past the server's statement timeout) and the listening connection by its
    probe, both replaced by new connections; the page shows the floor again, no worker is
    left stuck."""
    import psycopg

    from controller.lap import pgconn
    from hil.netproxy import NetProxy

    info = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    if str(info.get("host", "")).startswith("/") or not info.get("host"):
        pytest.skip("the test server is on a Unix socket: no TCP to break")
    proxy = NetProxy(str(info["host"]), int(info.get("port") or 5432))
    try:
        dsn = psycopg.conninfo.make_conninfo(pg_dsn, host="127.0.0.1", port=proxy.port)
        _lap, srv = make_floor(dsn=dsn)
        cookie = _login(srv)
        first = _get(srv, "/api/floor", cookie)
        assert first.status == 200 and "error" not in json.loads(first.body), first.body
        opened = proxy.accepted
        proxy.blackhole()
        t0 = time.monotonic()
        limit = pgconn.FLOOR.statement_timeout_ms / 1000 + 2.0
        seen: list[str] = []
        while time.monotonic() - t0 < 3 * limit:
            body = json.loads(_get(srv, "/api/floor", cookie).body)
            seen.append(str(body.get("error", "ok")))
            if "error" not in body and srv.data.guard.fired >= 1 and proxy.accepted >= opened + 2:
                break
            time.sleep(0.5)
        took = time.monotonic() - t0
        assert srv.data.guard.fired >= 1, seen  # the stuck statement's connection was shut
        assert proxy.accepted >= opened + 2, (proxy.accepted, opened)  # pool and listener both anew
        assert seen[-1] == "ok" and took < 3 * limit, (took, seen[-3:])
    finally:
        proxy.close()
