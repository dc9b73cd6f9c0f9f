"""The floor view and the common progressive sign in a real browser: Debian's
Chromium, headless, driven from pytest over the DevTools pipe (tests/link/cdp.py), against a running
sim of four linked tables with ``--hit-rate`` (real hits: five aces dealt first, hil/luck.py), its
floor view and its sign.

The floor view: wrong credentials and a dealer's PIN are refused; a floorperson logs in and sees the
four tables with their states and games in words, rates said to come after a quarter hour of play,
parameter changes as sentences (no raw JSON), no database details in the header (they are in the
technician's panel); a real hit raises the pending-hit alert (visible, and audible: the page's beep
runs, Chromium started with autoplay allowed as a kiosk would be) with the hand in words and a link
to its payout slip (a PDF); the floorperson acknowledges it, which the LAP records under their name
(append-only), and the simulated floorperson then validates it at the table: the hit row reads paid.

The sign (``/sign``, no login) on a 1920 x 1080 screen: the game's name, the meter, the pay table of
the progressive wager (each meter pay with what it pays now), the attract rotation, no text smaller
than 36 px (readable from 5 m); a new hit is celebrated full screen within 1 s of the LAP's decision
(the page notes when it drew it, the database when it decided it: one machine's clock) with the
winning table, seat, hand and amount, held for the sign's hold, then back to the meters; the link
stopped shows CLOSED over everything.

Screenshots of each are saved in the test's directory and checked not blank; ``TABLECTL_SCREENSHOTS=1``
also writes them to docs/ (floor-view.png, sign.png, sign-hit.png, sign-closed.png)."""

from __future__ import annotations

import io
import json
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from tests.link.cdp import Browser, chromium, png_luma

EXE = chromium()
DOCS = Path(__file__).resolve().parents[2] / "docs"
HOLD_S = 8.0  # the sign's hold for this run (the product's default is 30 s)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        EXE is None, reason="no Chromium (bootstrap installs Debian's `chromium` when run as root; else apt-get it)"
    ),
]


def _submit(b: Browser, person: str, pin: str) -> None:
    b.eval(
        f"document.getElementById('person').value = {json.dumps(person)};"
        f"document.getElementById('pin').value = {json.dumps(pin)};"
        "document.querySelector('form.login').submit(); true"
    )
    time.sleep(0.3)
    b.wait("document.readyState === 'complete'")


def _shot(png: bytes, name: str, where: Path) -> None:
    """A screenshot kept (the test's directory; docs/ with TABLECTL_SCREENSHOTS=1), checked not blank."""
    w, h, luma = png_luma(png)
    assert w >= 1000 and h >= 600, (w, h)
    assert statistics.pvariance(luma[::7]) > 100, f"the screenshot {name} is blank"
    (where / name).write_bytes(png)
    if os.environ.get("TABLECTL_SCREENSHOTS"):
        (DOCS / name).write_bytes(png)


def _owner(dsn: str, cfg: Any, text: str, params: Any = None) -> list[Any]:
    from controller.lap.lap import connect

    with connect(dsn) as c:
        cur = c.execute(sql.SQL(text).format(s=sql.Identifier(cfg.schema)), params)
        return list(cur.fetchall()) if cur.description else []


class _Sim:
    """The four-table linked sim with --hit-rate and its floor view, on a thread."""

    def __init__(self, dsn: str):
        from hil.linksim import LinkSimSettings, run_link_sim

        self.stop = threading.Event()
        self.seen: dict[str, Any] = {}
        self.out = io.StringIO()
        self.rc: list[int] = []
        self.thread = threading.Thread(
            target=lambda: self.rc.append(
                run_link_sim(
                    LinkSimSettings(
                        tables=4, rounds=1000, seed=5, dsn=dsn, floor=("127.0.0.1", 0), hit_rate=0.2, sign_hold_s=HOLD_S
                    ),
                    out=self.out,
                    stop=self.stop,
                    on_floor=lambda server, cfg, _dsn: self.seen.update(server=server, cfg=cfg),
                )
            )
        )
        self.thread.start()
        end = time.monotonic() + 60
        while "server" not in self.seen and time.monotonic() < end:
            time.sleep(0.1)

    def end(self) -> None:
        self.stop.set()
        self.thread.join(180)


def _floor_checks(b: Browser, url: str, dsn: str, cfg: Any, shots: Path) -> None:
    b.navigate(url)
    _submit(b, "floor", "1111")
    assert "Refused: wrong name or PIN" in b.eval("document.body.innerText")
    assert b.eval("document.getElementById('tables')") is None
    _submit(b, "dealer", "9753")
    assert "Refused: a dealer may not open the floor view" in b.eval("document.body.innerText")
    _submit(b, "floor", "2468")
    b.wait("document.querySelectorAll('#tables tr.tablerow').length === 4", 30)
    ids = b.eval("[...document.querySelectorAll('#tables tr.tablerow')].map(r => r.dataset.table)")
    assert ids == ["T01", "T02", "T03", "T04"]
    b.wait("document.querySelector('#tables').innerText.includes('Six-Card Fortune Pai Gow Poker')", 30)
    text = b.eval("document.body.innerText")
    assert "open_for_wagers" not in text and "six-card-fortune" not in text  # states and games in words
    assert "15 minutes" in b.eval("document.getElementById('daynote').textContent")  # rates: said when
    header = b.eval("document.querySelector('header').innerText")
    assert "replication" not in header.lower() and "heartbeat" not in header.lower(), header
    b.eval("window.notReloaded = true")  # gone if the page reloads
    # a real hit (the sim's --hit-rate): the alert, visible and audible, the hand in words, its slip
    b.wait("document.querySelector('#alerts .alert.new') !== null", 90)
    alert = b.eval("document.querySelector('#alerts .alert.new').innerText")
    assert "PENDING HIT" in alert and "Table T0" in alert and "seat" in alert and "Acknowledge" in alert, alert
    assert ("Five Aces" in alert or "Royal Flush" in alert) and "-" not in alert.split("seat")[1], alert
    b.wait("Number(document.body.dataset.beeps || 0) >= 1", 10)
    b.wait("document.querySelector('#events').innerText.includes('Link started')", 20)
    log = b.eval("document.querySelector('#events').innerText")
    assert "joined the link: asset A-10001, game Six-Card Fortune Pai Gow Poker" in log and "{" not in log, log
    slip = b.eval(
        "fetch(document.querySelector('#alerts .alert.new a.slip').href, {credentials: 'same-origin'})"
        ".then(async r => [r.status, r.headers.get('content-type'), new TextDecoder().decode("
        "(await r.arrayBuffer()).slice(0, 5))])"
    )
    assert slip == [200, "application/pdf", "%PDF-"], slip
    _shot(b.screenshot(full=True), "floor-view.png", shots)
    # acknowledged under the person's name, recorded in the LAP's database; then validated and paid
    key = b.eval("document.querySelector('#alerts .alert.new').dataset.hit")
    # the acknowledged alert may show for well under a second: the simulated floorperson validates the
    # hit a quarter second after it is acknowledged, and the page then drops it (no longer pending), so
    # the page's own observer keeps what it showed
    b.eval(_OBSERVE_ACK.replace("KEY", key))
    # that alert's own button: the sim goes on playing, and a newer hit's alert may come first by now
    b.eval(f"document.querySelector('#alerts .alert.new[data-hit=\"{key}\"] button.ack').click(); true")
    try:
        b.wait("window.ackSeen !== null", 30)
    except TimeoutError:
        raise AssertionError(_ack_story(b, dsn, cfg, key)) from None
    assert "acknowledged by floor" in b.eval("window.ackSeen"), b.eval("window.ackSeen")
    level, order = key.split("/")
    acks = _owner(
        dsn, cfg, "SELECT person, role FROM {s}.floor_acks WHERE level = %s AND order_no = %s", (level, order)
    )
    assert acks == [("floor", "floorperson")], acks
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _owner(dsn, cfg, "UPDATE {s}.floor_acks SET person = 'someone else'")
    b.wait(f"document.querySelector('#alerts .alert[data-hit=\"{key}\"]') === null", 60)  # validated, paid
    b.wait("document.querySelector('#hits').innerText.includes('validated by key switch')", 20)
    # the technician's panel has the database's details
    assert "Replication" in b.eval("document.getElementById('techlist').textContent")  # folded away
    assert b.eval("window.notReloaded === true")
    # every pending hit acknowledged: the tables play on and hit again (the sign's celebration below)
    b.eval("document.querySelectorAll('#alerts .alert.new button.ack').forEach(x => x.click()); true")


#: keeps the text of the acknowledged alert of the hit KEY the moment the page shows it
_OBSERVE_ACK = """
window.ackSeen = null;
(() => {
  const grab = () => {
    const a = document.querySelector('#alerts .alert.acked[data-hit="KEY"]');
    if (a && window.ackSeen === null) window.ackSeen = a.innerText;
  };
  new MutationObserver(grab).observe(document.getElementById('alerts'), {childList: true, subtree: true});
  grab();
})();
true
"""


def _ack_story(b: Browser, dsn: str, cfg: Any, key: str) -> str:
    """What the page and the LAP's database say of an acknowledgement the page never showed."""
    level, order = key.split("/")
    acks = _owner(dsn, cfg, "SELECT person FROM {s}.floor_acks WHERE level = %s AND order_no = %s", (level, order))
    paid = _owner(
        dsn,
        cfg,
        "SELECT p.seq FROM {s}.hits h JOIN {s}.payouts p ON p.table_id = h.table_id AND p.hit_seq = h.seq"
        " WHERE h.level = %s AND h.order_no = %s",
        (level, order),
    )
    alerts = b.eval("[...document.querySelectorAll('#alerts .alert')].map(a => a.className + ' ' + a.dataset.hit)")
    problem = b.eval("document.getElementById('problem').textContent")
    return f"hit {key}: acks {acks}, payouts {paid}; the page's alerts {alerts}, its problem line {problem!r}"


#: every element with text of its own, its font size in px (the smallest must read from 5 m)
_SMALLEST_TEXT = """
Math.min(...[...document.querySelectorAll('body *')].filter(e => e.offsetParent !== null && !e.closest('[hidden]')
  && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
  .map(e => parseFloat(getComputedStyle(e).fontSize)))
"""


def _sign_checks(b: Browser, url: str, dsn: str, cfg: Any, shots: Path) -> None:
    b.viewport(1920, 1080)
    b.navigate(url + "sign")
    b.wait("document.body.dataset.state === 'open' && document.querySelectorAll('#meters .lv').length === 1", 30)
    b.wait("document.body.dataset.celebrating === 'no'", HOLD_S + 30)
    assert b.eval("document.getElementById('game').textContent") == "Six-Card Fortune Pai Gow Poker"
    assert b.eval("document.querySelector('#meters .amt').textContent").startswith("$")
    pays = b.eval("[...document.querySelectorAll('#pays .pay')].map(r => r.innerText.replace(/\\s+/g, ' ').trim())")
    assert len(pays) == 7 and pays[0].startswith("Five Aces the jackpot $") and pays[2] == "Straight Flush $300", pays
    assert b.eval("document.getElementById('payhead').textContent") == "PAYS ON A $1 PROGRESSIVE WAGER"
    assert b.eval(_SMALLEST_TEXT) >= 36, "text too small to read from 5 m on a 1080p screen"
    time.sleep(1.0)  # the attract slide's fade-in
    _shot(b.screenshot(), "sign.png", shots)
    slides = {b.eval("document.getElementById('attract').dataset.slide")}  # the attract rotation
    end = time.monotonic() + 20
    while len(slides) < 2 and time.monotonic() < end:
        time.sleep(0.5)
        slides.add(b.eval("document.getElementById('attract').dataset.slide"))
    assert len(slides) >= 2, slides
    # a new hit: celebrated within 1 s of the LAP's decision, held for the hold, then the meters again
    b.wait("document.querySelector('#celebrate .win') !== null", 120)
    key = b.eval("document.querySelector('#celebrate .win').dataset.hit")
    level, order = key.split("/")
    shown_ms = float(b.eval("Number(document.querySelector('#celebrate .win').dataset.shownAt)"))
    (row,) = _owner(
        dsn,
        cfg,
        "SELECT extract(epoch FROM decided_at), table_id, seat FROM {s}.hits WHERE level = %s AND order_no = %s",
        (level, int(order)),
    )
    decided, table, seat = row
    latency = shown_ms / 1000 - float(decided)
    assert latency < 1.0, f"the sign showed the hit {latency:.3f} s after the LAP's decision"
    text = b.eval("document.querySelector('#celebrate').innerText")
    assert f"TABLE {table}" in text and f"SEAT {seat}" in text and "WINNER" in text and "$" in text, text
    assert "FIVE ACES" in text.upper() or "ROYAL FLUSH" in text.upper(), text
    assert b.eval("getComputedStyle(document.getElementById('celebrate')).display") != "none"
    time.sleep(0.8)
    _shot(b.screenshot(), "sign-hit.png", shots)
    print(f"sign: hit shown {latency * 1000:.0f} ms after the LAP's decision")
    b.wait("document.body.dataset.celebrating === 'no'", HOLD_S + 30)
    held = time.time() - shown_ms / 1000
    assert held >= HOLD_S - 1, f"the celebration ended after {held:.1f} s"
    assert b.eval("document.getElementById('celebrate').hidden") and b.eval("document.body.dataset.state") == "open"
    # the link stopped: the sign says CLOSED over everything
    _owner(dsn, cfg, "UPDATE {s}.link SET state = 'stopped'")
    b.wait("document.body.dataset.state === 'closed' && !document.getElementById('closed').hidden", 10)
    assert "CLOSED" in b.eval("document.getElementById('closed').innerText")
    time.sleep(0.3)
    _shot(b.screenshot(), "sign-closed.png", shots)
    _owner(dsn, cfg, "UPDATE {s}.link SET state = 'running'")


@pytest.mark.soak
def test_floor_view_and_sign_in_chromium(pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the sign waits for a new hit while nobody acknowledges the pending ones: each table's
    # floorperson gives up waiting for the floor view after 20 s here, not a minute
    monkeypatch.setattr("hil.linksim.ACK_WAIT_S", 20.0)
    sim = _Sim(pg_dsn)
    assert EXE is not None
    b = Browser(EXE, tmp_path / "profile", size=(1440, 900), args=("--autoplay-policy=no-user-gesture-required",))
    try:
        host, port = sim.seen["server"].address
        url = f"http://{host}:{port}/"
        b.attach()
        _floor_checks(b, url, pg_dsn, sim.seen["cfg"], tmp_path)
        _sign_checks(b, url, pg_dsn, sim.seen["cfg"], tmp_path)
    finally:
        b.close()
        sim.end()
    assert sim.rc == [0] and "link: OK (4 tables" in sim.out.getvalue(), sim.out.getvalue()
