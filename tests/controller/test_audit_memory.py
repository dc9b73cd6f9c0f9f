"""The audit thread gives the C library's free memory back after each run (the memory
bench's slope; controller/books/auditrun.py ``release_free_memory``)."""

from __future__ import annotations

import ctypes
import sys
import threading
from pathlib import Path

import pytest

from controller.books import auditrun
from controller.books.auditrun import AuditThread, release_free_memory


def test_each_audit_run_is_followed_by_giving_the_free_memory_back(monkeypatch):
    seen: list[str] = []
    twice = threading.Event()

    def run() -> list[str]:
        seen.append("run")
        return []

    def trim() -> bool:
        seen.append("trim")
        if seen.count("trim") == 2:
            twice.set()
        return True

    monkeypatch.setattr(auditrun, "release_free_memory", trim)
    thread = AuditThread(run, 0.01, 0.01).start()
    try:
        assert twice.wait(5), seen
    finally:
        thread.stop()
    assert seen[:4] == ["run", "trim", "run", "trim"]


def test_a_failed_run_still_gives_the_memory_back(monkeypatch):
    trimmed = threading.Event()

    def trim() -> bool:
        trimmed.set()
        return True

    monkeypatch.setattr(auditrun, "release_free_memory", trim)

    def run() -> list[str]:
        raise RuntimeError("the ledger could not be read")

    monkeypatch.setattr(threading, "excepthook", lambda _args: None)  # the thread's end is expected
    thread = AuditThread(run, 0.01, 10.0).start()
    try:
        assert trimmed.wait(5)
    finally:
        thread.stop()


def _rss_anon_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    raise AssertionError("no RssAnon")


@pytest.mark.skipif(auditrun._malloc_trim() is None, reason="the C library has no malloc_trim (not glibc)")
def test_the_free_memory_given_back_leaves_the_resident_set():
    """4 MB freed below a block still in use: the allocator keeps it (only the top of a heap is
    given back by itself) until it is released."""
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    # each below the threshold for a mapping of its own; the last one, still in use, above the others
    *pieces, guard = [libc.malloc(64 * 1024) for _ in range(65)]
    assert all(pieces) and guard
    try:
        for p in pieces:
            ctypes.memset(p, 1, 64 * 1024)  # resident
        for p in pieces:
            libc.free(p)
        held = _rss_anon_kb()
        assert release_free_memory() is True
        assert held - _rss_anon_kb() > 3 * 1024, "the 4 MB freed are still resident"
    finally:
        libc.free(guard)


def test_no_malloc_trim_is_nothing_done(monkeypatch):
    monkeypatch.setattr(auditrun, "_malloc_trim", lambda: None)
    assert release_free_memory() is False


if sys.platform != "linux":  # pragma: no cover - the table runs on Linux
    pytestmark = pytest.mark.skip(reason="/proc/self/status")
