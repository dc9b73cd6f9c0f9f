"""``tablectl bench NAME [ARGS...] [NAME [ARGS...]]...``: run benchmarks from bench/."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

NAME = "bench"
HELP = "run benchmarks (bench/) and print one 'key: value' line per figure"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "spec",
        nargs=argparse.REMAINDER,
        help="benchmark names, each optionally followed by its own options; 'list' lists them",
    )


def _jobs(spec: list[str], mods: Mapping[str, Any]) -> list[tuple[str, list[str]]] | None:
    """Split "a --x 1 b c --y" into [(a, [--x, 1]), (b, []), (c, [--y])]; None (said) when the
    first is not a benchmark."""
    jobs: list[tuple[str, list[str]]] = []
    for tok in spec:
        if tok in mods:
            jobs.append((tok, []))
        elif not jobs:
            print(f"tablectl bench: unknown benchmark {tok!r}; known: {', '.join(sorted(mods))}", file=sys.stderr)
            return None
        else:
            jobs[-1][1].append(tok)
    return jobs


def run(args: argparse.Namespace) -> int:
    from controller.commands._rigs import missing

    if (rc := missing(NAME, "bench")) is not None:
        return rc
    import bench

    mods = bench.discover()
    spec = list(args.spec)
    if not spec or spec == ["list"]:
        for name in sorted(mods):
            print(f"{name:12} {mods[name].HELP}")
        return 0 if spec else 2
    jobs = _jobs(spec, mods)
    if jobs is None:
        return 2

    from controller.core.progress import Progress

    status = 0
    for name, argv in jobs:
        mod = mods[name]
        p = argparse.ArgumentParser(prog=f"tablectl bench {name}", description=mod.HELP)
        mod.add_arguments(p)
        a = p.parse_args(argv)
        # a benchmark quiet for a few seconds shows how long it has run (stderr, on a terminal only)
        with Progress(f"bench {name}: running") as progress:

            def emit(key: str, value: object) -> None:
                progress.say(f"{key}: {value}", sys.stdout)

            emit("benchmark", name)
            status = max(status, int(mod.run(a, emit) or 0))
    return status
