"""The LAP on a connection the network swallowed (hil/netproxy.py ``blackhole``: bytes thrown away,
nothing closed, nobody told) at the two moments its running loop does not cover: its start-up and
its standby's poll of the lease.  Each step there has a client-side deadline too; without one, a
chaos run (random seed 3) left every table closed for good after a blackhole of the LAP's link
that landed while it was starting again after a power loss (9 NYCRR 5321.18: a LAP recovers to
its prior state)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from controller.lap.config import parse_lap
from controller.lap.lap import LapStore, wait_until
from controller.lap.service import LapService
from hil.netproxy import NetProxy
from tests.link.conftest import lap_doc
from tests.link.test_recovery import _proxy_dsn


@pytest.fixture
def proxy(pg_dsn: str) -> Iterator[NetProxy]:
    info = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    if str(info.get("host", "")).startswith("/") or not info.get("host"):
        pytest.skip("the test server is on a Unix socket: no TCP to break")
    p = NetProxy(str(info["host"]), int(info.get("port") or 5432))
    yield p
    p.close()


def _state(dsn: str, schema: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(sql.SQL("SELECT state FROM {}.link").format(sql.Identifier(schema))).fetchone()
    return str(row[0]) if row else ""


def _said(logs: list[str], text: str) -> bool:
    return any(text in m for m in list(logs))


class SwallowedMidStart(LapService):
    """A LAP whose link goes silent in the middle of its first start-up (after the lease is
    taken and the schema configured, while it checks the replication)."""

    proxy: NetProxy | None = None
    swallowed = 0

    def check_replication(self, store: LapStore) -> str | None:
        if self.proxy is not None and not self.swallowed:
            self.swallowed = self.proxy.blackhole()
        return super().check_replication(store)


def _run(lap: LapService) -> threading.Thread:
    t = threading.Thread(target=lap.run, daemon=True)
    t.start()
    return t


@pytest.mark.slow
@pytest.mark.soak
def test_a_start_up_the_network_swallows_is_started_again_on_a_fresh_connection(
    pg_dsn: str, lap_schema: str, proxy: NetProxy
) -> None:
    logs: list[str] = []
    cfg = parse_lap(lap_doc(lap_schema), "lap.toml")
    lap = SwallowedMidStart(cfg, _proxy_dsn(pg_dsn, proxy.port), log=logs.append, name="host-a")
    lap.proxy = proxy
    t0 = time.monotonic()
    t = _run(lap)
    try:
        assert wait_until(lambda: lap.swallowed > 0, 20), logs
        assert wait_until(lambda: _said(logs, "running ("), 30), logs
        took = time.monotonic() - t0
        print(f"start-up swallowed: link running {took:.1f} s after the LAP started ({proxy.accepted} connections)")
        assert _state(pg_dsn, lap_schema) == "running"
        assert _said(logs, "database unreachable"), logs  # the silent connection was given up ...
        assert proxy.accepted >= 2  # ... and a fresh one opened
    finally:
        lap.stop_event.set()
        t.join(20)
    assert not t.is_alive()


@pytest.mark.slow
def test_a_standby_whose_poll_the_network_swallows_still_takes_over(
    pg_dsn: str, lap_schema: str, proxy: NetProxy
) -> None:
    cfg = parse_lap(lap_doc(lap_schema), "lap.toml")
    logs: dict[str, list[str]] = {"a": [], "b": []}
    a = LapService(cfg, pg_dsn, log=logs["a"].append, name="host-a")
    b = LapService(cfg, _proxy_dsn(pg_dsn, proxy.port), log=logs["b"].append, name="host-b")
    ta = _run(a)
    assert wait_until(lambda: _said(logs["a"], "host-a is the active LAP"), 20), logs
    tb = _run(b)
    try:
        assert wait_until(lambda: _said(logs["b"], "host-b is the standby; active LAP: host-a"), 20), logs
        assert proxy.blackhole() == 1  # the standby's one connection, polling the lease
        a.kill()
        ta.join(10)
        t0 = time.monotonic()
        assert wait_until(lambda: _said(logs["b"], "host-b is the active LAP"), 20), logs["b"]
        took = time.monotonic() - t0
        print(f"standby's poll swallowed: it took over {took:.1f} s after the active one's death")
        assert wait_until(lambda: _state(pg_dsn, lap_schema) == "running", 10)
        assert took <= 10.0, logs["b"]
    finally:
        b.stop_event.set()
        tb.join(20)
    assert not tb.is_alive()
