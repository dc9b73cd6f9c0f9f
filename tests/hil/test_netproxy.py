"""hil/netproxy.py: the network faults the link benches play — a cut closes, a stall delays and
then delivers, a blackhole swallows bytes and closes nothing, an idle connection is never reset."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from hil.netproxy import NetProxy


@pytest.fixture
def echo() -> Iterator[int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)

    def serve(c: socket.socket) -> None:
        with c:
            while data := c.recv(4096):
                c.sendall(data)

    def accept() -> None:
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(c,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield int(srv.getsockname()[1])
    srv.close()


@pytest.fixture
def proxy(echo: int) -> Iterator[NetProxy]:
    p = NetProxy("127.0.0.1", echo)
    yield p
    p.close()


def _client(p: NetProxy) -> socket.socket:
    c = socket.create_connection(("127.0.0.1", p.port), timeout=2)
    c.sendall(b"hello")
    assert c.recv(16) == b"hello"
    return c


def test_cut_closes_every_connection(proxy):
    a, b = _client(proxy), _client(proxy)
    assert proxy.cut() == 2
    for c in (a, b):
        assert c.recv(16) == b""  # told: the connection is closed
    _client(proxy).close()  # new connections go through


def test_a_stall_delivers_late_and_closes_nothing(proxy):
    c = _client(proxy)
    assert proxy.hold() == 1
    c.sendall(b"held")
    c.settimeout(0.5)
    with pytest.raises(TimeoutError):
        c.recv(16)
    proxy.release()
    c.settimeout(2)
    assert c.recv(16) == b"held"


def test_a_timed_stall_releases_itself(proxy):
    c = _client(proxy)
    proxy.hold(0.3)
    c.sendall(b"x")
    t0 = time.monotonic()
    assert c.recv(16) == b"x" and time.monotonic() - t0 >= 0.25


def test_a_blackhole_swallows_bytes_for_good_and_tells_no_one(proxy):
    old = _client(proxy)
    assert proxy.blackhole() == 1
    old.sendall(b"lost")
    old.settimeout(0.6)
    with pytest.raises(TimeoutError):  # no answer, and no close either
        old.recv(16)
    new = _client(proxy)  # a new connection works
    old.sendall(b"still lost")
    with pytest.raises(TimeoutError):
        old.recv(16)
    new.close()
    old.close()


def test_retarget_moves_new_connections_only(proxy, echo):
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen(1)
    c = _client(proxy)
    proxy.retarget("127.0.0.1", int(other.getsockname()[1]))
    n = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
    other.settimeout(2)
    conn, _ = other.accept()  # the new one reached the other server
    c.sendall(b"same")
    assert c.recv(16) == b"same"  # the old one is still on the echo server
    for s in (conn, n, c, other):
        s.close()


@pytest.mark.slow
def test_an_idle_connection_is_not_reset(proxy):
    """The earlier proxy reset every connection idle for 3 s (its upstream kept a 3 s timeout)."""
    c = _client(proxy)
    time.sleep(4.0)
    c.sendall(b"after")
    assert c.recv(16) == b"after"
