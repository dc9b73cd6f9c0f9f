"""Runtime problems at start-up never crash-loop: a garbage, truncated or
read-only ledger and a missing serial port leave ``tablectl run`` up with the
table closed under a latched tilt naming the problem, READY=1 sent to systemd
(the status says why) and the watchdog pinged; no traceback; SIGTERM stops it
with status 0.  Run as systemd runs it: a fresh process with NOTIFY_SOCKET."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from controller.boot import selfcheck

ROOT = Path(__file__).resolve().parents[3]


def _config(tmp_path: Path, state: Path) -> Path:
    text = (
        (ROOT / "config/examples/table.toml")
        .read_text()
        .replace('pin_factory = "lgpio"', 'pin_factory = "mock"')
        .replace('state_dir = "/var/lib/tablectl"', f"state_dir = {json.dumps(str(state))}")
        .replace('"/etc/tablectl/software.json"', json.dumps(str(state / "software.json")))
        .replace('"/dev/tablectl-', json.dumps(str(tmp_path / "no-such-dev")).rstrip('"') + "-")
    )
    # the ledger's key in a file of the test's own ([ledger] key_file), not /etc/tablectl/ledger.key
    from controller.books.ledgerkey import init_key

    key_file = tmp_path / "ledger.key"
    if not key_file.exists():
        init_key(key_file)
    text += f"\n[ledger]\nkey_file = {json.dumps(str(key_file))}\n"
    cfg = tmp_path / "table.toml"
    cfg.write_text(text)
    return cfg


def _run_until_ready(tmp_path: Path, cfg: Path) -> tuple[str, str, int]:
    """Start ``tablectl run``; return (READY message, combined output, exit status after SIGTERM)."""
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(30)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(cfg)],
        env={**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify"), "WATCHDOG_USEC": "2000000"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    msgs: list[str] = []
    try:
        try:
            while not any(m.startswith("READY=1") for m in msgs):
                msgs.append(notify.recv(4096).decode())
            while "WATCHDOG=1" not in msgs:  # the loop is alive after READY, not a process on its way out
                msgs.append(notify.recv(4096).decode())
        except TimeoutError:
            pass
        alive = proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()
    ready = next((m for m in msgs if m.startswith("READY=1")), "")
    assert alive, f"the service exited (status {proc.returncode}) instead of staying up:\n{out[-3000:]}"
    return ready, out, proc.returncode


def _state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    selfcheck.record_digest(state)
    return state


def _a_database(tmp_path: Path) -> bytes:
    """An SQLite database of many pages (what a ledger file is), made without the ledger."""
    path = tmp_path / "made.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, data TEXT NOT NULL)")
    db.executemany("INSERT INTO events (data) VALUES (?)", [("x" * 200,) for _ in range(400)])
    db.commit()
    db.close()
    return path.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_ledger_is_a_latched_tilt_with_ready_sent(tmp_path, damage):
    state = _state(tmp_path)
    ledger = state / "ledger.sqlite3"
    if damage == "garbage":
        ledger.write_bytes(os.urandom(3) + b"\x00" * 100 + os.urandom(16384))
    else:
        data = _a_database(tmp_path)
        assert len(data) > 8192
        ledger.write_bytes(data[: len(data) // 2 + 100])
    ready, out, rc = _run_until_ready(tmp_path, _config(tmp_path, state))
    assert ready.startswith("READY=1\nSTATUS=closed TILT ledger"), ready
    assert str(ledger) in ready and "restart the service" in ready
    assert "Traceback" not in out and "startup.halted" in out
    assert rc == 0


@pytest.mark.slow
def test_a_read_only_ledger_is_a_latched_tilt_with_ready_sent(tmp_path):
    state = _state(tmp_path)
    ledger = state / "ledger.sqlite3"
    db = sqlite3.connect(ledger)  # a database with nothing in it yet (a file of another schema is refused first)
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    if os.geteuid() == 0:  # root writes through file modes: make it immutable instead
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(ledger)]).returncode != 0:
            pytest.skip("running as root and chattr +i is not available here")
    else:
        ledger.chmod(0o444)
    try:
        ready, out, rc = _run_until_ready(tmp_path, _config(tmp_path, state))
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(ledger)])
    assert ready.startswith("READY=1\nSTATUS=closed TILT ledger"), ready
    assert "readonly" in ready
    assert "Traceback" not in out and rc == 0


@pytest.mark.slow
def test_a_missing_serial_port_is_the_devices_latched_tilt_with_ready_sent(tmp_path):
    """The table itself starts (its ledger is fine) and tilts for each device whose
    port is missing; the tilt is recorded in the ledger."""
    state = _state(tmp_path)
    cfg = _config(tmp_path, state)
    ready, out, rc = _run_until_ready(tmp_path, cfg)
    assert ready.startswith("READY=1\nSTATUS=tilt round"), ready
    assert "TILT keypad: keypad link gave-up: port " in ready and "no-such-dev-keypad did not open" in ready
    assert "Traceback" not in out and rc == 0
    db = sqlite3.connect(f"file:{state / 'ledger.sqlite3'}?mode=ro", uri=True)
    try:
        raised = {json.loads(d)["source"] for (d,) in db.execute("SELECT data FROM events WHERE kind = 'tilt.raised'")}
    finally:
        db.close()
    assert {"shoe", "shaker", "sign", "keypad"} <= raised


def test_an_unexpected_start_up_error_halts_once_logged_with_its_traceback(make_rig, tmp_path, monkeypatch, capsys):
    """Anything unexpected while the service assembles itself: the same halt (table
    closed, READY with the tilt, pins released), logged once with its traceback."""
    import controller.daemon.service as service_mod
    from controller.daemon.sdnotify import Notifier

    def broken_table(*_a, **_kw):
        raise RuntimeError("a fault of ours")

    monkeypatch.setattr(service_mod, "Table", broken_table)
    rig = make_rig()
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(10)
    rig.service.readiness.use(Notifier({"NOTIFY_SOCKET": str(tmp_path / "notify")}))
    try:
        rig.service.start(halt_on_error=True)
        msgs = [notify.recv(4096).decode()]
        while not msgs[-1].startswith("READY=1"):
            msgs.append(notify.recv(4096).decode())
        assert msgs[-1] == (
            "READY=1\nSTATUS=closed TILT table: RuntimeError: a fault of ours; fix it and restart the service"
        )
        assert rig.service.halted and rig.service.table is None
        from gpiozero import DigitalOutputDevice

        from hil.rig import PINS

        DigitalOutputDevice(PINS["lockout"], pin_factory=rig.factory).close()  # the pins were let go
    finally:
        rig.service.stop()
        notify.close()
    out = capsys.readouterr().out
    halted = [line for line in out.splitlines() if '"startup.halted"' in line]
    assert len(halted) == 1 and "Traceback" in halted[0] and "a fault of ours" in halted[0], out
    with pytest.raises(RuntimeError, match="a fault of ours"):  # without halt_on_error (simulator, tests): raised
        make_rig().service.start()


@pytest.mark.slow
def test_pins_that_cannot_be_claimed_halt_and_the_tilt_stays_latched_after_the_fix(tmp_path):
    """The pin factory fails at run time (lgpio not installed; --check says so too): the
    service halts, and — its ledger being sound — records the tilt, so after the
    configuration is fixed the table starts in that tilt until a technician clears it."""
    try:
        import lgpio  # noqa: F401
    except ImportError:
        pass
    else:  # pragma: no cover - a Pi
        pytest.skip("lgpio is installed here")
    state = _state(tmp_path)
    cfg = _config(tmp_path, state)
    cfg.write_text(cfg.read_text().replace('pin_factory = "mock"', 'pin_factory = "lgpio"'))
    ready, out, rc = _run_until_ready(tmp_path, cfg)
    assert ready.startswith("READY=1\nSTATUS=closed TILT gpio: ModuleNotFoundError"), ready
    assert "Traceback" not in out and rc == 0
    cfg.write_text(cfg.read_text().replace('pin_factory = "lgpio"', 'pin_factory = "mock"'))
    (tmp_path / "notify").unlink()
    ready, out, rc = _run_until_ready(tmp_path, cfg)
    assert ready.startswith("READY=1\nSTATUS=tilt round"), ready
    assert "TILT gpio: gpio: ModuleNotFoundError" in ready, ready
