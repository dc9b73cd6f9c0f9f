"""lap.toml parsing (errors name file, section and key) and the ``tablectl lap`` service."""

from __future__ import annotations

import threading

import pytest

from config import CONFIG_DIR
from controller.books.ledgerkey import init_key
from controller.cli import main
from controller.lap.config import load_lap, parse_lap
from controller.lap.lap import LapStore, connect, wait_until
from controller.lap.linkauth import new_key, write_key
from controller.lap.service import LapService
from controller.settings.config import ConfigError
from tests.link.conftest import lap_doc


def test_example_parses():
    cfg = load_lap(CONFIG_DIR / "examples" / "lap.toml")
    assert cfg.group == "pit1" and cfg.schema == "lap_pit1" and len(cfg.tables) == 2
    assert cfg.levels[0].den == 100 and cfg.role_for("T01") == "lap_pit1_t01"


@pytest.mark.parametrize(
    ("patch", "where"),
    [
        (
            lambda d: d["levels"]["primary"].update(increment_rate="90%", reserve_rate="20%"),
            "[levels.primary] reserve_rate",
        ),
        (lambda d: d["levels"]["primary"].update(limit="$10"), "[levels.primary] limit"),
        (lambda d: d["levels"]["primary"].update(at_limit="spill"), "[levels.primary] at_limit"),
        (lambda d: d["levels"]["primary"].update(colour="red"), "[levels.primary] colour"),
        # N.J.A.C. 13:69E-1.39A(a): the "unreasonable contribution" limit is the operator's, never invented
        (lambda d: d["levels"]["primary"].pop("max_wager"), "[levels.primary] max_wager: required"),
        (lambda d: d["levels"]["primary"].update(max_wager="$0"), "[levels.primary] max_wager"),
        (lambda d: d["levels"]["primary"].pop("meter_pays"), "[levels.primary] meter_pays: is required"),
        (lambda d: d["levels"]["primary"].update(meter_pays=["150%"]), "[levels.primary] meter_pays"),
        (lambda d: d["levels"]["primary"].update(meter_pays=[]), "[levels.primary] meter_pays"),
        (lambda d: d["levels"]["primary"].update(meter_pays=["10%", "10%"]), "[levels.primary] meter_pays"),
        (lambda d: d["link"].update(group="Pit 1"), "[link] group"),
        (lambda d: d["link"].update(heartbeat="1 fortnight"), "[link] heartbeat"),
        (lambda d: d["tables"].update({"t/1": {"asset": "x", "game": "g"}}), "[tables] t/1"),
        (lambda d: d["tables"]["T1"].pop("asset"), "[tables.T1] asset"),
        (lambda d: d.update(tables={}), "[tables]"),
    ],
)
def test_config_errors_name_section_and_key(patch, where):
    doc = lap_doc("lap_x")
    patch(doc)
    with pytest.raises(ConfigError) as e:
        parse_lap(doc, "lap.toml")
    assert str(e.value).startswith(f"lap.toml: {where}")


def test_cli_config_error_exits_2(tmp_path, capsys):
    p = tmp_path / "lap.toml"
    p.write_text('[link]\ngroup = "pit"\n[levels.primary]\nseed = 5\n[tables.T1]\nasset="a"\ngame="g"\n')
    assert main(["lap", "--db", "postgresql://nowhere/", "--config", str(p), "--check"]) == 2
    assert "[levels.primary] seed" in capsys.readouterr().err


def test_service_runs_heartbeats_and_applies_changes_only_stopped(pg_dsn, lap_schema, tmp_path, capsys):
    cfg = parse_lap(lap_doc(lap_schema), "lap.toml")
    svc = LapService(cfg, pg_dsn, log=lambda m: None)
    th = threading.Thread(target=svc.run)
    th.start()
    with connect(pg_dsn) as c:
        store = LapStore(c, lap_schema)
        assert wait_until(lambda: store.installed() is not None and store.state() == "running", 10)
        hb = lambda: store._rows("SELECT heartbeat_at FROM {s}.link")[0]["heartbeat_at"]  # noqa: E731
        first = hb()
        assert wait_until(lambda: hb() != first, 2)  # it beats (every 100 ms here)
        svc.stop_event.set()
        th.join(5)
        assert store.state() == "stopped"
        # a restart with new parameters applies them with the link stopped, and records them
        cfg2 = parse_lap(lap_doc(lap_schema, increment_rate="10%"), "lap.toml")
        svc2 = LapService(cfg2, pg_dsn, log=lambda m: None)
        th2 = threading.Thread(target=svc2.run)
        th2.start()
        assert wait_until(lambda: store.state() == "running", 10)
        svc2.stop_event.set()
        th2.join(5)
        changes = store.param_changes()
        assert any(c["what"] == "levels" and c["new"] and c["new"]["rate_num"] == 1 for c in changes)
    lap_file = tmp_path / "lap.toml"
    lap_file.write_text(
        f'[link]\ngroup = "pit"\nschema = "{lap_schema}"\n[levels.primary]\nseed = "$1,000"\nincrement_rate = "10%"\n'
        'max_wager = "$10"\nmeter_pays = ["100%", "10%"]\n'
        '[tables.T1]\nasset = "A-1001"\ngame = "six-card-fortune"\n'
        '[tables.T2]\nasset = "A-1002"\ngame = "six-card-fortune"\n'
    )
    assert main(["lap", "--sim", "--db", pg_dsn, "--config", str(lap_file), "--reconcile"]) == 0
    out = capsys.readouterr().out
    assert "link: OK (2 tables, 0 contributions, 0 meter hits, 0 records refused, meters reconciled)" in out
    # money in dollars, as every other output prints it, not raw cents
    assert "level primary: meter $1,000.00, hidden reserve $0.00, overflow $0.00, 0 meter hits" in out
    assert " cents" not in out


def test_uplink_config_check_and_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CREDENTIALS_DIRECTORY", raising=False)
    key = init_key(tmp_path / "ledger.key")
    link = tmp_path / "link.key"
    write_key(link, new_key("lap_pit1", "T01", 1))
    p = tmp_path / "uplink.toml"
    base = f'[uplink]\ndb = "postgresql://x@y/z"\ntable = "T01"\nkey_file = "{key}"\nlink_key_file = "{link}"\n'
    p.write_text(base + 'schema = "lap_pit1"\n')
    assert main(["uplink", "--sim", "--config", str(p), "--check"]) == 0
    assert "table T01, schema lap_pit1" in capsys.readouterr().out
    p.write_text(base + 'schema = "Lap Pit"\n')
    assert main(["uplink", "--sim", "--config", str(p), "--check"]) == 2
    assert "[uplink] schema" in capsys.readouterr().err
    p.write_text(base + 'schema = "lap_pit1"\nspeed = 3\n')
    assert main(["uplink", "--sim", "--config", str(p), "--check"]) == 2
    assert "[uplink] speed: unknown option" in capsys.readouterr().err
    # the link timeout (the uplink's heartbeat deadline) is validated like every option
    p.write_text(base + 'schema = "lap_pit1"\nlink_timeout = 0\n')
    assert main(["uplink", "--sim", "--config", str(p), "--check"]) == 2
    assert "[uplink] link_timeout" in capsys.readouterr().err
    # the uplink verifies every record with the table's key: without one it does not start
    p.write_text(base.replace(str(key), str(tmp_path / "none.key")) + 'schema = "lap_pit1"\n')
    assert main(["uplink", "--sim", "--config", str(p), "--check"]) == 2
    assert "[uplink] key_file" in capsys.readouterr().err
    # nor without the table's link key, nor with another table's, nor one others may read
    p.write_text(base.replace(str(link), str(tmp_path / "none.key")) + 'schema = "lap_pit1"\n')
    assert main(["uplink", "--sim", "--config", str(p), "--check"]) == 2
    assert "[uplink] link_key_file" in capsys.readouterr().err
    write_key(tmp_path / "t02.key", new_key("lap_pit1", "T02", 1))
    p.write_text(base.replace(str(link), str(tmp_path / "t02.key")) + 'schema = "lap_pit1"\n')
    assert main(["uplink", "--sim", "--config", str(p), "--check"]) == 2
    assert "the link key of table T02" in capsys.readouterr().err
    link.chmod(0o644)
    p.write_text(base + 'schema = "lap_pit1"\n')
    assert main(["uplink", "--sim", "--config", str(p), "--check"]) == 2
    assert "others may read it" in capsys.readouterr().err


def test_uplink_example_checks_with_the_key_systemd_hands_over(tmp_path, monkeypatch):
    # LoadCredential=tablectl-ledger-key:/etc/tablectl/ledger.key (systemd/tablectl-uplink.service)
    init_key(tmp_path / "tablectl-ledger-key")
    write_key(tmp_path / "tablectl-link-key", new_key("lap_pit1", "T01", 1))  # LoadCredential=tablectl-link-key:…
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))
    assert main(["uplink", "--sim", "--config", str(CONFIG_DIR / "examples" / "uplink.toml"), "--check"]) == 0


def test_the_casinos_name_for_the_report_and_the_slips() -> None:
    from controller.lap.config import parse_lap
    from controller.settings.config import ConfigError
    from tests.link.conftest import lap_doc

    doc = lap_doc("lap_x")
    assert parse_lap(doc, "lap.toml").casino == ""
    doc["link"]["casino"] = "Riverside Casino"
    assert parse_lap(doc, "lap.toml").casino == "Riverside Casino"
    for bad in ("x" * 65, "two\nlines", ""):
        doc["link"]["casino"] = bad
        with pytest.raises(ConfigError, match="casino"):
            parse_lap(doc, "lap.toml")
