"""``tablectl bench link --tables T``: the linked progressive's figures.

The LAP and T uplinks run as real processes against PostgreSQL (``--db DSN`` or a throwaway
cluster with ``fsync=on`` and ``max_connections = 300``: room for 200 tables); the tables' side
(ledger, link socket, Linkage) is in this process (bench/_linkrig.py).

* ``contributions_per_s`` — link records written to the T ledgers (ten per append, as a round's
  contributions are) until the LAP holds them all, applied to the meter: end to end.
* ``db_cpu_ms_per_contribution`` — the database's CPU (its processes' user+system time from
  /proc, backends reaped included: ``bench._linkrig.db_cpu_s``) over the throughput run, divided by
  its contributions; ``db_cpu_share`` the same time over the run's wall time (1.0 = one core).
  Measured when the server runs on this machine (the throwaway cluster, or ``--db`` local and its
  data directory readable), else ``n/a``.
* ``meter_push_ms_p50`` / ``_p99`` — from the LAP's decision in the database (the trigger's
  ``clock_timestamp()`` in the NOTIFY payload, just before the commit) to the message's arrival on
  each table's link socket, over every table, one contribution at a time; goal p99 ≤ 500 ms.
* ``hits_order_answer_ms`` — two tables write a hit claim at the same instant: until both
  tables hold the LAP's answers (ordered 1 and 2).
* ``link_loss_detect_s`` — the LAP is SIGKILLed: until every table's Linkage has closed the
  linked wager (configured timeout 3 s; goal ≤ 5 s).

The database's CPU has two parts, and the throughput run's figure mixes them: what the pit costs
standing still (every uplink reads the LAP's rows on a timer, a third of the link timeout: a cost per table and second,
whatever is played), and what a contribution costs.  The throughput run is the machine
saturated, so the slower it goes (the more tables on the one machine), the more standing cost
falls on each contribution.  Two more measurements split them:

* ``db_cpu_idle_ms_per_table_s`` — ``--idle-s`` seconds with nothing played: the database's CPU
  per table and second (the uplinks' reads, the LAP's heartbeat and checks).
* ``db_cpu_ms_per_contribution_paced`` — every table plays a round of ten contributions every
  ``--round-s`` seconds (a pit at a steady pace, each table at the same rate whatever their
  number; the tables' turns spread evenly over the interval) for ``--paced-s`` seconds: the
  database's CPU over that run per contribution; ``db_cpu_marginal_ms_per_contribution`` the same
  less the standing cost over the run (the idle rate times its length): what a contribution
  itself costs (``within noise`` with the bound it gives when the difference is no larger than
  the idle run's two halves differ, scaled to the run, and a clock tick: never a negative figure).
  Goal: neither grows with the number of tables.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import percentile

NAME = "link"
HELP = "linked progressive: contributions/s, meter push p50/p99, two hits ordered+answered, link-loss detection"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tables", type=int, default=8)
    p.add_argument("--db", help="PostgreSQL DSN (default: a throwaway cluster)")
    p.add_argument("--contributions", type=int, default=4000, help="for the throughput figure (default 4000)")
    p.add_argument("--pushes", type=int, default=200, help="meter pushes timed (default 200)")
    p.add_argument("--idle-s", type=float, default=10.0, help="standing cost measured over this long (default 10)")
    p.add_argument(
        "--round-s", type=float, default=30.0, help="paced run: each table's round every this long (default 30)"
    )
    p.add_argument("--paced-s", type=float, default=60.0, help="paced run's length (default 60; 0 skips it)")
    p.add_argument(
        "--light",
        action="store_true",
        help="many tables' uplinks from a few processes, no table services (the database's side of a large pit)",
    )
    p.add_argument("--procs", type=int, default=4, help="--light: worker processes (default 4)")
    p.add_argument(
        "--link-timeout",
        type=int,
        default=3,
        help="--light: the tables' [progressive] link_timeout (s, default 3); each uplink reads the LAP's rows "
        "every third of it",
    )
    p.add_argument("--repeats", type=int, default=3, help="--light: idle and paced windows, alternating (default 3)")
    p.add_argument(
        "--no-tls",
        action="store_true",
        help="the throwaway cluster's link without TLS (default: TLS with a client certificate per table role)",
    )


def run(args: argparse.Namespace, emit: Any) -> int:
    from bench._linkrig import LinkSetup, Pit, database, postmaster_pid

    if args.light:
        from bench import _lightrun

        return _lightrun.run(args, emit)
    with database(args.db) as dsn, tempfile.TemporaryDirectory(prefix="tablectl-bench-link-") as tmp:
        pit = Pit(dsn, args.tables, Path(tmp), links=LinkSetup(tls=False if args.no_tls else None))
        try:
            t_start = time.monotonic()
            try:
                pit.start()
            except Exception as e:  # noqa: BLE001 - what happens at this size is the figure
                emit("tables", len(pit.ids))
                emit("error", f"the pit did not start ({type(e).__name__}: {e}); {_connection_note(pit)}")
                return 1
            emit("start_s", f"{time.monotonic() - t_start:.1f}")
            emit("link_tls", pit.tls_note)
            emit("uplinks_refused_too_many_clients", pit.uplink_says("too many clients"))
            tables = list(pit.tables.values())
            emit("tables", len(tables))
            pm = postmaster_pid(dsn)  # the server's processes, when on this machine (else no CPU figures)
            total = _throughput(args, pm, pit, tables, emit)
            if total is None:
                return 1
            idle = _idle(args, pm, len(tables), emit, dsn, pit.role(""))
            total += _paced(args, pm, pit, tables, idle, emit)
            _meter_push(args, pit, tables, total, emit)
            _two_hits(pit, tables, total + args.pushes, emit)
            # uplinks whose connection the progress deadline ended before the LAP is killed below
            # (a deadline that took a loaded database for a dead connection would show here)
            emit(
                "uplinks_dropped_by_deadline",
                pit.uplink_says("nothing acknowledged") + pit.uplink_says("unanswered for"),
            )
            _link_loss(pit, tables, emit)
        finally:
            pit.close()
    return 0


def _throughput(args: argparse.Namespace, pm: int | None, pit: Any, tables: list[Any], emit: Any) -> int | None:
    """1. throughput, end to end (and the database's CPU over it); the contributions written, or
    None when the LAP did not get them all."""
    from bench._linkrig import db_cpu_s
    from controller.lap.lap import wait_until

    cpu0 = db_cpu_s(pm) if pm else 0.0
    per: int = max(10, args.contributions // len(tables) // 10 * 10)
    total = per * len(tables)
    t0 = time.monotonic()
    for _ in range(per // 10):
        for te in tables:
            te.write([te.contribution(seat=s % 6 + 1) for s in range(10)])
    if not wait_until(lambda: pit.lap_count() >= total, 300, 0.01):
        emit("error", f"the LAP holds {pit.lap_count()} of {total} contributions")
        return None
    dt = time.monotonic() - t0
    emit("contributions", total)
    emit("contributions_per_s", f"{total / dt:.0f}")
    if pm:
        cpu = db_cpu_s(pm) - cpu0
        emit("db_cpu_ms_per_contribution", f"{cpu * 1000 / total:.3f}")
        emit("db_cpu_share", f"{cpu / dt:.2f}")
    else:
        emit("db_cpu_ms_per_contribution", "n/a (the server is not on this machine)")
    return total


def _idle(args: argparse.Namespace, pm: int | None, n: int, emit: Any, dsn: str, prefix: str) -> Idle | None:
    """1b. the standing cost: the database's CPU seconds per second with nothing played (None when
    the server is not on this machine)."""
    from bench._linkrig import backends_cpu_s, db_cpu_s

    if not pm or args.idle_s <= 0:
        return None
    time.sleep(1.0)  # the throughput run's last answers read
    # in two halves: how far they differ is how well the standing cost is known (its noise)
    own0 = backends_cpu_s(dsn, prefix)
    cpu0, t0 = db_cpu_s(pm), time.monotonic()
    time.sleep(args.idle_s / 2)
    cpu1, t1 = db_cpu_s(pm), time.monotonic()
    time.sleep(args.idle_s / 2)
    cpu2, t2 = db_cpu_s(pm), time.monotonic()
    own2 = backends_cpu_s(dsn, prefix)
    rate = (cpu2 - cpu0) / (t2 - t0)
    halves = ((cpu1 - cpu0) / (t1 - t0), (cpu2 - cpu1) / (t2 - t1))
    emit("db_cpu_idle_share", f"{rate:.3f}")
    emit("db_cpu_idle_ms_per_table_s", f"{rate * 1000 / n:.3f}")
    # the uplinks' own backends alone (the backends alive at both readings): on a server other
    # work shares (``--db``), the figure above counts that work too
    both = own0.keys() & own2.keys()
    own = sum(own2[p] - own0[p] for p in both) / (t2 - t0)
    emit("db_cpu_idle_uplink_backends_ms_per_table_s", f"{own * 1000 / max(1, len(both)):.3f} ({len(both)} backends)")
    return Idle(rate, abs(halves[0] - halves[1]))


@dataclass(frozen=True)
class Idle:
    """The standing cost: the database's CPU seconds per second with nothing played, and how far
    the idle run's two halves differed (seconds per second)."""

    rate: float
    spread: float


def marginal(cpu_s: float, seconds: float, idle: Idle, contributions: int, tick_s: float) -> str:
    """``db_cpu_marginal_ms_per_contribution``: the paced run's database CPU less its standing cost,
    per contribution; never a negative or meaningless figure: a difference within the noise (the
    idle halves' spread over the run, and a clock tick either side of each reading) is said as
    such, with the bound it gives."""
    standing = idle.rate * seconds
    noise = idle.spread * seconds + 2 * tick_s
    diff = cpu_s - standing
    if diff <= noise:
        bound = (max(diff, 0.0) + noise) * 1000 / contributions
        return (
            f"within noise (the run's database CPU {cpu_s:.2f} s, its standing cost {standing:.2f} s "
            f"± {noise:.2f} s): below {bound:.3f}"
        )
    return f"{diff * 1000 / contributions:.3f}"


def _paced(args: argparse.Namespace, pm: int | None, pit: Any, tables: list[Any], idle: Idle | None, emit: Any) -> int:
    """1c. every table at the same steady pace; the contributions written (0 when skipped)."""
    from bench._linkrig import db_cpu_s
    from controller.lap.lap import wait_until

    rounds = int(args.paced_s // args.round_s) if args.round_s > 0 else 0
    if not pm or rounds <= 0:
        return 0
    before = pit.lap_count()
    cpu0, t0 = db_cpu_s(pm), time.monotonic()
    step = args.round_s / len(tables)
    for k in range(rounds):
        for i, te in enumerate(tables):
            delay = t0 + k * args.round_s + i * step - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            te.write([te.contribution(seat=s % 6 + 1, round_no=k + 3) for s in range(10)])
    total = rounds * len(tables) * 10
    if not wait_until(lambda: pit.lap_count() >= before + total, 300, 0.05):
        emit("paced_error", f"the LAP holds {pit.lap_count() - before} of {total} paced contributions")
    time.sleep(1.0)  # the last answers read, as in the idle run
    cpu, dt = db_cpu_s(pm) - cpu0, time.monotonic() - t0
    emit("paced_contributions_per_s", f"{total / dt:.1f}")
    emit("db_cpu_ms_per_contribution_paced", f"{cpu * 1000 / total:.3f}")
    if idle is not None:
        import os

        emit("db_cpu_marginal_ms_per_contribution", marginal(cpu, dt, idle, total, 1 / os.sysconf("SC_CLK_TCK")))
    return total


def _meter_push(args: argparse.Namespace, pit: Any, tables: list[Any], total: int, emit: Any) -> None:
    """2. meter push latency, LAP commit -> every table."""
    from controller.lap.lap import wait_until

    time.sleep(0.5)
    start = time.time()
    for i in range(args.pushes):
        tables[i % len(tables)].write([tables[i % len(tables)].contribution()])
        time.sleep(0.02)
    wait_until(lambda: pit.lap_count() >= total + args.pushes, 30, 0.01)
    time.sleep(0.5)
    lat = sorted((rx - m["at"]) * 1000 for te in tables for rx, m in te.of("meter") if rx >= start and "at" in m)
    emit("meter_push_samples", len(lat))
    emit("meter_push_ms_p50", f"{percentile(lat, 50):.1f}")
    emit("meter_push_ms_p99", f"{percentile(lat, 99):.1f}")
    emit("meter_push_ms_max", f"{lat[-1]:.1f}")


def _two_hits(pit: Any, tables: list[Any], written: int, emit: Any) -> None:
    """3. two simultaneous hits: ordered and answered (each for a seat its table wagered on in that
    round: the LAP refuses a claim without one).  ``written``: the contributions the LAP holds."""
    from controller.books.ledger import Record
    from controller.core.records import Kind
    from controller.lap.lap import wait_until

    a, b = tables[0], tables[1 % len(tables)]
    for te in {a.tid: a, b.tid: b}.values():
        te.write([te.contribution(seat=1, round_no=2)])
    wait_until(lambda: pit.lap_count() >= written + len({a.tid, b.tid}), 30, 0.01)
    barrier = threading.Barrier(2)
    seqs: dict[str, int] = {}

    def claim(te: Any) -> None:
        barrier.wait()
        rec = Record(Kind.LINK_HIT, 2, {"level": "primary", "fraction": "1", "seat": 1, "hand": "five-aces"})
        seqs[te.tid] = te.write([rec])[0].seq

    t0 = time.monotonic()
    ths = [threading.Thread(target=claim, args=(te,)) for te in (a, b)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()

    def answered() -> bool:
        return all(any(m.get("seq") == seqs[te.tid] for _t, m in te.of("hit")) for te in (a, b))

    ok = wait_until(answered, 30, 0.001)
    emit("hits_order_answer_ms", f"{(time.monotonic() - t0) * 1000:.1f}" if ok else "timeout")
    orders = sorted(m["order"] for te in (a, b) for _t, m in te.of("hit") if m.get("seq") == seqs[te.tid])
    emit("hits_ordered", "yes" if orders == [1, 2] else f"no {orders}")


def _link_loss(pit: Any, tables: list[Any], emit: Any) -> None:
    """4. link-loss detection: the LAP dies; until every table has closed its linked wager."""
    t0 = time.monotonic()
    pit.kill(pit.lap)
    closed: dict[str, float] = {}
    while len(closed) < len(tables) and time.monotonic() - t0 < 30:
        for te in tables:
            if te.tid not in closed and (te.tick() is False or (te.closed_at or 0) >= t0):
                closed[te.tid] = (te.closed_at or time.monotonic()) - t0
        time.sleep(0.25)  # the table's tick (controller/play/linking.py TICK_S)
    emit("link_loss_timeout_s", 3.0)
    emit("link_loss_detect_s", f"{max(closed.values()):.2f}" if len(closed) == len(tables) else "not detected")


def _connection_note(pit: Any) -> str:
    """How many uplinks are alive and how many tables' links opened (what failed at this size)."""
    alive = sum(1 for p in pit.uplinks.values() if p.poll() is None)
    opened = sum(1 for te in pit.tables.values() if te.is_open())
    full = pit.uplink_says("too many clients")
    closed = [te.tid for te in pit.tables.values() if not te.is_open()]
    if closed:
        return (
            f"{alive}/{len(pit.ids)} uplinks running, {len(pit.ids) - len(closed)}/{len(pit.ids)} links open, "
            f"{full} refused 'too many clients'; {closed[0]}'s uplink last said: {pit.uplink_last_words(closed[0])}"
        )
    return (
        f"{alive}/{len(pit.ids)} uplinks running, {opened}/{len(pit.ids)} links open, {full} refused 'too many clients'"
    )
