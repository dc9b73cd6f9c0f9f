"""The link over TLS with client certificates, as production runs it (``sslmode=verify-full``): a
throwaway CA and cluster (controller/lap/pgtls.py, ``hostssl … clientcert=verify-full``), the
LAP's schema, a table's real uplink sending its ledger's records signed with its link key.  A
table's certificate does not log in as another table; no certificate, or no TLS, does not log in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import throwaway_key
from controller.core.records import Kind
from controller.lap.config import parse_lap
from controller.lap.lap import LapStore, connect, wait_until
from controller.lap.linkkeys import enrol
from controller.lap.pgtemp import temp_cluster
from controller.lap.pgtls import enable_tls, make_pki
from controller.uplink.uplink import Uplink, UplinkConfig
from tests.link.conftest import lap_doc
from tests.link.test_uplink import FakeTableSocket

pytestmark = pytest.mark.slow  # a cluster of its own, a CA and certificates


@pytest.fixture(scope="module")
def tls(tmp_path_factory: Any) -> Iterator[tuple[str, Any]]:
    with temp_cluster(prefix="tablectl-tls-pg-") as dsn:
        pki = make_pki(Path(tmp_path_factory.mktemp("pki")))
        enable_tls(dsn, pki)
        yield dsn, pki


def test_an_uplink_sends_over_tls_with_its_own_certificate_and_no_other_login_works(tls, tmp_path):
    dsn, pki = tls
    cfg = parse_lap(lap_doc("tls", tables=2), "lap.toml")
    store = LapStore(connect(dsn), cfg.schema)
    store.install(cfg.group)
    store.configure(cfg)
    store.set_state("running")
    key = throwaway_key()
    ledger = Ledger(tmp_path / "ledger.sqlite3", "T1", key=key)
    table = FakeTableSocket(tmp_path / "link.sock")
    t1, t2 = cfg.role_for("T1"), cfg.role_for("T2")
    ucfg = UplinkConfig(
        pki.dsn(dsn, t1), cfg.schema, "T1", tmp_path / "ledger.sqlite3", tmp_path / "link.sock", poll_s=0.2, key=key,
        link_key=enrol(store.conn, cfg.schema, "T1"),
    )  # fmt: skip
    u = Uplink(ucfg, log=lambda m: None)
    try:
        ledger.append([Record(Kind.LINK_CONTRIBUTION, 1, {"level": "primary", "wager": 100, "seat": 1})])
        u.start()
        assert wait_until(lambda: len(store._rows("SELECT * FROM {s}.contributions")) == 1, 15)
        assert wait_until(lambda: bool(table.of("reconciled")), 10)
        # the uplink's session is TLS, its certificate's CN its role
        ssl = store._rows(
            "SELECT s.ssl, s.version, s.client_dn FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid"
            " WHERE a.usename = %s",
            (t1,),
        )
        assert ssl and all(r["ssl"] and r["client_dn"] == f"/CN={t1}" for r in ssl), ssl
        print(f"uplink session: {ssl[0]['version']}, client {ssl[0]['client_dn']}")
    finally:
        u.stop()
        table.close()
        ledger.close()
    # T1's certificate does not log in as T2 (its CN is not T2's role)
    as_t2 = {**conninfo_to_dict(pki.dsn(dsn, t1)), "user": t2}
    with pytest.raises(psycopg.OperationalError, match=f'authentication failed for user "{t2}"'):
        psycopg.connect(make_conninfo("", **as_t2), connect_timeout=5).close()
    # no certificate, or no TLS: no login for a table's role
    args = conninfo_to_dict(pki.dsn(dsn, t1))
    bare = {k: v for k, v in args.items() if k not in ("sslcert", "sslkey")}
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(make_conninfo("", **bare), connect_timeout=5).close()
    plain = {**args, "sslmode": "disable"}
    with pytest.raises(psycopg.OperationalError, match="no pg_hba.conf entry"):
        psycopg.connect(make_conninfo("", **plain), connect_timeout=5).close()
    store.conn.close()
