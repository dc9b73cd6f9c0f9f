"""A whole technician-console session over a pty, driven the way a
person at picocom would: login by role and PIN, tab completion, every command,
role checks, bad input, and the event log entry each command leaves."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest

from controller.console.server import ConsoleLimits
from controller.daemon.background import ConsoleOptions
from tests.hil.console.conftest import Term


def toml(doc: dict[str, Any]) -> str:
    def val(v: Any) -> str:
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, str):
            return '"' + v + '"'
        return str(v).lower() if isinstance(v, bool) else str(v)

    return "\n".join(f"{k} = {val(v)}" for k, v in doc.items()) + "\n"


def rig_config(rig: Any, tmp: Path, seed: str = "$5,000") -> Path:
    """A hardware file equal to the rig's, with the profile's seed changed."""
    from config import CONFIG_DIR
    from hil.rig import PINS, rig_key_file

    prof = (
        (CONFIG_DIR / "tables" / "six-card-fortune-progressive.toml")
        .read_text()
        .replace('seed = "$5,000"', f'seed = "{seed}"')
    )
    (tmp / "profile.toml").write_text(prof)
    doc = {
        "table": {
            "id": "SIM-01",
            "profile": str(tmp / "profile.toml"),
            "state_dir": str(rig.hw.state_dir),
            "software_record": str(rig.hw.software_record),
            "casino": rig.hw.casino,
            "asset": rig.hw.asset,
            "location": rig.hw.location,
        },
        "gpio": {"pin_factory": "mock", **PINS},
        "serial": {s.device: {"port": s.path} for s in rig.sims},
        "ledger": {"key_file": str(rig_key_file(rig.state_dir).resolve())},
    }
    path = tmp / "table.toml"
    path.write_text(toml(doc))
    return path


def console_commands(rig: Any) -> list[dict[str, Any]]:
    return [d for _r, _k, d in rig.ledger_events(kinds=("console.command",))]


@pytest.mark.slow
def test_technician_session_every_command(console_rig, tmp_path):
    """Status, meters, history, hits, events, diag, config, clear, verify, outoforder, logout;
    each reply checked; each command written to the event log with the role."""
    from hil.people import People

    rig, con = console_rig()
    t = Term(con.pty_path)
    try:
        # tab completion of the role, then the PIN without echo
        t.send("tech\t")
        t.expect("technician ")
        t.send("\r")
        t.expect("PIN: ")
        t.send("314159\r")
        assert "314159" not in t.expect("technician> ")  # the PIN is never echoed
        # tab completion of a command and of its argument
        t.send("he\t")
        t.expect("help ")
        t.send("\r")
        out = t.expect(r"\r\nSIM-01 technician> ")
        for name in (
            "status",
            "meters",
            "history",
            "hits",
            "events",
            "diag",
            "config",
            "clear",
            "verify",
            "outoforder",
            "logout",
        ):
            assert f"\r\n  {name}" in out
        t.send("diag sh\t")
        t.expect("diag sh")
        t.expect("shaker  shoe\r\nSIM-01 technician> diag sh")  # two candidates listed, line redrawn
        t.send("\x15")  # Ctrl-U: kill the line
        assert t.cmd("") == ""

        status = t.cmd("status")
        assert "state: open_for_wagers" in status and "tilts: none" in status
        assert "tablectl 0.1.0" in status and f"sha256 {rig.service.self_check.digest}" in status
        assert "shoe" in status and "link up" in status and "self-checks: config pass, ledger pass" in status
        assert "primary: $5,000.00" in t.cmd("meters")

        people = People(rig, random.Random(3))
        played = [people.play_round() for _ in range(2)]
        hist = t.cmd("history")
        assert f"round {played[0]:>5} complete" in hist and f"round {played[1]:>5} complete" in hist
        detail = t.cmd(f"history {played[1]}")
        assert detail.startswith(f"round {played[1]}: complete") and "dice " in detail
        assert t.cmd("hits").startswith("primary: last ")
        assert "error: no round 999" in t.cmd("history 999")
        ev = t.cmd("events 3 console.command")
        assert ev.count("console.command") == 3 and 'command="history"' in ev
        assert "no events of kind 'tilt'" in t.cmd("events tilt")

        # diagnostics
        before = {n: rig.table.dev.lights.mode(n) for n in rig.service.light_names}
        lights = t.cmd("diag lights")
        assert f"all {len(before)} on" in lights and "all off" in lights and "restored" in lights
        assert {n: rig.table.dev.lights.mode(n) for n in rig.service.light_names} == before
        threading.Timer(0.3, rig.place, (2,)).start()
        threading.Timer(0.6, rig.remove, (2,)).start()
        sensors = t.cmd("diag sensors 2")
        assert "bet.progressive.2 ACTIVE" in sensors and "bet.progressive.2 idle" in sensors
        assert "shoe: PASS" in t.cmd("diag shoe")
        shaker = t.cmd("diag shaker")
        assert "shaker: PASS" in shaker and "shaken 5000 ms" in shaker
        assert "rng: PASS" in t.cmd("diag rng")

        # configuration
        assert "table_id = SIM-01" in t.cmd("config show")
        assert "error: no configuration file" in t.cmd("config check")
        example = Path(__file__).resolve().parents[3] / "config" / "examples" / "table.toml"
        check = t.cmd(f"config check {example}")
        assert "table_id: SIM-01 -> PG-01" in check and "need a restart" in check
        applied = t.cmd(f"config apply {example}")
        # the report's casino and asset need a restart too: config.loaded records them at start-up
        assert applied.startswith("refused: asset, casino, gpio.pin_factory") and "while running" in applied
        same = rig_config(rig, tmp_path)
        assert "no changes from the running configuration" in t.cmd(f"config check {same}")
        changed = rig_config(rig, tmp_path, seed="$6,000")
        assert "profile.progressive.seed_cents: 500000 -> 600000" in t.cmd(f"config check {changed}")
        applied = t.cmd(f"config apply {changed}")
        assert "applied 1 change(s)" in applied
        ev = rig.ledger_events(kinds=("config.applied",))[-1][2]
        assert ev["changed"]["profile.progressive.seed_cents"] == ["500000", "600000"]
        adjust = rig.ledger_events(kinds=("meter.adjust",))[-1][2]
        assert adjust["seed"] == 600000  # later reseeds use the new seed

        # verify, clear, out of order
        assert "recorded digest:   none" in t.cmd("verify")
        assert t.cmd("clear").startswith("error: usage: clear REASON")
        assert "refused: the table is not in tilt" in t.cmd("clear door closed")
        rig.service.call(rig.table.raise_tilt, "door", "cabinet door opened")
        assert "tilts: door: cabinet door opened" in t.cmd("status")
        cleared = t.cmd('clear "door closed, checked inside"')
        assert "cleared: door (cabinet door opened)" in cleared
        rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 10)
        cleared_ev = rig.ledger_events(kinds=("tilt.cleared",))[-1][2]
        assert cleared_ev["reason"] == "door closed, checked inside" and cleared_ev["by"] == "console:technician"
        assert "error: unknown device 'dice'" in t.cmd("outoforder dice rng")
        assert "refused: 'manual' is not an alternative for the shaker" in t.cmd("outoforder shaker manual")
        assert "shaker marked out of order; rng used instead (Sec. 670a.13(n))" in t.cmd("outoforder shaker rng")
        assert "out of order: shaker (using rng)" in t.cmd("status")
        assert "refused: the shoe is not out of order" in t.cmd("inservice shoe")
        assert t.cmd("inservice shaker") == "shaker back in service"
        assert "out of order" not in t.cmd("status")
        assert rig.ledger_events(kinds=("device.in_service",))[-1][2]["device"] == "shaker"

        # bad input: one line, nothing changes
        n = len(rig.ledger_events())
        assert t.cmd("frobnicate now") == "error: unknown command 'frobnicate'; type help"
        assert t.cmd("meters please") == "error: usage: meters"
        assert t.cmd('events "unterminated').startswith("error: cannot parse the line")
        assert t.cmd("events 0") == "error: COUNT must be 1..500, got 0"
        assert len(rig.ledger_events()) == n + 4  # only the four rejections, logged

        t.send("logout\r")
        t.expect("logged out")
        t.expect("role: ")
    finally:
        t.close()
    log = console_commands(rig)
    assert all(d["role"] == "technician" and d["console"] == "pty" for d in log)
    names = [d["command"] for d in log]
    for name in (
        "help",
        "status",
        "meters",
        "history",
        "hits",
        "events",
        "diag",
        "config",
        "verify",
        "clear",
        "outoforder",
        "frobnicate",
        "logout",
    ):
        assert name in names
    outcomes = {(d["command"], d["outcome"]) for d in log}
    assert ("clear", "refused") in outcomes and ("clear", "ok") in outcomes and ("frobnicate", "rejected") in outcomes
    kinds = [k for _r, k, _d in rig.ledger_events(kinds=("console.login", "console.logout"))]
    assert kinds == ["console.login", "console.logout"]


def test_roles_are_checked(console_rig):
    """A dealer sees status and meters but cannot clear, diag or read the history; the denial is logged."""
    rig, con = console_rig()
    t = Term(con.pty_path)
    try:
        assert "logged in as dealer" in t.login("dealer")
        assert "state: open_for_wagers" in t.cmd("status")
        assert t.cmd("clear because").startswith("error: clear needs the technician role")
        assert t.cmd("history").startswith("error: history needs the floorperson or technician role")
        helped = t.cmd("help")
        assert "status" in helped and "clear" not in helped and "diag" not in helped
        t.send("logout\r")
        t.expect("role: ")
        assert "logged in as floorperson" in t.login("floorperson")
        assert t.cmd("config apply x").startswith("error: config apply needs the technician role")
        assert t.cmd("diag rng").startswith("error: diag needs the technician role")
    finally:
        t.close()
    denied = [d for d in console_commands(rig) if d["outcome"] == "denied"]
    assert {(d["role"], d["command"]) for d in denied} == {
        ("dealer", "clear"),
        ("dealer", "history"),
        ("floorperson", "diag"),
    }


def test_idle_session_is_logged_out(console_rig):
    rig, con = console_rig(idle_s=0.5)
    t = Term(con.pty_path)
    try:
        t.login("technician")
        t.expect("logged out: idle")
        t.expect("role: ")
    finally:
        t.close()
    assert rig.ledger_events(kinds=("console.logout",))[-1][2]["why"] == "idle"


def test_lockout_after_five_failures_survives_restart(tmp_path, monkeypatch):
    """Five wrong PINs lock that role at that console; a restart keeps the lock with its
    remaining time (monotonic clock); it ends after the period.  The dealer's
    failures never lock the technician out, the PIN typed after a lock-out is never echoed,
    and the PIN itself is never written anywhere."""
    from controller.core.log import configure
    from hil.rig import Rig
    from tests.hil.console.conftest import set_pins

    configure(level="warning", json=True)
    state = tmp_path / "state"
    state.mkdir()
    set_pins(state)
    now = [1_000_000.0]
    opts: ConsoleOptions = {
        "pty": True,
        "limits": ConsoleLimits(fail_delay_s=0.0, lockout_s=600),
        "clock": lambda: now[0],
    }
    rig = Rig(state, seed=2).start()
    try:
        con = rig.service.start_console(**opts)
        assert con.pty_path is not None
        t = Term(con.pty_path)
        for _ in range(5):
            assert "error: wrong PIN" in t.login("dealer", "3333")
        # the dealer is locked; the technician is not, and logs in (which resets nothing of the dealer's)
        assert "logged in as technician" in t.login("technician")
        t.send("logout\r")
        t.expect("role: ")
        for _ in range(4):
            assert "error: wrong PIN" in t.login("technician", "86420975")
        assert "technician locked at this console for 10 min after 5 failed logins" in t.login("technician", "86420976")
        out = t.login("technician", "3333")  # the PIN is asked for without echo, locked or not
        assert "technician locked at this console after 5 failed logins; try again in 10 min" in out
        assert "3333" not in out
        t.send("3333\r")  # a PIN typed at the role prompt is not echoed either
        assert "3333" not in t.expect("role: ")
        now[0] += 200
        t.close()
    finally:
        rig.stop()
    rig = Rig(state, seed=2).start()
    try:
        now[0] = 5.0  # a new boot: the monotonic clock starts again; the remaining time carries over
        con = rig.service.start_console(**opts)
        assert con.pty_path is not None
        t = Term(con.pty_path)
        assert "try again in 6 min 40 s" in t.login("technician")  # still locked after the restart
        now[0] += 401
        assert "logged in as technician" in t.login("technician")
        t.close()
        events = rig.ledger_events(kinds=("console.login", "console.locked"))
    finally:
        rig.stop()
    kinds = [(k, d.get("role"), d.get("ok")) for _r, k, d in events]
    assert kinds[:6] == [("console.login", "dealer", False)] * 5 + [("console.locked", "dealer", None)]
    assert kinds[-1] == ("console.login", "technician", True)
    # never a PIN where one could be written: the ledger's records, the PIN file, the console's lock
    # file (as a token: a MAC or a salt in hex may well contain the digits "3333" by chance)
    written = written_tokens(state)
    assert written, "nothing was read: the check would prove nothing"
    for pin in ("86420975", "86420976", "314159", "3333"):
        assert pin not in written, pin


def _tokens(value: object, out: set[str]) -> None:
    """Every run of letters and digits in ``value`` (JSON/TOML data, walked)."""
    import re

    if isinstance(value, dict):
        for k, v in value.items():
            _tokens(k, out)
            _tokens(v, out)
    elif isinstance(value, list | tuple):
        for v in value:
            _tokens(v, out)
    elif value is not None:
        out.update(re.findall(r"[0-9A-Za-z]+", str(value)))


def written_tokens(state: Path) -> set[str]:
    """The tokens of everything tablectl writes that could hold a typed PIN: every event's data in
    the ledger (the console's records among them), and the state directory's TOML and JSON files
    (the PIN file: salted hashes only; the console's lock file)."""
    import json
    import sqlite3
    import tomllib

    out: set[str] = set()
    db = sqlite3.connect(f"file:{state / 'ledger.sqlite3'}?mode=ro", uri=True)
    try:
        for kind, data in db.execute("SELECT kind, data FROM events"):
            _tokens([kind, json.loads(data)], out)
    finally:
        db.close()
    for p in state.iterdir():
        if p.suffix == ".toml":
            _tokens(tomllib.loads(p.read_text()), out)
        elif p.suffix == ".json":
            _tokens(json.loads(p.read_text()), out)
    return out


def test_a_technician_lifts_a_lock_and_it_is_audited(console_rig):
    rig, con = console_rig()
    t = Term(con.pty_path)
    for _ in range(5):
        t.login("dealer", "3333")
    assert "dealer locked" in t.login("dealer")
    assert "logged in as technician" in t.login("technician")
    assert "usage: unlock ROLE REASON" in t.cmd("unlock dealer")
    assert "unlocked dealer (was locked at: pty)" in t.cmd("UNLOCK dealer forgot the new PIN")
    t.send("logout\r")
    t.expect("role: ")
    assert "logged in as dealer" in t.login("dealer")
    (ev,) = [d for _r, k, d in rig.ledger_events(kinds=("console.unlocked",))]
    assert ev["role"] == "dealer" and ev["by"] == "technician" and ev["reason"] == "forgot the new PIN"


def test_habits_of_a_new_user(console_rig):
    """Commands in any case, ``?`` for help, ``exit`` and ``quit`` log out, a line
    over the limit is refused with a message (before: unknown command, or silently cut)."""
    rig, con = console_rig()
    t = Term(con.pty_path)
    assert "logged in as dealer" in t.login("dealer")
    assert "state: open_for_wagers" in t.cmd("STATUS")
    assert "status" in t.cmd("?")
    t.send("status " + "x" * 250 + "\r")
    assert "line longer than 200 characters refused" in t.expect(r"SIM-01 dealer> ")
    for word in ("exit", "QUIT"):
        t.send(word + "\r")
        t.expect("role: ")
        assert "logged in as dealer" in t.login("dealer")
    events = [d for _r, k, d in rig.ledger_events(kinds=("console.logout",))]
    assert [e["why"] for e in events] == ["logout", "logout"]


def test_a_typo_gets_a_did_you_mean(console_rig):
    """An unknown command names the closest ones this role may use (before: only
    "unknown command 'staus'; type help")."""
    rig, con = console_rig()
    t = Term(con.pty_path)
    assert "logged in as dealer" in t.login("dealer")
    out = t.cmd("staus")
    assert "unknown command 'staus' (did you mean 'status'?)" in out
    assert "did you mean 'clear'" not in t.cmd("clera")  # dealer may not clear: not suggested to a dealer
    assert "(did you mean 'status'?)" in t.cmd("help staus")
