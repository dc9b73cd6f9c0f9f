"""The console over a UART: `tablectl console --port` relays bytes between the UART
and the service's console socket (systemd/tablectl-console@.service); and the
command-line tools around the console: `tablectl pin`, `tablectl verify`,
`tablectl sim --console-pty`."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sys
import threading

import pexpect
import pytest
from pexpect import fdpexpect

from controller.cli import main
from controller.console.server import ConsoleLimits
from tests.hil.console.conftest import PINS, Term, set_pins


def test_uart_relay_to_console_socket(console_rig, tmp_path):
    from controller.console.relay import Terminal, open_uart, relay

    rig, _ = console_rig()
    sock = tmp_path / "run" / "console.sock"
    con = rig.service.start_console(socket_path=sock, limits=ConsoleLimits(fail_delay_s=0.0))
    assert oct(sock.stat().st_mode & 0o777) == "0o660"
    uart_master, uart_slave = os.openpty()  # a UART: the relay opens the device end
    fd = open_uart(os.ttyname(uart_slave), 115200)
    stop = threading.Event()
    th = threading.Thread(target=relay, args=(Terminal(fd, fd), sock, stop), kwargs={"retry_s": 0.1}, daemon=True)
    th.start()
    term = fdpexpect.fdspawn(uart_master, timeout=15, encoding="ascii")
    try:
        term.expect("role: ")
        term.send("floorperson\r")
        term.expect("PIN: ")
        term.send(PINS["floorperson"] + "\r")
        term.expect("SIM-01 floorperson> ")
        term.send("status\r")
        term.expect("state: open_for_wagers")
        term.expect("SIM-01 floorperson> ")
        con.stop()  # the controller goes away (restart)
        term.expect("the controller is not running; retrying")
        rig.service.start_console(socket_path=sock, limits=ConsoleLimits(fail_delay_s=0.0))
        term.expect("role: ")  # back, and logged out
    finally:
        stop.set()
        th.join(5)
        for f in (fd, uart_master, uart_slave):
            os.close(f)
    logs = [d for _r, _k, d in rig.ledger_events(kinds=("console.command", "console.logout"))]
    assert {"console": "socket", "role": "floorperson", "command": "status"}.items() <= logs[0].items()
    assert logs[1]["why"] == "disconnected"


@pytest.mark.slow  # over 2 s on a quiet 2-core machine
def test_pin_and_verify_commands(tmp_path, monkeypatch, capsys):
    state = str(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("97531\n"))
    assert main(["pin", "set", "technician", "--state-dir", state, "--stdin"]) == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO("97531\n"))
    assert main(["pin", "set", "dealer", "--state-dir", state, "--stdin"]) == 1  # same PIN as another role
    monkeypatch.setattr(sys, "stdin", io.StringIO("12\n"))
    assert main(["pin", "set", "dealer", "--state-dir", state, "--stdin"]) == 1  # too short
    assert main(["pin", "list", "--state-dir", state]) == 0
    out = capsys.readouterr()
    assert "dealer: not set\nfloorperson: not set\ntechnician: set" in out.out
    assert "already the technician's" in out.err and "4 to 12 digits" in out.err

    assert main(["verify", "--state-dir", state]) == 2
    assert main(["verify", "--record", "--state-dir", state]) == 0
    assert main(["verify", "--state-dir", state]) == 0
    out = capsys.readouterr().out
    digest = out.split("digest: ")[1].split()[0]
    assert "result: match" in out and len(digest) == 64
    rec = json.loads((tmp_path / "software.json").read_text())
    rec["files"]["controller/daemon/service.py"] = "0" * 64
    rec["digest"] = "f" * 64
    (tmp_path / "software.json").write_text(json.dumps(rec))
    assert main(["verify", "--state-dir", state]) == 1
    assert "result: MISMATCH\n  changed: controller/daemon/service.py" in capsys.readouterr().out


def test_sim_console_pty_prints_its_path(tmp_path):
    """`tablectl sim --console-pty` prints the pty a person attaches to; the console works
    while rounds play; after the rounds it stays open until Ctrl-C."""
    set_pins(tmp_path)
    # started with SIGINT ignored, as a shell's background job or a CI runner may start it:
    # Ctrl-C must still stop it (it once waited forever there)
    sim = pexpect.spawn(
        sys.executable,
        ["-m", "controller", "sim", "--rounds", "2", "--console-pty", "--state-dir", str(tmp_path)],
        timeout=60,
        encoding="ascii",
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        sim.expect(r"console: (/dev/pts/\d+) \(PINs as set in ")
        path = sim.match.group(1)
        # a terminal tablectl installs (pyserial's miniterm), not picocom or screen, which nothing installs
        sim.expect(r"attach with: (\S+(?: -m serial\.tools\.miniterm)?) " + re.escape(path))
        tool = sim.match.group(1)
        assert "miniterm" in tool and "picocom" not in sim.before and "screen" not in sim.before
        t = Term(path)
        try:
            assert "logged in as technician" in t.login("technician")
            assert "game six-card-fortune" in t.cmd("status")
        finally:
            t.close()
        sim.expect("the console stays open - Ctrl-C to stop")
        sim.sendintr()
        sim.expect("summary:")
        sim.expect(pexpect.EOF)
    finally:
        sim.close()
    assert sim.exitstatus == 0
