"""The ledger writer thread: group commit, durable callbacks, and WAL checkpoints kept
off the commit path (SQLite's automatic checkpoint off; the writer checkpoints when
idle, or after a bounded number of commits when never idle), with the WAL restarted
in the checkpoint, not in the next commit.  SPEC § 5: durable before shown; nothing
lost when the process is killed, during a checkpoint too."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from controller.books.ledger import Ledger, Record, StoredEvent
from controller.books.ledgerwriter import LedgerWriter, WriterSettings
from tests.conftest import TEST_KEY

PAGE = 4096
WAL_HEADER, FRAME_HEADER = 32, 24


def _wal_frames_capacity(path: Path) -> int:
    """How many frames the WAL file has ever held (its size: a WAL is rewritten in place
    after a checkpoint, not shrunk)."""
    wal = Path(f"{path}-wal")
    if not wal.exists():
        return 0
    return max(0, (wal.stat().st_size - WAL_HEADER) // (PAGE + FRAME_HEADER))


def _wal_frames_now(path: Path) -> int:
    """Frames in the WAL now: ``mxFrame`` of the WAL-index header, at offset 16 of the
    ``-shm`` file (native byte order, as SQLite writes it)."""
    shm = Path(f"{path}-shm").read_bytes()[:48]
    return int.from_bytes(shm[16:20], sys.byteorder)


class Harness:
    def __init__(self, tmp_path: Path, **writer_args: float):
        self.path = tmp_path / "l.sqlite3"
        self.ledger = Ledger(self.path, "T1", key=TEST_KEY)
        self.errors: list[BaseException] = []
        self.writer = LedgerWriter(
            self.ledger,
            lambda fn, evs: fn(evs),  # "the reactor": run the callback on the writer thread
            self.errors.append,
            settings=WriterSettings(**writer_args),  # type: ignore[arg-type]
        )
        self.writer.start()

    def commit(self, i: int, n: int = 3) -> list[StoredEvent]:
        done = threading.Event()
        out: list[StoredEvent] = []
        recs = [Record("wager.accepted", i, {"seat": s, "spot": "progressive", "cents": 100}) for s in range(1, n + 1)]

        def durable(evs: list[StoredEvent]) -> None:
            out.extend(evs)
            done.set()

        self.writer.submit(recs, durable)
        assert done.wait(10), "not acknowledged"
        return out

    def verify(self) -> list[str]:
        """On a connection of its own: the writer's may be inside an idle checkpoint right now."""
        ro = Ledger.open_readonly(self.path, key=TEST_KEY)
        try:
            return ro.verify()
        finally:
            ro.close()

    def close(self) -> None:
        self.writer.stop()
        self.ledger.close()


@pytest.fixture
def harness(tmp_path):
    made: list[Harness] = []

    def make(**kw: float) -> Harness:
        h = Harness(tmp_path / str(len(made)), **kw)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()


def test_sqlite_autocheckpoint_is_off_under_the_writer(harness):
    h = harness()
    h.writer.flush()
    assert h.ledger.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    assert h.ledger.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL: each commit synced


def test_acknowledged_events_are_the_stored_ones_in_order(harness):
    h = harness()
    seen = [h.commit(i) for i in range(5)]
    stored = list(h.ledger.events())
    assert [e for evs in seen for e in evs] == stored
    assert [e.seq for e in stored] == list(range(1, 16))
    assert h.verify() == [] and h.errors == []


def test_idle_checkpoints_keep_the_wal_bounded(harness):
    """Commits in bursts with idle gaps: the writer checkpoints in the gaps, so the WAL
    file never holds more than about one checkpoint's worth of commits; without the idle
    checkpoint (SQLite's own off too) the same commits pile up in the WAL."""
    bounded = harness(idle_checkpoint_s=0.01, checkpoint_commits=4, max_commits_between_checkpoints=1000)
    unbounded = harness(idle_checkpoint_s=10.0, checkpoint_commits=1000, max_commits_between_checkpoints=1000)
    for burst in range(12):
        for i in range(5):
            bounded.commit(burst * 5 + i)
            unbounded.commit(burst * 5 + i)
        time.sleep(0.05)  # idle: several idle_checkpoint_s
    assert bounded.writer.stats.checkpoints >= 10
    assert unbounded.writer.stats.checkpoints == 0
    grown = _wal_frames_capacity(unbounded.path)
    assert _wal_frames_capacity(bounded.path) * 4 < grown, (bounded.writer.stats.max_wal_frames, grown)
    assert bounded.writer.stats.max_wal_frames < grown / 4
    assert bounded.verify() == [] and bounded.errors == []


def test_a_writer_never_idle_still_checkpoints(harness):
    """Back-to-back commits never leave the writer idle: it checkpoints every
    ``max_commits_between_checkpoints`` commits anyway, after acknowledging them."""
    h = harness(idle_checkpoint_s=30.0, checkpoint_commits=10, max_commits_between_checkpoints=10)
    for i in range(55):
        h.commit(i, n=1)
    assert h.writer.stats.commits == 55
    assert h.writer.stats.checkpoints == 5
    assert 0 < h.writer.stats.max_wal_frames <= 10 * 8
    assert h.verify() == []


def test_checkpoint_restarts_the_wal_itself(tmp_path):
    """After ``Ledger.checkpoint`` the WAL has restarted (its new header written and
    synced there): it holds the one-frame housekeeping write, not the frames just copied,
    so the next commit appends to a WAL already restarted."""
    led = Ledger(tmp_path / "l.sqlite3", "T1", key=TEST_KEY)
    led.set_autocheckpoint(0)
    for i in range(30):
        led.append([Record("wager.accepted", i, {"seat": 1, "cents": 100})])
    before = _wal_frames_now(led.path)
    frames, copied = led.checkpoint()
    assert frames == copied == before >= 30
    assert _wal_frames_now(led.path) == 1
    led.append([Record("wager.accepted", 31, {"seat": 1, "cents": 100})])
    assert 1 < _wal_frames_now(led.path) < before
    assert led.verify() == []
    assert led.db.execute("SELECT n FROM wal_restart").fetchone()[0] == 1
    led.close()


def test_a_checkpoint_that_fails_latches_and_acknowledges_nothing_more(harness):
    h = harness(idle_checkpoint_s=0.01, checkpoint_commits=1)

    def broken() -> tuple[int, int]:
        raise sqlite3.OperationalError("disk I/O error")

    h.ledger.checkpoint = broken
    h.commit(1)
    deadline = time.monotonic() + 5
    while not h.errors and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [str(e) for e in h.errors] == ["disk I/O error"]
    later = threading.Event()
    h.writer.submit([Record("wager.accepted", 2, {"seat": 1})], lambda _e: later.set())
    assert not later.wait(0.3)


def test_writer_settings_are_checked():
    with pytest.raises(ValueError, match="idle_checkpoint_s"):
        WriterSettings(idle_checkpoint_s=0)
    with pytest.raises(ValueError, match="checkpoint_commits"):
        WriterSettings(checkpoint_commits=20, max_commits_between_checkpoints=10)


def test_many_events_in_one_commit_are_stored_as_returned(tmp_path):
    """The events go in with one INSERT per 500: more than that in one append still
    stores every one, in order, and the chain verifies."""
    led = Ledger(tmp_path / "l.sqlite3", "T1", key=TEST_KEY)
    out = led.append([Record("wager.accepted", 1, {"seat": i % 6 + 1, "n": i}) for i in range(1234)])
    assert out == list(led.events())
    assert [e.data["n"] for e in out] == list(range(1234))
    assert led.verify() == []
    led.close()


def test_a_ledger_made_with_a_unique_hash_index_still_appends_and_verifies(tmp_path):
    """Ledgers created before the index was dropped keep it (nothing relies on it)."""
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        """CREATE TABLE events (seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, table_id TEXT NOT NULL,
        round INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL, prev TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE);"""
    )
    db.close()
    led = Ledger(path, "T1", key=TEST_KEY)
    led.append([Record("wager.accepted", 1, {"seat": 1})])
    led.append([Record("wager.accepted", 2, {"seat": 2})])
    assert led.verify() == [] and led.last_seq == 2
    led.close()


_CHILD = textwrap.dedent(
    """
    import os, random, signal, sys, threading, time
    from controller.books.ledger import Ledger, Record
    from tests.conftest import TEST_KEY

    led = Ledger(sys.argv[1], "T1", key=TEST_KEY)
    led.set_autocheckpoint(0)
    rng = random.Random(int(sys.argv[2]))
    i = 0
    while True:
        for _ in range(40):  # a WAL with some hundred frames to copy
            i += 1
            recs = [Record("wager.accepted", i, {"seat": s, "cents": 100, "pad": "x" * 300}) for s in range(1, 7)]
            led.append(recs)
            print(f"durable {led.last_seq}", flush=True)  # witnessed only once durable
        delay = rng.uniform(0.0, 0.004)
        threading.Timer(delay, os.kill, (os.getpid(), signal.SIGKILL)).start()
        print("checkpoint", flush=True)
        led.checkpoint()
        print("checkpoint done", flush=True)
        time.sleep(1)  # the kill comes now if it did not come during the checkpoint
    """
)


@pytest.mark.slow
def test_killed_during_a_checkpoint_loses_nothing(tmp_path):
    """SIGKILL while the writer's checkpoint copies the WAL into the database (and
    restarts the WAL), 16 times on one ledger: every append that returned is there
    after a restart, and the chain and meters verify."""
    path = tmp_path / "l.sqlite3"
    root = Path(__file__).resolve().parents[2]
    inside = 0
    for k in range(16):
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path), str(k)],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        lines = proc.stdout.splitlines()
        witnessed = max(int(x.split()[1]) for x in lines if x.startswith("durable"))
        if lines[-1] == "checkpoint":
            inside += 1
        led = Ledger(path, "T1", key=TEST_KEY)
        try:
            assert led.last_seq >= witnessed, f"kill {k}: lost events {led.last_seq + 1}..{witnessed}"
            assert led.verify(full=True) == []
        finally:
            led.close()
    assert inside >= 4, f"only {inside} of 16 kills landed inside a checkpoint"


def test_wal_index_reader_reads_the_frame_count(tmp_path):
    """The test helper above reads mxFrame from the -shm header: check it against
    SQLite's own count."""
    led = Ledger(tmp_path / "l.sqlite3", "T1", key=TEST_KEY)
    led.set_autocheckpoint(0)
    for i in range(7):
        led.append([Record("wager.accepted", i, {"seat": 1})])
    n = _wal_frames_now(led.path)
    frames, _copied = led.checkpoint()
    assert n == frames > 0
    led.close()


def test_random_bursts_acknowledge_everything(harness):
    """Group commit with idle checkpoints interleaved at random: every submission is
    acknowledged once, with its own events."""
    h = harness(idle_checkpoint_s=0.002, checkpoint_commits=2, max_commits_between_checkpoints=6)
    rng = random.Random(5)
    got: list[tuple[int, list[StoredEvent]]] = []
    lock = threading.Lock()
    n = 120
    all_done = threading.Event()

    def cb(i: int):
        def done(evs: list[StoredEvent]) -> None:
            with lock:
                got.append((i, evs))
                if len(got) == n:
                    all_done.set()

        return done

    for i in range(n):
        h.writer.submit([Record("wager.accepted", i, {"i": i})], cb(i))
        if rng.random() < 0.2:
            time.sleep(rng.uniform(0, 0.006))
    assert all_done.wait(20)
    assert sorted(i for i, _ in got) == list(range(n))
    assert all(len(evs) == 1 and evs[0].data["i"] == i for i, evs in got)
    assert h.writer.stats.checkpoints > 0 and h.verify() == [] and h.errors == []


def _statements(led: Ledger) -> list[str]:
    seen: list[str] = []
    led.db.set_trace_callback(lambda sql: seen.append(" ".join(sql.split()[:2])))
    return seen


def test_an_append_of_events_only_is_one_statement_its_own_transaction(tmp_path):
    """Events alone (no meter row, no checkpoint row due) go in as one ``INSERT`` in
    autocommit mode — its own transaction, synced before it returns — not BEGIN, INSERT,
    COMMIT; a batch that also writes the meters keeps its explicit transaction."""
    led = Ledger(tmp_path / "l.sqlite3", "T1", key=TEST_KEY)
    seen = _statements(led)
    led.append([Record("lockout", 1, {"count": 2}), Record("wager.accepted", 1, {"seat": 1, "cents": 100})])
    assert seen == ["INSERT INTO"], seen
    seen.clear()
    led.append([Record("meter.init", 1, {"level": "L1", "seed": 1000, "rate": "1/100"})])
    assert seen[0] == "BEGIN IMMEDIATE" and seen[-1] == "COMMIT" and len(seen) >= 4, seen
    assert led.verify() == []
    led.close()


def test_a_one_statement_append_that_fails_stores_none_of_its_events(tmp_path):
    """All of the statement's rows or none: a row refused halfway leaves the ledger (and its
    chain) as it was, and the next append continues the chain."""
    led = Ledger(tmp_path / "l.sqlite3", "T1", key=TEST_KEY)
    led.append([Record("wager.accepted", 1, {"seat": 1})])
    led.db.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.kind = 'boom' BEGIN SELECT RAISE(ABORT, 'no'); END"
    )
    with pytest.raises(sqlite3.IntegrityError):
        led.append([Record("wager.accepted", 2, {"seat": 1}), Record("boom", 2), Record("wager.accepted", 2, {})])
    assert not led.db.in_transaction
    assert [e.seq for e in led.events()] == [1] and led.last_seq == 1
    led.append([Record("wager.accepted", 3, {"seat": 2})])
    assert [e.seq for e in led.events()] == [1, 2]
    led.db.execute("DROP TRIGGER refuse")  # (a trigger in the file is itself a finding of verify())
    assert led.verify() == []
    led.close()


def test_submit_to_an_idle_writer_returns_once_the_writer_has_taken_the_records(harness):
    """The hand-over: a submitter that finds the writer idle waits (bounded) until the writer
    has taken its records, so the writer runs its few Python steps before its commit without
    waiting for the submitter's next work to let go of the GIL."""
    h = harness(hand_over_s=5.0)
    for i in range(20):
        h.writer.flush()  # idle again
        time.sleep(0.002)
        done = threading.Event()
        h.writer.submit([Record("wager.accepted", i, {"seat": 1})], lambda _e, d=done: d.set(), hand_over=True)
        assert h.writer._q.empty()  # taken, not still queued
        assert done.wait(10)
    assert h.verify() == [] and h.errors == []


def test_submits_without_the_hand_over_still_share_a_commit(harness):
    """Records submitted back to back (one handler's several commits) go in one group
    commit; a hand-over makes the first one a commit of its own, and ``hand_over_s=0``
    turns the hand-over off."""
    for kw, hand_over, commits in (({}, False, 1), ({"hand_over_s": 5.0}, True, 2), ({"hand_over_s": 0.0}, True, 1)):
        h = harness(**kw)
        h.writer.flush()
        time.sleep(0.005)
        before = h.writer.stats.commits
        done = threading.Event()
        h.writer.submit([Record("wager.accepted", 1, {"seat": 1})], hand_over=hand_over)
        h.writer.submit([Record("wager.accepted", 1, {"seat": 2})], lambda _e, d=done: d.set())
        assert done.wait(10)
        assert h.writer.stats.commits - before == commits, (kw, hand_over)
        assert h.ledger.last_seq == 2
