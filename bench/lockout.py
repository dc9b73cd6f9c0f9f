"""``tablectl bench lockout``: latency from the lock-out pin's edge to the moment
the accepted wagers are frozen (later sensor changes are then ignored), and to
the moment the accepted set is durable on disk; and from a bet sensor's edge to
its seat light.

The whole service runs as in the simulator — HIL devices on ptys, gpiozero mock
pins, the SQLite ledger with ``synchronous=FULL`` — on the real monotonic clock
(speed 1).  Each press: chips on some sensors, lock-out pin driven low (t0),
then the table's own ``perf_counter`` stamps are read; the dealer's void button
returns the round and the next round opens.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from bench import percentile

NAME = "lockout"
HELP = "lock-out edge -> wagers frozen / durable; sensor edge -> seat light (p50/p99, ms)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--presses", type=int, default=1000, help="lock-out presses to measure (default 1000)")
    p.add_argument("--seed", type=int, default=7)


def run(args: argparse.Namespace, emit) -> int:
    from controller.log import configure
    from hil.rig import PINS, Rig

    configure(level="error")
    rng = random.Random(args.seed)
    freeze: list[float] = []
    durable: list[float] = []
    light: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-") as tmp:
        rig = Rig(Path(tmp), seed=args.seed, speed=1.0)
        rig.shoe.shuffle_s = 0.0
        rig.start()
        try:
            table = rig.table
            table.wait_for(lambda s: s.get("state") == "open_for_wagers", 10)
            lock_pin = rig.pin(PINS["lockout"])
            void_pin = rig.pin(PINS["void"])
            for _ in range(args.presses):
                number = table.status["round"]
                seats = [s for s in range(1, 7) if rng.random() < 0.5] or [1]
                for s in seats:
                    lp = rig.light_pin(s)
                    t0 = time.perf_counter()
                    rig.place(s)
                    deadline = t0 + 1.0
                    while not lp.state and time.perf_counter() < deadline:
                        time.sleep(0)  # yield the GIL to the reactor thread
                    light.append((time.perf_counter() - t0) * 1000)
                time.sleep(0.025)  # past the sensors' debounce window
                table.perf.clear()
                t0 = time.perf_counter()
                lock_pin.drive_low()
                table.wait_for(lambda s: s.get("count_shown"), 10)
                freeze.append((table.perf["lockout_frozen"] - t0) * 1000)
                durable.append((table.perf["lockout_durable"] - t0) * 1000)
                lock_pin.drive_high()
                for s in seats:
                    rig.remove(s)
                time.sleep(0.025)
                void_pin.drive_low()
                table.wait_for(lambda s, n=number: s.get("state") == "open_for_wagers" and s.get("round", 0) > n, 10)
                void_pin.drive_high()
                time.sleep(0.025)
        finally:
            rig.stop()
    for name, xs in (("lockout_freeze", freeze), ("lockout_durable", durable), ("sensor_light", light)):
        xs.sort()
        emit(f"{name}_p50_ms", f"{percentile(xs, 50):.3f}")
        emit(f"{name}_p99_ms", f"{percentile(xs, 99):.3f}")
        emit(f"{name}_max_ms", f"{xs[-1]:.3f}")
    emit("presses", len(freeze))
    emit("sensor_edges", len(light))
    return 0
