"""The witness is written after every commit (controller/books/witness.py): its writing keeps no
memory behind (issue 26: the memory bench's slope).  Written as text, each write's codec
set-up left a name string in CPython's type attribute cache (up to 4,096 of them: slow
growth over hours of play)."""

from __future__ import annotations

import gc
import pathlib
import tracemalloc

import controller.books.witness
from controller.books.ledger import Head
from controller.books.witness import Witness


def test_writing_the_witness_after_every_commit_keeps_nothing_behind(tmp_path):
    w = Witness(tmp_path / "witness", "T1")
    churn: list[bytearray] = []
    try:
        tracemalloc.start()
        for n in range(1, 3001):
            w.write(Head(n, f"{n:064x}"))
            churn.append(bytearray(40))  # the service's other work in between
            if n % 3 == 0:
                churn.pop(0)
        gc.collect()
        where = [
            tracemalloc.Filter(True, controller.books.witness.__file__),
            tracemalloc.Filter(True, pathlib.__file__),
        ]
        snap = tracemalloc.take_snapshot().filter_traces(where)
    finally:
        tracemalloc.stop()
    kept = sum(s.size for s in snap.statistics("filename"))
    assert kept < 2048, f"{kept} bytes kept after 3,000 witness writes"
    assert w.read() == Head(3000, f"{3000:064x}") and w.written == 3000
