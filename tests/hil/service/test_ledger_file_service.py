"""The service's side of the ledger-file attacks (tests/controller/test_ledger_file_attacks.py), as
a writer of the state directory without the key runs them between two starts: a rollback the
start-up must not launder by rewriting the witness, another table's ledger copied in, a round
number forged at 2^63-1, and files the open refuses (a planted trigger, a future schema, a witness
count of 1e300, an unkeyed ledger) — each a latched tilt naming the problem, never a traceback."""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hil.people import People
from hil.rig import Rig, TableSetup


def _rig(state: Path, seed: int = 2) -> Rig:
    return Rig(state, seed=seed, speed=50.0).start()


def _play(state: Path, rounds: int) -> None:
    rig = _rig(state)
    try:
        people = People(rig, random.Random(2), bet_probability=1.0)
        for _ in range(rounds):
            people.play_round()
    finally:
        rig.stop()


def _start_state(rig: Rig) -> Mapping[str, Any]:
    return rig.table.wait_for(lambda s: s["state"] in ("open_for_wagers", "tilt"), 30)


def _copy_ledger(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal"):
        f = src / f"ledger.sqlite3{suffix}"
        if f.exists():
            shutil.copy(f, dst / f.name)
        else:
            (dst / f.name).unlink(missing_ok=True)


def test_a_rollback_is_not_laundered_by_restarting(tmp_path):
    """The first start after an older copy was put back latched a tilt (good) but let the writer
    rewrite the witness to the rolled-back head: the second start passed, voided the interrupted
    round, and ``audit`` said ok.  The witness is now held until a technician's clear."""
    state = tmp_path / "state"
    _play(state, 1)
    _copy_ledger(state, tmp_path / "old")
    _play(state, 2)
    witness = (tmp_path / "state-witness" / "witness.json").read_bytes()
    _copy_ledger(tmp_path / "old", state)  # the rollback
    for start in (1, 2):
        rig = _rig(state)
        try:
            st = _start_state(rig)
            assert st["state"] == "tilt", f"start {start}: {st}"
            assert "witness says" in st["tilts"].get("self-check", "") or "differs from the witness" in str(st["tilts"])
        finally:
            rig.stop()
        assert (tmp_path / "state-witness" / "witness.json").read_bytes() == witness, f"rewritten at start {start}"
    rig = _rig(state)
    try:
        _start_state(rig)
        rig.service.post_command("clear", reason="rollback found: restored from paper records", by="tech 7")
        rig.table.wait_for(lambda s: s["state"] != "tilt", 10)
        rig.wait_until(lambda: rig.ledger_events(["ledger.acknowledged"]), 10, "the acknowledgement")
        # the technician acted (recorded): the witness follows the ledger again
        rig.wait_until(lambda: (tmp_path / "state-witness" / "witness.json").read_bytes() != witness, 10, "witness")
    finally:
        rig.stop()
    rig = _rig(state)
    try:
        assert _start_state(rig)["state"] == "open_for_wagers"
    finally:
        rig.stop()


def test_another_tables_ledger_copied_in_is_a_latched_tilt(tmp_path):
    """SIM-02's ledger and witness (same key) put in SIM-01's place: SIM-01 opened, appended its
    own rounds to it, and ``audit`` said ok.  Start-up now checks both against the table."""
    state = tmp_path / "state"
    rig = Rig(state, seed=2, speed=50.0, setup=TableSetup(table_id="SIM-02")).start()
    try:
        assert _start_state(rig)["state"] == "open_for_wagers"
    finally:
        rig.stop()
    before = (state / "ledger.sqlite3").stat().st_size
    rig = _rig(state)  # SIM-01, the same key and directories
    try:
        st = _start_state(rig)
        assert st["state"] == "tilt", st
        reason = st["tilts"]["self-check"]
        assert "the ledger was written by table 'SIM-02' (first event 1), not by 'SIM-01'" in reason, reason
        assert "the witness was written by table 'SIM-02'" in reason, reason
        rig.clock.sleep(1.0)
        assert len(rig.ledger_events(["round.open"])) == 1  # SIM-02's round only: SIM-01 opened none
    finally:
        rig.stop()
    assert (state / "ledger.sqlite3").stat().st_size >= before


def test_a_round_number_forged_at_the_largest_is_said_as_such(tmp_path):
    """One unsigned row in round 2^63-1: once acknowledged, the next round (2^63) latched an
    OverflowError tilt at every start.  The ledger now refuses the round with its reason."""
    state = tmp_path / "state"
    _play(state, 1)
    db = sqlite3.connect(state / "ledger.sqlite3")
    seq, h, ts = db.execute("SELECT seq, hash, ts FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    db.execute(
        "INSERT INTO events VALUES (?,?,?,?,?,?,?,?)", (seq + 1, ts, "SIM-01", (1 << 63) - 1, "round.open", "{}", h, h)
    )
    db.commit()
    db.close()
    rig = _rig(state)
    try:
        st = _start_state(rig)
        assert "MAC does not match" in st["tilts"]["self-check"]
        rig.service.post_command("clear", reason="forged row acknowledged", by="tech 7")
        st = rig.table.wait_for(lambda s: s["state"] == "tilt" and "ledger" in s["tilts"], 20)
        reason = st["tilts"]["ledger"]
        assert "round 9223372036854775808 is outside 0..9223372036854775807" in reason, reason
        assert "OverflowError" not in reason
    finally:
        rig.stop()


@pytest.mark.slow  # over 2 s on a quiet 2-core machine
def test_an_edit_of_a_recent_event_while_the_service_runs_is_found_within_seconds(tmp_path):
    """A row edited 5 s into play was found by the periodic audit 117.5 s later, after ~390 more
    rounds on the tampered ledger.  The tail watch walks the events since the last seal every
    ``Background.TAIL_EVERY_S`` (5 s): found within 10 s, as a latched tilt naming the event."""
    import time

    rig = _rig(tmp_path / "state")
    try:
        people = People(rig, random.Random(2), bet_probability=1.0)
        people.play_round()
        db = sqlite3.connect(rig.service.ledger_stack.ledger_path, timeout=30)
        (seq,) = db.execute("SELECT max(seq) FROM events WHERE kind = 'wager.accepted'").fetchone()
        db.execute("UPDATE events SET data = json_set(data, '$.cents', 9999900) WHERE seq = ?", (seq,))
        db.commit()
        db.close()
        edited = time.monotonic()
        rig.wait_until(lambda: rig.table.status["state"] == "tilt", 10, "the edit found")
        took = time.monotonic() - edited
        reason = rig.table.status["tilts"].get("ledger-audit", "")
        assert f"event {seq}: MAC does not match" in reason, rig.table.status["tilts"]
        assert took < 10.0
    finally:
        rig.stop()


def _plant(case: str, state: Path, key: bytes) -> Path:
    """A ledger of table PG-01 (the example configuration's) in ``state``, its witness beside it,
    then the attack ``case``; the file the message must name."""
    from controller.books.ledger import Ledger, Record
    from controller.books.witness import Witness, default_witness_dir

    led = Ledger(state / "ledger.sqlite3", "PG-01", key=key)
    led.append([Record("round.open", 1, {}), Record("round.complete", 1, {})])
    head = led.head()
    led.close()
    witness = Witness(default_witness_dir(state), "PG-01", key)
    witness.write(head)
    db = sqlite3.connect(state / "ledger.sqlite3")
    try:
        if case.startswith("witness-"):
            count = {"witness-1e300": "1e300", "witness-2^63": str(1 << 63)}[case]
            witness.path.write_text(f'{{"table": "PG-01", "count": {count}, "mac": "{head.mac}"}}')
            return witness.path
        if case == "schema-9":
            db.execute("UPDATE meta SET value = '9' WHERE name = 'schema'")
        elif case == "trigger":
            db.execute("CREATE TRIGGER pay AFTER INSERT ON events BEGIN DELETE FROM seals; END")
        db.commit()
    finally:
        db.close()
    return state / "ledger.sqlite3"


@pytest.mark.slow
@pytest.mark.parametrize("case", ["witness-1e300", "witness-2^63", "schema-9", "trigger"])
def test_a_file_the_start_up_refuses_is_a_latched_tilt_naming_it_never_a_traceback(tmp_path, case):
    """A witness count of 1e300 or 2^63, or schema 9, logged a traceback naming an OverflowError,
    not the file; a planted trigger ran inside the service's commits."""
    from controller.books.ledgerkey import read_key
    from tests.hil.service.test_startup_halts import _config, _run_until_ready, _state

    state = _state(tmp_path)
    cfg = _config(tmp_path, state)
    named = _plant(case, state, read_key(tmp_path / "ledger.key"))
    ready, out, rc = _run_until_ready(tmp_path, cfg)
    assert ready.startswith("READY=1") and "TILT" in ready, ready  # (the devices of this machine tilt too)
    assert str(named) in out, out[-3000:]
    assert "Traceback" not in out and "OverflowError" not in out, out[-3000:]
    assert rc == 0
