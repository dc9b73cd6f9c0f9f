"""A ledger that cannot be rewritten or rolled back unnoticed.

These tests play the attacker: a person who can write the state directory (the
database, its WAL, its meters and checkpoints) but has not got the ledger key.
Each attack was undetected by the unkeyed SHA-256 chain (``Ledger.verify`` said
nothing); the keyed chain and the witness of its head find each one, and
``tablectl audit`` names the first bad event."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from controller.books import meters as meters_mod
from controller.books.audit import Where, audit
from controller.books.ledger import (
    GENESIS,
    SCHEMA_VERSION,
    ClockWentBackwards,
    EventRow,
    Head,
    Ledger,
    LedgerError,
    Record,
    StoredEvent,
    event_hash,
)
from controller.books.ledgerkey import LedgerKeyError, init_key, read_key
from controller.books.ledgermigrate import KeyUnkeyed
from controller.books.ledgerwriter import LedgerWriter
from controller.books.witness import Witness
from controller.cli import main
from tests.conftest import TEST_KEY

TABLE = "T1"
#: a technician's order to key a ledger written before the key
ORDER = KeyUnkeyed("tech 7", "upgrade checked against the paper records")


def _records(round_no: int) -> list[Record]:
    return [
        Record("round.open", round_no, {}),
        Record("wager.accepted", round_no, {"seat": 2, "spot": "progressive", "cents": 100}),
        Record("meter.increment", round_no, {"level": "primary", "wager": 100, "rate": "21/100"}),
        Record("round.complete", round_no, {}),
    ]


class Table:
    """A ledger in ``<tmp>/state`` with its witness in ``<tmp>/witness``, appended to as the
    service's writer does (append, then the witness)."""

    def __init__(self, tmp: Path, rounds: int = 3):
        self.state = tmp / "state"
        self.where = Where(self.state, TEST_KEY, tmp / "witness", TABLE)
        self.witness = Witness(self.where.witness_dir, TABLE, TEST_KEY)
        self.led = Ledger(self.where.ledger_path, TABLE, key=TEST_KEY)
        self.append([Record("meter.init", 0, {"level": "primary", "seed": 500_000, "rate": "21/100"})])
        for r in range(1, rounds + 1):
            self.append(_records(r))

    def append(self, recs: list[Record]) -> None:
        self.led.append(recs)
        self.witness.write(self.led.head())

    def close(self) -> None:
        self.led.close()


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path)
    yield t
    t.close()


def rechain(path: Path, edit) -> None:
    """The attacker without the key: edit events, then recompute the SHA-256 chain, the
    stored meters and every checkpoint, as the unkeyed ledger allowed."""
    db = sqlite3.connect(path)
    rows = db.execute("SELECT seq, ts, table_id, round, kind, data, hash FROM events ORDER BY seq").fetchall()
    prev = GENESIS
    meters: dict[str, Any] = {}
    hashes = {}
    meter_rows = {}
    touched = False  # events before the first edit keep their MACs: only the rest is rechained
    for seq, ts, tid, rnd, kind, data, stored in rows:
        d = edit(seq, kind, json.loads(data))
        new = json.dumps(d, sort_keys=True, separators=(",", ":"), default=str)
        touched = touched or new != data
        if touched:
            data = new
            h = event_hash(EventRow(seq, ts, tid, rnd, kind, data, prev))
            db.execute("UPDATE events SET data = ?, prev = ?, hash = ? WHERE seq = ?", (data, prev, h, seq))
        else:
            h = stored
        if kind.startswith("meter."):
            meters = meters_mod.apply(meters, kind, d, round_no=rnd, seq=seq)
            meter_rows = {lv: (m.to_row(), seq) for lv, m in meters.items()}
        hashes[seq] = (h, {lv: m.to_row() for lv, m in sorted(meters.items())})
        prev = h
    for level, (row, seq) in meter_rows.items():
        db.execute("UPDATE meters SET row = ?, seq = ? WHERE level = ?", (json.dumps(row, sort_keys=True), seq, level))
    for (seq,) in db.execute("SELECT seq FROM checkpoints").fetchall():
        h, m = hashes[seq]
        db.execute("UPDATE checkpoints SET hash = ?, meters = ? WHERE seq = ?", (h, json.dumps(m), seq))
    db.commit()
    db.close()


def test_a_sound_ledger_passes_the_audit_and_its_head_is_witnessed(table):
    assert audit(table.where) == []
    head = table.led.head()
    assert head == Head(13, table.led.last_hash) and head.mac != GENESIS
    assert table.witness.read() == head


def test_rechain_attack_an_amount_edited_and_the_sha_chain_recomputed_is_found_by_the_mac(table):
    table.close()

    def edit(seq, kind, d):
        if kind == "wager.accepted" and d["cents"] == 100 and seq == 7:
            d["cents"] = 10_000  # a $1 wager written up to $100
        return d

    rechain(table.where.ledger_path, edit)
    problems = audit(table.where)
    assert problems and problems[0].startswith("event 7: MAC does not match its contents"), problems


def test_rechain_attack_on_a_meter_is_found_too(table):
    table.close()

    def edit(seq, kind, d):
        if kind == "meter.increment":
            d["wager"] = d["wager"] * 10
        return d

    rechain(table.where.ledger_path, edit)
    problems = audit(table.where)
    assert problems[0].startswith("event 4: MAC does not match"), problems  # the first increment


def test_rollback_an_older_copy_restored_is_found_by_the_witness(table, tmp_path):
    table.led.checkpoint()
    old = tmp_path / "old.sqlite3"
    shutil.copy(table.where.ledger_path, old)  # the attacker keeps a copy ...
    table.append(_records(4))  # ... the table plays on (a payout, say) ...
    table.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{table.where.ledger_path}{suffix}").unlink(missing_ok=True)
    shutil.copy(old, table.where.ledger_path)  # ... and the copy is put back
    problems = audit(table.where)
    assert problems == [
        "the ledger ends at event 13, but the witness says 17 events were recorded "
        "(cut tail, lost WAL or an older copy restored)"
    ]


def test_cut_tail_is_found_by_the_witness(table):
    table.close()
    db = sqlite3.connect(table.where.ledger_path)
    db.execute("DELETE FROM events WHERE seq > 10")
    db.commit()
    db.close()
    problems = audit(table.where)
    assert any("the ledger ends at event 10, but the witness says 13" in p for p in problems), problems


def test_a_lost_wal_is_found_by_the_witness(table, tmp_path):
    table.led.set_autocheckpoint(0)
    table.led.checkpoint()
    table.append(_records(4))  # durable in the WAL only
    # the database file without its WAL (the WAL deleted, or the file copied alone)
    lost = tmp_path / "lost"
    lost.mkdir()
    shutil.copy(table.where.ledger_path, lost / "ledger.sqlite3")
    problems = audit(Where(lost, TEST_KEY, table.where.witness_dir, TABLE))
    assert problems and "the witness says 17 events were recorded" in problems[0], problems


@pytest.mark.parametrize("how", ["deleted", "empty"])
def test_a_deleted_or_empty_ledger_is_found_by_the_witness(table, how):
    table.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{table.where.ledger_path}{suffix}").unlink(missing_ok=True)
    if how == "empty":
        Ledger(table.where.ledger_path, TABLE, key=TEST_KEY).close()  # what a start on no file makes
    problems = audit(table.where)
    assert problems and "the witness says 13 events were recorded" in problems[0], problems


def test_the_wrong_key_fails_every_mac(table):
    table.close()
    problems = audit(Where(table.state, bytes(32), table.where.witness_dir, TABLE))
    assert problems[0].startswith("event 1: MAC does not match"), problems


def test_a_garbled_or_missing_witness_is_a_problem(table):
    table.witness.path.write_text("{not json")
    assert any("the witness is not valid" in p for p in audit(table.where))
    table.witness.path.unlink()
    assert any("no witness of the ledger's head" in p for p in audit(table.where))


def test_a_witness_behind_the_ledger_is_fine(table):
    """Written after the commit (and not synced), it may lag the ledger: never lead it."""
    table.led.append(_records(4))  # no witness written (a kill between commit and witness)
    assert audit(table.where) == []


# ---------------------------------------------------------------------- migration


def _v1_ledger(path: Path, n_rounds: int = 2, table: str = TABLE) -> None:
    """A ledger as the code before the keyed ledger wrote it: SHA-256 chain, no meta table."""
    db = sqlite3.connect(path)
    db.executescript(
        """CREATE TABLE events (seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, table_id TEXT NOT NULL,
        round INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL);
        CREATE TABLE meters (level TEXT PRIMARY KEY, row TEXT NOT NULL, seq INTEGER NOT NULL);
        CREATE TABLE checkpoints (seq INTEGER PRIMARY KEY, hash TEXT NOT NULL, meters TEXT NOT NULL);"""
    )
    prev, seq = GENESIS, 0
    for r in range(1, n_rounds + 1):
        for rec in [Record("round.open", r, {}), Record("round.complete", r, {})]:
            seq += 1
            ts = f"2026-01-01T00:00:{seq:02d}.000000+00:00"
            data = json.dumps(dict(rec.data), sort_keys=True, separators=(",", ":"))
            h = event_hash(EventRow(seq, ts, table, r, rec.kind, data, prev))
            db.execute("INSERT INTO events VALUES (?,?,?,?,?,?,?,?)", (seq, ts, table, r, rec.kind, data, prev, h))
            prev = h
    db.commit()
    db.close()


def test_migration_from_the_unkeyed_chain_keys_it_from_a_ledger_keyed_record(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    _v1_ledger(path)
    ro = Ledger.open_readonly(path, key=TEST_KEY)
    assert any("not keyed (schema 1" in p for p in ro.verify(full=True))
    ro.close()
    with pytest.raises(LedgerError, match="an unkeyed ledger .* never keyed at start-up"):
        Ledger(path, TABLE, key=TEST_KEY)  # never without a technician's order
    led = Ledger(path, TABLE, key=TEST_KEY, key_unkeyed=ORDER)
    # keyed (schema 2) and then sealed (schema 3) in the same open
    assert led.migrated_from == 1 and led.schema() == SCHEMA_VERSION == 3 and led.keyed_from() == 5
    ev = list(led.events())[-1]
    assert (ev.seq, ev.kind, ev.data["sha256_head"], ev.data["events"]) == (5, "ledger.keyed", ev.prev, 4)
    assert (ev.data["by"], ev.data["reason"]) == ("tech 7", "upgrade checked against the paper records")
    led.append([Record("round.open", 3, {})])
    assert led.verify(full=True) == []
    led.close()
    again = Ledger(path, TABLE, key=TEST_KEY)  # a second open does not migrate again
    assert again.migrated_from is None and again.last_seq == 6
    again.close()


def test_tablectl_migrate_keys_an_old_ledger_brings_the_witness_along_and_audits(tmp_path, capsys):
    """An upgrade's step (systemd/install.sh): ``tablectl migrate`` on a schema-1 ledger keys
    it, writes the witness of the new head and audits clean; run again it changes nothing."""
    state = tmp_path / "state"
    state.mkdir()
    _v1_ledger(state / "ledger.sqlite3")
    key_file = tmp_path / "ledger.key"
    init_key(key_file)
    where = ["--state-dir", str(state), "--key-file", str(key_file), "--witness-dir", str(tmp_path / "w")]
    assert main(["audit", *where]) != 0  # before: not keyed
    capsys.readouterr()
    assert main(["migrate", *where]) == 1  # not without a technician's order
    assert "never keyed at start-up" in capsys.readouterr().err
    assert main(["migrate", *where, "--key-unkeyed"]) == 1  # nor without who and why
    assert "needs --by NAME and --reason TEXT" in capsys.readouterr().err
    assert main(["migrate", *where, "--key-unkeyed", "--by", "tech 7", "--reason", "upgrade"]) == 0
    out = capsys.readouterr().out
    assert "migrated from schema 1 to 3; 5 events; audit ok" in out, out
    assert Witness(tmp_path / "w", TABLE).read() == Head(5, Ledger.open_readonly(state / "ledger.sqlite3").last_hash)
    assert main(["audit", *where]) == 0
    assert main(["migrate", *where]) == 0
    assert "schema 3; 5 events; audit ok" in capsys.readouterr().out
    # a wrong key: the audit after it names the first bad event, exit 1
    other = tmp_path / "other.key"
    init_key(other)
    assert (
        main(["migrate", "--state-dir", str(state), "--key-file", str(other), "--witness-dir", str(tmp_path / "w")])
        == 1
    )
    # no ledger yet: nothing to migrate
    assert main(["migrate", "--state-dir", str(tmp_path / "empty"), "--key-file", str(key_file)]) == 0


def test_after_migration_a_rechained_old_event_is_found(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    _v1_ledger(path)
    Ledger(path, TABLE, key=TEST_KEY, key_unkeyed=ORDER).close()

    # the attacker rewrites the unkeyed part and recomputes its SHA-256 chain, the keyed record's prev too
    def edit(seq, kind, d):
        return {"edited": True} if seq == 2 else d

    rechain(path, edit)
    ro = Ledger.open_readonly(path, key=TEST_KEY)
    problems = ro.verify(full=True)
    ro.close()
    assert problems == ["event 5: MAC does not match its contents (edited, or written without the key)"]


def test_moving_keyed_from_is_found(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    _v1_ledger(path)
    Ledger(path, TABLE, key=TEST_KEY, key_unkeyed=ORDER).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE name = 'keyed_from'")
    db.commit()
    db.close()
    ro = Ledger.open_readonly(path, key=TEST_KEY)
    assert any("keyed from event 99, but it ends at 5" in p for p in ro.verify(full=True))
    ro.close()


# ---------------------------------------------------------------------- the clock


def test_an_event_stamped_before_the_last_durable_one_is_refused(tmp_path):
    now = [1_800_000_000.0]
    led = Ledger(tmp_path / "l.sqlite3", TABLE, key=TEST_KEY, wall_clock=lambda: now[0])
    led.append([Record("round.open", 1, {})])
    now[0] -= 365 * 86400  # a year back
    with pytest.raises(ClockWentBackwards, match="clock went backwards"):
        led.append([Record("round.complete", 1, {})])
    assert led.last_seq == 1 and led.verify() == []
    led.close()


def test_the_writer_records_the_clock_fault_at_the_last_durable_time_and_stops(tmp_path):
    now = [1_800_000_000.0]
    led = Ledger(tmp_path / "l.sqlite3", TABLE, key=TEST_KEY, wall_clock=lambda: now[0])
    errors: list[BaseException] = []
    w = LedgerWriter(led, lambda fn, *a: fn(*a), errors.append)
    w.start()
    w.submit([Record("round.open", 1, {})])
    w.flush()
    now[0] -= 3600
    w.submit([Record("round.complete", 1, {})])
    w.stop()  # (a failed writer answers no flush)
    assert len(errors) == 1 and isinstance(errors[0], ClockWentBackwards)
    evs = list(led.events())
    assert [e.kind for e in evs] == ["round.open", "tilt.raised"]
    assert evs[1].data["source"] == "clock" and "clock went backwards" in evs[1].data["reason"]
    assert evs[1].ts == evs[0].ts  # never before the last durable event
    led.close()


# ---------------------------------------------------------------------- the witness from the writer


def test_the_writer_writes_the_witness_after_handing_the_callbacks_over(tmp_path):
    led = Ledger(tmp_path / "s" / "l.sqlite3", TABLE, key=TEST_KEY)
    witness = Witness(tmp_path / "w", TABLE)
    order: list[str] = []

    def write(head: Head) -> None:
        order.append(f"witness {head.count}")
        witness.write(head)

    w = LedgerWriter(led, lambda fn, *a: fn(*a), lambda e: None, witness=write)
    w.start()
    done = threading.Event()

    def durable(evs: list[StoredEvent]) -> None:
        order.append(f"durable {evs[-1].seq}")
        done.set()

    w.submit([Record("round.open", 1, {})], durable)
    done.wait(5)
    w.flush()
    w.stop()
    assert order == ["durable 1", "witness 1"]
    assert witness.read() == led.head()
    led.close()


# ---------------------------------------------------------------------- disk full


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    return r.returncode == 0


@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "fs"
    if os.geteuid() != 0 or not _mount_tmpfs(mnt, "3m"):
        pytest.skip("needs root to mount a small tmpfs")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_disk_full_the_fault_record_is_written_on_the_released_reserve(small_fs, tmp_path):
    """With the disk full the ledger's tilt could not be written, so the restart
    came up with no tilt.  The reserve beside the ledger is released on the fault, and the
    fault's own tilt.raised is recorded; the restart finds it."""
    from controller.books.standing import active_tilts

    path = small_fs / "state" / "ledger.sqlite3"
    led = Ledger(path, TABLE, key=TEST_KEY)
    assert led.reserve_path.stat().st_size == 1 << 20
    filler = small_fs / "filler"
    with open(filler, "wb") as f:  # fill the disk: the next append cannot grow the WAL
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    errors: list[BaseException] = []
    w = LedgerWriter(led, lambda fn, *a: fn(*a), errors.append)
    w.start()
    big = [Record("wager.accepted", 1, {"seat": s, "pad": "x" * 3000}) for s in range(200)]
    w.submit(big)
    w.stop()
    assert errors and "full" in str(errors[0]).lower(), errors
    assert w.fault_record and w.fault_record[0].data["source"] == "ledger", w.fault_record_error
    assert not led.reserve_path.exists()
    led.close()
    filler.unlink()  # space freed; the restart
    again = Ledger(path, TABLE, key=TEST_KEY)
    assert "ledger" in active_tilts(again) and again.verify(full=True) == []
    assert again.reserve_path.exists()  # made again while there is room
    again.close()


# ---------------------------------------------------------------------- the key


def test_key_init_makes_a_root_only_key_and_never_replaces_one(tmp_path, capsys):
    path = tmp_path / "etc" / "ledger.key"
    assert main(["key", "init", "--key-file", str(path)]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    key = read_key(path)
    assert len(key) == 32
    assert main(["key", "init", "--key-file", str(path)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert read_key(path) == key
    path.write_text("not a key\n")
    with pytest.raises(LedgerKeyError, match="not a ledger key"):
        read_key(path)


def test_the_ledger_refuses_a_short_key(tmp_path):
    with pytest.raises(Exception, match="shorter than 16 bytes"):
        Ledger(tmp_path / "l.sqlite3", TABLE, key=b"short")


# ---------------------------------------------------------------------- tablectl audit, history, verify


def _args(table: Table, key_file: Path) -> list[str]:
    return ["--state-dir", str(table.state), "--key-file", str(key_file), "--witness-dir", str(table.where.witness_dir)]


@pytest.fixture
def keyed(tmp_path):
    key_file = tmp_path / "ledger.key"
    init_key(key_file)
    t = Table.__new__(Table)
    t.state = tmp_path / "state"
    t.where = Where(t.state, read_key(key_file), tmp_path / "witness", TABLE)
    t.witness = Witness(t.where.witness_dir, TABLE, t.where.key)
    t.led = Ledger(t.where.ledger_path, TABLE, key=t.where.key or b"")
    t.append([Record("meter.init", 0, {"level": "primary", "seed": 500_000, "rate": "21/100"})])
    for r in (1, 2):
        t.append(_records(r))
    t.close()
    return t, key_file


def test_tablectl_audit_passes_a_sound_ledger_and_names_the_first_bad_event(keyed, capsys):
    t, key_file = keyed
    assert main(["audit", *_args(t, key_file)]) == 0
    assert "result: ok" in capsys.readouterr().out
    rechain(t.where.ledger_path, lambda seq, kind, d: {**d, "cents": 5000} if seq == 3 else d)
    assert main(["audit", *_args(t, key_file)]) == 1
    out = capsys.readouterr().out
    assert "FAILED: event 3: MAC does not match its contents" in out, out


def test_history_and_verify_refuse_a_ledger_failing_its_audit(keyed, capsys):
    t, key_file = keyed
    assert main(["history", *_args(t, key_file)]) == 0
    capsys.readouterr()
    rechain(t.where.ledger_path, lambda seq, kind, d: {**d, "cents": 5000} if seq == 3 else d)
    assert main(["history", *_args(t, key_file)]) == 1
    assert "the ledger fails its audit (`tablectl audit`): event 3: MAC" in capsys.readouterr().err
    assert main(["verify", *_args(t, key_file)]) == 1
    assert "tablectl verify: the ledger fails its audit" in capsys.readouterr().err


def test_audit_without_the_key_file_is_exit_2(keyed, capsys, tmp_path):
    t, _key_file = keyed
    assert main(["audit", *_args(t, tmp_path / "nope.key")]) == 2
    assert "cannot read the ledger key" in capsys.readouterr().err


# ---------------------------------------------------------------------- the systemd unit


def test_the_unit_waits_for_the_clock_and_hands_over_the_key_and_the_witness_directory():
    """After=/Wants=time-sync.target (the clock must not go backwards under the ledger), the
    key as a credential (LoadCredential=, the name the service reads), the witness directory
    a state directory of its own, and ExecStartPre checking only the configuration (a damaged
    ledger is the service's latched tilt, not a start that fails and restarts)."""
    from controller.settings.hardware import DEFAULT_KEY_CREDENTIAL, DEFAULT_KEY_FILE

    unit = (Path(__file__).resolve().parents[2] / "systemd" / "tablectl.service").read_text()
    settings: dict[str, list[str]] = {}
    for line in unit.splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            settings.setdefault(k.strip(), []).append(v.strip())
    assert "time-sync.target" in " ".join(settings["After"]).split()
    assert "time-sync.target" in " ".join(settings["Wants"]).split()
    assert settings["LoadCredential"] == [f"{DEFAULT_KEY_CREDENTIAL}:{DEFAULT_KEY_FILE}"]
    assert settings["StateDirectory"] == ["tablectl tablectl-witness"]
    assert all("--check --config-only" in v for v in settings["ExecStartPre"])


def test_run_check_refuses_a_ledger_failing_its_audit_but_config_only_does_not(keyed, tmp_path, capsys):
    t, key_file = keyed
    root = Path(__file__).resolve().parents[2]
    text = (root / "config/examples/table.toml").read_text()
    text = text.replace('state_dir = "/var/lib/tablectl"', f'state_dir = "{t.state}"').replace('"PG-01"', f'"{TABLE}"')
    text += f'\n[ledger]\nkey_file = "{key_file}"\nwitness_dir = "{t.where.witness_dir}"\n'
    cfg = tmp_path / "table.toml"
    cfg.write_text(text)
    # --offline: the example's pins (lgpio) and ports are not on this machine; the ledger is what is checked
    assert main(["run", "--config", str(cfg), "--check", "--offline"]) == 0
    capsys.readouterr()
    rechain(t.where.ledger_path, lambda seq, kind, d: {**d, "cents": 5000} if seq == 3 else d)
    assert main(["run", "--config", str(cfg), "--check", "--offline"]) == 1
    assert (
        "tablectl run --check: the ledger fails its audit (`tablectl audit`): event 3: MAC" in capsys.readouterr().err
    )
    # systemd's ExecStartPre: the damaged ledger becomes the service's latched tilt instead of a failed start
    assert main(["run", "--config", str(cfg), "--check", "--config-only", "--offline"]) == 0


def test_witness_dir_inside_the_state_dir_is_a_configuration_error():
    from controller.settings.config import ConfigError, Section
    from controller.settings.hardware import _load_ledger

    sec = Section("t.toml", "ledger", {"witness_dir": "/var/lib/tablectl/w"})
    with pytest.raises(ConfigError, match=r"t.toml: \[ledger\] witness_dir: .* must be outside state_dir"):
        _load_ledger(sec, Path("/var/lib/tablectl"))


def test_a_witness_that_cannot_be_written_is_reported_once_and_the_ledger_goes_on(tmp_path):
    led = Ledger(tmp_path / "l.sqlite3", TABLE, key=TEST_KEY)
    errors: list[BaseException] = []

    def broken(head: Head) -> None:
        raise OSError(30, "Read-only file system")

    w = LedgerWriter(led, lambda fn, *a: fn(*a), errors.append, witness=broken)
    w.start()
    for r in (1, 2):
        w.submit([Record("round.open", r, {})])
        w.flush()
    w.stop()
    assert len(errors) == 1 and errors[0] is w.witness_error  # the service makes it a "witness" tilt
    assert led.last_seq == 2
    led.close()


def test_a_checkpoint_left_past_a_cut_tail_is_reported_never_used_and_never_stops_the_ledger(tmp_path):
    """After a cut tail the checkpoint rows of the cut part remain: the meters must not start
    from one, and the ledger must still take new events across the next checkpoint."""
    from controller.books.ledger import CHECKPOINT_EVERY

    path = tmp_path / "l.sqlite3"
    led = Ledger(path, TABLE, key=TEST_KEY)
    led.append([Record("meter.init", 0, {"level": "primary", "seed": 500_000, "rate": "21/100"})])
    for first in range(1, CHECKPOINT_EVERY // 4 + 10, 50):  # 50 rounds a transaction
        led.append([rec for r in range(first, first + 50) for rec in _records(r)])
    cp = led.last_checkpoint()
    assert cp is not None
    led.close()
    db = sqlite3.connect(path)
    db.execute("DELETE FROM events WHERE seq > ?", (cp[0] - 100,))
    db.commit()
    db.close()
    led = Ledger(path, TABLE, key=TEST_KEY)
    assert led.last_checkpoint() is None  # the stale one is not a starting point
    assert led.meters == led.recompute_meters()  # the meters are the events'
    assert any(f"checkpoint at event {cp[0]} is past the last event" in p for p in led.verify())
    for r in range(CHECKPOINT_EVERY, CHECKPOINT_EVERY + 60):  # across the next checkpoint: no UNIQUE failure
        led.append(_records(r))
    assert led.last_seq > cp[0] and led.meters == led.recompute_meters()
    led.close()


def test_an_injected_enospc_releases_the_reserve_and_records_the_fault(tmp_path):
    """The same as on a full tmpfs, without root: the first append fails with ENOSPC."""
    from controller.books.standing import active_tilts

    led = Ledger(tmp_path / "l.sqlite3", TABLE, key=TEST_KEY)
    real = led.append
    calls: list[bool] = []

    def full_once(records, **kw):
        calls.append(led.reserve_path.exists())
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        return real(records, **kw)

    led.append = full_once  # type: ignore[method-assign]
    errors: list[BaseException] = []
    w = LedgerWriter(led, lambda fn, *a: fn(*a), errors.append)
    w.start()
    w.submit([Record("round.open", 1, {})])
    w.stop()
    assert calls == [True, False]  # the fault record is written once the reserve is released
    assert len(errors) == 1 and errors[0].errno == 28  # type: ignore[attr-defined]
    assert active_tilts(led) == {"ledger": "ledger write failed: OSError(28, 'No space left on device')"}
    led.close()


def test_a_new_key_replaces_a_link_planted_at_its_name_and_never_writes_through_it(tmp_path):
    """A writer of the key's directory plants a link to a file root cares about; root's
    ``key init --force`` replaces the link itself (a rename), the file it pointed at untouched."""
    import os
    import stat

    precious = tmp_path / "passwd"
    precious.write_text("root:x:0:0\n")
    key_file = tmp_path / "keys" / "ledger.key"
    key_file.parent.mkdir()
    key_file.symlink_to(precious)
    with pytest.raises(LedgerKeyError, match="a key already exists"):
        init_key(key_file)  # without --force nothing is written, through the link or beside it
    assert precious.read_text() == "root:x:0:0\n" and os.listdir(key_file.parent) == ["ledger.key"]
    init_key(key_file, overwrite=True)
    assert precious.read_text() == "root:x:0:0\n"
    st = key_file.lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert len(read_key(key_file)) == 32
    assert os.listdir(key_file.parent) == ["ledger.key"]  # no temporary left behind


def test_a_replaced_key_is_the_old_or_the_new_never_an_empty_file(tmp_path):
    key_file = init_key(tmp_path / "ledger.key")
    old = read_key(key_file)
    init_key(key_file, overwrite=True)
    new = read_key(key_file)
    assert len(new) == 32 and new != old
