"""`tablectl run` as systemd runs it: a fresh process that sends
READY=1 after its self-checks, serves the console on its socket, and stops
cleanly on SIGTERM with STOPPING=1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest
from pexpect import fdpexpect

from bench.startup import _toml
from controller.boot import selfcheck
from tests.hil.console.conftest import PINS, set_pins


@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
def test_run_notifies_ready_and_serves_the_console_socket(tmp_path):
    from hil.rig import PINS as PIN_MAP
    from hil.rig import Rig

    state = tmp_path / "state"
    state.mkdir()
    set_pins(state)
    selfcheck.record_digest(state)
    rig = Rig(state)  # its simulated devices only
    for s in rig.sims:
        s.start()
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(30)
    doc = {
        "table": {
            "id": "RUN-01",
            "profile": "six-card-fortune",
            "state_dir": str(state),
            "software_record": str(state / "software.json"),
        },
        "gpio": {"pin_factory": "mock", **PIN_MAP},
        "serial": {s.device: {"port": s.path} for s in rig.sims},
    }
    cfg = tmp_path / "table.toml"
    cfg.write_text("\n".join(f"{k} = {_toml(v)}" for k, v in doc.items()) + "\n")
    sock_path = tmp_path / "run" / "console.sock"
    # the ledger key as systemd's LoadCredential= hands it over
    from hil.rig import rig_key_file

    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "tablectl-ledger-key").write_bytes(rig_key_file(state).read_bytes())
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(cfg), "--console-socket", str(sock_path)],
        env={
            **os.environ,
            "NOTIFY_SOCKET": str(tmp_path / "notify"),
            "WATCHDOG_USEC": "2000000",
            "CREDENTIALS_DIRECTORY": str(creds),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        msgs: list[str] = []
        while not any(m.startswith("READY=1") for m in msgs):
            msgs.append(notify.recv(4096).decode())
        assert msgs[0] == "STATUS=self-checks"
        ready = next(m for m in msgs if m.startswith("READY=1"))
        assert ready.startswith("READY=1\nSTATUS=open_for_wagers round")  # digest recorded: no tilt
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(sock_path))
        term = fdpexpect.fdspawn(conn.fileno(), timeout=15, encoding="ascii")
        term.expect("role: ")
        term.send("technician\r")
        term.expect("PIN: ")
        term.send(PINS["technician"] + "\r")
        term.expect("RUN-01 technician> ")
        term.send("verify\r")
        term.expect("result: MATCH")
        conn.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        while "STOPPING=1" not in msgs:
            msgs.append(notify.recv(4096).decode())
        assert "WATCHDOG=1" in msgs
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for s in rig.sims:
            s.stop()
        notify.close()
    assert not sock_path.exists()  # removed on the way down
