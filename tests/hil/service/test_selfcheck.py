"""Start-up self-checks (SPEC § 5): configuration, ledger integrity,
software digest and RNG self-test run before any pin is claimed or any link
opened; a failure is a latched tilt that survives a restart until cleared."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from controller.boot import selfcheck as S
from controller.daemon.options import StandIns
from hil.rig import TableSetup


def kinds(rig, *ks, n=1):
    """The ledger's events of these kinds, once at least ``n`` of them are durable."""
    from tests.conftest import eventually

    return eventually(
        lambda: (lambda evs: evs if len(evs) >= n else None)([(k, d) for _r, k, d in rig.ledger_events(kinds=ks)]),
        what=f"{n} {ks} events",
    )


def test_self_checks_come_before_any_pin_or_port(make_rig, monkeypatch):
    seen: dict[str, Any] = {}
    real = S.run_all

    def spy(hw, ledger, **kw):
        svc = rig.service
        seen.update(table=svc.table, ports=list(svc.serial_devices), pins=dict(rig.factory.pins))
        return real(hw, ledger, **kw)

    monkeypatch.setattr(S, "run_all", spy)
    rig = make_rig()
    rig.start()
    st = rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 10)
    assert seen == {"table": None, "ports": [], "pins": {}}
    assert rig.service.ready.is_set() and st["tilts"] == {}
    ((_k, rec),) = kinds(rig, "selfcheck")
    assert rec["results"] == {"config": "pass", "ledger": "pass", "software": "not recorded", "rng": "pass"}
    # nothing recorded (a simulator): nothing to compare with, so nothing hashed at start-up
    assert rec["digest"] == "" and rec["problems"] == []


@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
def test_software_mismatch_is_a_tilt_that_survives_restart(make_rig, tmp_path):
    """A digest that does not match the recorded one is a tilt; the tilt is still there
    after power-up even once the files are right again, until a technician clears it."""
    state = tmp_path / "state"
    rec = S.record_digest(state)
    doc = json.loads(S.record_path(state).read_text())
    doc["files"]["drivers/link.py"] = "0" * 64
    doc["digest"] = "e" * 64
    S.record_path(state).write_text(json.dumps(doc))
    rig = make_rig().start()
    st = rig.table.wait_for(lambda s: s.get("state") == "tilt", 10)
    assert "changed: drivers/link.py" in st["tilts"]["self-check"]
    rig.stop()
    S.record_digest(state)  # the files are right again
    rig = make_rig().start()
    st = rig.table.wait_for(lambda s: s.get("state") == "tilt", 10)
    assert "does not match the recorded" in st["tilts"]["self-check"]
    assert kinds(rig, "selfcheck", n=2)[-1][1]["results"]["software"] == "pass", kinds(rig, "selfcheck")
    assert rig.service.call(rig.table.clear_tilt, "software reinstalled and verified", "technician")
    rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 10)
    assert rec.digest == S.digest_of(S.manifest())


def test_missing_record_is_a_problem_on_a_real_table(make_rig):
    rig = make_rig()
    rig.service.checks.require_digest = True  # as `tablectl run` builds it (Service(trust=Trust(require_digest=True)))
    rig.start()
    st = rig.table.wait_for(lambda s: s.get("state") == "tilt", 10)
    assert "no recorded digest" in st["tilts"]["self-check"]


def test_rng_self_test_failure_is_a_tilt(make_rig):
    """A modulo-biased source fails the start-up RNG self-test (99 %): a tilt."""
    rig = make_rig()
    rig.rng.biased = True
    rig.start()
    st = rig.table.wait_for(lambda s: s.get("state") == "tilt", 10)
    assert st["tilts"]["self-check"].startswith("rng: self-test failed: 1..7: chi-square test failed at 99%")
    assert kinds(rig, "selfcheck")[-1][1]["results"]["rng"] == "fail"


def test_service_checks_and_uses_the_secrets_rng(make_rig, monkeypatch):
    """Without an injected source the service self-tests drivers.rng.SecretsRng and hands that
    same generator to the table for the starting position (§ 670a.5(i)(2))."""
    from controller.daemon.service import Service
    from drivers import rng as R

    tested = []
    real = R.SecretsRng.self_test

    def self_test(self: R.SecretsRng, **kw: Any) -> Any:
        tested.append(self)
        return real(self, **kw)

    monkeypatch.setattr(R.SecretsRng, "self_test", self_test)
    rig = make_rig()
    rig.service = Service(rig.hw, stand_ins=StandIns(clock=rig.clock, pin_factory=rig.factory))  # no rng, no rng_test
    rig.start()
    rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 10)
    assert isinstance(rig.service.rng, R.SecretsRng) and rig.table.dev.rng is rig.service.rng
    assert tested == [rig.service.rng] and rig.service.self_check.results["rng"] == "pass"


def test_check_config_problems(tmp_path):
    prog = SimpleNamespace(paytable="No Such Paytable", envy_paytable=None)
    hw = SimpleNamespace(profile=SimpleNamespace(progressive=prog), state_dir=tmp_path / "missing")
    problems = S.check_config(hw)
    assert problems[0].startswith("configuration: paytable 'No Such Paytable' does not load")
    assert problems[1] == f"configuration: state directory {tmp_path / 'missing'} is not a directory"


def test_configuration_changes_between_starts_are_logged_old_and_new(make_rig):
    """SPEC § 5: configuration changes are logged: at start-up, with old and new values."""
    make_rig().start().stop()
    rig = make_rig(setup=TableSetup(table_id="SIM-02")).start()
    # the ledger and its witness name SIM-01: a renamed table is a tilt until a technician clears it
    st = rig.table.wait_for(lambda s: s.get("state") == "tilt", 10)
    assert "written by table 'SIM-01'" in st["tilts"]["self-check"]
    rig.service.post_command("clear", reason="table renamed SIM-02 by the pit", by="technician")
    rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 10)
    rig.stop()
    rig = make_rig(setup=TableSetup(table_id="SIM-02")).start()
    rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 10)
    first, second, third = [d for _k, d in kinds(rig, "config.loaded", n=3)]
    assert first["changed"] == {} and first["values"]["table_id"] == "SIM-01"
    assert second["changed"]["table_id"] == ["SIM-01", "SIM-02"]
    assert "table_id" not in third["changed"]  # (the rig's pty paths differ at every start)
    assert (
        set(second["changed"]) - {"table_id", "asset"}  # the rig's asset number follows its table id
        == set(third["changed"])
        == {f"serial.{d}.port" for d in ("shoe", "shaker", "sign")}
    )


def test_digest_is_the_sha256sum_listing():
    files = {"b/x.py": "1" * 64, "a/y.toml": "2" * 64}
    import hashlib

    listing = f"{'2' * 64}  a/y.toml\n{'1' * 64}  b/x.py\n"
    assert S.digest_of(files) == hashlib.sha256(listing.encode()).hexdigest()
    assert S.compare({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "4"}) == {
        "changed": ["b"],
        "missing": [],
        "added": ["c"],
    }
