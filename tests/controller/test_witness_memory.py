"""The witness is written after every commit (controller/books/witness.py): its writing keeps no
memory behind (the memory bench's slope).  Written as text, each write's codec
set-up left a name string in CPython's type attribute cache (up to 4,096 of them: slow
growth over hours of play)."""

from __future__ import annotations

import gc
import pathlib
import sys
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


def test_a_witness_write_interns_no_new_name(tmp_path, monkeypatch):
    """The temporary file's path is made once: a path made at each write interned its new name,
    and the interpreter's table of interned strings (about 1 MB), emptied of it again as each
    path was dropped, was rebuilt whole every few thousand commits, the C allocator keeping a
    freed copy of it now and then (steps of about 0.9 MB in the memory bench)."""
    w = Witness(tmp_path / "witness", "T1")
    w.write(Head(1, f"{1:064x}"))  # the first write makes what it needs
    real = sys.intern
    interned: list[str] = []

    def spy(s: str) -> str:
        interned.append(s)
        return real(s)

    monkeypatch.setattr(sys, "intern", spy)
    for n in range(2, 502):
        w.write(Head(n, f"{n:064x}"))
    monkeypatch.undo()
    assert interned == [], f"{len(interned)} names interned by 500 writes, e.g. {interned[:3]}"
    assert w.read() == Head(501, f"{501:064x}") and w.written == 501
    assert [p.name for p in (tmp_path / "witness").iterdir()] == ["witness.json"]
