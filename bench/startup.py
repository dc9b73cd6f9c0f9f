"""``tablectl bench startup``: start-up time and resident memory.

* ``start_to_ready_s`` — from spawning ``tablectl run --config ...`` (a fresh
  Python process, exactly the command systemd runs) to its ``READY=1``
  datagram on ``NOTIFY_SOCKET``: imports, configuration, the self-checks
  (ledger, software digest over the installed files, RNG self-test), pins
  (gpiozero mock pins) and serial links (the HIL simulators on ptys) — median
  and max of ``--runs`` starts on a fresh ledger; goal ≤ 1 s.
* memory (``--rounds N``, bench/_memory.py): the resident set size of a process
  playing ``--warmup`` and then N rounds against the simulators, sampled, with
  its growth and slope after the warm-up (goal: under 1 MB over 10,000 rounds);
  ``--rounds 0`` skips it.  Then ``start_to_ready_after_..._rounds_s``: the
  start-up again, on the ledger those rounds left.
* ``--history ROUNDS`` (bench/_longledger.py): all of the above on a ledger of
  ROUNDS rounds made for it — start-up and the self-check's share, the periodic
  audit's run, ``history``/``status``/``report --day``/``backup``, the ledger's
  size per 1,000 rounds and the bytes written per round played.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench import Emit
from bench._pilike import busy_neighbours, measure_slowdown, pick_core

NAME = "startup"
HELP = "process start -> READY=1 (s); resident memory over N rounds (MB, slope); --history: on a long ledger"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=5, help="starts to time (default 5)")
    p.add_argument(
        "--rounds", type=int, default=1000, help="rounds played after the warm-up, memory sampled (default 1000)"
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=2000,
        help="rounds played before the memory is sampled (default 2000: past the audit thread's first run)",
    )
    p.add_argument("--sample-every", type=int, default=500, help="rounds between memory samples (default 500)")
    p.add_argument("--speed", type=float, default=200.0, help="game-clock speed-up for the rounds (default 200)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--tracemalloc",
        action="store_true",
        help="trace the Python heap (tracemalloc) after the warm-up: its bytes beside the RSS (slower)",
    )
    p.add_argument("--no-compile", action="store_true", help="do not byte-compile the project's modules first")
    p.add_argument("--pi-like", action="store_true", help="pin each start to one core beside busy loaders (~Pi 4)")
    p.add_argument("--loaders", type=int, default=2, help="busy processes beside it with --pi-like (default 2)")
    p.add_argument(
        "--history",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="measure on a ledger of ROUNDS rounds made for it (bench/_longledger.py): start, audit, commands, size",
    )
    p.add_argument("--ledger-cache", type=Path, help="with --history: keep the made ledger here and reuse it")
    p.add_argument("--play", type=int, default=100, help="with --history: rounds played on it to measure writes")


def _toml(v: object) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)


def _time_start(config: Path, tmp: Path, core: int | None = None) -> float:
    """Spawn ``tablectl run`` and return the seconds until it sends READY=1."""
    sock_path = tmp / f"notify-{time.monotonic_ns()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.settimeout(60)
    env = {**os.environ, "NOTIFY_SOCKET": str(sock_path), "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(config)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=None if core is None else (lambda: os.sched_setaffinity(0, {core})),
    )
    try:
        while True:
            msg = sock.recv(4096).decode()
            if any(line == "READY=1" for line in msg.splitlines()):
                return time.monotonic() - t0
    except TimeoutError:
        raise RuntimeError(f"no READY=1 within 60 s: {proc.stderr.read().decode() if proc.stderr else ''}") from None
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        sock.close()


def _compile_project() -> None:
    """Byte-compile the packages ``tablectl run`` imports, as a wheel install does."""
    import compileall
    import importlib.util

    for pkg in ("controller", "drivers", "config"):
        spec = importlib.util.find_spec(pkg)
        if spec is not None and spec.submodule_search_locations:
            for loc in spec.submodule_search_locations:
                compileall.compile_dir(loc, quiet=1)


def _config_writer(tmp: Path, rig: object, compile_first: bool) -> Callable[[Path], Path]:
    """``config_for(state_dir)``: a hardware file for a table on ``state_dir`` with the rig's
    simulated devices and mock pins, its software digest recorded (as systemd/install.sh does)."""
    from controller.boot import selfcheck
    from hil.rig import PINS, rig_key_file, rig_ledger_key

    compiled = [not compile_first]

    def config_for(state: Path) -> Path:
        state.mkdir(parents=True, exist_ok=True)
        rig_ledger_key(state)  # made the first time, beside the state directory
        doc = {
            "table": {
                "id": "SIM-01",  # the rig's table id: the ledger --history makes and plays on is one table's
                "profile": "six-card-fortune-progressive",
                "state_dir": str(state),
                "software_record": str(state / "software.json"),
            },
            "gpio": {"pin_factory": "mock", **PINS},
            "serial": {s.device: {"port": s.path} for s in rig.sims if s.device in ("shoe", "shaker", "sign")},  # type: ignore[attr-defined]
            "ledger": {"key_file": str(rig_key_file(state))},  # the rig's throwaway key
        }
        config = tmp / f"table-{state.parent.name}-{state.name}.toml"
        config.write_text("\n".join(f"{k} = {_toml(v)}" for k, v in doc.items()) + "\n")
        if not compiled[0]:
            _compile_project()
            compiled[0] = True
        selfcheck.record_digest(state)
        return config

    return config_for


def run(args: argparse.Namespace, emit: Emit) -> int:
    from hil.rig import Rig

    with tempfile.TemporaryDirectory(prefix="tablectl-bench-startup-") as d:
        tmp = Path(d)
        state = tmp / "state"
        rig = Rig(tmp / "sims", seed=args.seed)  # only its simulated devices are used here
        for s in rig.sims:
            s.start()
        try:
            config_for = _config_writer(tmp, rig, not args.no_compile)
            if args.history:
                from bench import _longledger

                return _longledger.run(args, emit, tmp, config_for, _time_start)
            config = config_for(state)
            if args.pi_like:
                core = pick_core()
                alone, slowdown = measure_slowdown(core, args.loaders)
                emit("pi_like_core", core)
                emit("pi_like_workload_alone_s", f"{alone:.3f}")
                emit("pi_like_slowdown", f"{slowdown:.2f}")
                with busy_neighbours(core, args.loaders):
                    times = [_time_start(config, tmp, core) for _ in range(args.runs)]
            else:
                times = [_time_start(config, tmp) for _ in range(args.runs)]
            emit("start_to_ready_s", f"{statistics.median(times):.3f}")
            emit("start_to_ready_max_s", f"{max(times):.3f}")
            if args.rounds <= 0:
                return 0
            return _memory(args, emit, tmp, config_for)
        finally:
            for s in rig.sims:
                s.stop()


def _memory(args: argparse.Namespace, emit: Emit, tmp: Path, config_for: Callable[[Path], Path]) -> int:
    from bench import _memory

    status = _memory.run(args, emit, tmp)
    if status:
        return status
    config = config_for(tmp / "played")
    after = [_time_start(config, tmp) for _ in range(max(1, args.runs // 2))]
    emit(f"start_to_ready_after_{args.warmup + args.rounds}_rounds_s", f"{statistics.median(after):.3f}")
    return 0
