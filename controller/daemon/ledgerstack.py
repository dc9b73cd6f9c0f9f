"""The service's ledger stack (controller/daemon/service.py): the key, the state directory's lock, the
witness, the ledger, the lock-out journal and the writer thread — opened, checked, started and
stopped in the one order the start-up needs (docs/architecture.md "The service in parts";
docs/security.md):

1. :meth:`LedgerStack.open`: the key (given, or the credential / key file), the state
   directory's lock (a restore is refused while the service runs), the witness *read before*
   the ledger is opened (opening creates a missing ledger), the ledger, a probe that it can be
   written;
2. :meth:`LedgerStack.check`: the self-check's ledger check — the chain (the last seal and what
   follows it, or everything) and the witness read in step 1;
3. :meth:`LedgerStack.after_check`: a missing or unreadable witness written afresh, the lock-out
   journal opened and what it holds that the ledger lacks appended (controller/books/lockjournal.py);
4. :meth:`LedgerStack.make_writer` / :meth:`start`: the writer thread, which moves the witness on;
5. :meth:`LedgerStack.stop` (the reverse), or :meth:`release` when a start-up halts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from controller.books import witness as W
from controller.books.audit import LEDGER_FILE, Where, where_in
from controller.books.ledger import Head, Ledger, Record, StoredEvent
from controller.books.ledgerwriter import LedgerWriter
from controller.books.lockjournal import LockoutJournal, open_at_start
from controller.books.statelock import StateLock
from controller.core.records import Kind
from controller.settings.hardware import LedgerConfig

Witnessed = Head | W.WitnessError | None


class LedgerStack:
    """Everything that keeps the table's books, owned from start to stop."""

    def __init__(self, cfg: LedgerConfig, state_dir: Path, table_id: str, key: bytes | None = None):
        self._cfg = cfg  # the hardware file's [ledger]
        self._state_dir = Path(state_dir)
        self._table_id = table_id
        #: the ledger's HMAC key (controller/books/ledgerkey.py); None: read it from the credential /
        #: key file at :meth:`open`
        self.key = key
        #: the state directory's lock, held from start to stop (controller/books/statelock.py)
        self.lock: StateLock | None = None
        self.where: Where | None = None
        self.witness: W.Witness | None = None
        self.witnessed: Witnessed = None  # the witness as read before the ledger was opened
        #: the start-up found the witness not matching: it is left as it is (see :meth:`check`)
        self.witness_held = False
        self.ledger: Ledger | None = None
        self.journal: LockoutJournal | None = None  # the lock-out journal
        self.writer: LedgerWriter | None = None

    @property
    def ledger_path(self) -> Path:
        return self._state_dir / LEDGER_FILE

    # ------------------------------------------------------------------ start-up
    def open(self) -> Ledger:
        """Steps 1: the key, the lock, the witness read, the ledger opened and probed."""
        from controller.books.ledgerkey import load_key

        if self.key is None:
            self.key = load_key(self._cfg)
        self.lock = StateLock(self._state_dir).acquire(f"tablectl service, table {self._table_id}")
        self.where = self.where_for_audit()
        self.witness = W.Witness(self.where.witness_dir, self._table_id, self.key)
        # the witness is read before the ledger is opened: opening creates a missing ledger
        self.witnessed = W.read_for_check(self.witness)
        self.ledger = ledger = Ledger(self.where.ledger_path, self._table_id, key=self.key)
        _probe_writable(ledger)
        if ledger.migrated_from is not None and self.witnessed is None:
            self.witnessed = ledger.head()  # the first keyed start: nothing to witness before it
        return ledger

    def where_for_audit(self) -> Where:
        """Where an audit run reads (before :meth:`open`: from the configuration)."""
        return self.where or where_in(self._state_dir, self._table_id, self._cfg.witness_dir, self.key)

    def check(self, *, full: bool) -> list[str]:
        """The self-check's ledger check: the chain, the table the ledger and the witness name,
        and the witness read before the ledger.  A witness that does not match (a rollback, a
        cut tail, another table's, one deleted) is *held*: never rewritten, by this start-up or
        the writer, until a technician's clear acknowledges the problem (a ``ledger.acknowledged``
        record, controller/books/ledgerwriter.py) — else the next restart would find the
        rolled-back head witnessed and pass."""
        from controller.books import ledgercheck
        from controller.books.standing import acknowledged_problems

        ledger, table_id = self._opened(), self._table_id
        witness_problems = W.table_problems(self._witness(), table_id) + W.check(ledger, self.witnessed)
        acknowledged = {p.removeprefix("ledger: ") for p in acknowledged_problems(ledger)}
        self.witness_held = any(p not in acknowledged for p in witness_problems)
        return ledger.verify(full=full) + ledgercheck.table_problems(ledger, table_id) + witness_problems

    def after_check(self, *, ledger_ok: bool) -> tuple[list[str], list[StoredEvent]]:
        """Step 3: (problems, what the journal's recovery appended).  A witness from the start
        (found missing or unreadable: the self-check has said so and the tilt is recorded): the
        writer only moves it on, so a running audit never finds none."""
        ledger, witness = self._opened(), self._witness()
        problems: list[str] = []
        if not self.witness_held and (self.witnessed is None or isinstance(self.witnessed, W.WitnessError)):
            try:
                witness.write(ledger.head())
            except OSError as e:  # a latched tilt like any failed self-check, not a crash (and a restart loop)
                problems.append(f"witness: cannot write {witness.path}: {e}")
        assert self.key is not None  # opened
        self.journal, journal_problems, recovered = open_at_start(
            self._state_dir, self._table_id, self.key, ledger, ledger_ok=ledger_ok
        )
        problems += journal_problems  # logged with the self-check's, latched as its tilt
        if recovered and not self.witness_held:
            witness.write(ledger.head())
        return problems, recovered

    def make_writer(self, deliver: Callable[..., None], on_error: Callable[[BaseException], None]) -> LedgerWriter:
        """Step 4: the writer thread (not started: :meth:`start`)."""
        self.writer = LedgerWriter(self._opened(), deliver, on_error, witness=self._witness().write)
        self.writer.witness_held = self.witness_held
        return self.writer

    def start(self) -> None:
        if self.writer is not None:
            self.writer.start()

    def record_tilt(self, source: str, reason: str) -> None:
        """A ``tilt.raised`` appended directly (a start-up that halted with the ledger sound)."""
        ledger = self._opened()
        ledger.append([Record(Kind.TILT_RAISED, ledger.last_round(), {"source": source, "reason": reason})])

    # ------------------------------------------------------------------ stop
    def stop(self) -> None:
        if self.writer is not None:
            self.writer.stop()
        if self.ledger is not None:
            self.ledger.close()
        if self.journal is not None:
            self.journal.close()
        if self.lock is not None:
            self.lock.release()

    def release(self, *, keep_ledger: bool = False) -> None:
        """Let go of what a failed start-up had opened: the writer, and the ledger unless
        ``keep_ledger`` (the halt is still to be recorded in it)."""
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.stop()
            self.writer = None
        if self.ledger is not None and not keep_ledger:
            with contextlib.suppress(Exception):
                self.ledger.close()
            self.ledger = None

    def _opened(self) -> Ledger:
        if self.ledger is None:
            raise RuntimeError("the ledger stack has not opened its ledger")
        return self.ledger

    def _witness(self) -> W.Witness:
        if self.witness is None:
            raise RuntimeError("the ledger stack has not opened its witness")
        return self.witness


def _probe_writable(ledger: Ledger) -> None:
    """Fail now, not at the first wager, when the ledger can be read but not written (a
    read-only file or directory): SQLite opens such a file read-only without a word."""
    (version,) = ledger.db.execute("PRAGMA user_version").fetchone()
    ledger.db.execute(f"PRAGMA user_version = {int(version)}")
