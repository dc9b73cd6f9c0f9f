"""The database owner (or anyone who can act as the LAP schema's
owner) changes money or the rules while the link runs, and software is not what the release is.

Against a real PostgreSQL and the real LAP service (reconciling every 200 ms here, ``[link]
reconcile``): a meter edited behind the rules, a parameter changed with its guard switched off, a
money rule replaced by a no-op — each makes the link **inoperable** within the reconcile
interval (every table closed, the reason recorded in ``param_changes`` and shown in the floor
view's data); a replaced function is found at start-up too, and the LAP does not run.
``tablectl lap`` and ``tablectl uplink`` check the software digest before they operate."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from controller.boot.selfcheck import digest_of, load_record, record_digest
from controller.cli import main
from controller.lap.floor import FloorData
from controller.lap.lap import LapError, LapStore, connect, wait_until
from controller.lap.service import LapService
from tests.link.conftest import lap_doc

NO_OP_GUARD = """
CREATE OR REPLACE FUNCTION {s}.guard_params() RETURNS trigger LANGUAGE plpgsql
SET search_path = {s}, pg_temp AS $$ BEGIN RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END; END $$
"""


@pytest.fixture
def running(make_lap: Any, pg_dsn: str) -> Iterator[tuple[Any, LapService]]:
    lap = make_lap()  # reconcile = "200ms"
    lap.send("T1", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    svc = LapService(lap.cfg, pg_dsn, log=lambda m: None)
    th = threading.Thread(target=svc.run, daemon=True)
    th.start()
    assert wait_until(lambda: lap.store.state() == "running" and _beats(lap), 15)
    yield lap, svc
    svc.stop_event.set()
    th.join(10)


def _beats(lap: Any) -> bool:
    return lap.store._rows("SELECT heartbeat_at FROM {s}.link")[0]["heartbeat_at"] is not None


def _owner(lap: Any, stmt: str) -> None:
    lap.store.conn.execute(sql.SQL(stmt).format(s=sql.Identifier(lap.cfg.schema)))


def _inoperable_within(lap: Any, seconds: float) -> str:
    t0 = time.monotonic()
    assert wait_until(lambda: lap.store.state() == "inoperable", seconds), "the link kept running"
    took = time.monotonic() - t0
    reason = lap.store.inoperable_reason()
    assert reason
    changes = [(c["key"], c["new"]) for c in lap.store.param_changes() if c["what"] == "link"]
    assert ("state", "inoperable") in changes and ("reason", reason) in changes  # recorded
    assert took <= seconds
    return str(reason)


@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
def test_an_owners_meter_edit_while_running_stops_the_link_within_the_reconcile_interval(running):
    lap, _svc = running
    _owner(lap, "UPDATE {s}.levels SET value_num = value_num + den * 100000")  # +$1,000 on the sign
    reason = _inoperable_within(lap, 1.0)  # reconcile = 200 ms (+ a heartbeat, + the machine's load)
    assert "level primary" in reason
    floor = FloorData(lap.dsn, lap.cfg.schema)
    try:
        assert floor.snapshot()["inoperable"] == reason  # the floor view's data says why
    finally:
        floor.close()
    # the database takes no money event while inoperable: the records wait in the tables' outboxes
    with pytest.raises(Exception, match="the LAP is inoperable"):
        lap.send("T1", 2, "contribution", {"wager": 100, "round": 2, "seat": 1})


def test_the_edit_is_also_caught_by_the_database_at_the_next_batch(make_lap):
    """Without the LAP process at all: ``check_batch`` checks every level's running identity."""
    lap = make_lap()
    lap.send("T1", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    _owner(lap, "UPDATE {s}.levels SET value_num = value_num + den")
    lap.batch("T1", 1, 1, 100, "1:x")
    assert lap.store.state() == "inoperable"
    assert "the meters disagree with the contributions" in str(lap.store.inoperable_reason())


def test_a_parameter_changed_with_its_guard_switched_off_stops_the_link(running):
    lap, _svc = running
    _owner(lap, "ALTER TABLE {s}.levels DISABLE TRIGGER guard_params")
    _owner(lap, "UPDATE {s}.levels SET rate_num = 90")  # 90 % to the meter, recorded nowhere
    reason = _inoperable_within(lap, 1.0)
    assert "trigger levels.guard_params differs" in reason and "rate_num 90 -> 21" in reason


def test_a_money_rule_replaced_while_running_stops_the_link(running):
    lap, _svc = running
    _owner(lap, NO_OP_GUARD)
    reason = _inoperable_within(lap, 1.0)
    assert "function guard_params() differs from this release's" in reason


def test_a_replaced_trigger_function_is_found_at_start_up_and_the_lap_does_not_run(make_lap, pg_dsn):
    # as found: guard_params() replaced by a no-op still passed the LAP's self-check
    lap = make_lap()
    lap.store.set_state("stopped")
    _owner(lap, NO_OP_GUARD)
    svc = LapService(lap.cfg, pg_dsn, log=lambda m: None)
    with pytest.raises(LapError, match=r"function guard_params\(\) differs from this release's"):
        svc.start_link()
    assert lap.store.state() == "inoperable"
    assert "guard_params" in str(lap.store.inoperable_reason())
    with connect(pg_dsn) as c:
        assert LapStore(c, lap.cfg.schema).schema_differences() == [
            "function guard_params() differs from this release's"
        ]


def test_a_rule_that_drops_events_or_row_security_switched_off_is_found(make_lap):
    lap = make_lap()
    _owner(lap, "CREATE RULE quiet AS ON INSERT TO {s}.refusals DO INSTEAD NOTHING")
    _owner(lap, "ALTER TABLE {s}.events DISABLE ROW LEVEL SECURITY")
    assert lap.store.schema_differences() == [
        "row security events differs from this release's",
        "rule refusals.quiet is not this release's",
    ]


# ------------------------------------------------------------------ finding 7: the software digest


def _tampered_record(tmp: Path) -> Path:
    """A record of this release with one more file than is installed: the digest differs."""
    path = tmp / "software.json"
    record_digest(path)
    rec = load_record(path)
    assert rec is not None
    doc = json.loads(path.read_text())
    doc["files"]["controller/extra.py"] = "0" * 64
    doc["digest"] = digest_of(doc["files"])
    path.write_text(json.dumps(doc))
    return path


def test_lap_and_uplink_refuse_to_operate_when_the_software_digest_differs(pg_dsn, lap_schema, tmp_path, capsys):
    record = _tampered_record(tmp_path)
    doc = lap_doc(lap_schema)
    lines = [
        f'[link]\ngroup = "pit"\nschema = "{lap_schema}"\nsoftware_record = {json.dumps(str(record))}\n',
        '[levels.primary]\nseed = "$1,000"\nincrement_rate = "21%"\nmax_wager = "$5"\nmeter_pays = ["100%"]\n',
    ]
    lines += [f'[tables.{t}]\nasset = "{v["asset"]}"\ngame = "{v["game"]}"\n' for t, v in doc["tables"].items()]
    (tmp_path / "lap.toml").write_text("\n".join(lines))
    assert main(["lap", "--sim", "--db", pg_dsn, "--config", str(tmp_path / "lap.toml"), "--check"]) == 3
    assert "software: digest" in capsys.readouterr().err
    assert main(["lap", "--sim", "--db", pg_dsn, "--config", str(tmp_path / "lap.toml")]) == 3
    assert "missing: controller/extra.py" in capsys.readouterr().err
    with connect(pg_dsn) as c:
        assert LapStore(c, lap_schema).installed() is None  # it did not operate: nothing created

    from controller.books.ledgerkey import init_key
    from controller.lap.linkauth import new_key, write_key

    key = init_key(tmp_path / "ledger.key")
    link = tmp_path / "link.key"
    write_key(link, new_key(lap_schema, "T1", 1))
    (tmp_path / "uplink.toml").write_text(
        f'[uplink]\ndb = "postgresql://x@y/z"\nschema = "{lap_schema}"\ntable = "T1"\n'
        f"key_file = {json.dumps(str(key))}\nsoftware_record = {json.dumps(str(record))}\n"
        f"link_key_file = {json.dumps(str(link))}\n"
    )
    assert main(["uplink", "--sim", "--config", str(tmp_path / "uplink.toml"), "--check"]) == 3
    assert "software: digest" in capsys.readouterr().err
