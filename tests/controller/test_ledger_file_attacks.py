"""The table's ledger as a writer of the state directory without the key would attack it (the
``tablectl`` user's shell owns the state and witness directories): rows outside the chain,
another table's ledger, a witness or meta field out of range, a trigger planted in the file, a
row too large to read, a forged history made to look unkeyed.  Each of these passed, crashed or
was signed by the service before; each is now found, named, and changes nothing
(docs/security.md "What a writer of the state directory can and cannot do")."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from controller.books.audit import Where, audit
from controller.books.auditrun import AuditRunner
from controller.books.history import round_detail, round_numbers
from controller.books.ledger import CHECKPOINT_EVERY, GENESIS, EventRow, Ledger, LedgerError, Record, event_hash
from controller.books.ledgerfile import MAX_VALUE_BYTES
from controller.books.ledgerkey import init_key, read_key
from controller.books.witness import Witness
from controller.cli import main
from tests.controller.test_ledger_trust import TABLE, _records

# ---------------------------------------------------------------------- a table's books


class Books:
    """A keyed ledger in ``<tmp>/state`` with its key file and witness, as the service keeps them."""

    def __init__(self, tmp: Path, table: str = TABLE, rounds: int = 3, name: str = "state"):
        self.key_file = tmp / f"{name}.key"
        if not self.key_file.exists():
            init_key(self.key_file)
        self.key = read_key(self.key_file)
        self.state = tmp / name
        self.where = Where(self.state, self.key, tmp / f"{name}-witness", table)
        self.witness = Witness(self.where.witness_dir, table, self.key)
        led = Ledger(self.where.ledger_path, table, key=self.key)
        led.append([Record("meter.init", 0, {"level": "primary", "seed": 500_000, "rate": "21/100"})])
        for r in range(1, rounds + 1):
            led.append(_records(r))
        self.witness.write(led.head())
        self.head = led.head()
        led.close()

    @property
    def path(self) -> Path:
        return self.where.ledger_path

    def args(self) -> list[str]:
        return [
            "--state-dir",
            str(self.state),
            "--key-file",
            str(self.key_file),
            "--witness-dir",
            str(self.where.witness_dir),
        ]

    def sql(self, *statements: str, params: tuple[object, ...] = ()) -> None:
        db = sqlite3.connect(self.path)
        for s in statements:
            db.execute(s, params) if params else db.execute(s)
        db.commit()
        db.close()


@pytest.fixture
def books(tmp_path: Path) -> Books:
    return Books(tmp_path)


def _forge_row(books: Books, seq: int, round_no: int, cents: int) -> None:
    """A payout row the attacker adds with a number outside the chain (its hash made up)."""
    data = json.dumps({"seat": 2, "wager": "progressive", "cents": cents}, sort_keys=True, separators=(",", ":"))
    books.sql(
        "INSERT INTO events(seq, ts, table_id, round, kind, data, prev, hash) VALUES (?,?,?,?,?,?,?,?)",
        params=(seq, "2026-01-01T00:00:00.000000+00:00", TABLE, round_no, "payout", data, GENESIS, "0" * 64),
    )


# ---------------------------------------------------------------------- rows outside the chain


def test_rows_numbered_zero_or_below_are_found_never_shown_and_never_the_current_round(books, capsys):
    """seq 0: a $100,000 payout in round 320; seq -5: a round 99999 paying $500,000.  Every check
    walked 1..head only, so all passed them, history showed them, and the service took round 99999
    as the current one."""
    _forge_row(books, 0, 320, 10_000_000)
    books.sql(
        "INSERT INTO events VALUES (-5, '2026-01-01T00:00:00.000000+00:00', ?, 99999, 'round.open', '{}', ?, ?)",
        params=(TABLE, GENESIS, "0" * 64),
    )
    _forge_row(books, -4, 99999, 50_000_000)
    found = audit(books.where)
    assert any("3 row(s) outside the chain (numbered -5 to 0" in p for p in found), found
    assert any("outside the chain" in p for p in audit(books.where, full=False)), "the start-up check misses them"
    led = Ledger(books.path, TABLE, key=books.key)
    try:
        assert led.last_round() == 3  # the chain's last round, not the forged 99999
        assert any("outside the chain" in p for p in led.verify())
    finally:
        led.close()
    assert main(["audit", *books.args()]) == 1
    assert main(["history", *books.args()]) == 1
    assert "outside the chain" in capsys.readouterr().err
    assert main(["backup", str(books.state.parent / "bk"), "--mkdir", *books.args()]) == 1  # it said "audit ok"
    assert "outside the chain" in capsys.readouterr().err
    db = sqlite3.connect(books.path)
    try:  # and history's own reads never take them, even were a technician to acknowledge the finding
        assert 99999 not in round_numbers(db) and round_detail(db, 99999) is None
        assert round_detail(db, 320) is None
    finally:
        db.close()


# ---------------------------------------------------------------------- another table's ledger


def test_another_tables_ledger_and_witness_copied_in_are_found(tmp_path):
    """SIM-02's ledger and witness (same key) copied over SIM-01's: the audit said ok, and the
    service opened and appended its own rounds to it.  Only restore compared table ids."""
    mine = Books(tmp_path, "SIM-01", name="state")
    other = Books(tmp_path, "SIM-02", name="other")
    shutil.copy(other.path, mine.path)
    shutil.copy(other.where.witness_dir / "witness.json", mine.where.witness_dir / "witness.json")
    found = audit(Where(mine.state, other.key, mine.where.witness_dir, "SIM-01"))
    assert any("the ledger was written by table 'SIM-02' (first event 1), not by 'SIM-01'" in p for p in found), found
    assert any("the witness was written by table 'SIM-02', not by this table ('SIM-01')" in p for p in found), found


# ---------------------------------------------------------------------- fields out of range


@pytest.mark.parametrize("count", ["1e300", str(1 << 63), "true", "1.5", '"5"', str(-1), "[" * 50 + "]" * 50])
def test_a_witness_count_out_of_range_is_a_finding_naming_the_file_never_a_traceback(books, capsys, count):
    path = books.where.witness_dir / "witness.json"
    path.write_text(f'{{"table": "{TABLE}", "count": {count}, "mac": "{books.head.mac}"}}')
    assert main(["audit", *books.args()]) == 1
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert str(path) in out and "Traceback" not in out and "OverflowError" not in out, out


@pytest.mark.parametrize("value", ["9", "1e300", "99999999999999999999999", "x"])
def test_a_schema_or_keyed_from_out_of_range_is_an_error_naming_the_file(books, capsys, value):
    books.sql(f"UPDATE meta SET value = '{value}' WHERE name = 'schema'")
    with pytest.raises(LedgerError, match=str(books.path).replace("/", ".")):
        Ledger(books.path, TABLE, key=books.key)
    assert main(["audit", *books.args()]) == 1
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert str(books.path) in out and "Traceback" not in out and "OverflowError" not in out, out


# ---------------------------------------------------------------------- the file's schema


FORGED_PAYOUT = (
    "CREATE TRIGGER pay AFTER INSERT ON events WHEN NEW.kind = 'round.complete' BEGIN "
    "INSERT INTO events(seq, ts, table_id, round, kind, data, prev, hash) VALUES (NEW.seq + 1, NEW.ts, "
    "NEW.table_id, NEW.round, 'payout', '{\"cents\":9999900,\"seat\":2}', NEW.hash, NEW.hash); END"
)
NO_SEALS = "CREATE TRIGGER noseal BEFORE INSERT ON seals BEGIN SELECT RAISE(IGNORE); END"


@pytest.mark.parametrize(
    "plant",
    [FORGED_PAYOUT, NO_SEALS, "CREATE VIEW v AS SELECT * FROM events", "CREATE INDEX evil ON events(data)"],
    ids=["forged-payout-trigger", "no-seals-trigger", "view", "index"],
)
def test_an_object_planted_in_the_ledger_file_refuses_the_open_before_any_write(books, plant):
    """A trigger planted in the file ran inside the service's own commits: a forged payout every
    round, or all sealing silently stopped.  The open now refuses the file first."""
    books.sql(plant)
    before = books.path.read_bytes()
    with pytest.raises(
        LedgerError, match="the ledger file's schema holds .* not made by this software; nothing was written"
    ):
        Ledger(books.path, TABLE, key=books.key)
    assert books.path.read_bytes() == before
    assert any("not made by this software" in p for p in audit(books.where))


def test_a_changed_table_definition_is_refused_too(books):
    books.sql("ALTER TABLE events ADD COLUMN note TEXT DEFAULT 'x'")
    with pytest.raises(LedgerError, match="table 'events', changed from what this software creates"):
        Ledger(books.path, TABLE, key=books.key)


# ---------------------------------------------------------------------- a row too large to read


def _sealed_books(tmp_path: Path) -> Books:
    b = Books(tmp_path, rounds=0)
    led = Ledger(b.path, TABLE, key=b.key)
    led.append([Record("round.open", r, {}) for r in range(1, CHECKPOINT_EVERY)])  # seal 1: events 1-2000
    led.append([Record("round.open", r, {}) for r in range(CHECKPOINT_EVERY, CHECKPOINT_EVERY + 10)])
    b.witness.write(led.head())
    assert led.last_checkpoint() is not None
    led.close()
    return b


def test_an_oversized_row_in_a_sealed_segment_is_a_finding_not_read_into_memory(tmp_path):
    """A 150 MB row planted in a sealed segment got the service killed for its memory at each
    start (the audit read the segment's rows as one value).  Here 12 MB: the audit names the
    segment and reads none of it (what it took in memory, measured by tracemalloc)."""
    b = _sealed_books(tmp_path)
    b.sql("UPDATE events SET data = ? WHERE seq = 10", params=("x" * (12 << 20),))
    runner = AuditRunner(b.where, TABLE)
    tracemalloc.start()
    try:
        problems = runner.run()
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert any(
        f"seal 1 (events 1-{CHECKPOINT_EVERY}): a row holds a value over {MAX_VALUE_BYTES}" in p for p in problems
    ), problems
    assert peak < 4 << 20, f"the audit took {peak} bytes: it read the row"


def test_an_oversized_row_after_the_last_seal_is_found_at_start_up(tmp_path):
    b = _sealed_books(tmp_path)
    b.sql("UPDATE events SET data = ? WHERE seq = ?", params=("x" * (MAX_VALUE_BYTES + 1), CHECKPOINT_EVERY + 3))
    found = audit(b.where, full=False)
    assert any("holds a value over" in p for p in found), found


# ---------------------------------------------------------------------- a forged history made to look unkeyed


def _downgrade(books: Books, cents: int) -> None:
    """The attacker's script: edit a payout, recompute the plain SHA-256 chain over every event,
    delete the schema markers, seals and checkpoints: a ledger as written before keys existed."""
    db = sqlite3.connect(books.path)
    rows = db.execute("SELECT seq, ts, table_id, round, kind, data FROM events ORDER BY seq").fetchall()
    prev = GENESIS
    for seq, ts, tid, rnd, kind, data in rows:
        if kind == "wager.accepted":
            data = json.dumps({**json.loads(data), "cents": cents}, sort_keys=True, separators=(",", ":"))
        h = event_hash(EventRow(seq, ts, tid, rnd, kind, data, prev))
        db.execute("UPDATE events SET data = ?, prev = ?, hash = ? WHERE seq = ?", (data, prev, h, seq))
        prev = h
    for table in ("meta", "seals", "checkpoints"):
        db.execute(f"DELETE FROM {table}")
    db.commit()
    db.close()


def test_a_forged_history_made_to_look_unkeyed_is_never_signed(books, capsys):
    """Start-up (or ``tablectl migrate``) used to key such a ledger: sign the forged head.  Now
    no open keys it, and the technician's explicit command refuses it (its witness and its
    tables say it was keyed)."""
    _downgrade(books, 9_999_900)
    before = books.path.read_bytes()
    with pytest.raises(LedgerError, match="an unkeyed ledger .* never keyed at start-up"):
        Ledger(books.path, TABLE, key=books.key)
    assert books.path.read_bytes() == before
    assert main(["migrate", *books.args()]) == 1
    order = ["--key-unkeyed", "--by", "tech 7", "--reason", "upgrade"]
    assert main(["migrate", *books.args(), *order]) == 1
    assert "refused to key it: the witness" in capsys.readouterr().err
    (books.where.witness_dir / "witness.json").unlink()  # the witness deleted too: the file still says
    assert main(["migrate", *books.args(), *order]) == 1
    assert "refused to key it: the ledger has a meta table" in capsys.readouterr().err
    assert books.path.read_bytes() == before
    assert main(["audit", *books.args()]) == 1


# ---------------------------------------------------------------------- the witness, signed


def test_an_older_copy_put_back_with_a_witness_made_to_match_is_found(books, tmp_path):
    """The witness directory is the service user's: a shell there put back a backup of the ledger
    and wrote a witness of the backup's head (count and MAC read from the copy) — every check
    passed.  The witness is now signed under a key derived from the ledger key."""
    old = tmp_path / "old.sqlite3"
    shutil.copy(books.path, old)
    old_head = Ledger.open_readonly(old).head()
    led = Ledger(books.path, TABLE, key=books.key)
    led.append(_records(4))
    books.witness.write(led.head())
    led.close()
    assert audit(books.where) == []
    shutil.copy(old, books.path)  # the rollback, and a witness made for it without the key
    plain = json.dumps({"table": TABLE, "count": old_head.count, "mac": old_head.mac})
    path = books.where.witness_dir / "witness.json"
    path.write_text(plain)
    assert any(f"{path}: the witness is not signed" in p for p in audit(books.where))
    path.write_text(json.dumps({**json.loads(plain), "sig": "0" * 64}))
    assert any(f"{path}: the witness's signature does not match" in p for p in audit(books.where))


def test_migrate_signs_a_witness_from_before_signing_only_when_it_matches_the_ledger(books, capsys):
    path = books.where.witness_dir / "witness.json"
    path.write_text(json.dumps({"table": TABLE, "count": books.head.count, "mac": books.head.mac}))
    assert any("not signed" in p for p in audit(books.where))
    assert main(["migrate", *books.args()]) == 0
    assert "the witness (unsigned, matching the ledger) is now signed" in capsys.readouterr().out
    assert audit(books.where) == [] and "sig" in json.loads(path.read_text())
    path.write_text(json.dumps({"table": TABLE, "count": books.head.count, "mac": "f" * 64}))  # another head
    assert main(["migrate", *books.args()]) == 1  # left as it is: the audit after names it
    assert "sig" not in json.loads(path.read_text())
