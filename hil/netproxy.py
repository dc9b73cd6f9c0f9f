"""A TCP forwarder whose network can fail the ways real ones do (the link benches and tests).

* :meth:`NetProxy.cut` closes every connection through it at once (both ends see the close:
  a switch port that went down with a RST, a restarted firewall);
* :meth:`NetProxy.hold` keeps every connection open but stops carrying bytes, both ways, until
  :meth:`NetProxy.release` (or for ``seconds``): a cable pulled and put back — bytes sent
  meanwhile wait in the proxy and arrive late, nobody is told;
* :meth:`NetProxy.blackhole` makes every connection open now silent for good (a NAT entry or a
  firewall's state that expired, a peer's machine that lost power): bytes are thrown away,
  nothing is closed, neither end is told; new connections work.  Only the application's own
  deadlines find it: the proxy is a user-space forwarder, so its kernel acknowledges the
  sender's bytes and answers its TCP keepalives (``tcp_user_timeout`` and keepalives see a live
  peer, as they would with a middlebox that terminates TCP);
* :meth:`NetProxy.retarget` sends new connections elsewhere (a failover behind a fixed address).

An idle connection is never closed by the proxy (an earlier one reset every connection idle for
3 s: its upstream socket kept its connect timeout).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time


class NetProxy:
    def __init__(self, host: str, port: int, *, bind: str = "127.0.0.1"):
        self.target = (host, port)
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind((bind, 0))
        self.srv.listen(128)
        self.port = int(self.srv.getsockname()[1])
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self._flowing = threading.Event()
        self._flowing.set()
        self._hold_until = 0.0
        self.dead: set[int] = set()  # the sockets (id) a blackhole took
        self.accepted = 0
        threading.Thread(target=self._accept, name=f"netproxy:{self.port}", daemon=True).start()

    # ------------------------------------------------------------------ faults
    def cut(self) -> int:
        """Close every connection through the proxy; how many there were."""
        with self.lock:
            conns, self.conns = self.conns, []
            self.dead.clear()
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()
        return len(conns) // 2

    def blackhole(self) -> int:
        """Every connection open now goes silent for good; how many."""
        with self.lock:
            self.dead.update(id(s) for s in self.conns)
            return len(self.conns) // 2

    def hold(self, seconds: float | None = None) -> int:
        """Stop carrying bytes (both ways, every connection, new ones accepted but silent);
        ``seconds``: released by itself after that long.  How many connections are held."""
        self._flowing.clear()
        if seconds is not None:
            until = time.monotonic() + seconds
            self._hold_until = until
            threading.Thread(target=self._release_at, args=(until,), daemon=True).start()
        with self.lock:
            return len(self.conns) // 2

    def release(self) -> None:
        self._hold_until = 0.0
        self._flowing.set()

    @property
    def holding(self) -> bool:
        return not self._flowing.is_set()

    def retarget(self, host: str, port: int) -> None:
        """New connections go to (host, port); the ones open stay where they are."""
        self.target = (host, port)

    def close(self) -> None:
        self.stop.set()
        self._flowing.set()
        with contextlib.suppress(OSError):
            self.srv.close()
        self.cut()

    # ------------------------------------------------------------------ plumbing
    def _release_at(self, until: float) -> None:
        time.sleep(max(0.0, until - time.monotonic()))
        if self._hold_until == until:
            self.release()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(self.target, timeout=3)
            except OSError:
                c.close()
                continue
            u.settimeout(None)  # blocking from here on: an idle connection is never ours to close
            for s in (c, u):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.conns += [c, u]
                self.accepted += 1
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _copy(self, a: socket.socket, b: socket.socket) -> None:
        """What ``a`` sends, to ``b`` (while the flow is held, it waits; a dead end's, into the void)."""
        while True:
            data = a.recv(65536)
            if not data:
                return
            if id(a) in self.dead:
                continue  # into the void
            if not self._flowing.is_set():
                self._flowing.wait()
            b.sendall(data)

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        try:
            self._copy(a, b)
        except OSError:
            pass
        if id(a) in self.dead:  # a's end closed: the other end is not told
            with contextlib.suppress(OSError):
                a.close()
            return  # (it stays in self.conns, so its id is not reused while in self.dead)
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        with self.lock:
            self.conns = [s for s in self.conns if s is not a and s is not b]
