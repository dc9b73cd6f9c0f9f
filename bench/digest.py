"""``tablectl bench digest``: what the software digest costs at start-up (controller/boot/selfcheck.py).

The digest covers our packages and the whole virtualenv.  Figures: the
files and bytes covered (``files``, ``mbytes``); the old digest over our packages'
files only, for comparison (``packages_only_s``); every file read and hashed, as
``tablectl verify`` does (``full_hash_s``); reading the record (``record_load_s``); and
the start-up check, which re-reads only files whose size, times or inode differ from
the record (``startup_check_s``) — with ``record_load_s``, the time the start-up
actually spends on it.  Each is the median of ``--runs``.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

NAME = "digest"
HELP = "software digest over the packages and the virtualenv: full hash vs the start-up check"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=5, help="timing runs per figure (default 5)")


def _median(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(args: argparse.Namespace, emit: Callable[[str, object], None]) -> int:
    from controller.boot import selfcheck as S

    files = S.installed_files()
    emit("files", len(files))
    emit("mbytes", f"{sum(st.st_size for _p, st in files.values()) / 1e6:.1f}")

    def packages_only() -> None:
        for name, (p, _st) in files.items():
            if not name.startswith("site-packages/"):
                hashlib.sha256(Path(p).read_bytes()).hexdigest()

    emit("packages_only_s", f"{_median(packages_only, args.runs):.3f}")
    emit("full_hash_s", f"{_median(lambda: S.manifest(full=True), args.runs):.3f}")
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-digest-") as d:
        rec = S.record_digest(Path(d) / "software.json")
        emit("record_load_s", f"{_median(lambda: S.load_record(Path(d) / 'software.json'), args.runs):.3f}")
        S._SEEN.clear()  # a fresh process: only the record is trusted

        def startup_check() -> object:
            S._SEEN.clear()
            return S.manifest(trust=rec)

        emit("startup_check_s", f"{_median(startup_check, args.runs):.3f}")
        ok = S.digest_of(S.manifest(trust=rec)) == rec.digest
    emit("startup_check_matches", "yes" if ok else "NO")
    return 0 if ok else 1
