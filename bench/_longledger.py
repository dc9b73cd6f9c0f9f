"""``tablectl bench startup --history ROUNDS``: a table that has played for a long time.

A ledger of ROUNDS rounds is made quickly (bench/_history.py: the product's own appends,
valid MACs, seals and meters, a mix of games, hits and voids; ``--ledger-cache DIR`` keeps it
for the next run), its witness written, and then, on it:

* ``start_to_ready_s`` — ``tablectl run`` spawned to READY=1 (median, max of ``--runs``), and
  the self-check's share from the ``selfcheck`` record each start writes: all of it
  (``selfcheck_s``) and the ledger's check alone (``selfcheck_ledger_s``);
* ``audit_run_s`` — one run of the service's periodic audit (controller/books/auditrun.py: the
  start-up check, the witness, the next slice of sealed segments), median of 3, and how many
  runs a whole pass takes (``audit_runs_per_pass``: the bound on finding an old edit);
* ``history_s``, ``history_hits_s``, ``status_s``, ``report_day_s`` (the last whole gaming
  day), ``backup_s`` (a first, whole copy) — each command as a technician runs it, a process
  of its own, median of ``--runs``;
* ``ledger_mb``, ``ledger_mb_per_1000_rounds`` — the database file;
* then ``--play`` rounds played on it by the simulators: ``wchar_per_round``, the bytes the
  process handed to write calls (the WAL's frames, its checkpoints into the database, the
  lock-out journal, the witness, the log) and ``bytes_written_per_round``, the process's
  ``write_bytes`` from /proc (what reached the block layer, the WAL index's mapped pages written
  back among them: it varies with the kernel's writeback), with the ledger's commits and WAL
  checkpoints per round; and
  ``backup_incremental_s``, the next backup after them (it brings the last copy up to date).

With ``--pi-like`` every start and command runs on one core beside busy loaders (as the
fresh-ledger figures do), and the audit run in this process on that core; ``load_before`` and
``load_after`` are the machine's load averages (``/proc/loadavg``) around the measurements.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

Emit = Callable[[str, object], None]
TABLE = "SIM-01"  # the rig's table (hil/rig.py): the made history and the rounds played on it are one table's


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def prepare(state: Path, rounds: int, emit: Emit) -> None:
    """The ledger of ``rounds`` rounds in ``state`` (made unless already there), its witness."""
    from bench._history import Span, build
    from controller.books.audit import LEDGER_FILE
    from controller.books.ledger import Ledger, Record
    from controller.books.standing import active_tilts
    from controller.books.witness import Witness, default_witness_dir
    from hil.rig import rig_ledger_key

    path = state / LEDGER_FILE
    key = rig_ledger_key(state)
    marker = state / "bench-history.json"
    if path.exists() and marker.exists() and json.loads(marker.read_text()).get("rounds") == rounds:
        emit("ledger_build", f"reused {path}")
    else:
        for p in state.glob("*"):
            p.unlink()
        state.mkdir(parents=True, exist_ok=True)
        events, seconds = build(path, key, Span(rounds, table=TABLE))
        marker.write_text(json.dumps({"rounds": rounds, "events": events}))
        emit("ledger_build_s", f"{seconds:.1f}")
    led = Ledger(path, TABLE, key=key)
    try:
        tilts = active_tilts(led)
        if tilts:  # left by an earlier run (a bench's shortcut: the table starts open)
            led.append(
                [Record("tilt.cleared", led.last_round_no, {"by": "bench", "reason": "bench", "tilts": sorted(tilts)})]
            )
        head = led.head()
    finally:
        led.close()
    Witness(default_witness_dir(state), TABLE, key).write(head)
    size = path.stat().st_size
    emit("ledger_rounds", rounds)
    emit("ledger_events", head.count)
    emit("ledger_mb", f"{size / 1e6:.1f}")
    emit("ledger_mb_per_1000_rounds", f"{size / 1e6 / rounds * 1000:.2f}")


def _where_args(state: Path) -> list[str]:
    from controller.books.witness import default_witness_dir
    from hil.rig import rig_key_file

    return [
        "--state-dir",
        str(state),
        "--key-file",
        str(rig_key_file(state)),
        "--witness-dir",
        str(default_witness_dir(state)),
    ]


def timed_command(argv: list[str], core: int | None) -> float:
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=None if core is None else (lambda: os.sched_setaffinity(0, {core})),
    )
    took = time.monotonic() - t0
    if out.returncode != 0:
        raise RuntimeError(
            f"tablectl {' '.join(argv[:2])} exited {out.returncode}: {(out.stderr or out.stdout)[-500:]}"
        )
    return took


def last_selfcheck(state: Path) -> dict[str, float]:
    from controller.books.audit import LEDGER_FILE
    from controller.books.history import open_readonly

    conn = open_readonly(state / LEDGER_FILE)
    try:
        row = conn.execute("SELECT data FROM events WHERE kind = 'selfcheck' ORDER BY seq DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    return dict(json.loads(row[0]).get("seconds", {})) if row else {}


def report_day(state: Path) -> str:
    """The last whole gaming day in the ledger (the day before its last event's)."""
    from datetime import timedelta

    from controller.books.audit import LEDGER_FILE
    from controller.books.history import open_readonly
    from controller.reports.report import gaming_day_of

    conn = open_readonly(state / LEDGER_FILE)
    try:
        (ts,) = conn.execute("SELECT ts FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    return (gaming_day_of(ts) - timedelta(days=1)).isoformat()


@contextmanager
def pinned(core: int | None) -> Iterator[None]:
    """This process on ``core`` for the block (the audit run measured in-process)."""
    if core is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {core})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def audit_runs(state: Path, core: int | None, emit: Emit, runs: int = 3) -> None:
    from controller.books.audit import Where
    from controller.books.auditrun import AuditRunner
    from controller.books.witness import default_witness_dir
    from hil.rig import rig_ledger_key

    runner = AuditRunner(Where(state, rig_ledger_key(state), default_witness_dir(state), TABLE), TABLE)
    times: list[float] = []
    cpu: list[float] = []
    with pinned(core):
        for _ in range(runs):
            problems = runner.run()
            if problems:
                raise RuntimeError(f"the audit found problems in the bench's ledger: {problems[:3]}")
            assert runner.last is not None
            times.append(runner.last.seconds)
            cpu.append(runner.last.cpu_seconds)
    emit("audit_run_s", f"{statistics.median(times):.3f}")
    emit("audit_run_cpu_s", f"{statistics.median(cpu):.3f}")
    emit("audit_run_max_s", f"{max(times):.3f}")
    emit("audit_slice_events", runner.slice_events)
    emit("audit_runs_per_pass", runner.runs_per_pass())
    with pinned(core):
        tail_runs(runner, emit, "tail_check")
        worst_tail(emit)


def tail_runs(runner: Any, emit: Emit, name: str, runs: int = 9) -> None:
    """The tail watch's check (``AuditRunner.run(tail_only=True)``, every ``Background.TAIL_EVERY_S``):
    its wall and CPU time (median, max of ``runs``), the events it walked, and the share of a core it
    takes at its period."""
    from controller.daemon.background import Background

    times: list[float] = []
    cpu: list[float] = []
    for _ in range(runs):
        problems = runner.run(tail_only=True)
        if problems:
            raise RuntimeError(f"the tail check found problems in the bench's ledger: {problems[:3]}")
        assert runner.last_tail is not None
        times.append(runner.last_tail.seconds)
        cpu.append(runner.last_tail.cpu_seconds)
    emit(f"{name}_events", runner.last_tail.events)
    emit(f"{name}_s", f"{statistics.median(times):.4f}")
    emit(f"{name}_max_s", f"{max(times):.4f}")
    emit(f"{name}_cpu_s", f"{statistics.median(cpu):.4f}")
    emit(f"{name}_core_share", f"{statistics.median(cpu) / Background.TAIL_EVERY_S:.4f}")


def worst_tail(emit: Emit) -> None:
    """The tail check at its worst: a ledger one event short of its next seal (1,999 events after
    the last one, rounds of the usual kinds: wagers, meter contributions), made here."""
    import tempfile

    from controller.books.audit import Where
    from controller.books.auditrun import AuditRunner
    from controller.books.ledger import CHECKPOINT_EVERY, Ledger, Record
    from controller.books.witness import Witness

    key = b"k" * 32
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-tail-") as d:
        state = Path(d) / "state"
        led = Ledger(state / "ledger.sqlite3", TABLE, key=key)
        recs = [Record("meter.init", 0, {"level": "primary", "seed": 500_000, "rate": "21/100"})]
        r = 0
        while len(recs) < 2 * CHECKPOINT_EVERY - 1:
            r += 1
            recs += [
                Record("round.open", r, {}),
                Record("wager.accepted", r, {"seat": 2, "spot": "progressive", "cents": 100}),
                Record("meter.increment", r, {"level": "primary", "wager": 100, "rate": "21/100"}),
                Record("round.complete", r, {}),
            ]
        recs = recs[: 2 * CHECKPOINT_EVERY - 1]  # a seal at event 2,000, then 1,999 events
        for i in range(0, len(recs), 100):  # commits of a round or so, as the table makes them
            led.append(recs[i : i + 100])
        wd = Path(d) / "witness"
        Witness(wd, TABLE, key).write(led.head())
        led.close()
        tail_runs(AuditRunner(Where(state, key, wd, TABLE), TABLE), emit, "tail_check_worst")


def commands(state: Path, dest: Path, core: int | None, runs: int, emit: Emit) -> None:
    where = _where_args(state)
    day = report_day(state)
    jobs: list[tuple[str, list[str]]] = [
        ("history_s", ["history", *where]),
        ("history_hits_s", ["history", "--hits", *where]),
        ("status_s", ["status", "--state-dir", str(state)]),
        ("report_day_s", ["report", "--day", day, *where]),
    ]
    emit("report_day", day)
    for name, argv in jobs:
        emit(name, f"{statistics.median(timed_command(argv, core) for _ in range(runs)):.3f}")
    shutil.rmtree(dest, ignore_errors=True)
    emit("backup_s", f"{timed_command(['backup', str(dest), '--mkdir', *where], core):.3f}")


def play(state: Path, rounds: int, emit: Emit) -> None:
    """``rounds`` rounds played by the simulators on the ledger: bytes written per round."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, bench._longledger as b; b._play_child(sys.argv[1], int(sys.argv[2]))",
            str(state),
            str(rounds),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"playing on the long ledger failed: {out.stderr[-1500:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    emit("played_rounds", res["rounds"])
    emit("bytes_written_per_round", res["write_bytes"] // max(1, res["rounds"]))
    emit("wchar_per_round", res["wchar"] // max(1, res["rounds"]))
    emit("commits_per_round", f"{res['commits'] / max(1, res['rounds']):.1f}")
    emit("wal_checkpoints_per_round", f"{res['checkpoints'] / max(1, res['rounds']):.2f}")


def _io() -> dict[str, int]:
    return {k: int(v) for k, v in (line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())}


def _play_child(state_dir: str, rounds: int) -> None:
    import random

    from controller.boot import selfcheck
    from controller.core.log import configure
    from hil.people import People
    from hil.rig import Rig

    configure(level="error", json=True, stream=sys.stderr)
    state = Path(state_dir)
    selfcheck.record_digest(state)  # this code's (a rig on this state directory checks it)
    rig = Rig(state, seed=3, speed=200.0)
    rig.shoe.shuffle_s = 0.0
    rig.start()
    try:
        rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 60)
        people = People(rig, random.Random(3))
        people.play_round()  # warm: the first round after a start
        writer = rig.service.writer
        assert writer is not None
        size0, io0, n0 = (state / "ledger.sqlite3").stat().st_size, _io(), rig.table.status["round"]
        c0, k0 = writer.stats.commits, writer.stats.checkpoints
        for _ in range(rounds):
            people.play_round()
        rig.service.writer.flush()  # type: ignore[union-attr]
        io1, n1 = _io(), rig.table.status["round"]
        commits, checkpoints = writer.stats.commits - c0, writer.stats.checkpoints - k0
        grew = (state / "ledger.sqlite3").stat().st_size - size0
    finally:
        rig.stop()
    print(
        json.dumps(
            {
                "rounds": n1 - n0,
                "write_bytes": io1["write_bytes"] - io0["write_bytes"],
                "wchar": io1["wchar"] - io0["wchar"],
                "grew": grew,
                "commits": commits,
                "checkpoints": checkpoints,
            }
        )
    )


def run(
    args: argparse.Namespace,
    emit: Emit,
    tmp: Path,
    config_for: Callable[[Path], Path],
    time_start: Callable[..., float],
) -> int:
    """The whole bench (bench/startup.py hands over its config writer and its start timer)."""
    from bench._pilike import busy_neighbours, measure_slowdown, pick_core

    state = (
        Path(args.ledger_cache) / f"history-{args.history}" / "state"
        if args.ledger_cache
        else tmp / "history" / "state"
    )
    emit("load_before", load())
    prepare(state, args.history, emit)
    config = config_for(state)
    core = pick_core() if args.pi_like else None
    if core is not None:
        alone, slowdown = measure_slowdown(core, args.loaders)
        emit("pi_like_core", core)
        emit("pi_like_workload_alone_s", f"{alone:.3f}")
        emit("pi_like_slowdown", f"{slowdown:.2f}")
    loaded: Any = busy_neighbours(core, args.loaders) if core is not None else nullcontext()
    with loaded:
        starts, checks = [], []
        for _ in range(args.runs):
            starts.append(time_start(config, tmp, core))
            checks.append(last_selfcheck(state))
        emit("start_to_ready_s", f"{statistics.median(starts):.3f}")
        emit("start_to_ready_max_s", f"{max(starts):.3f}")
        emit("selfcheck_s", f"{statistics.median(sum(c.values()) for c in checks):.3f}")
        emit("selfcheck_ledger_s", f"{statistics.median(c.get('ledger', 0.0) for c in checks):.3f}")
        audit_runs(state, core, emit)
        commands(state, tmp / "backups", core, args.runs, emit)
    if args.play > 0:
        play(state, args.play, emit)
        with busy_neighbours(core, args.loaders) if core is not None else nullcontext():
            took = timed_command(
                ["backup", str(tmp / "backups"), "--mkdir", "--incremental", *_where_args(state)], core
            )
        emit("backup_incremental_s", f"{took:.3f}")
    emit("load_after", load())
    return 0
