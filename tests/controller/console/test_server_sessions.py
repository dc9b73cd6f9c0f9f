"""The console server lets go of the sessions that ended (a table that plays for a
year): a socket console is connected and closed again and again over a year (a technician's
``tablectl console``, the floor's tools); each session's thread was kept in a list for as long
as the service ran."""

from __future__ import annotations

import socket
from types import SimpleNamespace

from controller.console import server as server_mod
from controller.console.lineio import Channel
from controller.console.server import ConsoleServer
from controller.core.log import LogContext


class _QuickSession:
    """A session that ends at once (a peer that connects and leaves)."""

    def __init__(self, server: object, chan: Channel):
        self.chan = chan

    def run(self) -> None:
        pass


def test_the_threads_of_ended_sessions_are_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(server_mod, "Session", _QuickSession)
    service = SimpleNamespace(logctx=LogContext("T1"), hw=SimpleNamespace(table_id="T1", state_dir=tmp_path))
    srv = ConsoleServer(service)

    def one_session() -> None:
        ours, peer = socket.socketpair()
        peer.close()
        srv._spawn(Channel(ours.detach(), name="socket"), "console-socket", own_fd=True)

    for _ in range(60):
        one_session()
    for t in list(srv._threads):
        t.join(timeout=10)
    assert srv._sessions == 0
    one_session()  # the next session: the threads of those that ended are let go
    assert len(srv._threads) == 1, f"{len(srv._threads)} session threads kept after 61 sessions"
    srv._threads[0].join(timeout=10)
    srv.stop()
