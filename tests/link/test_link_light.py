"""The light pit (bench/_lightpit.py, ``bench link --light``): a few tables' real uplinks from one
worker process, with the real SQL, roles, link keys and rules against the LAP; and the uplink's
idle read (controller/uplink/lapview.py ``PROBE_SQL``): one small row, the whole read only when
the LAP's state or a level's version moved, liveness from the LAP's heartbeat row."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench._lightpit import LightPit
from controller.lap.lap import wait_until
from controller.uplink.lapview import LapView, Listener, ListenerTiming


@pytest.fixture
def light(pg_dsn: str, tmp_path: Path):
    lp = LightPit(pg_dsn, 3, tmp_path, 1)
    try:
        lp.start(timeout=60)
        yield lp
    finally:
        lp.close()


@pytest.mark.slow
def test_light_pit_sends_real_records_and_hears_the_meter(light):
    start = time.time()
    for tid in light.ids:
        light.write(tid, 10, 1)
    assert wait_until(lambda: light.lap_count() == 30, 30)  # every table's contributions applied by the rules
    store = light.pit.store
    rows = store._rows("SELECT table_id, reconciled_seq, mismatch, closed FROM {s}.members ORDER BY table_id")
    assert [(r["table_id"], r["reconciled_seq"], r["mismatch"], r["closed"]) for r in rows] == [
        (t, 10, None, None) for t in light.ids
    ]  # each table's batch checked against its own ledger's totals and chain head, signed with its key
    assert store._rows("SELECT count(*) AS n FROM {s}.refusals")[0]["n"] == 0
    # the meter's change reached every table (told after the LAP's doorbell, which rings at most
    # every 0.25 s: it may still be on its way when the contributions are already held)
    assert wait_until(lambda: len(light.latencies(start)[0]) >= len(light.ids), 10)
    lat, errors = light.latencies(start)
    assert errors == 0
    assert all(0 <= ms < 10_000 for ms in lat)


@pytest.mark.slow
def test_idle_reads_are_the_small_row_and_a_moved_version_is_read_whole(light):
    told: list[dict[str, Any]] = []

    def send(msg: dict[str, Any], key: str | None = None) -> None:
        told.append(msg)

    pit = light.pit
    timing = ListenerTiming(refresh=0.05, flood_refresh=0.05)
    lis = Listener(pit.schema, LapView("T01", send), send, lambda _t: None, timing)
    lis.guard.deaf_until = math.inf  # no doorbell at all: what it learns, it learns from the rows
    with psycopg.connect(pit.uplink_dsn("T01"), autocommit=True) as conn:
        lis.attach(conn)
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            lis.service(conn)
            time.sleep(0.01)
        hbs = [m for m in told if m["t"] == "hb"]
        assert len(hbs) >= 5  # the LAP's heartbeat row (every 200 ms) seen moving on by the small reads
        assert lis.reads >= 20 and lis.full_reads <= lis.reads // lis.rows.full_every + 2
        version = max(m["version"] for m in told if m["t"] == "meter")
        lis.rows.full_every = 10**9  # from now on only a moved version makes it read the whole
        light.write("T02", 1, 1)  # another table moves the meter: no doorbell is heard here
        end = time.monotonic() + 10
        while time.monotonic() < end and not any(m["t"] == "meter" and m["version"] > version for m in told):
            lis.service(conn)
            time.sleep(0.01)
        moved = [m for m in told if m["t"] == "meter" and m["version"] > version]
        assert moved and moved[-1]["cents"] > 0
