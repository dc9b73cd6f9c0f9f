"""``tablectl bench lockout``: latency from the lock-out pin's edge to the moment
the accepted wagers are frozen (later sensor changes are then ignored), and to
the moment the accepted set is durable on disk; and from a bet sensor's edge to
its seat light.

The whole service runs as in the simulator — HIL devices on ptys, gpiozero mock
pins, the SQLite ledger with ``synchronous=FULL`` — on the real monotonic clock
(speed 1).  Each press: chips on some sensors, lock-out pin driven low (t0),
then the table's own ``perf_counter`` stamps are read; the dealer's void button
returns the round and the next round opens.

The disk's own figures come from the same run: before each press, once the ledger
writer is idle, a raw ``write`` of 4 KiB (in place, in a preallocated file in the
ledger's directory) and ``fsync``, and another with ``fdatasync`` (what SQLite syncs
its WAL with: it skips the file's timestamps, so it is the stricter yardstick).

``--pi-like`` (bench/_pilike.py) runs the whole process pinned to one core beside
``--loaders`` busy processes on it (about a Raspberry Pi 4's speed with two);
``pi_like_slowdown`` is the factor a fixed workload showed there.
``lockout_durable_to_fsync_p99`` is the lock-out's durable p99 over the raw fsync p99;
``lockout_durable_to_fdatasync_p99`` the same over the raw fdatasync p99.

Where the time goes: the path is stamped at each hand-over (``segment_*``, p50/p99 of
each step, and ``tail_*``, the mean of each step over the presses at or above the
durable p99):

* ``edge_to_posted`` — gpiozero (mock pin) calls the input callback, which posts to the reactor;
* ``posted_to_reactor`` — the reactor thread takes the event off its queue;
* ``reactor_to_frozen`` — debounce and ``BetBoard.freeze``;
* ``frozen_to_durable`` — the records built, encoded as one keyed block and written and synced
  to the lock-out journal (controller/books/lockjournal.py) on the reactor thread: ``lockout_durable``;
* ``durable_to_shown`` — the records handed to the ledger writer, the ``lock_out`` transition,
  and the count shown (``lockout_shown``).

The ledger's own copy of the records follows; its commit is stamped too (``ledger_segment_*``):
``submitted`` (handed to ``LedgerWriter.submit``), ``writer`` (the writer thread takes the batch),
``append`` (what else is queued, group commit), ``begin`` (JSON, hash chain, rows), ``commit``
(``BEGIN IMMEDIATE`` and the ``INSERT``s; 0 for a batch of events alone, one autocommit
``INSERT``), ``ledger_durable`` (the ``COMMIT`` or that ``INSERT``: WAL written and synced),
``handed_back`` (its callback given to the reactor's queue); ``ledger_durable_*`` is the edge to
the ledger's commit.

Sensor to light (``sensor_light_*``): from the bench driving a bet sensor's pin to the seat light's
pin changing (on the reactor thread: the light is on), the table idle (the light off first);
``sensor_light_seen_*`` adds the bench thread waking on it.  Its steps (``sensor_segment_*``,
``sensor_tail_*`` over the edges at or above the p99): ``edge_to_posted`` (gpiozero's callback
posts the edge), ``posted_to_reactor`` (the reactor thread takes it), ``reactor_to_lit`` (debounce,
the bet board, the light set), ``lit_to_seen``; ``sensor_tail_reactor_runqueue_ms``: of the tail,
how long the reactor thread was runnable but waiting for a core (the kernel's schedstat);
``sensor_edges_while_reactor_busy`` counts edges that came while the reactor handled another event.
The bench thread blocks on the pin's change
rather than polling the pin: a thread polling in a loop holds the GIL between its polls, and the
reactor, woken by the edge, may then wait for it up to the interpreter's switch interval (5 ms),
most of all on one core (``--pi-like``): the measuring thread's own cost, not the table's.

CPU time: for the segments one thread runs from end to end (the reactor's, the writer's) the
thread's CPU time is taken too (``cpu_*``, p50/p99): on a machine shared with other work the wall
time of a segment also holds waits for a core, which its CPU time does not.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import percentile

NAME = "lockout"
HELP = "lock-out edge -> wagers frozen / durable; sensor edge -> seat light (p50/p99, ms); raw fsync p99 alongside"

#: the stamps of one press, in path order; each segment is the time between two neighbours
STAGES = ("edge", "posted", "reactor", "frozen", "durable", "shown")
#: the ledger's commit of the same records, after the count is shown
LEDGER_STAGES = ("submitted", "writer", "append", "begin", "commit", "ledger_durable", "handed_back")
#: the ledger writer's trace keys (controller/books/ledgerwriter.py LedgerWriter.trace) for its stages
_WRITER_KEYS = {
    "writer": "writer_got",
    "append": "append_start",
    "begin": "begin",
    "commit": "commit",
    "ledger_durable": "committed",
    "handed_back": "handed_back",
}
PROBE_BLOCK = 4096
PROBE_BLOCKS = 64


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--presses", type=int, default=1000, help="lock-out presses to measure (default 1000)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--pi-like", action="store_true", help="pin this process to one core beside busy loaders (~Pi 4 speed)"
    )
    p.add_argument("--loaders", type=int, default=2, help="busy processes beside it with --pi-like (default 2)")
    p.add_argument(
        "--nice", type=int, default=None, help="with --pi-like: the service's niceness (the loaders stay at theirs)"
    )


class FsyncProbe:
    """Raw ``pwrite`` of one 4 KiB block in a preallocated file, rewritten in place (as a
    WAL that has wrapped is rewritten), then ``fsync`` — or ``fdatasync``, the call SQLite
    syncs its WAL with on Linux, which skips the inode's timestamps — in a given directory."""

    def __init__(self, directory: Path):
        self.path = Path(directory) / "fsync-probe"
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(self._fd, b"\0" * PROBE_BLOCK * PROBE_BLOCKS)
        os.fsync(self._fd)
        self._i = 0
        self._block = bytearray(PROBE_BLOCK)

    def sample_ms(self, sync: Callable[[int], None] = os.fsync) -> float:
        self._i += 1
        self._block[:8] = self._i.to_bytes(8, "little")
        t = time.perf_counter()
        os.pwrite(self._fd, self._block, (self._i % PROBE_BLOCKS) * PROBE_BLOCK)
        sync(self._fd)
        return (time.perf_counter() - t) * 1000

    def close(self) -> None:
        os.close(self._fd)
        self.path.unlink(missing_ok=True)


class PathStamps:
    """``perf_counter`` stamps along one lock-out's path, taken by wrapping the
    reactor's ``post`` and handler and through the ledger writer's ``trace``."""

    def __init__(self) -> None:
        self.armed = False
        self.now: dict[str, float] = {}
        self.cpu: dict[str, float] = {}  # the CPU time of the thread at a stamp, where one thread has both ends

    def arm(self) -> None:
        self.now = {}
        self.cpu = {}
        self.armed = True

    def disarm(self) -> dict[str, float]:
        self.armed = False
        return self.now

    @staticmethod
    def _is_lockout(kind: str, source: str, data: Mapping[str, Any] | None) -> bool:
        return kind == "input" and source == "lockout" and bool((data or {}).get("active"))

    def wrap_post(self, post: Callable[..., None]) -> Callable[..., None]:
        def stamped(kind: str, source: str = "", data: Mapping[str, Any] | None = None, *a: Any, **k: Any) -> None:
            if self.armed and "posted" not in self.now and self._is_lockout(kind, source, data):
                self.now["posted"] = time.perf_counter()
            post(kind, source, data, *a, **k)

        return stamped

    def wrap_handler(self, handler: Callable[[Any], None]) -> Callable[[Any], None]:
        def stamped(ev: Any) -> None:
            if self.armed and "reactor" not in self.now and self._is_lockout(ev.kind, ev.source, ev.data):
                self.now["reactor"] = time.perf_counter()
                self.cpu["reactor"] = time.thread_time()
                handler(ev)
                self.now["handler_done"] = time.perf_counter()
                self.cpu["handler_done"] = time.thread_time()
                return
            handler(ev)

        return stamped

    def wrap_submit(self, submit: Callable[..., None]) -> Callable[..., None]:
        def stamped(records: Any, done: Any = None, **kw: Any) -> None:
            records = list(records)
            if self.armed and "submitted" not in self.now and any(r.kind == "lockout" for r in records):
                self.now["submitted"] = time.perf_counter()
                self.cpu["submitted"] = time.thread_time()
            submit(records, done, **kw)

        return stamped

    def trace(self, stamps: Mapping[str, float], events: list[Any]) -> None:
        """The ledger writer's per-batch trace (on its thread): keep the lock-out's batch."""
        if self.armed and "writer" not in self.now and any(e.kind == "lockout" for e in events):
            for stage, key in _WRITER_KEYS.items():
                self.now[stage] = stamps[key]
                if f"cpu:{key}" in stamps:
                    self.cpu[stage] = stamps[f"cpu:{key}"]


class SensorStamps:
    """``perf_counter`` stamps along a bet sensor's path to its seat light: ``posted`` (the input
    callback has posted the edge, on the thread that drove the pin), ``reactor`` (the reactor
    thread takes it), ``lit`` (the light's pin changes, on the reactor thread: the light is on);
    the bench's own thread then wakes on ``lit`` (``seen``).  The light pin is watched by
    wrapping its ``_change_state``, so the bench thread blocks instead of polling the pin: a
    polling thread takes the one core, under ``--pi-like``, from the reactor it measures."""

    SEGMENTS = (("edge", "posted"), ("posted", "reactor"), ("reactor", "lit"), ("lit", "seen"))

    def __init__(self) -> None:
        self.sensor = ""
        self.now: dict[str, float] = {}
        self.lit = threading.Event()
        self.running = ""  # the event the reactor is handling now ("": none)
        self.reactor_tid = 0  # the reactor thread's id in the kernel (its scheduler statistics)
        self.busy: dict[str, int] = {}  # what the reactor was handling when a sensor's edge came

    def arm(self, sensor: str) -> None:
        self.sensor, self.now = sensor, {}
        self.lit.clear()

    def _mine(self, kind: str, source: str, data: Mapping[str, Any] | None) -> bool:
        return kind == "input" and source == self.sensor and bool((data or {}).get("active"))

    def wrap_post(self, post: Callable[..., None]) -> Callable[..., None]:
        def stamped(kind: str, source: str = "", data: Mapping[str, Any] | None = None, *a: Any, **k: Any) -> None:
            if "posted" not in self.now and self._mine(kind, source, data):
                self.now["posted"] = time.perf_counter()
                if self.running:  # the reactor was handling another event when this one came
                    self.busy[self.running] = self.busy.get(self.running, 0) + 1
            post(kind, source, data, *a, **k)

        return stamped

    def wrap_handler(self, handler: Callable[[Any], None]) -> Callable[[Any], None]:
        def stamped(ev: Any) -> None:
            if "reactor" not in self.now and self._mine(ev.kind, ev.source, ev.data):
                self.now["reactor"] = time.perf_counter()
            self.reactor_tid = self.reactor_tid or threading.get_native_id()
            self.running = f"{ev.kind}/{ev.source}"
            try:
                handler(ev)
            finally:
                self.running = ""

        return stamped

    def run_delay(self) -> float:
        """Seconds the reactor thread has spent runnable but waiting for a core, so far (the
        kernel's schedstat): its change over an edge is the part of the latency the scheduler took."""
        if not self.reactor_tid:
            return 0.0
        try:
            fields = Path(f"/proc/self/task/{self.reactor_tid}/schedstat").read_text().split()
        except OSError:
            return 0.0
        return int(fields[1]) / 1e9

    def watch(self, pin: Any) -> None:
        change = pin._change_state

        def changed(value: bool) -> bool:
            did = bool(change(value))
            if did and value and "lit" not in self.now:
                self.now["lit"] = time.perf_counter()
                self.lit.set()
            return did

        pin._change_state = changed


def sensor_figures(paths: list[dict[str, float]]) -> dict[str, str]:
    """p50/p99 of each step of the sensor's path, and each step's mean over the slowest edges
    (at or above the edge -> lit p99): where the tail goes."""
    out: dict[str, str] = {}
    whole = [(p["lit"] - p["edge"]) * 1000 for p in paths if "lit" in p]
    if not whole:
        return out
    cut = percentile(sorted(whole), 99)
    tail = [p for p in paths if "lit" in p and (p["lit"] - p["edge"]) * 1000 >= cut]
    for a, b in SensorStamps.SEGMENTS:
        out.update(_segment_figures(paths, tail, a, b))
    # the reactor thread's wait for a core during the edge (to the moment the bench saw the light)
    out["sensor_tail_reactor_runqueue_ms"] = f"{sum(p.get('runqueue', 0.0) * 1000 for p in tail) / len(tail):.3f}"
    return out


def _segment_figures(paths: list[dict[str, float]], tail: list[dict[str, float]], a: str, b: str) -> dict[str, str]:
    """One step of the sensor's path (stamp ``a`` to ``b``): p50/p99, and its mean over the ``tail``."""
    xs = sorted((p[b] - p[a]) * 1000 for p in paths if a in p and b in p)
    if not xs:
        return {}
    return {
        f"sensor_segment_{a}_to_{b}_p50_ms": f"{percentile(xs, 50):.3f}",
        f"sensor_segment_{a}_to_{b}_p99_ms": f"{percentile(xs, 99):.3f}",
        f"sensor_tail_{a}_to_{b}_ms": f"{sum((p[b] - p[a]) * 1000 for p in tail) / len(tail):.3f}",
    }


class GcPauses:
    """The cyclic garbage collector's pauses during the run (``gc.callbacks``): each one holds
    the GIL, so a press that meets one waits for it on whichever thread it runs."""

    def __init__(self) -> None:
        self._t = 0.0
        self.pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
        gc.callbacks.append(self._cb)

    def _cb(self, phase: str, info: Mapping[str, Any]) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.pauses[int(info["generation"])].append((time.perf_counter() - self._t) * 1000)

    def close(self) -> None:
        gc.callbacks.remove(self._cb)

    def figures(self) -> dict[str, str]:
        out = {}
        for gen, xs in self.pauses.items():
            out[f"gc{gen}_collections"] = str(len(xs))
            out[f"gc{gen}_max_ms"] = f"{max(xs, default=0.0):.3f}"
        return out


def run(args: argparse.Namespace, emit: Callable[[str, object], None]) -> int:
    if not args.pi_like:
        return _run(args, emit)
    from bench._pilike import busy_neighbours, measure_slowdown, pick_core

    core = pick_core()
    alone, slowdown = measure_slowdown(core, args.loaders)
    emit("pi_like_core", core)
    emit("pi_like_workload_alone_s", f"{alone:.3f}")
    emit("pi_like_slowdown", f"{slowdown:.2f}")
    before = os.sched_getaffinity(0)
    with busy_neighbours(core, args.loaders):
        os.sched_setaffinity(0, {core})  # every thread of the service, the simulators' too
        nice = os.getpriority(os.PRIO_PROCESS, 0)
        if args.nice is not None:  # this thread's, inherited by every thread made after (the loaders keep theirs)
            os.setpriority(os.PRIO_PROCESS, 0, args.nice)
        emit("nice", os.getpriority(os.PRIO_PROCESS, 0))
        try:
            return _run(args, emit)
        finally:
            os.sched_setaffinity(0, before)
            if args.nice is not None:
                os.setpriority(os.PRIO_PROCESS, 0, nice)


@dataclass
class _Samples:
    """What the presses measured (milliseconds, and each press's stamps)."""

    freeze: list[float] = field(default_factory=list)
    durable: list[float] = field(default_factory=list)
    shown_ms: list[float] = field(default_factory=list)
    ledger_durable: list[float] = field(default_factory=list)
    light: list[float] = field(default_factory=list)
    fsync: list[float] = field(default_factory=list)
    fdatasync: list[float] = field(default_factory=list)
    paths: list[dict[str, float]] = field(default_factory=list)
    cpus: list[dict[str, float]] = field(default_factory=list)
    sensor_paths: list[dict[str, float]] = field(default_factory=list)


def _run(args: argparse.Namespace, emit: Callable[[str, object], None]) -> int:
    from controller.core.log import configure
    from hil.rig import Rig

    configure(level="error")
    rng = random.Random(args.seed)
    m = _Samples()
    stamps = PathStamps()
    sensor = SensorStamps()
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-") as tmp:
        rig = Rig(Path(tmp) / "state", seed=args.seed, speed=1.0)  # its key and witness beside the state
        rig.shoe.shuffle_s = 0.0
        reactor = rig.service.reactor
        # before the devices take it
        reactor.post = stamps.wrap_post(sensor.wrap_post(reactor.post))  # type: ignore[method-assign]
        rig.start()
        writer, ledger = rig.service.writer, rig.service.ledger
        assert writer is not None and ledger is not None  # the service has started
        probe = FsyncProbe(ledger.path.parent)
        gc_pauses = GcPauses()
        try:
            checkpoints0, shown = _instrument(rig, stamps, sensor)
            for _ in range(args.presses):
                _press(rig, rng, _Probes(stamps, sensor, probe, shown), m)
        finally:
            gc_pauses.close()
            probe.close()
            rig.stop()
    _emit_figures(emit, m, gc_pauses, sensor)
    stats = getattr(writer, "stats", None)
    if stats is not None:  # the writer's own WAL checkpoints, off the commit path
        emit("ledger_checkpoints", stats.checkpoints - checkpoints0)
        emit("ledger_checkpoint_ms_total", f"{stats.checkpoint_s * 1000:.1f}")
        emit("ledger_wal_frames_max", stats.max_wal_frames)
    return 0


def _instrument(rig: Any, stamps: PathStamps, sensor: SensorStamps) -> tuple[int, threading.Event]:
    """Stamp the reactor, the ledger writer and the lights; the writer's checkpoints so far, and an
    event set when the count is shown."""
    table, reactor = rig.table, rig.service.reactor
    writer, ledger = rig.service.writer, rig.service.ledger
    table.wait_for(lambda s: s.get("state") == "open_for_wagers", 10)
    assert reactor.handler is not None
    reactor.handler = stamps.wrap_handler(sensor.wrap_handler(reactor.handler))
    for seat in range(1, 7):
        sensor.watch(rig.light_pin(seat))
    writer.submit = stamps.wrap_submit(writer.submit)
    if hasattr(ledger, "cpu_clock"):
        ledger.cpu_clock = time.thread_time  # the writer's CPU time at its stamps
    if hasattr(writer, "trace"):
        writer.trace = stamps.trace
    checkpoints0 = getattr(getattr(writer, "stats", None), "checkpoints", 0)
    # the bench's thread waits for the count to be shown, woken by that alone: ``table.wait_for``
    # would wake it on every status publish, each wake taking the GIL on the path measured
    shown = threading.Event()
    table.listeners.append(lambda what, _data: shown.set() if what == "count_shown" else None)
    return checkpoints0, shown


@dataclass(frozen=True)
class _Probes:
    """What the bench measures a press with: the path's stamps, the sensors' and lights' edges,
    the disk's fsync, and the count shown."""

    stamps: PathStamps
    sensor: SensorStamps
    probe: FsyncProbe
    shown: threading.Event


def _press(rig: Any, rng: random.Random, probes: _Probes, m: _Samples) -> None:
    """One round: chips on some seats, the lock-out pressed and measured, then the round voided."""
    from hil.rig import PINS

    stamps, sensor, probe, shown = probes.stamps, probes.sensor, probes.probe, probes.shown

    table, writer = rig.table, rig.service.writer
    number = table.status["round"]
    seats = [s for s in range(1, 7) if rng.random() < 0.5] or [1]
    for s in seats:
        _place_chip(rig, sensor, s, m)
    time.sleep(0.025)  # past the sensors' debounce window
    writer.flush()  # the disk samples with the writer idle, as the press finds it
    _sample_disk(probe, m)
    table.perf.clear()
    shown.clear()
    stamps.arm()
    lock_pin = rig.pin(PINS["lockout"])
    t0 = time.perf_counter()
    lock_pin.drive_low()
    if not shown.wait(10):
        raise TimeoutError(f"no count shown after the lock-out; status: {table.status}")
    # the writer traces its batch after handing the callbacks over (and after the witness):
    # wait for that, so the writer's stamps of this press are kept — twice, because a flush
    # marker taken in the same batch as the lock-out's records is answered before the trace
    writer.flush()
    writer.flush()
    _record_press(table.perf, stamps, t0, m)
    lock_pin.drive_high()
    for s in seats:
        rig.remove(s)
    time.sleep(0.025)
    void_pin = rig.pin(PINS["void"])
    void_pin.drive_low()
    table.wait_for(lambda s, n=number: s.get("state") == "open_for_wagers" and s.get("round", 0) > n, 10)
    void_pin.drive_high()
    time.sleep(0.025)


def _place_chip(rig: Any, sensor: SensorStamps, s: int, m: _Samples) -> None:
    """A chip on seat ``s``'s progressive spot: the time to its light."""
    off_by = time.perf_counter() + 1.0  # the light off first (the last round's chip removed)
    while rig.light_pin(s).state and time.perf_counter() < off_by:
        time.sleep(0.005)
    sensor.arm(f"bet.progressive.{s}")
    waited = sensor.run_delay()
    t0 = time.perf_counter()
    rig.place(s)
    if not sensor.lit.wait(1.0):
        raise TimeoutError(f"seat {s}'s light did not come on; status: {rig.table.status}")
    sensor.now.update(edge=t0, seen=time.perf_counter(), runqueue=sensor.run_delay() - waited)
    m.sensor_paths.append(sensor.now)
    m.light.append((sensor.now["lit"] - t0) * 1000)


def _sample_disk(probe: FsyncProbe, m: _Samples) -> None:
    if len(m.fsync) % 2:  # the two raw syncs, in turns first
        m.fdatasync.append(probe.sample_ms(os.fdatasync))
        m.fsync.append(probe.sample_ms(os.fsync))
    else:
        m.fsync.append(probe.sample_ms(os.fsync))
        m.fdatasync.append(probe.sample_ms(os.fdatasync))


def _record_press(perf: Mapping[str, float], stamps: PathStamps, t0: float, m: _Samples) -> None:
    path = stamps.disarm()
    m.cpus.append(stamps.cpu)
    path.update(edge=t0, frozen=perf["lockout_frozen"], durable=perf["lockout_durable"], shown=perf["lockout_shown"])
    m.paths.append(path)
    m.freeze.append((perf["lockout_frozen"] - t0) * 1000)
    m.durable.append((perf["lockout_durable"] - t0) * 1000)
    m.shown_ms.append((perf["lockout_shown"] - t0) * 1000)
    if "ledger_durable" in path:
        m.ledger_durable.append((path["ledger_durable"] - t0) * 1000)


def _emit_spread(emit: Callable[[str, object], None], name: str, xs: list[float]) -> None:
    xs = sorted(xs)
    emit(f"{name}_p50_ms", f"{percentile(xs, 50):.3f}")
    emit(f"{name}_p99_ms", f"{percentile(xs, 99):.3f}")
    emit(f"{name}_max_ms", f"{xs[-1]:.3f}")


def _emit_figures(emit: Callable[[str, object], None], m: _Samples, gc_pauses: GcPauses, sensor: SensorStamps) -> None:
    figures = [("lockout_freeze", m.freeze), ("lockout_durable", m.durable), ("lockout_shown", m.shown_ms)]
    if len(m.ledger_durable) == len(m.durable):
        figures.append(("ledger_durable", m.ledger_durable))
    seen = [(p["seen"] - p["edge"]) * 1000 for p in m.sensor_paths]
    for name, xs in (*figures, ("sensor_light", m.light), ("sensor_light_seen", seen)):
        _emit_spread(emit, name, xs)
    durable_p99 = percentile(sorted(m.durable), 99)
    for name, xs in (("fsync", m.fsync), ("fdatasync", m.fdatasync)):
        _emit_spread(emit, name, xs)
        emit(f"lockout_durable_to_{name}_p99", f"{durable_p99 / percentile(sorted(xs), 99):.2f}")
    emit("presses", len(m.freeze))
    _emit_all(emit, gc_pauses.figures())
    emit("sensor_edges", len(m.light))
    _emit_all(emit, segment_figures(m.paths, m.durable))
    _emit_all(emit, sensor_figures(m.sensor_paths))
    emit("sensor_edges_while_reactor_busy", " ".join(f"{k}:{n}" for k, n in sorted(sensor.busy.items())) or "0")
    _emit_all(emit, cpu_figures(m.paths, m.cpus))


def _emit_all(emit: Callable[[str, object], None], figures: Mapping[str, object]) -> None:
    for key, value in figures.items():
        emit(key, value)


def segment_figures(paths: list[dict[str, float]], durable: list[float]) -> dict[str, str]:
    """p50/p99 of each segment, and each segment's mean over the slowest presses (at or
    above the durable p99): where the tail's time went.  A segment the code under test
    does not stamp (an older ledger writer) is left out."""
    out: dict[str, str] = {}
    cut = percentile(sorted(durable), 99)
    tail = [p for p, d in zip(paths, durable, strict=True) if d >= cut]
    for prefix, stages in (("", STAGES), ("ledger_", LEDGER_STAGES)):
        for a, b in zip(stages, stages[1:], strict=False):
            xs = _spans(paths, a, b)
            if xs is not None:
                out |= _p50_p99(f"{prefix}segment_{a}_to_{b}", xs)
                out[f"{prefix}tail_{a}_to_{b}_ms"] = f"{sum((p[b] - p[a]) * 1000 for p in tail) / len(tail):.3f}"
    return out


#: segments run by one thread from end to end, whose CPU time (``thread_time``) is taken too:
#: the reactor's (up to the submit, and its work after it: the transition, the status published)
#: and the ledger writer's
CPU_SEGMENTS = (
    ("reactor", "submitted"),
    ("submitted", "handler_done"),
    ("writer", "append"),
    ("append", "begin"),
    ("begin", "commit"),
    ("commit", "ledger_durable"),
    ("ledger_durable", "handed_back"),
)


def cpu_figures(paths: list[dict[str, float]], cpus: list[dict[str, float]]) -> dict[str, str]:
    """Each one-thread segment's CPU time p50/p99 (``cpu_*``; its wall time less its CPU time is
    time spent waiting: for the GIL, for the disk, for a core), and the wall time of the reactor's
    work after the submit (``segment_submitted_to_handler_done_*``), which runs while the writer
    writes and syncs."""
    out: dict[str, str] = {}
    walls = _spans(paths, "submitted", "handler_done")
    if walls is not None:
        out |= _p50_p99("segment_submitted_to_handler_done", walls)
    for a, b in CPU_SEGMENTS:
        xs = _spans(cpus, a, b, started=True)
        if xs is not None:
            out |= _p50_p99(f"cpu_{a}_to_{b}", xs)
    return out


def _spans(samples: list[dict[str, float]], a: str, b: str, *, started: bool = False) -> list[float] | None:
    """The milliseconds from stamp ``a`` to ``b`` in every sample, sorted; None when a sample lacks
    one (a stage the code under test does not stamp; ``started``: or its ``a`` is not positive)."""
    xs = sorted((s[b] - s[a]) * 1000 for s in samples if a in s and b in s and (not started or s[a] > 0))
    return xs if len(xs) == len(samples) else None


def _p50_p99(name: str, xs: list[float]) -> dict[str, str]:
    """``{name}_p50_ms`` and ``{name}_p99_ms`` of the sorted ``xs``."""
    return {f"{name}_p50_ms": f"{percentile(xs, 50):.3f}", f"{name}_p99_ms": f"{percentile(xs, 99):.3f}"}
