"""``tablectl bench sim``: what ``tablectl sim`` costs, per game.

Each run is a fresh process, exactly ``tablectl sim --rounds N --game G``:

* ``<game>_wall_s`` — wall time from spawning it to its exit;
* ``<game>_user_s`` / ``<game>_sys_s`` — its CPU time (user, system), from the
  children's resource usage;
* ``<game>_identical`` — with ``--repeat 2`` or more: every run of the game
  printed byte-identical output (the same seed plays the same rounds);
* ``<game>_same_as_no_skip`` — with ``--compare``: the output equals that of a run
  with ``--no-idle-skip`` (the game clock at its plain speed throughout), whose
  figures are printed as ``<game>_no_skip_*``.

The 1-minute load average before and after each game is printed too: the
machine may be shared, and a busy one stretches the wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable

from controller.gamedefs import game_ids

NAME = "sim"
HELP = "tablectl sim per game: wall and CPU seconds, same output run after run"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=200, help="rounds per run (default 200)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--games",
        type=lambda v: [g for g in v.split(",") if g],
        default=list(game_ids()),
        help="table profiles, comma-separated (default: every declared game)",
    )
    p.add_argument("--repeat", type=int, default=1, help="runs per game (default 1); outputs must match")
    p.add_argument("--compare", action="store_true", help="also one run per game with --no-idle-skip")


def _run(game: str, rounds: int, seed: int, *extra: str) -> tuple[float, float, float, int, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "controller", "sim", "--game", game, "--rounds", str(rounds), "--seed", str(seed)]
    p = subprocess.run(
        [*cmd, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, p.returncode, p.stdout


def run(args: argparse.Namespace, emit: Callable[[str, object], None]) -> int:
    emit("rounds", args.rounds)
    emit("cpus", os.cpu_count())
    status = 0
    for game in args.games:
        emit(f"{game}_load_before", f"{os.getloadavg()[0]:.2f}")
        outputs, ok = _repeats(args, game, emit)
        status = status if ok else 1
        if args.compare and not _same_without_skip(args, game, outputs[0], emit):
            status = 1
        emit(f"{game}_load_after", f"{os.getloadavg()[0]:.2f}")
    return status


def _repeats(args: argparse.Namespace, game: str, emit: Callable[[str, object], None]) -> tuple[list[bytes], bool]:
    """The game run ``--repeat`` times: each run's times; its outputs, and whether every run exited 0
    and (repeated) printed the same."""
    outputs = []
    ok = True
    for i in range(max(1, args.repeat)):
        wall, user, sys_, rc, out = _run(game, args.rounds, args.seed)
        outputs.append(out)
        tag = game if i == 0 else f"{game}_run{i + 1}"
        emit(f"{tag}_wall_s", f"{wall:.2f}")
        emit(f"{tag}_user_s", f"{user:.2f}")
        emit(f"{tag}_sys_s", f"{sys_:.2f}")
        if rc != 0:
            emit(f"{tag}_exit", rc)
            ok = False
    if args.repeat > 1:
        same = all(o == outputs[0] for o in outputs)
        emit(f"{game}_identical", "yes" if same else "NO")
        ok = ok and same
    return outputs, ok


def _same_without_skip(args: argparse.Namespace, game: str, first: bytes, emit: Callable[[str, object], None]) -> bool:
    """The game again with ``--no-idle-skip``: its times, and whether it printed the same."""
    wall, user, sys_, rc, out = _run(game, args.rounds, args.seed, "--no-idle-skip")
    emit(f"{game}_no_skip_wall_s", f"{wall:.2f}")
    emit(f"{game}_no_skip_user_s", f"{user:.2f}")
    emit(f"{game}_no_skip_sys_s", f"{sys_:.2f}")
    same = out == first and rc == 0
    emit(f"{game}_same_as_no_skip", "yes" if same else "NO")
    return same
