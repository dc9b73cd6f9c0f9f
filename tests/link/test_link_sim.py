"""``tablectl sim --tables N --link DSN``: linked tables end with a balance per table and the
link's verdict (at a size the suite can afford)."""

from __future__ import annotations

import io

import pytest

from hil.linksim import LinkSimSettings, run_link_sim


@pytest.mark.slow
def test_linked_sim_balances_and_reconciles(pg_dsn):
    out = io.StringIO()
    rc = run_link_sim(LinkSimSettings(tables=2, rounds=6, seed=7, dsn=pg_dsn), out=out)
    text = out.getvalue()
    assert rc == 0, text
    lines = text.splitlines()
    assert sum(1 for ln in lines if ln.startswith(("T01 balance: OK", "T02 balance: OK"))) == 2, text
    assert lines[-1].startswith("link: OK (2 tables, ") and lines[-1].endswith(" meter hits, meters reconciled)"), text


def test_link_line_finds_a_record_missing_or_doubled(make_lap, tmp_path):
    from controller.books.ledger import Ledger, Record
    from controller.books.ledgerkey import throwaway_key
    from controller.core.records import Kind
    from hil.linksim import link_line

    lap = make_lap(tables=1)
    led = Ledger(tmp_path / "l.sqlite3", "T1", key=throwaway_key())
    evs = led.append([Record(Kind.LINK_CONTRIBUTION, 1, {"level": "primary", "wager": 100, "seat": s}) for s in (1, 2)])
    led.close()
    lap.send("T1", evs[0].seq, "contribution", {"wager": 100, "seat": 1, "round": 1})
    line, ok = link_line(lap.store, [("T1", tmp_path / "l.sqlite3")])
    assert not ok and line.startswith("link: MISMATCH T1: ledger has 2 link records, the LAP 1"), line
    lap.send("T1", evs[1].seq, "contribution", {"wager": 100, "seat": 2, "round": 1})
    assert link_line(lap.store, [("T1", tmp_path / "l.sqlite3")]) == (
        "link: OK (1 table, 2 contributions, 0 meter hits, meters reconciled)",
        True,
    )
    lap.send("T1", 99, "contribution", {"wager": 100, "seat": 3, "round": 1})  # one the table never wrote
    line, ok = link_line(lap.store, [("T1", tmp_path / "l.sqlite3")])
    assert not ok and "extra [99]" in line
