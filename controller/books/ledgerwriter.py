"""The ledger's writer thread (split from controller/books/ledger.py): it owns the ledger once the
service runs, group-commits what the reactor submits and hands the callbacks back after the
records are durable (docs/architecture.md, the lock-out path)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from controller.books.ledger import Head, Ledger, Record, StoredEvent, fault_of
from controller.core.records import Kind

# ---------------------------------------------------------------------- writer thread

Done = Callable[[list[StoredEvent]], None]
#: per batch, for bench/: perf_counter stamps by stage, and the events stored
Trace = Callable[[Mapping[str, float], list[StoredEvent]], None]
#: what the writer's queue carries: records and their callback (None: stop)
_Item = tuple[list[Record], Done | None]


@dataclass(frozen=True, slots=True)
class WriterSettings:
    """The writer's tunables, fixed once it is made (:class:`LedgerWriter` says what each does)."""

    max_batch: int = 256
    idle_checkpoint_s: float = 0.02
    checkpoint_commits: int = 50
    max_commits_between_checkpoints: int = 200
    hand_over_s: float = 0.002

    def __post_init__(self) -> None:
        if not self.idle_checkpoint_s > 0:
            raise ValueError(f"idle_checkpoint_s must be > 0, got {self.idle_checkpoint_s!r}")
        if not 1 <= self.checkpoint_commits <= self.max_commits_between_checkpoints:
            raise ValueError(
                "need 1 <= checkpoint_commits <= max_commits_between_checkpoints, got "
                f"{self.checkpoint_commits!r} and {self.max_commits_between_checkpoints!r}"
            )


@dataclass(slots=True)
class WriterStats:
    """What the writer has done, for bench/ and the tests (written on the writer thread only)."""

    commits: int = 0
    events_written: int = 0
    checkpoints: int = 0
    checkpoint_s: float = 0.0  # time spent checkpointing (off the commit path)
    max_wal_frames: int = 0  # the most frames the WAL held at a checkpoint


class LedgerWriter:
    """Owns the ledger on its own thread; group-commits submissions.

    ``submit(records, done)``: ``done(stored_events)`` is handed to ``deliver``
    (the reactor's ``call_soon_threadsafe``) after the records are durable.  An
    I/O error is handed to ``on_error`` (the table latches a tilt) and the
    records are not acknowledged.

    WAL checkpoints are the writer's, off the path of a commit: SQLite's automatic
    checkpoint (run inside the COMMIT that crosses 1000 pages, so the records of that
    commit waited for it) is off.  Once ``checkpoint_commits`` commits have gone into
    the WAL, the writer checkpoints as soon as nothing has been submitted for
    ``idle_checkpoint_s``.  Under a load that never leaves it idle it checkpoints
    after ``max_commits_between_checkpoints`` commits anyway, right after handing
    their callbacks over: the WAL stays bounded.  These tunables are given as ``settings``
    (:class:`WriterSettings`), what the writer has done is kept in :attr:`stats` (:class:`WriterStats`).

    The hand-over (``submit(..., hand_over=True)``; ``hand_over_s`` 0 turns it off): a
    submitter that finds the writer idle blocks until the writer has taken its records (at
    most ``hand_over_s``), so that the writer's Python before its call into SQLite does not
    wait for the GIL behind the submitter's next work; that work (the reactor's state
    machine and status publish) then runs while SQLite writes and syncs, with the GIL
    released (docs/architecture.md, "Where the time goes").
    """

    def __init__(
        self,
        ledger: Ledger,
        deliver: Callable[..., None],
        on_error: Callable[[BaseException], None],
        witness: Callable[[Head], None] | None = None,
        settings: WriterSettings = WriterSettings(),
    ):
        self.settings = settings
        self.ledger = ledger
        self._deliver = deliver
        self._on_error = on_error
        self._q: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="ledger-writer", daemon=True)
        # the hand-over (see ``submit``): ``_idle`` while the writer blocks on its queue; ``_taken`` is
        # held (locked) except when the writer signals a waiting submitter that it has its records
        self._idle = False
        self._waiting = False
        self._taken = threading.Lock()
        self._taken.acquire()
        self._failed = False
        self._uncheckpointed = 0  # commits since the last checkpoint
        self.stats = WriterStats()
        #: called on the writer thread after each batch is handed over (bench/); None: nothing is kept
        self.trace: Trace | None = None
        self._witness = witness
        self.witness_error: BaseException | None = None  # the first failed witness write
        #: the witness did not match at start-up: left as it is until a technician's clear
        #: acknowledges the ledger's problems (controller/daemon/ledgerstack.py ``check``)
        self.witness_held = False
        self.fault_record: list[StoredEvent] = []  # the fault's own tilt.raised, once recorded
        self.fault_record_error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def submit(self, records: Iterable[Record], done: Done | None = None, *, hand_over: bool = False) -> None:
        """Queue records for the next commit.  With ``hand_over``, when the writer is idle,
        wait (at most ``hand_over_s``) until it has taken them: the submitter (the reactor)
        blocks, which lets the writer have the GIL at once for the few steps before its one
        call into SQLite, instead of waiting for whatever Python the submitter does next.
        The submitter then does that work while SQLite writes and syncs (the GIL released).
        Without it, records submitted one after another are likely to share a commit."""
        recs = list(records)
        if hand_over and self._idle and self.settings.hand_over_s > 0:
            self._waiting = True
            self._q.put((recs, done))
            self._taken.acquire(timeout=self.settings.hand_over_s)
            self._waiting = False
        else:
            self._q.put((recs, done))

    def stop(self) -> None:
        self._q.put(None)
        self._thread.join(timeout=10)

    def flush(self, timeout: float = 10.0) -> None:
        ev = threading.Event()
        self._q.put(([], lambda _e: ev.set()))
        # the flush callback is delivered directly (not via the reactor) so a caller may block on it
        ev.wait(timeout)

    def _run(self) -> None:
        self._take_over_checkpoints()
        while True:
            got = self._take()
            if got is None:
                continue  # idle: checkpointed
            item, t_got, c_got = got
            if item is None:
                return
            batch, stop = self._batch(item)
            # after a failure nothing more is written (the table has latched the fault)
            written = not self._failed and self._write(batch, t_got, c_got)
            if stop:
                return  # a stop in this batch is not lost with a failure
            if written and self._uncheckpointed >= self.settings.max_commits_between_checkpoints:
                self._checkpoint()  # never idle: bound the WAL anyway, the callbacks already handed over

    def _take_over_checkpoints(self) -> None:
        """SQLite's own checkpoints off: this thread checkpoints when idle (a failure is latched)."""
        try:
            self.ledger.set_autocheckpoint(0)
        except BaseException as exc:  # noqa: BLE001 - latched by the table, never swallowed
            self._failed = True
            self._on_error(exc)

    def _take(self) -> tuple[_Item | None, float, float] | None:
        """The next item of the queue (None: stop), when and at what CPU time it was taken;
        None when the writer was idle long enough to checkpoint (and did)."""
        self._idle = True
        if self._uncheckpointed >= self.settings.checkpoint_commits and not self._failed:
            try:
                item = self._q.get(timeout=self.settings.idle_checkpoint_s)
            except queue.Empty:
                self._idle = False
                self._checkpoint()  # idle: nothing waits for the disk now
                return None
        else:
            item = self._q.get()
        self._idle = False
        t_got, c_got = time.perf_counter(), self.ledger.cpu_clock()
        if self._waiting and self._taken.locked():  # a submitter waits for the hand-over: it has it
            self._taken.release()
        return item, t_got, c_got

    def _batch(self, item: _Item) -> tuple[list[_Item], bool]:
        """``item`` and what else is queued (up to the batch size); True when a stop was among them."""
        batch = [item]
        while len(batch) < self.settings.max_batch and not self._q.empty():
            nxt = self._q.get_nowait()  # the writer is the queue's only consumer
            if nxt is None:
                return batch, True
            batch.append(nxt)
        return batch, False

    def _write(self, batch: list[_Item], t_got: float, c_got: float) -> bool:
        """One transaction for the batch, then the callbacks, the witness and the trace;
        False when the write failed (latched: the fault recorded and reported)."""
        records = [r for recs, _ in batch for r in recs]
        try:
            stored = self.ledger.append(records)
        except BaseException as exc:  # noqa: BLE001 - latched by the table, never swallowed
            self._failed = True
            self._record_fault(exc)
            self._on_error(exc)
            return False
        if stored:
            self.stats.commits += 1
            self.stats.events_written += len(stored)
            self._uncheckpointed += 1
        self._hand_back(batch, stored)
        if stored:
            self._after_commit(stored, t_got, c_got)
        return True

    def _after_commit(self, stored: list[StoredEvent], t_got: float, c_got: float) -> None:
        """Once the callbacks are handed over: the witness of the new head, the trace."""
        if self.witness_held and any(ev.kind == Kind.LEDGER_ACKNOWLEDGED for ev in stored):
            self.witness_held = False  # a technician acted: the acknowledgement is the record
        if self._witness is not None:
            self._write_witness()
        if self.trace is not None:
            self.trace(self._stamps(t_got, c_got), stored)

    def _hand_back(self, batch: list[_Item], stored: list[StoredEvent]) -> None:
        """Each submitter's stored events, in the order submitted."""
        i = 0
        for recs, done in batch:
            mine = stored[i : i + len(recs)]
            i += len(recs)
            if done is None:
                continue
            if not recs:
                done(mine)  # flush marker: direct
            else:
                self._deliver(done, mine)

    def _stamps(self, t_got: float, c_got: float) -> dict[str, float]:
        t0, t_begin, t_commit, t_durable = self.ledger.append_stamps
        c0, c_begin, c_commit, c_durable = self.ledger.append_cpu
        return {
            "writer_got": t_got,
            "append_start": t0,
            "begin": t_begin,
            "commit": t_commit,
            "committed": t_durable,
            "handed_back": time.perf_counter(),
            # the writer thread's CPU time at the same points (0.0 unless the ledger's cpu_clock is set)
            "cpu:writer_got": c_got,
            "cpu:append_start": c0,
            "cpu:begin": c_begin,
            "cpu:commit": c_commit,
            "cpu:committed": c_durable,
            "cpu:handed_back": self.ledger.cpu_clock(),
        }

    def _write_witness(self) -> None:
        assert self._witness is not None
        if self.witness_held:
            return
        try:
            self._witness(self.ledger.head())
        except Exception as exc:  # noqa: BLE001 - reported once, by the table, as a tilt
            if self.witness_error is None:
                self.witness_error = exc
                self._on_error(exc)

    def _record_fault(self, exc: BaseException) -> None:
        """The failed write's own ``tilt.raised``, on the reserve's space."""
        self.ledger.release_reserve()
        source, reason = fault_of(exc)
        rec = Record(Kind.TILT_RAISED, self.ledger.last_round_no, {"source": source, "reason": reason})
        try:
            self.fault_record = self.ledger.append([rec], at_last_time=True)
        except BaseException as e:  # noqa: BLE001 - the table's tilt is latched and logged anyway
            self.fault_record_error = e
            return
        if self._witness is not None:
            self._write_witness()

    def _checkpoint(self) -> None:
        t = time.perf_counter()
        try:
            frames, _copied = self.ledger.checkpoint()
        except BaseException as exc:  # noqa: BLE001 - a disk that fails here fails commits too: latch it
            self._failed = True
            self._on_error(exc)
            return
        self.stats.checkpoint_s += time.perf_counter() - t
        self.stats.checkpoints += 1
        self.stats.max_wal_frames = max(self.stats.max_wal_frames, frames)
        self._uncheckpointed = 0
