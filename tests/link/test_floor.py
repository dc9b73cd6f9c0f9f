"""The floor view: login by person and PIN (floorperson/technician only, audited in the
LAP), the data endpoint's picture of the link, Server-Sent Events pushing a meter change, the
tables' status reports (only their own)."""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from controller.lap.floor_auth import StaffStore
from controller.lap.floor_server import FloorServer, FloorSettings


def _host_port(srv: Any) -> tuple[str, int]:
    host, port = srv.address
    return str(host), int(port)


@pytest.fixture
def floor(make_lap: Any, pg_dsn: str, tmp_path: Path) -> Iterator[tuple[Any, FloorServer]]:
    lap = make_lap(tables=2)
    staff = tmp_path / "floor-staff.toml"
    st = StaffStore(staff)
    st.set("alice", "floorperson", "4821")
    st.set("tom", "technician", "9134")
    st.set("dan", "dealer", "5555")
    srv = FloorServer(
        pg_dsn, lap.cfg.schema, FloorSettings("127.0.0.1", 0, staff, session_s=60, push_s=0.05), log=lambda m: None
    )
    srv.start()
    yield lap, srv
    srv.stop()


def _req(
    srv: FloorServer,
    method: str,
    path: str,
    body: dict[str, str] | None = None,
    cookie: str = "",
    origin: str | None = "",
) -> Any:
    """A request; a POST carries the page's own Origin unless ``origin`` says otherwise (None: none)."""
    host, port = _host_port(srv)
    c = http.client.HTTPConnection(host, port, timeout=10)
    headers = {"Cookie": cookie} if cookie else {}
    if method == "POST" and origin is not None:
        headers["Origin"] = origin or f"http://{srv.address[0]}:{srv.address[1]}"
    data = None
    if body is not None:
        data = urllib.parse.urlencode(body)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    c.request(method, path, data, headers)
    r: Any = c.getresponse()  # the response, with its body read (``r.body``)
    r.body = r.read()
    c.close()
    return r


def _login(srv: FloorServer, person: str, pin: str) -> tuple[int, str]:
    r = _req(srv, "POST", "/login", {"person": person, "pin": pin})
    return r.status, (r.getheader("Set-Cookie") or "")


def _csrf(srv: FloorServer, jar: str) -> str:
    """The session's CSRF token, as the page carries it."""
    import re

    page = _req(srv, "GET", "/", cookie=jar).body.decode()
    m = re.search(r'<meta name="csrf" content="([^"]+)">', page)
    assert m, page
    return m.group(1)


def _logins(lap: Any) -> list[tuple[str, str | None, bool]]:
    rows = lap.store.conn.execute(
        sql.SQL("SELECT person, role, ok FROM {}.floor_logins ORDER BY id").format(sql.Identifier(lap.cfg.schema))
    ).fetchall()
    return [tuple(r) for r in rows]


def test_login_floorperson_opens_dealer_and_wrong_pin_refused_all_audited(floor: Any) -> None:
    lap, srv = floor
    assert _req(srv, "GET", "/api/floor").status == 401
    assert _req(srv, "GET", "/events").status == 401
    code, cookie = _login(srv, "alice", "4821")
    assert code == 303
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    jar = cookie.split(";")[0]
    r = _req(srv, "GET", "/api/floor", cookie=jar)
    assert r.status == 200
    pic = json.loads(r.body)
    assert [t["id"] for t in pic["tables"]] == ["T1", "T2"]
    assert pic["levels"][0]["cents"] == 100_000
    code, cookie = _login(srv, "alice", "0000")
    assert code == 403 and cookie == ""
    code, cookie = _login(srv, "dan", "5555")  # the dealer's own, correct PIN
    assert code == 403 and cookie == ""
    assert b"dealer may not open" in _req(srv, "POST", "/login", {"person": "dan", "pin": "5555"}).body
    code, _ = _login(srv, "tom", "9134")
    assert code == 303
    assert _logins(lap) == [
        ("alice", "floorperson", True),
        ("alice", None, False),
        ("dan", None, False),
        ("dan", None, False),
        ("tom", "technician", True),
    ]
    # no other method or path does anything
    assert _req(srv, "POST", "/api/floor", {}, cookie=jar).status == 405


def test_session_expires_and_logout_ends_it(floor: Any) -> None:
    _lap, srv = floor
    _, cookie = _login(srv, "alice", "4821")
    jar = cookie.split(";")[0]
    assert _req(srv, "GET", "/api/floor", cookie=jar).status == 200
    srv.sessions.now = lambda: time.monotonic() + 61
    assert _req(srv, "GET", "/api/floor", cookie=jar).status == 401
    srv.sessions.now = time.monotonic
    _, cookie = _login(srv, "alice", "4821")
    jar = cookie.split(";")[0]
    assert _req(srv, "POST", "/logout", {}, cookie=jar).status == 403  # no CSRF token
    assert _req(srv, "GET", "/api/floor", cookie=jar).status == 200
    assert _req(srv, "POST", "/logout", {"csrf": _csrf(srv, jar)}, cookie=jar).status == 303
    assert _req(srv, "GET", "/api/floor", cookie=jar).status == 401


def test_repeated_failures_lock_the_name(floor: Any) -> None:
    _lap, srv = floor
    for _ in range(5):
        assert _login(srv, "alice", "1111")[0] == 403
    assert _login(srv, "alice", "4821")[0] == 403  # locked even with the right PIN


def _restart(srv: FloorServer, lap: Any, pg_dsn: str, tmp_path: Path) -> FloorServer:
    """``tablectl lap`` restarted: a new floor server (nothing kept in memory) on the same schema."""
    srv.stop()
    settings = FloorSettings("127.0.0.1", 0, tmp_path / "floor-staff.toml", session_s=60)
    new = FloorServer(pg_dsn, lap.cfg.schema, settings, log=lambda m: None)
    new.start()
    return new


def test_a_lockout_survives_a_restart_of_the_lap_and_ends_by_the_databases_clock(
    floor: Any, pg_dsn: str, tmp_path: Path
) -> None:
    lap, srv = floor
    s = sql.Identifier(lap.cfg.schema)
    for _ in range(5):
        assert _login(srv, "alice", "1111")[0] == 403
    new = _restart(srv, lap, pg_dsn, tmp_path)
    try:
        r = _req(new, "POST", "/login", {"person": "alice", "pin": "4821"})
        assert r.status == 403 and b"locked after repeated failures" in r.body  # the restart lifted nothing
        assert _login(new, "tom", "9134")[0] == 303  # per person: another name is not locked
        # the lock-out's end is the database's: 15 min from the fifth failure, on its clock
        left = lap.store.conn.execute(
            sql.SQL(
                "SELECT extract(epoch FROM locked_until - clock_timestamp()) FROM {}.floor_lockouts"
                " WHERE person = 'alice'"
            ).format(s)
        ).fetchone()[0]
        assert 14 * 60 < float(left) <= 15 * 60
        # the database's clock passes the end (moved as the LAP's owner would see it)
        lap.store.conn.execute(
            sql.SQL("UPDATE {}.floor_lockouts SET locked_until = clock_timestamp() - interval '1 second'").format(s)
        )
        assert _login(new, "alice", "4821")[0] == 303
        assert list(new.lockouts.counts()) == []  # the right PIN cleared the count
    finally:
        new.stop()
    # every attempt is still audited, the refused one while locked among them
    assert _logins(lap) == [("alice", None, False)] * 6 + [("tom", "technician", True), ("alice", "floorperson", True)]
    why = lap.store.conn.execute(
        sql.SQL("SELECT why FROM {}.floor_logins WHERE person = 'alice' ORDER BY id").format(s)
    ).fetchall()
    assert [w for (w,) in why] == ["wrong name or PIN"] * 5 + ["locked after repeated failures", "ok"]


def test_failures_are_counted_across_a_restart_and_a_success_resets_them(
    floor: Any, pg_dsn: str, tmp_path: Path
) -> None:
    lap, srv = floor
    for _ in range(3):
        assert _login(srv, "alice", "1111")[0] == 403
    new = _restart(srv, lap, pg_dsn, tmp_path)
    try:
        assert list(new.lockouts.counts()) == [("alice", 3, 0.0)]
        assert _login(new, "alice", "1111")[0] == 403
        assert _login(new, "alice", "4821")[0] == 303  # the fifth attempt, right: opens, count reset
        assert list(new.lockouts.counts()) == []
        for _ in range(4):
            assert _login(new, "alice", "1111")[0] == 403
        assert _login(new, "alice", "4821")[0] == 303  # four after the reset: not locked
        for _ in range(5):
            assert _login(new, "alice", "1111")[0] == 403
        assert _login(new, "alice", "4821")[0] == 403
    finally:
        new.stop()


def test_status_reports_hits_and_validation_shown(floor: Any) -> None:
    lap, srv = floor
    s = sql.Identifier(lap.cfg.schema)
    st = {"state": "tilt", "round": 7, "open": False, "reason": "no heartbeat", "tilts": {"shoe": "jam"}}
    lap.table("T1").execute(sql.SQL("SELECT {}.report_status(%s::jsonb)").format(s), (json.dumps(st),))
    lap.send("T2", 1, "contribution", {"wager": 500, "round": 3, "seat": 2})
    lap.send("T2", 2, "hit", {"fraction_num": 1, "fraction_den": 10, "round": 3, "seat": 2, "hand": "royal"})
    _, cookie = _login(srv, "alice", "4821")
    pic = json.loads(_req(srv, "GET", "/api/floor", cookie=cookie.split(";")[0]).body)
    t1 = pic["tables"][0]
    assert (t1["state"], t1["round"], t1["open"], t1["reason"], t1["tilts"]) == (
        "tilt",
        7,
        False,
        "no heartbeat",
        {"shoe": "jam"},
    )
    assert t1["heard_s"] is not None and t1["heard_s"] < 5
    assert pic["tables"][1]["state"] == "not reported"
    (hit,) = pic["hits"]
    assert (hit["table"], hit["seat"], hit["hand"], hit["pending"]) == ("T2", 2, "royal", True)
    assert hit["cents"] == (100_000 + 105) // 10
    lap.send("T2", 3, "paid", {"hit_seq": 2, "cents": hit["cents"], "by": "floor:alice"})
    pic = json.loads(_req(srv, "GET", "/api/floor", cookie=cookie.split(";")[0]).body)
    (hit,) = pic["hits"]
    assert (hit["pending"], hit["validated_by"]) == (False, "floor:alice")
    chart = pic["levels"][0]["chart"]
    assert chart[0][1] == 100_000 and chart[-1][1] == pic["levels"][0]["cents"]
    assert len(pic["levels"][0]["hit_marks"]) == 1


def test_a_table_reports_only_its_own_status(floor: Any) -> None:
    lap, _srv = floor
    s = sql.Identifier(lap.cfg.schema)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        lap.table("T1").execute(sql.SQL("UPDATE {}.table_status SET state = 'x'").format(s))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        lap.table("T1").execute(sql.SQL("SELECT * FROM {}.floor_logins").format(s))


def test_events_push_a_meter_change(floor: Any) -> None:
    lap, srv = floor
    _, cookie = _login(srv, "alice", "4821")
    host, port = _host_port(srv)
    c = http.client.HTTPConnection(host, port, timeout=10)
    c.request("GET", "/events", headers={"Cookie": cookie.split(";")[0]})
    r = c.getresponse()
    assert r.getheader("Content-Type") == "text/event-stream"

    def next_picture() -> dict[str, Any]:
        while True:
            line = r.fp.readline()
            if line.startswith(b"data: "):
                return dict(json.loads(line[6:]))

    first = next_picture()
    assert first["levels"][0]["cents"] == 100_000
    lap.send("T1", 1, "contribution", {"wager": 1_000, "round": 1, "seat": 1})
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if next_picture()["levels"][0]["cents"] == 100_210:
            break
    else:
        pytest.fail("the meter change was not pushed")
    c.close()


def test_the_paid_record_carries_who_validated_to_the_lap() -> None:
    from controller.core.records import Kind
    from controller.uplink.ledgerseam import to_lap

    kind, level, data = to_lap(
        Kind.LINK_PAID, 3, {"level": "primary", "hit_seq": 7, "cents": 100, "by": "floor:key", "seat": 2}
    )
    assert (kind, level, data) == ("paid", "primary", {"round": 3, "hit_seq": 7, "cents": 100, "by": "floor:key"})


@pytest.mark.slow
def test_sim_serves_the_floor_with_four_tables_and_stops_when_told(pg_dsn: str) -> None:
    import io
    import threading

    from hil.linksim import LinkSimSettings, run_link_sim

    stop = threading.Event()
    seen: dict[str, Any] = {}

    def on_floor(server: FloorServer, cfg: Any, dsn: str) -> None:
        seen["server"] = server

    out = io.StringIO()
    rc: list[int] = []
    th = threading.Thread(
        target=lambda: rc.append(
            run_link_sim(
                LinkSimSettings(tables=4, rounds=1000, seed=3, dsn=pg_dsn, floor=("127.0.0.1", 0)),
                out=out,
                stop=stop,
                on_floor=on_floor,
            )
        )
    )
    th.start()
    try:
        deadline = time.monotonic() + 60
        while "server" not in seen and time.monotonic() < deadline:
            time.sleep(0.1)
        srv = seen["server"]
        _, cookie = _login(srv, "floor", "2468")
        jar = cookie.split(";")[0]
        assert _login(srv, "dealer", "9753")[0] == 403
        while time.monotonic() < deadline:
            pic = json.loads(_req(srv, "GET", "/api/floor", cookie=jar).body)
            if all(t["state"] != "not reported" and t["round"] and t["open"] for t in pic["tables"]):
                break
            time.sleep(0.2)
        assert [t["id"] for t in pic["tables"]] == ["T01", "T02", "T03", "T04"]
        assert all(t["open"] and t["heard_s"] < 10 for t in pic["tables"]), pic["tables"]
    finally:
        stop.set()
        th.join(120)
    assert "floor view: http://127.0.0.1:" in out.getvalue()
    assert rc == [0], out.getvalue()


def test_the_table_reports_its_status_when_it_changes_and_again_with_a_heartbeat() -> None:
    from controller.play.linked import Linkage

    now = [100.0]
    link = Linkage("pit", 3.0, lambda: now[0])
    sent: list[dict[str, Any]] = []
    link.send = sent.append
    status = {"state": "open_for_wagers", "round": 4, "tilts": {}}
    link.status_source = lambda: dict(status)
    link.report()
    link.report()  # unchanged: not sent again
    assert sent == [
        {
            "t": "status",
            "state": "open_for_wagers",
            "round": 4,
            "tilts": {},
            "open": False,
            "reason": "waiting for the link",
        }
    ]
    link.on_message({"t": "hb", "state": "running", "meters": {}})
    assert len(sent) == 1  # a heartbeat resends only after STATUS_REFRESH_S
    link.on_message({"t": "reconciled", "seq": 0})
    link.change()  # the wager opens: reported at once, with why
    assert sent[-1]["open"] is True and sent[-1]["reason"] == "link reconciled"
    status["tilts"] = {"shoe": "jammed"}
    status["state"] = "tilt"
    link.report()
    assert sent[-1]["tilts"] == {"shoe": "jammed"} and sent[-1]["state"] == "tilt"
    n = len(sent)
    now[0] += 5.0
    link.on_message({"t": "hb", "state": "running", "meters": {}})
    assert len(sent) == n + 1 and sent[-1] == sent[-2]


def test_lap_toml_floor_section_errors_name_file_section_key(tmp_path: Path) -> None:
    from controller.lap.config import parse_lap
    from controller.settings.config import ConfigError
    from tests.link.conftest import lap_doc

    doc = lap_doc("lap_x")
    doc["floor"] = {"port": 70000}
    with pytest.raises(ConfigError) as e:
        parse_lap(doc, str(tmp_path / "lap.toml"))
    assert "floor" in str(e.value) and "port" in str(e.value)
    doc["floor"] = {"port": 8080, "colour": "red"}
    with pytest.raises(ConfigError) as e:
        parse_lap(doc, str(tmp_path / "lap.toml"))
    assert "colour" in str(e.value)
    doc["floor"] = {"port": 8080, "session": "30m"}
    f = parse_lap(doc, str(tmp_path / "lap.toml")).floor
    assert f is not None and (f.bind, f.port, f.staff, f.session_s) == (
        "127.0.0.1",
        8080,
        tmp_path / "floor-staff.toml",
        1800.0,
    )
    assert parse_lap(lap_doc("lap_x"), "lap.toml").floor is None  # off unless configured


@pytest.mark.slow
def test_tablectl_lap_serves_the_floor_when_configured(pg_dsn: str, lap_schema: str, tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys
    import tomllib  # noqa: F401 - the file below is TOML

    from tests.link.conftest import lap_doc

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    doc = lap_doc(lap_schema)
    lines = [f'[link]\ngroup = "pit"\nschema = "{lap_schema}"\nheartbeat = "100ms"\nallow_async_replication = true\n']
    lines.append(
        '[levels.primary]\nseed = "$1,000"\nreset = "$1,000"\nincrement_rate = "21%"\nmax_wager = "$5"\n'
        'meter_pays = ["100%"]\n'
    )
    for tid, t in doc["tables"].items():
        lines.append(f'[tables.{tid}]\nasset = "{t["asset"]}"\ngame = "{t["game"]}"\n')
    lines.append(f'[floor]\nport = {port}\nstaff = "staff.toml"\n')
    cfg = tmp_path / "lap.toml"
    cfg.write_text("\n".join(lines))
    exe = [sys.executable, "-m", "controller.cli", "lap", "--sim", "--db", pg_dsn, "--config", str(cfg)]
    r = subprocess.run([*exe, "--staff-pin", "alice:floorperson"], input="4821\n", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen(exe, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        resp = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request(
                    "POST",
                    "/login",
                    "person=alice&pin=4821",
                    {"Content-Type": "application/x-www-form-urlencoded", "Origin": f"http://127.0.0.1:{port}"},
                )
                resp = c.getresponse()
                break
            except OSError:
                time.sleep(0.2)
        assert resp is not None, "the floor view did not answer a login within 30 s"
        assert resp.status == 303
        jar = str(resp.getheader("Set-Cookie")).split(";")[0]
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        end = time.monotonic() + 10
        while True:
            c.request("GET", "/api/floor", headers={"Cookie": jar})
            pic = json.loads(c.getresponse().read())
            if pic["link_state"] == "running" or time.monotonic() > end:
                break
            time.sleep(0.2)
        assert pic["link_state"] == "running" and [t["id"] for t in pic["tables"]] == ["T1", "T2"]
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0]
    assert f"floor view on http://127.0.0.1:{port}/" in out, out


def test_concurrent_guesses_do_not_slip_past_the_limit(floor: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    lap, srv = floor
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: srv.login("alice", "1111", "10.0.0.9"), range(16)))
    whys = sorted(why for _token, why in answers)
    # each attempt is counted before its PIN is checked: five PINs checked, the rest refused unchecked
    assert whys == ["locked after repeated failures"] * 11 + ["wrong name or PIN"] * 5
    assert len(_logins(lap)) == 16
