"""The uplink's connection through the reconnect state machine, against a real PostgreSQL and a
network that fails (hil/netproxy.py): a hit claim whose answer is lost on the way is answered on
a fresh connection, by the progress deadline, once, and never priced twice."""

from __future__ import annotations

import time

import psycopg
import pytest

from controller.books.ledger import Record
from controller.core.records import Kind
from controller.lap.lap import wait_until
from tests.link.test_recovery import _proxy_dsn, reconciled_to, rig, rows  # noqa: F401 - rig: the fixture
from tests.link.test_uplink import contrib


@pytest.mark.slow
def test_a_hit_claim_whose_answer_is_lost_is_answered_on_a_fresh_connection_once(rig, pg_dsn):  # noqa: F811
    from hil.netproxy import NetProxy

    info = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    if str(info.get("host", "")).startswith("/") or not info.get("host"):
        pytest.skip("the test server is on a Unix socket: no TCP to break")
    proxy = NetProxy(str(info["host"]), int(info.get("port") or 5432))
    try:
        lap, ledger, table, uplink, _beat = rig
        ledger.append([contrib(2)])  # the hit's seat holds a linked wager in its round
        u = uplink(_proxy_dsn(pg_dsn, proxy.port))
        assert wait_until(lambda: reconciled_to(lap, 1) and bool(table.of("hb")), 10)
        connects = u.connection.relink.connects
        with proxy.lock:  # from now on every byte from the database is thrown away; the uplink's still delivered
            proxy.dead.update(id(s) for s in proxy.conns[1::2])
        hit = ledger.append([Record(Kind.LINK_HIT, 1, {"level": "primary", "fraction": "1", "seat": 2, "hand": "x"})])
        t0 = time.monotonic()
        table.wake(hit[0].seq)
        # the claim reached the LAP (its answer is written in the same transaction) ...
        ok = wait_until(lambda: bool(rows(lap, "SELECT 1 FROM {s}.hits WHERE table_id = 'T1'")), 10)
        assert ok, (
            u.connection.relink.state,
            u.connection.relink.reason,
            u.connection.relink.connects,
            u.connection.fired,
            u.sender.acked,
            table.of("link"),
        )
        # ... but the answer cannot come back on this connection (under load the claim may reach the LAP
        # only after the progress deadline already opened a fresh one)
        assert not table.of("hit") or u.connection.relink.connects > connects
        assert wait_until(lambda: bool(table.of("hit")), 15)
        took = time.monotonic() - t0
        why = u.connection.relink.reason
        print(f"hit answer lost on the way: answered on a fresh connection after {took:.2f} s ({why})")
        assert u.connection.relink.connects >= 2 and u.connection.relink.reason is not None
        # the progress deadline (the claim's batch waiting, nothing acknowledged) ended it, not a later watchdog
        assert "nothing acknowledged" in u.connection.relink.reason, u.connection.relink.reason
        assert took <= u.connection.relink.progress_s + 5.0, took
        answer = table.of("hit")[-1]
        assert answer["seq"] == hit[0].seq and answer["order"] == 1
        # sent again on the fresh connection, held once: one hit, one order, one amount
        assert rows(lap, "SELECT count(*) AS n FROM {s}.hits WHERE table_id = 'T1'")[0]["n"] == 1
        assert lap.store.reconcile().ok
    finally:
        proxy.close()
