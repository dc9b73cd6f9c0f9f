"""``tablectl backup --incremental`` (controller/books/backupextend.py): the newest copy in
DEST brought up to date — only what was added is copied and audited — and never a copy of
another ledger, never an edit carried into it, never a half-updated copy."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import controller.books.ledger as L
from controller.books.audit import Where, audit
from controller.books.backup import BackupError, backup, restore
from controller.books.ledger import Ledger
from controller.books.ledgerkey import init_key, read_key
from controller.books.witness import Witness
from controller.cli import main
from tests.controller.test_backup import TABLE, _events, _play, _where

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.fixture
def table(tmp_path: Path, monkeypatch) -> Where:
    monkeypatch.setattr(L, "CHECKPOINT_EVERY", 20)  # a seal every 20 events
    where = _where(tmp_path, read_key(init_key(tmp_path / "key" / "ledger.key")))
    _play(where, 10, init=True)
    return where


def _copy_audits_clean(where: Where, copy: Path, tmp: Path) -> list[str]:
    d = tmp / f"check-{copy.stem}"
    d.mkdir()
    (d / "ledger.sqlite3").write_bytes(copy.read_bytes())
    led = Ledger.open_readonly(d / "ledger.sqlite3")
    Witness(d / "w", TABLE, where.key).write(led.head())
    led.close()
    return audit(Where(d, where.key, d / "w", TABLE))


def test_the_newest_copy_is_brought_up_to_date_and_renamed(table, tmp_path):
    bk = tmp_path / "bk"
    first = backup(table, bk, now=T0)
    _play(table, 15)  # across seals
    second = backup(table, bk, now=T0 + timedelta(hours=1), incremental=True)
    assert second.head.count == 31 + 45 and second.path.name == f"{TABLE}-ledger-00000076-20261123T130000Z.sqlite3"
    assert not first.path.exists() and list(bk.iterdir()) == [second.path]  # the same copy, renamed
    assert _events(second.path) == _events(table.ledger_path)
    assert _copy_audits_clean(table, second.path, tmp_path) == []
    res = restore(table, second.path)  # a whole ledger, as a whole copy is
    assert res.overridden == [] and audit(table) == []


def test_with_no_copy_to_bring_up_to_date_a_whole_copy_is_made(table, tmp_path):
    res = backup(table, tmp_path / "bk", now=T0, incremental=True)
    assert res.head.count == 31 and _copy_audits_clean(table, res.path, tmp_path) == []


def test_a_copy_of_another_ledger_is_not_extended_but_left_alone(table, tmp_path):
    bk = tmp_path / "bk"
    other = _where(tmp_path / "other", table.key or b"")
    _play(other, 12, init=True)
    foreign = backup(other, bk, now=T0).path
    foreign.rename(bk / f"{TABLE}-ledger-00000037-20261123T120000Z.sqlite3")  # named as this table's
    res = backup(table, bk, now=T0 + timedelta(hours=1), incremental=True)
    assert len(list(bk.iterdir())) == 2 and res.head.count == 31  # a whole copy beside it
    assert _events(bk / f"{TABLE}-ledger-00000037-20261123T120000Z.sqlite3") == _events(other.ledger_path)


def test_damage_in_what_is_added_fails_the_backup_and_leaves_the_copy_as_it_was(table, tmp_path):
    bk = tmp_path / "bk"
    first = backup(table, bk, now=T0)
    before = first.path.read_bytes()
    _play(table, 15)
    db = sqlite3.connect(table.ledger_path)
    # a meter.increment, sealed, after the copy
    db.execute("UPDATE events SET data = replace(data, '500', '900') WHERE seq = 39")
    db.commit()
    db.close()
    with pytest.raises(BackupError, match="event 39: MAC does not match"):
        backup(table, bk, now=T0 + timedelta(hours=1), incremental=True)
    assert first.path.read_bytes() == before and list(bk.iterdir()) == [first.path]


def test_a_ledger_behind_its_witness_is_not_brought_into_the_copy(table, tmp_path):
    bk = tmp_path / "bk"
    backup(table, bk, now=T0)
    _play(table, 5)
    Witness(table.witness_dir, TABLE, table.key).write(L.Head(999, "f" * 64))  # the ledger ends before the witness
    with pytest.raises(BackupError, match="witness says 999 events"):
        backup(table, bk, now=T0 + timedelta(hours=1), incremental=True)


def test_backup_incremental_cli(table, tmp_path, capsys):
    key = table.key
    assert key is not None
    keyfile = tmp_path / "key" / "ledger.key"
    args = ["--state-dir", str(table.state_dir), "--key-file", str(keyfile)]
    assert main(["backup", str(tmp_path / "bk"), "--mkdir", *args]) == 0
    _play(table, 3)
    assert main(["backup", str(tmp_path / "bk"), "--incremental", *args]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "40 events" in out[-1] and "audit ok" in out[-1], out
    assert len(list((tmp_path / "bk").iterdir())) == 1


def test_an_incremental_backup_onto_an_edited_copy_never_says_the_whole_copy_audited(table, tmp_path, capsys):
    """The copy's old events edited in DEST: ``--incremental`` read only what it added and printed
    "audit ok" as if for the copy (a restore later refused it).  It now says what it audited."""
    key = table.key
    assert key is not None
    keyfile = tmp_path / "key" / "ledger.key"
    args = ["--state-dir", str(table.state_dir), "--key-file", str(keyfile)]
    bk = tmp_path / "bk"
    assert main(["backup", str(bk), "--mkdir", *args]) == 0
    (copy,) = bk.iterdir()
    db = sqlite3.connect(copy)
    db.execute("UPDATE events SET data = json_set(data, '$.cents', 9999900) WHERE seq = 5")
    db.commit()
    db.close()
    _play(table, 3)
    capsys.readouterr()
    assert main(["backup", str(bk), "--incremental", *args]) == 0
    out = capsys.readouterr().out.splitlines()[-1]
    assert "audit ok (events 32-40 added" in out, out
    assert "the copy's events 1-31 were audited when first copied and not read again" in out, out
    (copy,) = bk.iterdir()
    assert any("event 5: MAC does not match" in p for p in _copy_audits_clean(table, copy, tmp_path))
