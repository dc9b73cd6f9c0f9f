"""``bench link --light``: the database's side of a large pit (bench/_lightpit.py), each figure
measured in windows that alternate with the ones it is compared with, repeated, with its spread."""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import percentile


def connections_needed(tables: int) -> int:
    """docs/linked.md's budget: a connection per table, the LAP, the floor view (5), the reserved
    superuser connections (3) and a few for the operator and the bench itself."""
    return tables + 1 + 5 + 3 + 10


def _spread(values: list[float], fmt: str = "{:.3f}") -> str:
    """The median of repeated windows and their range."""
    med = statistics.median(values)
    each = ", ".join(fmt.format(v) for v in values)
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return f"{fmt.format(med)} (median of {len(values)}; min {lo}, max {hi}: {each})"


class Windows:
    """The database's CPU (its processes') and the pit's own backends' over a window."""

    def __init__(self, dsn: str, pm: int, prefix: str):
        self.dsn, self.pm, self.prefix = dsn, pm, prefix

    def measure(self, seconds: float, during: Any = None) -> tuple[float, float, float]:
        """(whole server's CPU s/s, the pit's backends' CPU s/s per backend, the window's length);
        ``during(t0, seconds)`` runs the window's load (None: idle)."""
        from bench._linkrig import backends_cpu_s, db_cpu_s

        own0 = backends_cpu_s(self.dsn, self.prefix)
        cpu0, t0 = db_cpu_s(self.pm), time.monotonic()
        if during is None:
            time.sleep(seconds)
        else:
            during(t0, seconds)
        cpu1, t1 = db_cpu_s(self.pm), time.monotonic()
        own1 = backends_cpu_s(self.dsn, self.prefix)
        both = own0.keys() & own1.keys()
        own = sum(own1[p] - own0[p] for p in both) / (t1 - t0) / max(1, len(both))
        return (cpu1 - cpu0) / (t1 - t0), own, t1 - t0


def run(args: argparse.Namespace, emit: Any) -> int:
    from bench._lightpit import LightPit
    from bench._linkrig import database, postmaster_pid

    n = args.tables
    need = connections_needed(n)
    emit(
        "mode",
        f"light: {n} tables' uplinks (the real Uplink, SQL, roles, link keys, rules) from {args.procs} processes",
    )
    emit(
        "max_connections",
        f"{max(need, 300) if not args.db else 'the given server’s'} "
        f"(needs ≥ {need}: {n} tables + LAP 1 + floor view 5 + reserved 3 + 10)",
    )
    with (
        database(args.db, max_connections=max(need, 300)) as dsn,
        tempfile.TemporaryDirectory(prefix="tablectl-bench-light-") as tmp,
    ):
        lp = LightPit(dsn, n, Path(tmp), args.procs, link_timeout_s=float(args.link_timeout))
        try:
            t0 = time.monotonic()
            try:
                lp.start()
            except Exception as e:  # noqa: BLE001 - what happens at this size is the figure
                lap_log = (Path(tmp) / "lap.log").read_text(errors="replace").strip().splitlines()[-3:]
                emit("error", f"the pit did not start ({type(e).__name__}: {e}); the LAP said: {' | '.join(lap_log)}")
                return 1
            emit("start_s", f"{time.monotonic() - t0:.1f}")
            emit("tables", n)
            emit(
                "link_timeout_s",
                f"{args.link_timeout} (each uplink reads the LAP's rows every {args.link_timeout / 3:.2f} s)",
            )
            emit("link_tls", "no (light mode: one connection per table, made once; TLS costs at connection only)")
            pm = postmaster_pid(dsn)
            if pm is None:
                emit("db_cpu", "n/a (the server is not on this machine)")
                return 0
            _figures(args, lp, Windows(dsn, pm, lp.pit.role("")), emit)
        finally:
            lp.close()
    return 0


def _figures(args: argparse.Namespace, lp: Any, w: Windows, emit: Any) -> None:
    from bench.link import Idle, marginal
    from controller.lap.lap import wait_until

    n = len(lp.ids)
    time.sleep(2.0)  # the start's reads settled
    idle: list[tuple[float, float, float]] = []
    paced: list[tuple[float, float, float, int, float]] = []
    rnd = [3]
    before = [0]

    def play(t0: float, seconds: float) -> None:
        """Each table a round of ten contributions every ``round_s``, spread evenly."""
        rounds = max(1, int(seconds // args.round_s))
        step = args.round_s / n
        for k in range(rounds):
            for i, tid in enumerate(lp.ids):
                delay = t0 + k * args.round_s + i * step - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                lp.write(tid, 10, rnd[0])
            rnd[0] += 1
        rest = t0 + seconds - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        # the window lasts until the LAP holds every contribution written in it (their cost in it)
        wait_until(lambda: lp.lap_count() >= before[0] + rounds * n * 10, 120, 0.1)

    for _ in range(args.repeats):
        idle.append(w.measure(args.idle_s))
        if args.paced_s > 0:
            before[0] = lp.lap_count()
            cpu, own, dt = w.measure(args.paced_s, play)
            paced.append((cpu, own, dt, lp.lap_count() - before[0], time.monotonic()))
    idle.append(w.measure(args.idle_s))
    emit("db_cpu_idle_ms_per_table_s", _spread([r * 1000 / n for r, _o, _t in idle]))
    emit("db_cpu_idle_uplink_backends_ms_per_table_s", _spread([o * 1000 for _r, o, _t in idle]))
    tick = 1 / os.sysconf("SC_CLK_TCK")
    for i, (cpu, _own, dt, done, _end) in enumerate(paced):
        # the standing cost from the idle windows either side of this one; their difference its noise
        a, b = idle[i][0], idle[i + 1][0]
        m = marginal(cpu * dt, dt, Idle((a + b) / 2, abs(a - b)), max(1, done), tick)
        emit(
            f"paced_{i + 1}",
            f"{done} contributions in {dt:.1f} s; db CPU {cpu * 1000 * dt / max(1, done):.3f} ms each, marginal {m}",
        )
    _pushes(args, lp, emit)


def _pushes(args: argparse.Namespace, lp: Any, emit: Any) -> None:
    """Meter push latency: one contribution at a time; LAP decision -> every table's uplink."""
    from controller.lap.lap import wait_until

    before = lp.lap_count()
    start = time.time()
    for i in range(args.pushes):
        lp.write(lp.ids[i % len(lp.ids)], 1, 2)
        time.sleep(0.02)
    wait_until(lambda: lp.lap_count() >= before + args.pushes, 60, 0.05)
    time.sleep(2.0)
    lat, errors = lp.latencies(start)
    lat.sort()
    emit("meter_push_samples", len(lat))
    if lat:
        emit("meter_push_ms_p50", f"{percentile(lat, 50):.1f}")
        emit("meter_push_ms_p99", f"{percentile(lat, 99):.1f}")
        emit("meter_push_ms_max", f"{lat[-1]:.1f}")
    emit("uplink_errors", errors)
