"""``tablectl sim --tables 2 --link --rounds 30 --hit-rate 0.3 --floor HOST:PORT`` shows a newcomer a
pending progressive hit on the floor view, and its acknowledgement: the command itself,
as a user runs it, its floor view read and acknowledged over HTTP as the page does it.

With the floor view up, the simulated floorperson validates a hit at the table once it is
acknowledged on the floor view (hil/linksim.py ``_floor_gate``), so the hit is pending for as long as
nobody acknowledges it: the test sees it, acknowledges it, and sees it paid, validated."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.link.test_floor import _csrf, _login, _req

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Lines:
    """The sim's standard output, read on a thread (the lines so far, and waiting for one)."""

    def __init__(self, proc: subprocess.Popen[str]):
        self.lines: list[str] = []
        self._t = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._t.start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait(self, text: str, timeout: float) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for line in self.lines:
                if text in line:
                    return line
            time.sleep(0.1)
        raise TimeoutError(f"no {text!r} in {self.lines}")


@pytest.mark.slow
@pytest.mark.soak
def test_sim_hit_rate_shows_a_pending_hit_on_the_floor_view_and_its_acknowledgement(pg_dsn: str) -> None:
    port = _free_port()
    argv = [sys.executable, "-m", "controller", "sim", "--tables", "2", "--link", pg_dsn, "--rounds", "30"]
    argv += ["--hit-rate", "0.3", "--floor", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = _Lines(proc)
    try:
        out.wait("floor view: http://127.0.0.1:", 60)
        srv: Any = SimpleNamespace(address=("127.0.0.1", port))
        status, cookie = _login(srv, "floor", "2468")
        assert status == 303
        jar = cookie.split(";")[0]
        csrf = _csrf(srv, jar)
        pending, acked = _acknowledge_until_done(srv, jar, csrf, out)
        assert pending, "no pending hit was ever shown"
        first = pending[0]
        assert first["pending"] and first["ack_by"] is None and first["hand_name"] in ("Five Aces", "Royal Flush"), (
            first
        )
        assert any("pending; acknowledge it on the floor view" in line for line in out.lines), out.lines
        # acknowledged, then validated at the table and paid: the floor view shows by whom
        end = time.monotonic() + 60
        while time.monotonic() < end:
            hits = {(h["level"], h["order"]): h for h in _picture(srv, jar)["hits"]}
            done = hits.get((first["level"], first["order"]))
            if done is not None and not done["pending"]:
                break
            time.sleep(0.3)
        assert done is not None and not done["pending"] and done["ack_by"] == "floor", done
        assert done["validated_by"] == "key switch"
        assert acked >= 1
    finally:
        proc.send_signal(signal.SIGINT)  # the page stays up after the rounds until Ctrl-C
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    text = "\n".join(out.lines)
    assert proc.returncode == 0, text
    assert "T01 balance: OK" in text and "T02 balance: OK" in text and "link: OK (2 tables" in text, text


def _picture(srv: Any, jar: str) -> dict[str, Any]:
    return dict(json.loads(_req(srv, "GET", "/api/floor", cookie=jar).body))


def _acknowledge_until_done(srv: Any, jar: str, csrf: str, out: _Lines) -> tuple[list[dict[str, Any]], int]:
    """Acknowledge every pending hit as the floor view shows it, until the rounds are done; (the
    pending hits as first seen, how many were acknowledged)."""
    seen: dict[tuple[str, int], dict[str, Any]] = {}
    acked = 0
    end = time.monotonic() + float(os.environ.get("TABLECTL_SIM_HITS_S", "240"))
    while time.monotonic() < end and not any("rounds done" in line for line in out.lines):
        for h in _picture(srv, jar)["hits"]:
            key = (h["level"], h["order"])
            if not h["pending"] or key in seen:
                continue
            seen[key] = h
            r = _req(srv, "POST", "/api/ack", {"level": h["level"], "order": str(h["order"]), "csrf": csrf}, cookie=jar)
            assert r.status == 200, r.body
            acked += 1
        time.sleep(0.3)
    return list(seen.values()), acked
