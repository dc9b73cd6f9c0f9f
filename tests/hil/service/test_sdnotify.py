"""systemd notification: READY=1 after the self-checks, WATCHDOG=1
from the reactor loop (a hung loop stops pinging), STOPPING=1 on the way down."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from controller.daemon.sdnotify import Notifier


@pytest.fixture
def notify_socket(tmp_path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(tmp_path / "notify")
    s.bind(path)
    s.settimeout(5)
    yield path, s
    s.close()


def recv_until(sock, pred, timeout=10.0):
    got = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        msg = sock.recv(4096).decode()
        got.append((time.monotonic(), msg))
        if pred(msg):
            return got
    raise AssertionError(f"not received; got {got}")


def test_notifier_protocol(notify_socket):
    path, sock = notify_socket
    assert not Notifier({}).notify(READY=1)  # outside systemd: nothing
    n = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": str(os.getpid())})
    assert n.watchdog_s == 2.0
    n.ready("open\nround 1")
    assert sock.recv(100) == b"READY=1\nSTATUS=open round 1"
    n.watchdog()
    n.watchdog()  # at most every half period
    assert sock.recv(100) == b"WATCHDOG=1"
    assert Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "1000", "WATCHDOG_PID": "1"}).watchdog_s is None
    abstract = Notifier({"NOTIFY_SOCKET": "@tablectl-test"})
    assert abstract.address == "\0tablectl-test"


@pytest.mark.slow
def test_ready_after_self_checks_and_watchdog_from_the_reactor(make_rig, notify_socket, monkeypatch):
    path, sock = notify_socket
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "500000")  # ping every 0.25 s (the reactor turns at least every 0.25 s)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    rig = make_rig()
    rig.start()
    got = recv_until(sock, lambda m: m.startswith("READY=1"))
    assert got[0][1] == "STATUS=self-checks"
    assert rig.service.self_check is not None and "STATUS=open_for_wagers round" in got[-1][1]
    pings: list[float] = []
    t_end = time.monotonic() + 1.0
    while time.monotonic() < t_end:
        if sock.recv(4096) == b"WATCHDOG=1":
            pings.append(time.monotonic())
    assert len(pings) >= 3 and max(b - a for a, b in zip(pings, pings[1:])) < 0.45
    # a hung reactor stops pinging (systemd would kill and restart it)
    hang = threading.Thread(target=rig.service.call, args=(time.sleep, 1.2))
    t0 = time.monotonic()
    hang.start()
    pings = []
    while time.monotonic() - t0 < 2.0:
        if sock.recv(4096) == b"WATCHDOG=1":
            pings.append(round(time.monotonic() - t0, 3))
    hang.join()
    assert pings[0] > 1.1 and len(pings) >= 3, pings  # silent while hung, pinging again after
    rig.stop()
    recv_until(sock, lambda m: m == "STOPPING=1")
