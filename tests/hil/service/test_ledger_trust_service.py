"""The trusted ledger, the service's side: a damaged, rolled-back or missing ledger found at
start-up is a latched tilt (the table closed, READY sent so that systemd does not
restart it in a loop), never a silent fall-back to the seed meters and never a
settled round voided again; nothing is shown before the start-up records are
durable; damage a technician acknowledged does not re-tilt at every audit."""

from __future__ import annotations

import random
import sqlite3
import threading
import time

import pytest

from controller.books.ledger import Ledger
from hil.people import People
from hil.rig import Rig


def _restart(tmp_path, **kw) -> Rig:
    return Rig(tmp_path / "state", seed=kw.pop("seed", 2), speed=50.0, **kw).start()


def test_a_deleted_ledger_is_a_latched_tilt_with_ready_sent_not_seed_meters(tmp_path):
    rig = _restart(tmp_path)
    try:
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers", 30)
    finally:
        rig.stop()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / "state" / f"ledger.sqlite3{suffix}").unlink(missing_ok=True)
    rig = _restart(tmp_path)
    try:
        st = rig.table.wait_for(lambda s: s["state"] == "tilt", 30)
        assert "empty or missing" in st["tilts"]["self-check"]
        assert rig.service.ready.wait(10)  # READY=1: the table is up, latched, waiting for a technician
        rig.clock.sleep(1.0)
        assert rig.table.status["state"] == "tilt"
        assert rig.ledger_events(["round.open"]) == []  # never opened on the seed meters
    finally:
        rig.stop()


def test_a_cut_tail_does_not_void_a_settled_and_paid_round_again(tmp_path):
    """Before the trusted ledger a tail cut just before ``round.settled`` made start-up void the
    round and return its wagers — after they had been settled and paid."""
    rig = _restart(tmp_path, seed=3)
    try:
        people = People(rig, random.Random(2), bet_probability=1.0)
        n = people.play_round()
    finally:
        rig.stop()
    path = tmp_path / "state" / "ledger.sqlite3"
    db = sqlite3.connect(path)
    (cut,) = db.execute("SELECT seq FROM events WHERE round = ? AND kind = 'round.settled'", (n,)).fetchone()
    results = db.execute("SELECT COUNT(*) FROM events WHERE round = ? AND kind = 'wager.result'", (n,)).fetchone()[0]
    assert results > 0
    db.execute("DELETE FROM events WHERE seq >= ?", (cut,))
    db.commit()
    db.close()
    rig = _restart(tmp_path)
    try:
        st = rig.table.wait_for(lambda s: s["state"] == "tilt", 30)
        assert "cut tail" in st["tilts"]["self-check"], st["tilts"]
        rig.wait_until(lambda: rig.ledger_events(["tilt.raised"]), 10, "the tilt record")
        assert [d for r, k, d in rig.ledger_events(["round.void", "wager.returned"]) if r == n] == []
    finally:
        rig.stop()


def test_nothing_is_shown_before_the_start_up_records_are_durable(tmp_path, monkeypatch):
    """Table.start used to open for wagers before its power.up record (and the
    self-check and config.loaded records) were on disk."""
    rig = Rig(tmp_path / "state", seed=2, speed=50.0)
    seen: list[str] = []
    original = Ledger.append

    def slow_disk(self, records, **kw):
        kinds = {r.kind for r in records}
        if "power.up" in kinds:
            time.sleep(0.3)  # a slow disk: the start-up records are not durable yet
            table = rig.service.table
            seen.append(table.status.get("state", "?") if table is not None else "no table")
        return original(self, records, **kw)

    monkeypatch.setattr(Ledger, "append", slow_disk)
    started = threading.Thread(target=rig.start)
    started.start()
    try:
        started.join(30)
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers", 30)
        assert seen and seen[0] != "open_for_wagers", seen
        rig.wait_until(lambda: rig.ledger_events(["round.open"]), 10, "the round.open record")
        kinds = [k for _r, k, _d in rig.ledger_events()]
        for k in ("power.up", "selfcheck", "config.loaded"):
            assert k in kinds and kinds.index(k) < kinds.index("round.open"), kinds
    finally:
        rig.stop()


def test_damage_a_technician_acknowledged_does_not_re_tilt_at_every_audit(make_rig):
    rig = make_rig().start()
    rig.table.wait_for(lambda s: s["state"] == "open_for_wagers", 30)
    db = sqlite3.connect(rig.service.ledger.path, timeout=30)
    db.execute("UPDATE events SET data = replace(data, 'version', 'versi0n') WHERE kind = 'power.up'")
    db.commit()
    db.close()
    problems = rig.service.audit_ledger()
    assert any("MAC does not match" in p for p in problems)
    rig.table.wait_for(lambda s: s["state"] == "tilt", 10)
    rig.service.post_command("clear", reason="edit found by the audit, reported", by="technician")
    rig.table.wait_for(lambda s: s["state"] != "tilt", 10)
    rig.wait_until(lambda: rig.ledger_events(["ledger.acknowledged"]), 10, "the acknowledgement")
    assert rig.service.audit_ledger() == []  # acknowledged: the next audit does not tilt again
    rig.clock.sleep(0.5)
    assert rig.table.status["state"] != "tilt"


@pytest.mark.slow  # over 2 s on a quiet 2-core machine
@pytest.mark.parametrize("walk", ["at start-up", "at once after"])
def test_start_up_checks_events_below_the_last_checkpoint(tmp_path, monkeypatch, walk):
    """Start-up used to verify only from the last checkpoint (every 2,000 events): an edit
    below it waited for the 6-hourly audit.  Now the start-up check walks every event; on a
    ledger longer than ``Service.START_FULL_EVENTS`` the audit thread walks it at once."""
    from controller.daemon.service import Service

    if walk == "at once after":
        monkeypatch.setattr(Service, "START_FULL_EVENTS", 100)
    from controller.books.ledger import CHECKPOINT_EVERY, Record
    from controller.books.witness import Witness, default_witness_dir
    from hil.rig import rig_ledger_key

    state = tmp_path / "state"
    led = Ledger(state / "ledger.sqlite3", "SIM-01", key=rig_ledger_key(state))
    for first in range(1, CHECKPOINT_EVERY // 2 + 10, 100):  # 100 rounds a transaction
        led.append([Record(k, r, {}) for r in range(first, first + 100) for k in ("round.open", "round.complete")])
    assert led.last_checkpoint() is not None
    Witness(default_witness_dir(state), "SIM-01", rig_ledger_key(state)).write(led.head())
    led.close()
    db = sqlite3.connect(state / "ledger.sqlite3")
    db.execute("UPDATE events SET data = '{\"edited\":1}' WHERE seq = 5")
    db.commit()
    db.close()
    rig = _restart(tmp_path)
    try:
        st = rig.table.wait_for(lambda s: s["state"] == "tilt", 30)
        source = "self-check" if walk == "at start-up" else "ledger-audit"
        assert "event 5: MAC does not match" in st["tilts"][source], st["tilts"]
    finally:
        rig.stop()


def test_a_clock_gone_backwards_is_a_latched_tilt_recorded_in_the_ledger(make_rig):
    rig = make_rig().start()
    rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], 30)
    rig.service.ledger._wall = lambda: time.time() - 365 * 86400  # the clock set a year back
    rig.place(2)
    rig.clock.sleep(0.2)
    rig.press("lockout")  # the lock-out's records would be stamped before the last event
    st = rig.table.wait_for(lambda s: s["state"] == "tilt", 30)
    assert "clock went backwards" in st["tilts"]["clock"]
    # the count was shown once the accepted set was durable in the lock-out journal (which stamps
    # no time); the ledger, whose records carry the time, refused them and latched the tilt
    assert st["count_shown"]
    assert [e.round for e in rig.service.ledger_stack.journal.entries()][-1] == st["round"]
    tilts = [d for _r, _k, d in rig.ledger_events(["tilt.raised"])]
    assert tilts and tilts[-1]["source"] == "clock"
    assert rig.ledger_events(["lockout"]) == []


def test_a_ledger_from_before_the_key_is_never_keyed_at_start_only_by_a_technicians_migrate(tmp_path, capsys):
    """A table's unkeyed (schema 1) ledger: keying it signs its history as it stands, and a writer
    of the state directory can make a forged ledger look unkeyed (recompute the plain chain, drop
    the keyed markers).  The service used to key it at start-up; now it stays closed (halted,
    nothing written) until a technician runs ``tablectl migrate --key-unkeyed`` (recorded)."""
    from controller.cli import main
    from tests.controller.test_ledger_trust import _v1_ledger

    state = tmp_path / "state"
    state.mkdir()
    path = state / "ledger.sqlite3"
    _v1_ledger(path, table="SIM-01")
    before = path.read_bytes()
    rig = Rig(state, seed=2, speed=50.0)
    try:
        rig.service.start(halt_on_error=True)
        assert rig.service.halted and rig.service.table is None
    finally:
        rig.service.stop()
    assert path.read_bytes() == before  # nothing written, not even this release's tables
    capsys.readouterr()
    assert main(["migrate", "--state-dir", str(state), "--key-unkeyed", "--by", "tech 7", "--reason", "checked"]) == 0
    assert "migrated from schema 1 to 3" in capsys.readouterr().out
    rig = _restart(tmp_path)
    try:
        st = rig.table.wait_for(lambda s: s["state"] in ("open_for_wagers", "tilt"), 30)
        assert st["state"] == "open_for_wagers", st["tilts"]
        keyed = [d for _r, k, d in rig.ledger_events(["ledger.keyed"])]
        assert keyed and keyed[0]["by"] == "tech 7" and keyed[0]["reason"] == "checked"
        assert rig.service.audit_ledger() == []
    finally:
        rig.stop()


def test_a_witness_directory_that_cannot_be_written_is_a_latched_tilt_not_a_crash(tmp_path):
    (tmp_path / "state-witness").write_text("a file where the witness directory should be")
    rig = _restart(tmp_path)
    try:
        st = rig.table.wait_for(lambda s: s["state"] == "tilt", 30)
        # it cannot be read either: the start-up leaves it as it is (a witness it cannot read is never
        # replaced by the head it was to vouch for) and the tilt says so
        assert "witness.json: cannot read the witness" in st["tilts"]["self-check"], st["tilts"]
        assert rig.service.ready.wait(10)
    finally:
        rig.stop()


def test_an_audit_that_cannot_run_is_a_latched_tilt_and_the_audits_go_on(make_rig, monkeypatch):
    """An exception outside the audit run's own handling (here: its runner broken) used to end
    the ``ledger-audit`` thread silently, and every later audit with it.  It is now a finding:
    logged, latched as a tilt, and the next audit runs as usual."""
    rig = make_rig().start()
    rig.table.wait_for(lambda s: s["state"] == "open_for_wagers", 30)
    bg = rig.service.background

    def broken(where):
        raise OSError("disk vanished")

    monkeypatch.setattr(bg, "audit", broken)
    assert rig.service._audit_run() == ["the periodic audit could not run: OSError: disk vanished"]
    st = rig.table.wait_for(lambda s: s["state"] == "tilt", 10)
    assert "periodic audit could not run" in st["tilts"]["ledger-audit"], st["tilts"]
    monkeypatch.undo()
    assert rig.service._audit_run() == []  # the next run: the ledger itself is sound
    rig.stop()
