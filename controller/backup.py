"""Backup and restore of a table's ledger (issue 15; docs/operations.md).

``backup``: SQLite's online backup API (:meth:`sqlite3.Connection.backup`) copies one
consistent snapshot of the ledger while the service keeps appending (WAL: the copy is
a read transaction, the writer is never blocked).  The copy is then audited exactly as
``tablectl audit`` audits a ledger (controller/audit.py), against the witness as it was
read *before* the copy began (a witness read after could already name events the
snapshot does not have), and only a clean copy is given its name::

    <table>-ledger-<last event, 8 digits>-<UTC date and time>.sqlite3

A copy that does not audit clean is removed and the backup fails.

``restore``: refused while the service runs (the state directory's lock,
controller/statelock.py), refused for a copy whose chain, MACs, checkpoints or meters
fail the audit (never overridable: such a copy is not evidence of anything), and refused
for a copy older than the witness says (fewer events than the witness's count, or a
different event at that count) unless a technician overrides with a reason.  The ledger
it replaces is kept beside it (``ledger.replaced-<UTC>.sqlite3``, and the lock-out journal as
``lockout.replaced-<UTC>.journal``), never deleted.  Every
restore is recorded in the restored ledger as its own ``ledger.restored`` event (what was
restored, the witness before, the override's reason when there is one), and the witness
then names that event, so the next start-up check passes and the override stays on record.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.audit import LEDGER_FILE, Where, audit
from controller.ledger import Head, Ledger, Record
from controller.records import Kind
from controller.statelock import StateLock
from controller.witness import WITNESS_FILE, Witness, check, read_for_check


class BackupError(RuntimeError):
    """A backup or restore that was not done, and why."""


@dataclass(frozen=True)
class BackupResult:
    path: Path
    table_id: str
    head: Head


@dataclass(frozen=True)
class RestoreResult:
    table_id: str
    head: Head  # after the ledger.restored event
    replaced: Path | None  # where the ledger it replaced was kept
    overridden: list[str]  # the witness's objections a technician overrode


def _sqlite_copy(src: Path, dst: Path) -> None:
    """One consistent snapshot of ``src`` (even while another process appends: the backup
    runs in one step, i.e. one read transaction) into a new single-file ``dst`` (rollback
    journal, no WAL beside it), synced."""
    if not src.is_file():
        raise BackupError(f"no ledger at {src}")
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    try:
        target = sqlite3.connect(str(dst), isolation_level=None)
        try:
            source.backup(target)  # pages=-1: everything in one step
            target.execute("PRAGMA journal_mode=DELETE")
        finally:
            target.close()
    finally:
        source.close()
    fd = os.open(dst, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _table_and_head(path: Path, table_id: str | None) -> tuple[str, Head]:
    led = Ledger.open_readonly(path)
    try:
        if table_id is None:
            row = led.db.execute("SELECT table_id FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            table_id = str(row[0]) if row else "table"
        return table_id, led.head()
    finally:
        led.close()


def _safe(table_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in table_id) or "table"


def backup_name(table_id: str, head: Head, when: datetime) -> str:
    return f"{_safe(table_id)}-ledger-{head.count:08d}-{when.astimezone(UTC):%Y%m%dT%H%M%SZ}.sqlite3"


def backup(where: Where, dest: Path, *, now: datetime | None = None, incremental: bool = False) -> BackupResult:
    """Copy, audit, name.  ``dest``: a directory (the copy gets its name there) that is
    created when missing.  Raises :class:`BackupError` (nothing left behind) when the copy
    does not audit clean.  ``incremental``: bring the newest copy in ``dest`` up to date
    instead, when there is one this ledger continues (controller/backupextend.py)."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    if incremental:
        done = _incremental(where, dest, now or datetime.now(UTC))
        if done is not None:
            return done
    work = Path(tempfile.mkdtemp(prefix=".tablectl-backup-", dir=dest))
    try:
        # the witness first: the snapshot taken after it can only be ahead of it
        wdir = work / "witness"
        wdir.mkdir()
        src_witness = where.witness_dir / WITNESS_FILE
        if src_witness.exists():
            shutil.copyfile(src_witness, wdir / WITNESS_FILE)
        copy = work / LEDGER_FILE
        try:
            _sqlite_copy(where.ledger_path, copy)
        except sqlite3.Error as e:
            raise BackupError(f"cannot copy the ledger {where.ledger_path}: {e}") from None
        problems = audit(Where(work, where.key, wdir, where.table_id))
        if problems:
            raise BackupError(f"the copy does not audit clean, removed: {problems[0]}" + _more(problems))
        table_id, head = _table_and_head(copy, where.table_id)
        final = dest / backup_name(table_id, head, now or datetime.now(UTC))
        if final.exists():
            raise BackupError(f"{final} already exists")
        os.chmod(copy, 0o600)  # every round of the table is in it
        os.replace(copy, final)
        _fsync_dir(dest)
        return BackupResult(final, table_id, head)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _incremental(where: Where, dest: Path, now: datetime) -> BackupResult | None:
    from controller import backupextend as X

    table_id, _head = _table_and_head(where.ledger_path, where.table_id)
    prev = X.newest_copy(dest, _safe(table_id))
    if prev is None:
        return None
    witnessed = read_for_check(Witness(where.witness_dir, table_id))  # before the ledger is read
    try:
        head, problems = X.extend(where, prev, table_id, witnessed)
    except X.NotExtendable:
        return None
    except sqlite3.Error as e:
        raise BackupError(f"cannot bring {prev} up to date: {e}") from None
    if problems:
        said = problems[0] + _more(problems)
        raise BackupError(f"the copy brought up to date does not audit clean, left as it was: {said}")
    final = dest / backup_name(table_id, head, now)
    if final != prev:
        os.replace(prev, final)
        _fsync_dir(dest)
    return BackupResult(final, table_id, head)


def _more(problems: list[str]) -> str:
    return f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""


def restore(where: Where, src: Path, *, override_reason: str | None = None, by: str = "technician") -> RestoreResult:
    """Put the copy ``src`` in place of the ledger in ``where.state_dir`` (see the module
    docstring for what is refused).  Raises :class:`BackupError` naming the reason, or
    controller.statelock.StateLocked while the service runs."""
    src = Path(src)
    if override_reason is not None and not override_reason.strip():
        raise BackupError("--override-reason must say why")
    if where.key is None:
        raise BackupError("a restore needs the ledger key (to audit the copy and record the restore)")
    state_dir = where.state_dir
    state_dir.mkdir(parents=True, exist_ok=True)
    with StateLock(state_dir):
        work = Path(tempfile.mkdtemp(prefix=".tablectl-restore-", dir=state_dir))
        try:
            copy = work / LEDGER_FILE
            try:
                _sqlite_copy(src, copy)
            except sqlite3.Error as e:
                raise BackupError(f"{src}: not a readable ledger: {e}") from None
            copy_table, copy_head = _table_and_head(copy, None)
            if where.table_id is not None and copy_head.count and copy_table != where.table_id:
                raise BackupError(f"{src}: a copy of table {copy_table}'s ledger, but this is table {where.table_id}")
            table_id = where.table_id or copy_table
            # 1. the copy on its own: chain, MACs, checkpoints, meters (a witness of its own head,
            # so that only the copy is judged here)
            own = work / "own-witness"
            Witness(own, table_id).write(copy_head)
            problems = audit(Where(work, where.key, own, where.table_id))
            if problems:
                raise BackupError(f"{src}: the copy does not audit clean: {problems[0]}" + _more(problems))
            # 2. against the table's witness: not older than what it says was recorded
            witness = Witness(where.witness_dir, table_id)
            witnessed = read_for_check(witness)
            led = Ledger.open_readonly(copy, table_id, key=where.key)
            try:
                objections = check(led, witnessed)
            finally:
                led.close()
            if objections and override_reason is None:
                raise BackupError(
                    f'{src}: refused: {objections[0]} (a technician may override: --override-reason "...")'
                )
            before: Head | None = witnessed if isinstance(witnessed, Head) else None
            replaced = _keep_aside(state_dir)
            os.replace(copy, state_dir / LEDGER_FILE)
            _fsync_dir(state_dir)
            data: dict[str, Any] = {
                "from": str(src.resolve()),
                "events": copy_head.count,
                "head": copy_head.mac,
                "witness_before": {"count": before.count, "mac": before.mac} if before else None,
                "replaced": replaced.name if replaced else None,
                "by": by,
            }
            if objections:
                data["override_reason"] = override_reason
                data["overridden"] = objections
            elif override_reason is not None:
                data["note"] = override_reason
            ledger = Ledger(state_dir / LEDGER_FILE, table_id, key=where.key)
            try:
                ledger.append([Record(Kind.LEDGER_RESTORED, ledger.last_round_no, data)])
                head = ledger.head()
            finally:
                ledger.close()
            witness.write(head)
            _give_to_owner(state_dir, [LEDGER_FILE + sfx for sfx in ("", "-wal", "-shm", ".reserve")])
            _give_to_owner(where.witness_dir, [WITNESS_FILE])
            return RestoreResult(table_id, head, replaced, objections)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _give_to_owner(directory: Path, names: list[str]) -> None:
    """Run as root, a restore must not leave the service (its own user) files it cannot
    write: what it made here goes to the directory's owner."""
    if os.geteuid() != 0:
        return
    st = directory.stat()
    for name in names:
        p = directory / name
        if p.exists() and (p.stat().st_uid, p.stat().st_gid) != (st.st_uid, st.st_gid):
            os.chown(p, st.st_uid, st.st_gid)


def _keep_aside(state_dir: Path) -> Path | None:
    """Move the current ledger (and its WAL, which belongs to it by name) aside, and the
    lock-out journal with it: its blocks are that ledger's (controller/lockjournal.py), and
    start-up must not put one of them into the restored ledger."""
    from controller.lockjournal import JOURNAL_FILE

    cur = state_dir / LEDGER_FILE
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    journal = state_dir / JOURNAL_FILE
    if journal.exists():
        os.replace(journal, state_dir / f"lockout.replaced-{stamp}.journal")
    if not cur.exists():
        return None
    aside = state_dir / f"ledger.replaced-{stamp}.sqlite3"
    for suffix in ("-wal", "-shm"):
        side = cur.with_name(cur.name + suffix)
        if side.exists():
            os.replace(side, aside.with_name(aside.name + suffix))
    os.replace(cur, aside)
    return aside
