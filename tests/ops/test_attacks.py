"""The table-side holes an insider's attack found, each closed.  Before: a witness
linked to /dev/zero was read without bound (MemoryError; the OOM killer on a Pi, the unit had no
MemoryMax); `restore --override-reason` put another table's copy under the same key in place;
a copy stamped in the future was put in place, the restore then died (ClockWentBackwards) and no
`ledger.restored` was recorded; `backup DEST` followed a link; the software digest missed the
virtualenv's bin/tablectl and pyvenv.cfg (tests/controller/test_software_digest.py)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from controller.books.audit import Where, audit
from controller.books.backup import BackupError, backup, restore
from controller.books.ledgerkey import read_key
from controller.books.witness import Witness, WitnessError, default_witness_dir
from controller.cli import main
from hil.rig import rig_key_file as beside_key_file
from tests.ops import FAULT

ROOT = Path(__file__).resolve().parents[2]


def where(state: Path, table_id: str | None = None) -> Where:
    return Where(state, read_key(beside_key_file(state)), default_witness_dir(state), table_id)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "big"])
def test_a_witness_that_is_a_link_a_fifo_or_huge_is_refused_at_once(target, ledger_copy, tmp_path):
    wfile = default_witness_dir(ledger_copy) / "witness.json"
    wfile.unlink()
    if target == "fifo":
        os.mkfifo(wfile)
    elif target == "big":
        wfile.write_bytes(b" " * 10_000_000)
    else:
        wfile.symlink_to(target)
    t0 = time.monotonic()
    with pytest.raises(WitnessError, match="cannot read the witness"):
        Witness(wfile.parent, "SIM-01").read()
    problems = audit(where(ledger_copy))  # the start-up check and `tablectl audit` read it so
    assert time.monotonic() - t0 < 5
    assert problems and "witness" in problems[0], problems


def test_the_lockout_journal_is_never_opened_through_a_link(ledger_copy, tmp_path):
    from controller.books.ledger import Ledger
    from controller.books.lockjournal import JOURNAL_FILE, open_at_start

    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"")
    journal = ledger_copy / JOURNAL_FILE
    journal.unlink(missing_ok=True)
    journal.symlink_to(elsewhere)
    led = Ledger.open_readonly(ledger_copy / "ledger.sqlite3")
    try:
        j, problems, _ = open_at_start(ledger_copy, "SIM-01", b"k" * 32, led, ledger_ok=True)
    finally:
        led.close()
    assert j is None and problems and "lock-out journal" in problems[0]
    assert elsewhere.read_bytes() == b""  # nothing was written through the link


def test_the_service_unit_bounds_its_memory():
    unit = (ROOT / "systemd" / "tablectl.service").read_text()
    assert any(line.startswith("MemoryMax=") for line in unit.splitlines())


def _other_table(ledger_copy: Path, tmp_path: Path) -> Path:
    """A backup of a ledger of table SIM-02 made under the same key (a cloned SD card, renamed)."""
    from controller.books.ledger import Ledger, Record
    from controller.core.records import Kind

    other = tmp_path / "other"
    other.mkdir()
    led = Ledger(other / "ledger.sqlite3", "SIM-02", key=read_key(beside_key_file(ledger_copy)))
    try:
        led.append([Record(Kind.TILT_CLEARED, 0, {"tilt": "x", "by": "t"})])
    finally:
        led.close()
    Witness(default_witness_dir(other), "SIM-02", read_key(beside_key_file(ledger_copy))).write(
        Ledger.open_readonly(other / "ledger.sqlite3").head()
    )
    shutil.copytree(beside_key_file(ledger_copy).parent, tmp_path / "other-key")
    res = backup(where(other), tmp_path / "copies")
    return res.path


@pytest.mark.parametrize("override", [None, "SD card died"])
def test_restore_refuses_another_tables_copy_override_or_not(override, ledger_copy, tmp_path):
    copy = _other_table(ledger_copy, tmp_path)
    before = (ledger_copy / "ledger.sqlite3").read_bytes()
    with pytest.raises(BackupError, match="a copy of table SIM-02's ledger, but this is table SIM-01"):
        restore(where(ledger_copy), copy, override_reason=override)
    assert (ledger_copy / "ledger.sqlite3").read_bytes() == before
    # and where the configuration names the table, the same
    with pytest.raises(BackupError, match="this is table SIM-01"):
        restore(where(ledger_copy, "SIM-01"), copy, override_reason=override)


def test_a_future_stamped_copy_is_refused_and_nothing_changes(ledger_copy, tmp_path):
    res = backup(where(ledger_copy), tmp_path / "copies")
    before = {p.name: p.read_bytes() for p in ledger_copy.iterdir() if p.is_file() and p.suffix != ".lock"}
    witness_before = (default_witness_dir(ledger_copy) / "witness.json").read_bytes()
    past = datetime.now(UTC) - timedelta(days=2)  # the machine's clock is two days behind the copy
    for reason in (None, "clock test"):
        with pytest.raises(BackupError, match="later than this machine's clock"):
            restore(where(ledger_copy), res.path, override_reason=reason, now=past)
    after = {p.name: p.read_bytes() for p in ledger_copy.iterdir() if p.is_file() and p.suffix != ".lock"}
    assert after == before and (default_witness_dir(ledger_copy) / "witness.json").read_bytes() == witness_before
    assert not list(ledger_copy.glob("ledger.replaced-*"))
    db = sqlite3.connect(f"file:{ledger_copy / 'ledger.sqlite3'}?mode=ro", uri=True)
    try:
        assert db.execute("SELECT count(*) FROM events WHERE kind = 'ledger.restored'").fetchone()[0] == 0
    finally:
        db.close()


def test_a_restore_is_recorded_in_the_restored_ledger(ledger_copy, tmp_path):
    res = backup(where(ledger_copy), tmp_path / "copies")
    done = restore(where(ledger_copy), res.path, by="tech 42")
    assert done.head.count == res.head.count + 1 and audit(where(ledger_copy)) == []
    db = sqlite3.connect(f"file:{ledger_copy / 'ledger.sqlite3'}?mode=ro", uri=True)
    try:
        (kind,) = db.execute("SELECT kind FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    finally:
        db.close()
    assert kind == "ledger.restored"


def test_backup_refuses_a_symlinked_destination(ledger_copy, tmp_path, capsys):
    target = tmp_path / "etc"
    target.mkdir()
    link = tmp_path / "usb"
    link.symlink_to(target)
    assert main(["backup", str(link), "--state-dir", str(ledger_copy)]) == 1
    err = capsys.readouterr().err
    assert "is a symbolic link" in err and FAULT not in err
    assert list(target.iterdir()) == []
