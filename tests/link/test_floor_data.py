"""What the floor view and the sign show, and what a table (or a guesser at the login) can
do to them: every field from a table bounded, the day's figures per table, the level's limit and
reserve, hits over a range of days, the tilt and event log, CSV exports (no spreadsheet formulas
from a table's text), the acknowledgement of a pending hit, the sign's picture and its address of
its own, the login's timing and bookkeeping."""

from __future__ import annotations

import csv
import http.client
import io
import json
import statistics
import time
import urllib.parse
from datetime import date, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import sql

from controller.lap.floor_server import FloorServer


def _host_port(srv: Any) -> tuple[str, int]:
    host, port = srv.address
    return str(host), int(port)


def _origin(srv: FloorServer) -> str:
    return f"http://{srv.address[0]}:{srv.address[1]}"


def _req(srv: FloorServer, method: str, path: str, form: dict[str, str] | None = None, cookie: str = "") -> Any:
    c = http.client.HTTPConnection(*_host_port(srv), timeout=10)
    h = {"Cookie": cookie} if cookie else {}
    body = None
    if form is not None:
        body = urllib.parse.urlencode(form)
        h.update({"Content-Type": "application/x-www-form-urlencoded", "Origin": _origin(srv)})
    c.request(method, path, body, h)
    r: Any = c.getresponse()  # the response, with its body read (``r.body``)
    r.body = r.read()
    c.close()
    return r


def _login(srv: FloorServer) -> tuple[str, str]:
    r = _req(srv, "POST", "/login", {"person": "alice", "pin": "4821"})
    assert r.status == 303
    jar = str(r.getheader("Set-Cookie")).split(";")[0]
    page = _req(srv, "GET", "/", cookie=jar).body.decode()
    return jar, page.split('name="csrf" content="')[1].split('"')[0]


def _status(lap: Any, table: str, **st: Any) -> None:
    doc = {"state": "open_for_wagers", "round": 1, "open": True, "reason": "link reconciled", "tilts": {}}
    doc.update(st)
    lap.table(table).execute(
        sql.SQL("SELECT {}.report_status(%s::jsonb)").format(sql.Identifier(lap.cfg.schema)), (json.dumps(doc),)
    )


def _picture(srv: FloorServer, jar: str) -> dict[str, Any]:
    r = _req(srv, "GET", "/api/floor", cookie=jar)
    assert r.status == 200
    pic: dict[str, Any] = json.loads(r.body)
    pic["_bytes"] = len(r.body)
    return pic


def test_a_tables_5_mb_of_tilts_or_hand_text_do_not_make_the_picture_large(make_floor: Any) -> None:
    lap, srv = make_floor()
    s = sql.Identifier(lap.cfg.schema)
    big = {f"device{i:05d}": "x" * 1000 for i in range(5000)}  # 5 MB
    _status(lap, "T1", state="tilt" * 1000, tilts=big, reason="r" * 100_000, sign="S" * 100_000)
    lap.send("T2", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})  # a claim needs its wager
    claim = {"fraction_num": 1, "fraction_den": 10, "round": 1, "seat": 1}
    with pytest.raises(psycopg.errors.CheckViolation):  # the LAP stores a hand of at most 200 bytes
        lap.send("T2", 2, "hit", {**claim, "hand": "h" * 5_000_000})
    lap.send("T2", 2, "hit", {**claim, "hand": "h" * 200})
    # and a row from before the bound, as the LAP's owner could have it
    lap.store.conn.execute(
        sql.SQL("UPDATE {}.table_status SET tilts = %s::jsonb WHERE table_id = 'T1'").format(s), (json.dumps(big),)
    )
    jar, _ = _login(srv)
    pic = _picture(srv, jar)
    assert pic["_bytes"] < 20_000, pic["_bytes"]
    t1 = pic["tables"][0]
    assert len(t1["tilts"]) == 16 and all(len(k) <= 40 and len(v) <= 160 for k, v in t1["tilts"].items())
    assert len(t1["state"]) <= 40 and len(t1["reason"]) <= 200 and len(t1["sign"]) <= 80
    assert len(pic["hits"][0]["hand"]) == 40
    stored = lap.store.conn.execute(sql.SQL("SELECT sum(pg_column_size(t)) FROM {}.table_status t").format(s))
    assert stored.fetchone()[0] < 2_000_000  # the report stored only its bounded part (the UPDATE aside)
    assert len(_req(srv, "GET", "/export/hits.csv", cookie=jar).body) < 10_000


def test_the_picture_in_words_with_the_days_figures_limit_and_reserve(make_floor: Any) -> None:
    lap, srv = make_floor()
    _status(lap, "T1", state="open_for_wagers", round=3, sign="PLACE YOUR BETS")
    _status(lap, "T2", state="tilt", round=2, open=False, reason="tilt", tilts={"shoe": "jammed"})
    for seq, (rnd, seat, wager) in enumerate([(1, 1, 500), (1, 2, 1000), (2, 1, 500)], start=1):
        lap.send("T1", seq, "contribution", {"wager": wager, "round": rnd, "seat": seat})
    lap.send("T1", 4, "void", {"of_seq": 3})
    jar, _ = _login(srv)
    pic = _picture(srv, jar)
    t1, t2 = pic["tables"]
    assert (t1["state_label"], t1["sign"], t2["state_label"]) == ("Open for wagers", "PLACE YOUR BETS", "TILT")
    assert (t1["coin_in_cents"], t1["wagers"], t1["hands"]) == (1500, 2, 1)  # the voided wager is not counted
    # rates only once a table has played long enough to mean something (not "120 an hour" after a minute)
    assert t1["wagers_per_hour"] is None and t1["played_s"] < pic["rates_after_s"] and t2["played_s"] is None
    assert (t1["game_name"], t2["game_name"]) == ("Six-Card Fortune Pai Gow Poker",) * 2
    (lv,) = pic["levels"]
    assert (lv["rate"], lv["reset_cents"], lv["limit_cents"], lv["reserve_cents"]) == ("21%", 100_000, None, 0)
    assert pic["link_live"] is False  # running, but no LAP heartbeat in this test
    # CSV of the tables: dollars, words
    rows = list(csv.reader(io.StringIO(_req(srv, "GET", "/export/tables.csv", cookie=jar).body.decode())))
    assert rows[0][:3] == ["gaming day from", "table", "asset"] and rows[1][6] == "$15.00", rows


def test_rates_per_hour_only_after_a_quarter_hour_of_play() -> None:
    from controller.lap.floor import MIN_RATE_S, _per_hour

    assert _per_hour(2, 1000.0, 1060.0) is None and _per_hour(2, None, 1060.0) is None
    assert _per_hour(30, 1000.0, 1000.0 + MIN_RATE_S) == 120.0  # 30 in 15 minutes
    assert _per_hour(60, 0.0, 3600.0) == 60.0


def test_the_limit_distance(make_lap: Any, pg_dsn: str) -> None:
    from controller.lap.floor import FloorData

    lap = make_lap(tables=1, limit="$1,010")
    lap.send("T1", 1, "contribution", {"wager": 1000, "round": 1, "seat": 1})
    data = FloorData(pg_dsn, lap.cfg.schema)
    try:
        (lv,) = data.snapshot()["levels"]
    finally:
        data.close()
    assert (lv["limit_cents"], lv["cents"], lv["to_limit_cents"]) == (101_000, 100_210, 790)


def test_hits_over_a_range_of_days_and_the_csv_quotes_formulas(make_floor: Any) -> None:
    lap, srv = make_floor()
    lap.claim("T1", 1, 4, 2, "=HYPERLINK(1)")
    jar, _ = _login(srv)
    from controller.lap.floor import gaming_day_start

    today = gaming_day_start().date()
    got = json.loads(_req(srv, "GET", f"/api/hits?from={today - timedelta(days=3)}&to={today}", cookie=jar).body)
    assert [(h["table"], h["seat"], h["cents"]) for h in got["hits"]] == [("T1", 2, 10_000)]
    yday = today - timedelta(days=1)
    assert json.loads(_req(srv, "GET", f"/api/hits?from={yday}&to={yday}", cookie=jar).body)["hits"] == []
    for bad in (
        "from=yesterday",
        f"from={today}&to={today - timedelta(days=1)}",
        f"from={date(2000, 1, 1)}&to={today}",
    ):
        assert _req(srv, "GET", f"/api/hits?{bad}", cookie=jar).status == 400, bad
    assert _req(srv, "GET", f"/api/hits?from={today}", cookie="").status == 401
    body = _req(srv, "GET", f"/export/hits.csv?from={today}&to={today}", cookie=jar).body.decode()
    rows = list(csv.reader(io.StringIO(body)))
    assert rows[0][0] == "level" and rows[1][6] == "'=HYPERLINK(1)" and rows[1][7] == "$100.00", rows


def test_the_event_log_reads_the_laps_records(make_floor: Any) -> None:
    lap, srv = make_floor()
    _status(lap, "T1", tilts={"shoe": "jammed"}, state="tilt", open=False, reason="tilt")
    _status(lap, "T1", tilts={}, state="open_for_wagers")
    _status(lap, "T1", tilts={}, state="no_more_bets")  # not a tilt or the wager: not logged
    lap.store.set_state("stopped")
    lap.store.set_state("running")
    lap.claim("T2", 1, 1, 1, "royal")
    jar, csrf = _login(srv)
    assert _req(srv, "POST", "/api/ack", {"level": "primary", "order": "1", "csrf": csrf}, cookie=jar).status == 200
    events = json.loads(_req(srv, "GET", "/api/events", cookie=jar).body)["events"]
    kinds = [(e["kind"], e["table"]) for e in events]
    assert ("tilt", "T1") in kinds and ("hit", "T2") in kinds and ("acknowledged", "T2") in kinds, kinds
    links = [e["text"].split(" (by ")[0] for e in events if e["kind"] == "link"]
    assert links[:2] == [  # newest first, in words
        "Link started: the tables take linked progressive wagers (it was stopped)",
        "Link stopped: the linked progressive wager is closed at every table (it was running)",
    ], links
    params = [e["text"] for e in events if e["kind"] == "parameter"]
    assert any(
        p.startswith("Level primary created: seed $1,000.00, reset $1,000.00, increment rate 21%") for p in params
    )
    assert any(
        p.startswith("Table T1 joined the link: asset A-1001, game Six-Card Fortune Pai Gow Poker") for p in params
    )
    assert not any("{" in e["text"] for e in events if e["kind"] in ("link", "parameter"))  # no raw JSON
    assert sum(1 for e in events if e["table"] == "T1" and e["kind"] in ("tilt", "wager")) == 2
    assert "login" in {e["kind"] for e in events}
    only = json.loads(_req(srv, "GET", "/api/events?kind=tilt", cookie=jar).body)["events"]
    assert "tilt" in {e["kind"] for e in only} and {e["kind"] for e in only} <= {"tilt", "wager"}
    body = _req(srv, "GET", "/export/events.csv", cookie=jar).body.decode()
    assert body.startswith("at,kind,table,what") and "TILT shoe: jammed" in body


def test_an_acknowledgement_needs_a_pending_hit_and_is_append_only(make_floor: Any) -> None:
    lap, srv = make_floor()
    s = sql.Identifier(lap.cfg.schema)
    hit = lap.claim("T1", 1, 1, 1, "royal")
    jar, csrf = _login(srv)
    r = _req(srv, "POST", "/api/ack", {"level": "primary", "order": "7", "csrf": csrf}, cookie=jar)
    assert r.status == 409 and b"no such hit" in r.body
    r = _req(srv, "POST", "/api/ack", {"level": "primary", "order": "x", "csrf": csrf}, cookie=jar)
    assert r.status == 400
    amount = json.loads(_req(srv, "GET", "/api/floor", cookie=jar).body)["hits"][0]["cents"]
    lap.send("T1", hit + 1, "paid", {"hit_seq": hit, "cents": amount, "by": "floor:bob"})
    r = _req(srv, "POST", "/api/ack", {"level": "primary", "order": "1", "csrf": csrf}, cookie=jar)
    assert r.status == 409 and b"already paid" in r.body
    lap.store.conn.execute(
        sql.SQL(
            "INSERT INTO {}.floor_acks (level, order_no, person, role, addr) VALUES ('primary', 1, 'x', 'y', 'z')"
        ).format(s)
    )
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        lap.store.conn.execute(sql.SQL("DELETE FROM {}.floor_acks").format(s))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # and no table may read or write them
        lap.table("T1").execute(sql.SQL("SELECT * FROM {}.floor_acks").format(s))


def test_the_sign_needs_no_login_shows_only_the_public_and_may_have_its_own_address(make_floor: Any) -> None:
    import socket

    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        sign_port = sk.getsockname()[1]
    lap, srv = make_floor(sign_at=("127.0.0.1", sign_port), sign_hold_s=30.0)
    _status(lap, "T1", tilts={"shoe": "jammed"})
    lap.claim("T2", 1, 1, 1, "royal")
    pic = json.loads(_req(srv, "GET", "/api/sign").body)
    assert set(pic) == {"now", "live", "link_state", "hold_s", "levels", "hits", "last", "title", "games",
                        "wager_cents", "paytable", "section", "pays"}  # fmt: skip
    assert [(h["table"], h["asset"], h["seat"], h["hand"], h["cents"], h["full"]) for h in pic["hits"]] == [
        ("T2", "A-1002", 1, "Royal", 10_000, False)  # 10 % of the meter: not the whole jackpot
    ]
    assert pic["last"] == pic["hits"][0]  # the last winner, kept after the hit's hold
    # the product: the game by its chapter's name and the progressive wager's pay table (§ 670a.12(d)(1))
    assert pic["title"] == "Six-Card Fortune Pai Gow Poker" and pic["wager_cents"] == 100
    assert (pic["paytable"], pic["section"]) == ("Six-Card Fortune Progressive", "§ 670a.12(d)(1)")
    pays = {p["hand"]: p for p in pic["pays"]}
    assert pays["Five Aces"]["share"] == [1, 1] and pays["Royal Flush"]["share"] == [1, 10]
    assert pays["Straight Flush"]["cents"] == 30_000 and pays["Four of a Kind"]["cents"] == 15_000  # 300/150 for 1
    assert "jammed" not in json.dumps(pic)
    assert srv.sign_address == ("127.0.0.1", sign_port)
    c = http.client.HTTPConnection("127.0.0.1", sign_port, timeout=10)
    for method, path, want in (("GET", "/sign", 200), ("GET", "/api/sign", 200), ("GET", "/api/floor", 404)):
        c.request(method, path)
        r = c.getresponse()
        r.read()
        assert r.status == want, (path, r.status)
    c.request("POST", "/login", "person=alice&pin=4821", {"Origin": f"http://127.0.0.1:{sign_port}"})
    r = c.getresponse()
    r.read()
    assert r.status in (404, 405)
    c.close()


@pytest.mark.slow
def test_a_login_takes_as_long_for_a_made_up_name_as_for_a_real_one(make_floor: Any) -> None:
    _lap, srv = make_floor()

    def took(person: str) -> float:
        t0 = time.perf_counter()
        token, _ = srv.login(person, "0000", "127.0.0.1")
        assert token is None
        return time.perf_counter() - t0

    known, unknown = [], []
    for i in range(8):  # interleaved, so the machine's load falls on both alike
        # real names, wrong PINs, never five in a row for one name (a locked name answers unchecked,
        # and so does a made-up name locked the same way)
        known.append(took(("tom", "alice")[i % 2]))
        unknown.append(took(f"nobody{i}"))
    k, u = statistics.median(known), statistics.median(unknown)
    # without the dummy scrypt check an unknown name answered in a fraction of a known one's time
    assert 0.6 < u / k < 1.6, (k, u)


def test_rows_for_made_up_names_are_capped_and_real_names_are_kept(make_lap: Any, pg_dsn: str, tmp_path: Any) -> None:
    from controller.lap.floor import FloorData
    from controller.lap.floorlock import Lockouts

    lap = make_lap(tables=1)
    data = FloorData(pg_dsn, lap.cfg.schema)
    try:
        lock = Lockouts(data.conn, lap.cfg.schema, max_unknown=10)
        lock.attempt("alice", known=True)
        for i in range(40):
            lock.attempt(f"guess{i}", known=False)
        names = [p for p, _n, _left in lock.counts()]
        assert "alice" in names and len(names) == 11
        assert "guess39" in names and "guess0" not in names  # the least recently tried went first
    finally:
        data.close()


def test_parameter_changes_read_as_sentences() -> None:
    import json as j

    from controller.lap.floor_words import change_sentence

    def said(what: str, key: str, old: Any, new: Any) -> str:
        return change_sentence(j.dumps({"what": what, "key": key, "old": old, "new": new, "by": "lap_owner"}))

    level = {"level": "primary", "seed_cents": 500000, "reset_cents": 500000, "rate_num": 21, "rate_den": 100,
             "reserve_num": 0, "reserve_den": 1, "limit_cents": None, "at_limit": "reserve", "max_wager_cents": 500,
             "meter_pays": ["1/1", "1/10"]}  # fmt: skip
    got = said("levels", "primary", level, {**level, "rate_num": 1, "rate_den": 5, "limit_cents": 25_000_000})
    assert got == ("Level primary changed: increment rate 21% → 20%; limit none → $250,000.00 (by lap_owner)")
    assert said(
        "members", "T07", {"closed": "the LAP refused record 9 (hit): twice"}, {"closed": None, "note": "ok"}
    ) == (
        "Table T07 reopened by the LAP's operator (it was closed: the LAP refused record 9 (hit): twice); note: ok"
        " (by lap_owner)"
    )
    assert said("link", "reason", None, "the meters disagree").startswith("Why the link is inoperable: the meters")
    assert change_sentence("{not json") == "{not json" and change_sentence("[1]") == "[1]"
    assert said("levels", "primary", {"rate_num": "x"}, {"rate_num": 1}).startswith("levels primary changed")


def test_a_hits_payout_slip_from_the_floor_view(make_floor: Any, tmp_path: Any) -> None:
    """The hit row's slip: the LAP's figures (meter before and after, its order of the hit), the
    casino, signature lines; for floor staff only; an unknown hit is a 404."""
    import shutil
    import subprocess

    pytest.importorskip("reportlab")
    lap, srv = make_floor(casino="Keystone Riverside")
    for seat in (1, 2):
        lap.send("T1", seat, "contribution", {"wager": 1000, "round": 1, "seat": seat})
    lap.claim("T2", 1, 7, 4, "royal-flush")
    assert _req(srv, "GET", "/slip/primary/1.pdf").status == 401  # the sign's public; slips are not
    jar, _csrf = _login(srv)
    r = _req(srv, "GET", "/slip/primary/1.pdf", cookie=jar)
    assert r.status == 200 and r.getheader("Content-Type") == "application/pdf" and r.body[:5] == b"%PDF-"
    assert 'filename="slip-T2-round7-seat4.pdf"' in r.getheader("Content-Disposition")
    assert _req(srv, "GET", "/slip/primary/9.pdf", cookie=jar).status == 404
    assert _req(srv, "GET", "/slip/primary/x.pdf", cookie=jar).status == 404
    if shutil.which("pdftotext") is None:
        return
    (tmp_path / "s.pdf").write_bytes(r.body)
    text = " ".join(subprocess.run(["pdftotext", "-layout", str(tmp_path / "s.pdf"), "-"], capture_output=True,
                                   text=True, check=True).stdout.split())  # fmt: skip
    # the meter: $1,000 seed + 21% of $20 and a cent = $1,004.20 shown; 10% of it paid
    for want in ["Keystone Riverside", "$100.42", "Table T2 · seat 4 · Royal Flush · round 7",
                 "Meter before the hit $1,004.20", "Meter after the hit $903.78", "the LAP's hit #1",
                 "NOT YET VALIDATED", "Dealer: Date:", "Floorperson (validated): Date:"]:  # fmt: skip
        assert want in text, want
