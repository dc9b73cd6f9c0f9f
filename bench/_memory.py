"""The memory part of ``tablectl bench startup`` (``--rounds N``): does the service's
resident memory stay flat over a long session?

A fresh process plays ``--warmup`` rounds and then ``--rounds`` more against the simulators
(``tablectl sim``'s set-up: the service, the simulated devices and the simulated people in one
process), sampling its resident set size (VmRSS, after a garbage collection) every
``--sample-every`` rounds.  What the simulators and the rig keep for tests and for the
balance — every message each device sent and received, the sign's messages, the shaker's
rolls, the keypad's prompts, the RNG's draws, the people's wagers per round, the rig's
emitted events — is emptied every 50 rounds (:func:`drop_harness_logs`), and the mock pins
keep a bounded history (hil/mockpins.py): what is left to grow is the service's.

The warm-up (default 2,000 rounds, about 80 s here) must include the first run of everything the
service does now and then, above all the ledger's audit thread (its first run 60 s after the
start, then every 2 minutes, wall clock): that thread's first run takes the process higher,
once — the C library's allocator serves the thread from an arena (here 16 arenas for the
process's 19 threads, the limit for 2 cores), and the audit's reads leave that arena at their
peak, about 0.8 MB, nearly all of it held free.  After each run the audit thread gives the
allocator's free pages back (controller/books/auditrun.py ``release_free_memory``, glibc's
``malloc_trim``): measured (an instrumented run, load average 5-11), 0.3-0.5 MB of the RSS
each run, the call 0.12 ms (1.4 ms the first: ctypes loaded).

Figures: the RSS after the warm-up and at the end, ``rss_growth_mb`` (end less warm-up) and
``rss_slope_mb_per_10000_rounds`` (the least-squares slope of the samples after the warm-up);
goal: under 1 MB over 10,000 rounds.  ``rss_samples_kb`` lists the samples.  Beside the RSS,
where its bytes are (:func:`heap`), each after the warm-up and its slope: the RSS's anonymous
memory and its mapped files' pages; the Python heap (``py_blocks``, and with ``--tracemalloc``
``traced``: tracemalloc's total, tracing from a sample before the warm-up's end; slower, and its
own tables raise the RSS and the C heap); SQLite's own allocations; the C library's heap in use
and held free (fragmentation).  A growing RSS with a flat Python
heap, SQLite and C heap in use is the allocator's, not an object the service keeps.  A
simulator too late on a loaded machine latches a link tilt: it is cleared as a technician
would and play goes on (``tilts_cleared``).

What grew (tracemalloc snapshots 1,000 rounds apart, by traceback): nothing of the service's
own structures; two name caches of CPython's filled a little every round — its type attribute
cache keeps every name object it looks an attribute up by (up to 4,096, by the object's
address), and the simulators' handler look-up (hil/devices.py, the harness's) and the
witness's text-mode write after every commit (controller/books/witness.py, the service's: a text
file's codec set-up looks attributes up by names made per call) each gave it a fresh string
per message or commit.  Both now use one name object (an interned name; the witness written
as bytes).  Measured after that (``--rounds 10000``, a loaded 2-core machine): the RSS's slope
1.57 MB per 10,000 rounds, nearly all of it two steps of about 0.9 MB, the C heap held free
+1.36 MB (on main's code before the fix below, this bench again, twice: 1.83 MB, steps of
0.86 and 1.0 MB after rounds 8,500 and 11,000, load average 2.6 at the start, 7.6 at the end;
1.89 MB, steps of 0.86 and 0.94 MB at the same rounds, load average 6.7, 6.3).

Those steps, attributed (malloc_info per arena at each sample; perf uprobes on malloc, realloc
and calloc of more than 200 KB in the measured process): they were the ledger-writer thread's
arena, and the only such allocation in 10,000 rounds was one of 961,216 bytes, four times, each
on the ledger-writer thread, from ``sys.intern``: CPython's table of interned strings rebuilt at
the same size.  The witness, written after every commit (about 9 a round), made its temporary
file's path each time (``Path.with_name``, which interns the new name): the name entered the
table and left it when the path was dropped, and a table full of deleted entries is rebuilt
whole, here every few thousand commits.  The first rebuild freed a copy the allocator had
mapped on its own, which raises glibc's threshold for such mappings to that size (and its
threshold for giving a heap's top back to twice it): the later copies came from the writer's
arena, and the freed ones stayed there, held free — the steps.  The witness now makes that path
once per process (controller/books/witness.py; tests/controller/test_witness_memory.py).  The
uprobes: ``perf probe -x libc.so.6 'malloc size=%di:u64'``, then ``perf record -p PID
--call-graph dwarf -e probe_libc:malloc --filter 'size > 200000'`` (realloc, calloc alike).

After it (the same machine, still loaded), the slope per 10,000 rounds: with the fix alone, an
instrumented run of the same rounds: no step, 0.65 MB; this bench on the fix alone: 0.09 MB
(growth 0.12 MB; RSS 40.9 MB after the warm-up, 41.0 MB after 12,000 rounds; load average 2.8
at the start, 9.8 at the end).  With the audit's ``release_free_memory`` too, this bench three
times: 0.26 MB (growth 0.31 MB; RSS 40.2 MB after the warm-up, 40.5 MB after 12,000 rounds; load
average 10.7, 8.4), 0.37 MB (growth 0.30 MB; 40.2 MB, 40.5 MB; load average 2.8, 9.8) and
0.38 MB (growth 0.46 MB; 40.4 MB, 40.9 MB; load average 6.7, 6.4).  The release lowers the
level (0.5-0.7 MB less after the warm-up), not the slope: the slope's fix is the witness's.
What is left (the first of those runs, slopes per 10,000 rounds): the C heap in
use +0.22 MB, SQLite's share of it +0.09 MB (the writer's page cache filling up to its size),
the C heap held free +0.13 MB, the Python heap +234 blocks.  With the fix alone, the audit's
arena grew at each run while the ledger grew towards a slice (a run reads the whole ledger up
to 250,000 events): 820 KB after the first run, 1,064 KB after the fifth, nearly all of it
held free; that is what ``release_free_memory`` gives back.
"""

from __future__ import annotations

import ctypes
import dataclasses
import gc
import json
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def mem() -> dict[str, int]:
    """/proc/self/status's sizes, kB: the RSS (VmRSS = RssAnon + RssFile + RssShmem) and its peak."""
    return {
        k: int(v.split()[0])
        for k, v in (line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
        if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem")
    }


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
        + ("keepcost",)
    ]


def _lib(name: str) -> Any:
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


_LIBC = _lib("libc.so.6")
#: the SQLite library Python's sqlite3 module is linked to (already loaded: the same library, the same counters)
_SQLITE = _lib("libsqlite3.so.0")
if _SQLITE is not None:
    _SQLITE.sqlite3_memory_used.restype = ctypes.c_int64
if _LIBC is not None and hasattr(_LIBC, "mallinfo2"):
    _LIBC.mallinfo2.restype = _MallInfo2


def heap() -> dict[str, int]:
    """Where the bytes are: the RSS's anonymous memory (``rss_anon_kb``: heaps, stacks) and its
    mapped files' pages (``rss_file_kb``: libraries, SQLite's shared-memory index); the Python
    objects' heap (``py_blocks``: blocks allocated by Python's allocator, sys.getallocatedblocks;
    ``traced_kb``: tracemalloc's total when it traces); SQLite's own allocations (``sqlite_kb``:
    page caches, prepared statements, sqlite3_memory_used); the C library's heap (``malloc_kb``:
    in use, all arenas and mmaps; ``malloc_free_kb``: held free in the arenas — fragmentation,
    not use)."""
    m = mem()
    out = {"rss_anon_kb": m["RssAnon"], "rss_file_kb": m["RssFile"] + m["RssShmem"]}
    out["py_blocks"] = sys.getallocatedblocks()
    if tracemalloc.is_tracing():
        out["traced_kb"] = tracemalloc.get_traced_memory()[0] // 1024
    if _SQLITE is not None:
        out["sqlite_kb"] = int(_SQLITE.sqlite3_memory_used()) // 1024
    if _LIBC is not None and hasattr(_LIBC, "mallinfo2"):
        mi = _LIBC.mallinfo2()
        out["malloc_kb"] = (mi.uordblks + mi.hblkhd) // 1024
        out["malloc_free_kb"] = mi.fordblks // 1024
    return out


def drop_harness_logs(rig: Any, people: Any = None) -> None:
    """Empty what the simulators, the rig and the people keep for tests (see the module docstring)."""
    for sim in getattr(rig, "sims", []):
        for name in ("sent", "received", "link_events", "messages", "rolls", "prompts"):
            log = getattr(sim, name, None)
            if isinstance(log, list):
                del log[:]
    for log in (getattr(rig, "emitted", None), getattr(getattr(rig, "rng", None), "draws", None)):
        if isinstance(log, list):
            del log[:]
    if people is not None:
        people.placed.clear()
        people.refused.clear()


def slope(points: list[tuple[int, int]]) -> float:
    """Least-squares slope of (round, kB) points, in kB per round."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else 0.0


def _clear(rig: Any) -> None:
    """A technician's clear, as at a table (the round in play is voided or resumed by the table)."""
    rig.service.post_command("clear", reason="bench: a simulator was late", by="bench")
    rig.table.wait_for(lambda s: s.get("state") != "tilt", 30)


@dataclass(frozen=True)
class Plan:
    """What :func:`rounds_child` plays and samples: ``warmup`` rounds, then ``rounds`` more, a
    sample every ``every`` after the warm-up, at ``speed`` times real time, the players drawn
    from ``seed``.  ``trace``: tracemalloc (one frame) from ``every`` rounds before the end of the
    warm-up, for the Python heap's bytes (what it traces is what was made since it started: the
    objects the service replaces as it plays must be traced already when the first sample is
    taken)."""

    warmup: int
    rounds: int
    every: int
    speed: float
    seed: int
    trace: bool = False


def rounds_child(state_dir: str, plan: Plan) -> None:
    """In a fresh process: play ``plan`` at a table kept in ``state_dir``, sample, print the
    figures as JSON (the last line)."""
    import random

    from controller.core.log import configure
    from hil.people import People
    from hil.rig import Rig

    configure(level="error", json=True, stream=sys.stderr)
    warmup, rounds, every, seed, trace = plan.warmup, plan.rounds, plan.every, plan.seed, plan.trace
    rig = Rig(Path(state_dir), seed=seed, speed=plan.speed)
    rig.shoe.shuffle_s = 0.0
    rig.start()
    samples: list[tuple[int, int]] = []
    heaps: list[dict[str, int]] = []
    try:
        rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 30)
        people = People(rig, random.Random(seed))
        early = None
        tilts = 0
        for i in range(1, warmup + rounds + 1):
            try:
                people.play_round()
            except (RuntimeError, TimeoutError):  # a simulator late on a loaded machine: a link tilt
                tilts += 1
                _clear(rig)
            if i % 50 == 0:
                drop_harness_logs(rig, people)
            if i == min(100, warmup + rounds):
                early = mem()
            if trace and i == max(1, warmup - every):  # a sample's worth early: the first sample traces
                tracemalloc.start(1)  # the heap's steady state, not the objects made since it started
            if i >= warmup and (i - warmup) % every == 0:
                gc.collect()
                samples.append((i, mem()["VmRSS"]))
                heaps.append(heap())
        m = mem()
        out = {"rss_kb": m["VmRSS"], "hwm_kb": m["VmHWM"], "rss_100_kb": (early or m)["VmRSS"], "samples": samples}
        out["heaps"] = heaps
        out["tilts_cleared"] = tilts
        print(json.dumps(out))
    finally:
        rig.stop()


def emit_heaps(emit: Any, samples: list[tuple[int, int]], heaps: list[dict[str, int]]) -> None:
    """The slope of each of :func:`heap`'s figures over the samples, per 10,000 rounds."""
    for key in heaps[0] if heaps else ():
        points = [(r, h[key]) for (r, _), h in zip(samples, heaps, strict=True) if key in h]
        per = slope(points) * 10_000
        if key == "py_blocks":
            emit("py_blocks_after_warmup", points[0][1])
            emit("py_blocks_slope_per_10000_rounds", f"{per:.0f}")
        else:
            emit(f"{key[:-3]}_mb_after_warmup", f"{points[0][1] / 1024:.2f}")
            emit(f"{key[:-3]}_slope_mb_per_10000_rounds", f"{per / 1024:.2f}")


def run(args: Any, emit: Any, tmp: Path) -> int:
    import subprocess

    played = tmp / "played"
    t0 = time.monotonic()
    code = "import json, sys, bench._memory as m; m.rounds_child(sys.argv[1], m.Plan(**json.loads(sys.argv[2])))"
    plan = Plan(
        args.warmup, args.rounds, args.sample_every, args.speed, args.seed, bool(getattr(args, "tracemalloc", False))
    )
    argv = [str(played), json.dumps(dataclasses.asdict(plan))]
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return 1
    res = json.loads(out.stdout.strip().splitlines()[-1])
    samples = [tuple(p) for p in res["samples"]]
    total = args.warmup + args.rounds
    emit(f"rss_mb_after_{min(100, total)}_rounds", f"{res['rss_100_kb'] / 1024:.1f}")
    emit(f"rss_mb_after_{total}_rounds", f"{res['rss_kb'] / 1024:.1f}")
    emit(f"rss_peak_mb_after_{total}_rounds", f"{res['hwm_kb'] / 1024:.1f}")
    if samples:
        emit("rss_mb_after_warmup", f"{samples[0][1] / 1024:.1f}")
        emit("rss_growth_mb", f"{(samples[-1][1] - samples[0][1]) / 1024:.2f}")
        emit("rss_slope_mb_per_10000_rounds", f"{slope(samples) * 10_000 / 1024:.2f}")
        emit("rss_samples_kb", " ".join(f"{r}:{kb}" for r, kb in samples))
        emit_heaps(emit, samples, res.get("heaps", []))
    emit("tilts_cleared", res.get("tilts_cleared", 0))
    emit("rounds_wall_s", f"{time.monotonic() - t0:.1f}")
    return 0
