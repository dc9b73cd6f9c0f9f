"""The simulators keep no memory per message (the memory bench's slope).

A simulator looks up its handler (``on_<NAME>``) by a name made per message.  CPython's
type attribute cache keeps a reference to the name object of every lookup it caches, by the
object's address: 4,096 entries, filled slowly by fresh strings over a long session (about
0.2 MB over the bench's 10,000 rounds, growth that was the harness's, not the service's).
Looked up by the interned name there is one object per message name.
"""

from __future__ import annotations

import gc
import random
import tracemalloc

import drivers.protocol as P
import hil.devices
from controller.core.clock import ScaledClock
from hil.devices import ShakerSim


def test_handling_messages_leaves_nothing_behind_in_the_simulator():
    sim = ShakerSim(ScaledClock(100.0), random.Random(1))
    sim.link.send = lambda *a: None  # type: ignore[method-assign]  # not started: what it would send goes nowhere
    mtype, payload = P.encode("shaker", "STATUS_REQ")
    churn: list[bytearray] = []
    try:
        tracemalloc.start()
        for i in range(3000):
            sim._on_message(mtype, payload)
            churn.append(bytearray(40))  # other work in between, as on the rig
            if i % 3 == 0:
                churn.pop(0)
            if i % 50 == 0:
                del sim.received[:], sim.sent[:]  # what the bench empties (drop_harness_logs)
        del sim.received[:], sim.sent[:]
        gc.collect()
        snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, hil.devices.__file__)])
    finally:
        tracemalloc.stop()
        sim.stop()
    kept = sum(s.size for s in snap.statistics("filename"))
    assert kept < 2048, f"{kept} bytes kept by hil/devices.py after 3,000 messages"
