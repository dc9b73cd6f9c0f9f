"""Failover of the LAP's database.  The failover of a synchronous standby is Patroni's
(tests/link/test_patroni.py and the simulator below: hil/patroni.py, three members, etcd,
synchronous mode), never one of ours.  The hand-made pair (hil/pgpair.py: ``initdb`` and
``pg_basebackup``, ``fsync=on``) is left for what a manager would refuse to do: promote an
asynchronous standby that lags, the way a LAP's database restored from a backup goes back in time.
Linked tables play through a multi-host DSN with ``target_session_attrs=read-write``.  Nothing lost
or doubled, the meters reconcile, nothing accepted while closed."""

from __future__ import annotations

import io
import threading
import time

import pytest

from controller.cli import main


def _figures(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


@pytest.mark.slow
@pytest.mark.soak
def test_an_asynchronous_standby_that_lags_loses_records_the_tables_restore(capsys):
    """The promoted standby lacks the last records (hits answered and paid among them, at a hit
    rate of every round): the uplinks find the LAP went back in time and restore every record, a
    paid hit at its paid amount (before that restore: ``link: MISMATCH T01: paid 500063 for hit
    249, the LAP answered 500609``, the payments refused)."""
    rc = main(
        ["bench", "link-chaos", "--tables", "2", "--faults", "1", "--kinds", "failover", "--standby", "async"]
        + ["--lag", "4", "--interval", "4", "--hit-rate", "1.0"]  # hits in the lost window: paid, then lost
    )
    text = capsys.readouterr().out
    out = _figures(text)
    behind = int(out["fault_1"].split("the standby ")[1].split(" bytes")[0])
    assert behind > 0, text  # the promoted standby did lack commits
    assert (out["lost"], out["doubled"], out["meters_reconcile"], out["paid_while_closed"]) == ("0", "0", "yes", "0")
    assert out["refusals"] == "0" and out["link"].startswith("OK"), text  # every hit paid as the LAP answers it
    assert rc == 0, text


@pytest.mark.slow
@pytest.mark.soak
def test_sim_link_survives_a_failover_and_drops_only_its_own_schema():
    import psycopg

    from hil.linksim import LinkSimSettings, run_link_sim
    from hil.patroni import temp_patroni

    with temp_patroni() as pair:
        with psycopg.connect(pair.dsn, autocommit=True) as c:
            c.execute("CREATE SCHEMA not_the_sims")
        out = io.StringIO()
        done: list[int] = []
        th = threading.Thread(
            target=lambda: done.append(
                run_link_sim(LinkSimSettings(tables=2, rounds=12, seed=3, dsn=pair.dsn, speed=20.0), out=out)
            )
        )
        th.start()

        def playing() -> bool:
            with psycopg.connect(pair.dsn, autocommit=True) as c:
                return bool(
                    c.execute(
                        "SELECT 1 FROM information_schema.tables WHERE table_schema LIKE 'sim\\_%'"
                        " AND table_name = 'contributions'"
                    ).fetchone()
                )

        end = time.monotonic() + 60
        while not playing() and time.monotonic() < end:
            time.sleep(0.2)
        time.sleep(2.0)  # mid-play
        pair.kill_primary()  # Patroni promotes the synchronous standby
        th.join(300)
        text = out.getvalue()
        assert done == [0], text
        assert text.splitlines()[-1].startswith("link: OK (2 tables, "), text
        with psycopg.connect(pair.dsn, autocommit=True) as c:
            schemas = {r[0] for r in c.execute("SELECT nspname FROM pg_namespace").fetchall()}
        assert "not_the_sims" in schemas and not any(s.startswith("sim_") for s in schemas)
