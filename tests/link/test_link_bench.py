"""The link benchmarks run end to end (figures are printed, not asserted): ``bench link`` at a
small size, and ``bench link-chaos`` with ten faults — lost 0, doubled 0, meters reconciled,
nothing accepted while closed (at the suite's size)."""

from __future__ import annotations

import os

import pytest

from controller.cli import main


def _db_args(pg_dsn: str) -> list[str]:
    # the shared server when the suite has one (restart-pg then terminates our connections);
    # else the bench's own throwaway cluster, which it restarts
    return ["--db", pg_dsn] if os.environ.get("TABLECTL_TEST_PG") else []


@pytest.mark.slow
@pytest.mark.soak
def test_bench_link_prints_its_figures(pg_dsn, capsys):
    args = ["--tables", "2", "--contributions", "200", "--pushes", "20", "--idle-s", "1", "--paced-s", "2"]
    assert main(["bench", "link", *args, "--round-s", "1", *_db_args(pg_dsn)]) == 0
    out = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines() if ": " in line)
    assert out["contributions"] == "200" and out["hits_ordered"] == "yes"
    if "db_cpu_idle_share" in out:  # the server runs on this machine: the standing cost split off
        # a second of two idle tables may cost less than one clock tick of the server's CPU
        assert float(out["db_cpu_idle_ms_per_table_s"]) >= 0
        # the uplinks' own backends alone: both tables' connections found and read
        own, backends = out["db_cpu_idle_uplink_backends_ms_per_table_s"].split(" ", 1)
        assert float(own) >= 0 and backends == "(2 backends)"
        assert float(out["paced_contributions_per_s"]) > 0  # two rounds of ten per table, all applied
        assert "paced_error" not in out and float(out["db_cpu_ms_per_contribution_paced"]) > 0
    # up to one push per contribution per table (pushes queued together are read once)
    assert float(out["meter_push_ms_p99"]) > 0 and 0 < int(out["meter_push_samples"]) <= 40
    assert float(out["link_loss_detect_s"]) >= 3.0  # never before the configured time


@pytest.mark.slow
@pytest.mark.soak
def test_bench_link_chaos_ten_faults_loses_and_doubles_nothing(pg_dsn, capsys):
    rc = main(["bench", "link-chaos", "--tables", "4", "--faults", "10", *_db_args(pg_dsn)])
    text = capsys.readouterr().out
    out = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    assert rc == 0, text
    assert out["faults"] == "10" and out["lost"] == "0" and out["doubled"] == "0"
    assert out["meters_reconcile"] == "yes" and out["paid_while_closed"] == "0"
    assert int(out["link_closures"]) > 0  # the faults did close tables


@pytest.mark.slow
def test_bench_floor_prints_its_figures(pg_dsn, capsys):
    rc = main(
        [
            "bench",
            "floor",
            "--tables",
            "3",
            "--requests",
            "20",
            "--viewers",
            "1",
            "--rounds-before",
            "2",
            *_db_args(pg_dsn),
        ]
    )
    out = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines() if ": " in line)
    assert rc == 0, out
    assert out["tables"] == "3" and out["api_requests"] == "20" and int(out["contributions_during"]) > 0
    assert 0 < float(out["api_ms_p50"]) <= float(out["api_ms_p99"]) <= float(out["api_ms_max"])
