"""Backup and restore of the ledger (controller/books/backup.py, docs/operations.md)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from controller.books.audit import Where, audit
from controller.books.backup import BackupError, backup, restore
from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import init_key, read_key
from controller.books.statelock import StateLock, StateLocked, in_use
from controller.books.witness import Witness, default_witness_dir
from controller.cli import main
from controller.core.records import Kind

TABLE = "T-07"


def _where(tmp_path: Path, key: bytes) -> Where:
    state = tmp_path / "state"
    return Where(state, key, default_witness_dir(state), None)


def _play(where: Where, rounds: int, *, init: bool = False) -> None:
    """Append rounds with meter increments, witnessing each commit as the service does."""
    led = Ledger(where.ledger_path, TABLE, key=where.key or b"")
    w = Witness(where.witness_dir, TABLE, where.key)
    try:
        if init:
            led.append([Record(Kind.METER_INIT, 0, {"level": "primary", "seed": 100000, "rate": "3/200"})])
            w.write(led.head())
        for _ in range(rounds):
            rnd = led.last_round() + 1
            led.append(
                [
                    Record(Kind.ROUND_OPEN, rnd, {}),
                    Record(Kind.METER_INCREMENT, rnd, {"level": "primary", "wager": 500, "rate": "3/200"}),
                    Record(Kind.ROUND_COMPLETE, rnd, {}),
                ]
            )
            w.write(led.head())
    finally:
        led.close()


@pytest.fixture
def table(tmp_path: Path) -> tuple[Where, Path]:
    keyfile = init_key(tmp_path / "key" / "ledger.key")
    where = _where(tmp_path, read_key(keyfile))
    _play(where, 3, init=True)
    return where, keyfile


def _events(path: Path) -> list[tuple[int, str, dict[str, object]]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [(s, k, json.loads(d)) for s, k, d in db.execute("SELECT seq, kind, data FROM events ORDER BY seq")]
    finally:
        db.close()


def test_backup_is_named_with_table_event_and_date_and_audits_clean(table, tmp_path):
    where, _ = table
    res = backup(where, tmp_path / "bk")
    assert res.head.count == 10  # meter.init + 3 rounds of 3
    assert res.path.name.startswith("T-07-ledger-00000010-")
    assert res.path.suffix == ".sqlite3"
    assert [p.name for p in (tmp_path / "bk").iterdir()] == [res.path.name]  # no work files left
    assert not Path(str(res.path) + "-wal").exists()  # a single file
    assert _events(res.path) == _events(where.ledger_path)


def test_a_copy_that_does_not_audit_clean_is_removed_and_fails(table, tmp_path):
    where, _ = table
    db = sqlite3.connect(where.ledger_path)
    db.execute("UPDATE events SET data = '{\"x\":1}' WHERE seq = 4")  # an edit without the key
    db.commit()
    db.close()
    with pytest.raises(BackupError, match="event 4"):
        backup(where, tmp_path / "bk")
    assert list((tmp_path / "bk").iterdir()) == []


def test_backup_with_the_wrong_key_fails(table, tmp_path):
    where, _ = table
    bad = Where(where.state_dir, b"\x01" * 32, where.witness_dir, None)
    with pytest.raises(BackupError, match="MAC"):
        backup(bad, tmp_path / "bk")
    assert list((tmp_path / "bk").iterdir()) == []


def test_restoring_an_older_copy_is_refused(table, tmp_path):
    where, _ = table
    old = backup(where, tmp_path / "bk").path
    _play(where, 2)  # the table goes on: the witness now says 16 events
    before = _events(where.ledger_path)
    with pytest.raises(BackupError, match="witness says 16 events"):
        restore(where, old)
    assert _events(where.ledger_path) == before  # nothing changed
    assert audit(where) == []


def test_override_is_recorded_in_the_ledger_and_the_witness_follows(table, tmp_path):
    where, _ = table
    old = backup(where, tmp_path / "bk").path
    _play(where, 2)
    res = restore(where, old, override_reason="SD card failed, last good backup", by="tech 42")
    evs = _events(where.ledger_path)
    assert len(evs) == 11 and res.head.count == 11
    seq, kind, data = evs[-1]
    assert kind == Kind.LEDGER_RESTORED
    assert data["override_reason"] == "SD card failed, last good backup"
    assert data["by"] == "tech 42"
    before, overridden = data["witness_before"], data["overridden"]
    assert isinstance(before, dict) and before["count"] == 16
    assert isinstance(overridden, list) and "witness says 16 events" in overridden[0]
    assert Witness(where.witness_dir, TABLE).read() == res.head
    assert audit(where) == []  # the start-up check would pass
    assert res.replaced is not None and len(_events(res.replaced)) == 16  # the replaced ledger is kept


def test_restoring_a_current_copy_works_and_is_recorded(table, tmp_path):
    where, _ = table
    cur = backup(where, tmp_path / "bk").path
    res = restore(where, cur)
    evs = _events(where.ledger_path)
    assert evs[:-1] == _events(cur)
    assert evs[-1][1] == Kind.LEDGER_RESTORED and "override_reason" not in evs[-1][2]
    assert res.overridden == []
    assert audit(where) == []
    # the meters go on from the restored ledger
    led = Ledger(where.ledger_path, TABLE, key=where.key or b"")
    try:
        assert led.meters["primary"].increment_count == 3
    finally:
        led.close()


def test_a_restore_keeps_the_lockout_journal_aside_with_the_ledger_it_replaced(table, tmp_path):
    """The journal's blocks belong to the replaced ledger: none may go into the restored one."""
    from controller.books.lockjournal import JOURNAL_FILE, LockoutJournal

    where, _ = table
    cur = backup(where, tmp_path / "bk").path
    j = LockoutJournal(where.state_dir / JOURNAL_FILE, TABLE, where.key or b"")
    block = j.block(3, [Record(Kind.LOCKOUT, 3, {"t": 1.0, "count": 1, "wagers": 1})])
    assert block is not None
    j.write(block)
    j.close()
    res = restore(where, cur)
    assert not (where.state_dir / JOURNAL_FILE).exists()
    (aside,) = where.state_dir.glob("lockout.replaced-*.journal")
    assert res.replaced is not None and aside.name[len("lockout.replaced-") :].split(".")[0] in res.replaced.name
    assert len(LockoutJournal(aside, TABLE, where.key or b"").entries()) == 1  # kept, never deleted


def test_a_damaged_copy_is_refused_even_with_an_override(table, tmp_path):
    where, _ = table
    cur = backup(where, tmp_path / "bk").path
    db = sqlite3.connect(cur)
    db.execute("DELETE FROM events WHERE seq = 5")
    db.commit()
    db.close()
    before = _events(where.ledger_path)
    with pytest.raises(BackupError, match="does not audit clean"):
        restore(where, cur, override_reason="please")
    assert _events(where.ledger_path) == before


def test_restore_is_refused_while_the_service_holds_the_state_dir(table, tmp_path):
    where, _ = table
    cur = backup(where, tmp_path / "bk").path
    lock = StateLock(where.state_dir).acquire("tablectl service, table T-07")
    try:
        assert in_use(where.state_dir)
        with pytest.raises(StateLocked, match="in use"):
            restore(where, cur)
    finally:
        lock.release()
    assert not in_use(where.state_dir)


def test_restore_cli_refuses_older_copy_and_records_override(table, tmp_path, capsys):
    where, keyfile = table
    old = backup(where, tmp_path / "bk").path
    _play(where, 1)
    common = ["--state-dir", str(where.state_dir), "--key-file", str(keyfile)]
    assert main(["restore", str(old), *common]) == 1
    assert "refused" in capsys.readouterr().err
    assert main(["restore", str(old), *common, "--override-reason", "  "]) == 1  # a reason must say something
    assert main(["restore", str(old), *common, "--override-reason", "bad SD card"]) == 0
    assert _events(where.ledger_path)[-1][2]["override_reason"] == "bad SD card"
    assert main(["audit", *common]) == 0


def test_backup_cli(table, tmp_path, capsys):
    where, keyfile = table
    assert (
        main(
            ["backup", str(tmp_path / "bk"), "--mkdir", "--state-dir", str(where.state_dir), "--key-file", str(keyfile)]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "T-07-ledger-00000010-" in out and "audit ok" in out


def test_a_copy_of_another_tables_ledger_is_refused(table, tmp_path):
    where, _ = table
    cur = backup(where, tmp_path / "bk").path
    other = Where(where.state_dir, where.key, where.witness_dir, "T-08")  # the configured table
    with pytest.raises(BackupError, match="table T-07's ledger, but this is table T-08"):
        restore(other, cur, override_reason="wrong stick")


def test_backup_copy_is_private(table, tmp_path):
    where, _ = table
    assert backup(where, tmp_path / "bk").path.stat().st_mode & 0o777 == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root (a restore run by root is what this is about)")
def test_a_restore_run_as_root_leaves_the_service_its_files(table, tmp_path):
    where, _ = table
    cur = backup(where, tmp_path / "bk").path
    service_uid = 65534  # the service's own user, owning its directories
    for d in (where.state_dir, where.witness_dir):
        os.chown(d, service_uid, service_uid)
    restore(where, cur)
    for p in [*where.state_dir.glob("ledger.sqlite3*"), where.witness_dir / "witness.json"]:
        assert p.stat().st_uid == service_uid, p
