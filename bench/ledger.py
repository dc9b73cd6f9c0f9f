"""``tablectl bench ledger``: durable events per second with ``synchronous=FULL``.

Three figures: one event per transaction (``events_per_s_single``), the
writer thread under load with many submitters queueing up so that it
group-commits (``events_per_s_grouped``), and the time from submit to the
durable callback (``submit_to_durable_p50_ms`` / ``_p99_ms``).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from bench import Emit, percentile

NAME = "ledger"
HELP = "durable ledger events per second (synchronous=FULL), single and group-committed"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", type=int, default=2000)


def run(args: argparse.Namespace, emit: Emit) -> int:
    from controller.books.ledger import Ledger, Record, StoredEvent
    from controller.books.ledgerkey import throwaway_key
    from controller.books.ledgerwriter import Done, LedgerWriter

    key = throwaway_key()

    n = args.events
    with tempfile.TemporaryDirectory(prefix="tablectl-ledger-") as tmp:
        led = Ledger(Path(tmp) / "a.sqlite3", "BENCH", key=key)
        sync = led.db.execute("PRAGMA synchronous").fetchone()[0]
        t0 = time.perf_counter()
        for i in range(n // 4):
            led.append([Record("wager.accepted", i, {"seat": i % 6 + 1, "cents": 100})])
        dt = time.perf_counter() - t0
        emit("synchronous", {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[sync])
        emit("events_per_s_single", f"{(n // 4) / dt:.0f}")
        led.close()

        led = Ledger(Path(tmp) / "b.sqlite3", "BENCH", key=key)
        done = threading.Event()
        lat: list[float] = []
        count = [0]
        lock = threading.Lock()

        def deliver(fn: Done, evs: list[StoredEvent]) -> None:
            fn(evs)

        writer = LedgerWriter(led, deliver, lambda e: None)
        writer.start()

        def submitter(k: int) -> None:
            for i in range(n // 8):
                t = time.perf_counter()

                def cb(evs: list[StoredEvent], t: float = t) -> None:
                    with lock:
                        lat.append((time.perf_counter() - t) * 1000)
                        count[0] += len(evs)
                        if count[0] >= n:
                            done.set()

                writer.submit([Record("wager.accepted", i, {"seat": k, "cents": 100})], cb)

        t0 = time.perf_counter()
        threads = [threading.Thread(target=submitter, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        done.wait(120)
        dt = time.perf_counter() - t0
        writer.stop()
        emit("events_per_s_grouped", f"{count[0] / dt:.0f}")
        emit("commits", writer.stats.commits)
        emit("events_per_commit", f"{writer.stats.events_written / max(1, writer.stats.commits):.1f}")
        lat.sort()
        emit("submit_to_durable_p50_ms", f"{percentile(lat, 50):.2f}")
        emit("submit_to_durable_p99_ms", f"{percentile(lat, 99):.2f}")
        problems = led.verify()
        emit("chain_ok", "yes" if not problems else f"no ({len(problems)} problems)")
        led.close()
    return 0
