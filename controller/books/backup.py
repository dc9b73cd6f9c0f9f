"""Backup and restore of a table's ledger (docs/operations.md).

``backup``: SQLite's online backup API (:meth:`sqlite3.Connection.backup`) copies one
consistent snapshot of the ledger while the service keeps appending (WAL: the copy is
a read transaction, the writer is never blocked).  The copy is then audited exactly as
``tablectl audit`` audits a ledger (controller/books/audit.py), against the witness as it was
read *before* the copy began (a witness read after could already name events the
snapshot does not have), and only a clean copy is given its name::

    <table>-ledger-<last event, 8 digits>-<UTC date and time>.sqlite3

A copy that does not audit clean is removed and the backup fails.

``restore``: refused while the service runs (the state directory's lock,
controller/books/statelock.py), refused for a copy whose chain, MACs, checkpoints or meters
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

from controller.books.audit import LEDGER_FILE, Where, audit
from controller.books.ledger import Head, Ledger, LedgerError, Record
from controller.books.statelock import StateLock
from controller.books.witness import WITNESS_FILE, Witness, check, read_for_check
from controller.core.records import Kind


class BackupError(RuntimeError):
    """A backup or restore that was not done, and why."""


@dataclass(frozen=True)
class BackupResult:
    path: Path
    table_id: str
    head: Head
    #: what the backup's audit read, as said after "audit ok": the whole copy, or (brought up to
    #: date) what was added, the older events being as they were when first copied and audited
    audited: str = "the whole copy"


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


def _make_dest(dest: Path) -> None:
    """The backup directory, made when missing: never a symbolic link (run as root, a link planted
    there would put the copy anywhere, /etc...), nor a file."""
    if dest.is_symlink():
        raise BackupError(f"{dest}: is a symbolic link (to {os.readlink(dest)}); name the directory itself")
    if dest.exists() and not dest.is_dir():
        raise BackupError(f"{dest}: is not a directory; name the directory to put the copy in")
    dest.mkdir(parents=True, exist_ok=True)


def backup(where: Where, dest: Path, *, now: datetime | None = None, incremental: bool = False) -> BackupResult:
    """Copy, audit, name.  ``dest``: a directory (the copy gets its name there) that is
    created when missing.  Raises :class:`BackupError` (nothing left behind) when the copy
    does not audit clean.  ``incremental``: bring the newest copy in ``dest`` up to date
    instead, when there is one this ledger continues (controller/books/backupextend.py)."""
    dest = Path(dest)
    _make_dest(dest)
    if incremental:
        done = _incremental(where, dest, now or datetime.now(UTC))
        if done is not None:
            return done
    work = Path(tempfile.mkdtemp(prefix=".tablectl-backup-", dir=dest))
    try:
        wdir, copy = _snapshot(where, work)
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


def _snapshot(where: Where, work: Path) -> tuple[Path, Path]:
    """The witness, then the ledger, copied into ``work`` (the witness first: the snapshot taken
    after it can only be ahead of it); their paths there."""
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
    return wdir, copy


def _incremental(where: Where, dest: Path, now: datetime) -> BackupResult | None:
    from controller.books import backupextend as X

    table_id, _head = _table_and_head(where.ledger_path, where.table_id)
    prev = X.newest_copy(dest, _safe(table_id))
    if prev is None:
        return None
    witnessed = read_for_check(Witness(where.witness_dir, table_id, where.key))  # before the ledger is read
    try:
        before = _event_count(prev)
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
    return BackupResult(final, table_id, head, _incremental_audited(before, head.count))


def _event_count(copy: Path) -> int:
    from controller.books.ledgerfile import connect_ro

    db = connect_ro(copy)
    try:
        return int(db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])
    finally:
        db.close()


def _incremental_audited(before: int, after: int) -> str:
    """What an incremental backup's audit read: never said as the whole copy's (events the copy
    already held are not read again, and could have been edited in DEST since)."""
    added = f"events {before + 1}-{after} added" if after > before else "no events added"
    return (
        f"{added}, the sealed segments they touch, the events since the last seal and the witness; the copy's "
        f"events 1-{before} were audited when first copied and not read again (a whole backup, or `tablectl "
        "audit --state-dir` on a directory holding the copy, reads them)"
    )


def _more(problems: list[str]) -> str:
    return f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""


def restore(
    where: Where,
    src: Path,
    *,
    override_reason: str | None = None,
    by: str = "technician",
    now: datetime | None = None,
) -> RestoreResult:
    """Put the copy ``src`` in place of the ledger in ``where.state_dir`` (see the module
    docstring for what is refused).  Raises :class:`BackupError` naming the reason, or
    controller.books.statelock.StateLocked while the service runs.  All or nothing: the copy is
    checked and its ``ledger.restored`` record written while it is still aside; only then is
    the ledger in place moved away and the copy moved in."""
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
            return _restore_via(work, where, src, override_reason, by, now or datetime.now(UTC))
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _refuse_from_the_future(src: Path, copy_ts: str, stamp_now: datetime) -> None:
    """A copy whose last event is later than this machine's clock: nothing could be recorded after it."""
    if copy_ts > stamp_now.isoformat(timespec="microseconds"):
        raise BackupError(
            f"{src}: refused: its last event is stamped {copy_ts}, later than this machine's clock "
            f"({stamp_now.isoformat(timespec='seconds')}); nothing could be recorded after it. Set the clock "
            "right (`timedatectl`), then restore; nothing was changed"
        )


def _override_fields(objections: list[str], override_reason: str | None) -> dict[str, Any]:
    """The restore record's override (the objections it overrode and why), or a technician's note."""
    if objections:
        return {"override_reason": override_reason, "overridden": objections}
    if override_reason is not None:
        return {"note": override_reason}
    return {}


def _move_in(work: Path, state_dir: Path) -> None:
    """The restored copy into the state directory: its WAL (if closing left one) before the copy
    itself, then the directory synced."""
    for sfx in ("-wal", ""):
        side = work / (LEDGER_FILE + sfx)
        if side.exists():
            os.replace(side, state_dir / (LEDGER_FILE + sfx))
    _fsync_dir(state_dir)


def _restore_via(
    work: Path, where: Where, src: Path, override_reason: str | None, by: str, now: datetime
) -> RestoreResult:
    assert where.key is not None
    state_dir = where.state_dir
    copy = work / LEDGER_FILE
    copy_table, copy_head, copy_ts = _take_copy(src, copy)
    table_id = _this_table(where, src, copy_table, copy_head)
    _audit_alone(work, where, src, table_id, copy_head)
    # against the table's witness: not older than what it says was recorded
    witness = Witness(where.witness_dir, table_id, where.key)
    witnessed = read_for_check(witness)
    led = Ledger.open_readonly(copy, table_id, key=where.key)
    try:
        objections = check(led, witnessed)
    finally:
        led.close()
    if objections and override_reason is None:
        raise BackupError(f'{src}: refused: {objections[0]} (a technician may override: --override-reason "...")')
    stamp_now = now.astimezone(UTC)
    _refuse_from_the_future(src, copy_ts, stamp_now)
    stamp = stamp_now.strftime("%Y%m%dT%H%M%S%fZ")
    before: Head | None = witnessed if isinstance(witnessed, Head) else None
    aside = f"ledger.replaced-{stamp}.sqlite3" if (state_dir / LEDGER_FILE).exists() else None
    data: dict[str, Any] = {
        "from": str(src.resolve()),
        "events": copy_head.count,
        "head": copy_head.mac,
        "witness_before": {"count": before.count, "mac": before.mac} if before else None,
        "replaced": aside,
        "by": by,
    }
    data |= _override_fields(objections, override_reason)
    head = _record_restore(copy, table_id, where.key, data)  # in the copy, still aside
    replaced = _keep_aside(state_dir, stamp)
    _move_in(work, state_dir)
    witness.write(head)
    _give_to_owner(state_dir, [LEDGER_FILE + sfx for sfx in ("", "-wal", "-shm", ".reserve")])
    _give_to_owner(where.witness_dir, [WITNESS_FILE])
    return RestoreResult(table_id, head, replaced, objections)


def _take_copy(src: Path, copy: Path) -> tuple[str, Head, str]:
    """Copy ``src`` to ``copy``: (its table, its head, its last event's time); a file that is
    not a ledger (empty, not SQLite, no events) is a :class:`BackupError`."""
    if src.is_dir():
        raise BackupError(f"{src}: is a directory; name the backup file")
    try:
        _sqlite_copy(src, copy)
        table, head = _table_and_head(copy, None)
        led = Ledger.open_readonly(copy)
        try:
            return table, head, led.last_ts
        finally:
            led.close()
    except (sqlite3.Error, LedgerError) as e:
        raise BackupError(f"{src}: not a readable ledger: {e}") from None


def _table_in_place(where: Where) -> str | None:
    """This table's id where no configuration names it: the ledger in place's, else the witness's."""
    path = where.ledger_path
    if path.is_file():
        try:
            ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                row = ro.execute("SELECT table_id FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            finally:
                ro.close()
            if row:
                return str(row[0])
        except sqlite3.Error:
            pass  # a damaged ledger in place: the witness may still say whose it was
    return Witness(where.witness_dir, "").recorded_table()


def _this_table(where: Where, src: Path, copy_table: str, copy_head: Head) -> str:
    """The table the copy goes to; a copy of another table's ledger is refused, override or not
    (a cloned SD card under the same key audits clean, but it is not this table's record)."""
    this = where.table_id or _table_in_place(where)
    if this is not None and copy_head.count and copy_table != this:
        raise BackupError(
            f"{src}: refused: a copy of table {copy_table}'s ledger, but this is table {this} "
            "(another table's ledger is never restored here, whatever the reason)"
        )
    return this or copy_table


def _audit_alone(work: Path, where: Where, src: Path, table_id: str, copy_head: Head) -> None:
    """The copy on its own: chain, MACs, checkpoints, meters (with a witness of its own head,
    so that only the copy is judged here); never overridable."""
    own = work / "own-witness"
    Witness(own, table_id, where.key).write(copy_head)
    problems = audit(Where(work, where.key, own, where.table_id))
    if problems:
        raise BackupError(f"{src}: the copy does not audit clean: {problems[0]}" + _more(problems))


def _record_restore(copy: Path, table_id: str, key: bytes, data: dict[str, Any]) -> Head:
    ledger = Ledger(copy, table_id, key=key)
    try:
        ledger.append([Record(Kind.LEDGER_RESTORED, ledger.last_round_no, data)])
        return ledger.head()
    except LedgerError as e:
        raise BackupError(f"the restore could not be recorded in the copy: {e}; nothing was changed") from None
    finally:
        ledger.close()


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


def _keep_aside(state_dir: Path, stamp: str) -> Path | None:
    """Move the current ledger (and its WAL, which belongs to it by name) aside, and the
    lock-out journal with it: its blocks are that ledger's (controller/books/lockjournal.py), and
    start-up must not put one of them into the restored ledger."""
    from controller.books.lockjournal import JOURNAL_FILE

    cur = state_dir / LEDGER_FILE
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
