"""Configuration is refused at start, naming file, section and key, with exit
status 2, before any pin or port is touched."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.cli import main
from controller.settings.config import ConfigError
from controller.settings.hardware import load_hardware, parse_hardware
from drivers.gpio import PinAddr


def bcm(n: int) -> PinAddr:
    return PinAddr(0, n)


EXAMPLE = Path(__file__).resolve().parents[2] / "config" / "examples" / "table.toml"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "table.toml"
    p.write_text(text)
    return p


def mutate(old: str, new: str) -> str:
    text = EXAMPLE.read_text()
    assert old in text
    return text.replace(old, new, 1)


def test_example_config_is_valid():
    hw = load_hardware(EXAMPLE)
    assert hw.table_id == "PG-01" and hw.profile.game == "six-card-fortune"
    assert hw.gpio.spots["progressive"].sensors == tuple(bcm(n) for n in (5, 6, 12, 13, 16, 19))
    assert set(hw.serial) == {"shoe", "shaker", "sign", "keypad"}


def test_config_builds_the_drivers_settings():
    """The drivers own their settings types; the TOML is read and range-checked here
    onto them (drivers import nothing from controller/)."""
    from drivers.gpio import GpioSettings
    from drivers.serialdev import SerialSettings

    hw = load_hardware(EXAMPLE)
    shoe = hw.serial["shoe"]
    assert isinstance(shoe, SerialSettings)
    assert shoe == SerialSettings(
        device="shoe",
        port="/dev/tablectl-shoe",
        baud=115200,
        ack_timeout_ms=200,
        retries=3,
        heartbeat_ms=1000,
        lost_after_ms=3500,
    )
    g = hw.gpio.driver_settings()
    assert isinstance(g, GpioSettings) and g.pin_factory == "lgpio" and g.active_low is True
    assert dict(g.inputs) == {
        "lockout": bcm(17),
        "confirm": bcm(27),
        "void": bcm(22),
        "key": bcm(23),
        "door": bcm(24),
        **{f"bet.progressive.{i}": bcm(pin) for i, pin in enumerate((5, 6, 12, 13, 16, 19), 1)},
    }
    assert dict(g.lights) == {
        **{f"light.progressive.{i}": bcm(pin) for i, pin in enumerate((4, 14, 15, 18, 20, 21), 1)},
        "beacon": bcm(25),
    }
    # the running configuration's keys (console ``config show``, the ledger's config.loaded) are unchanged
    from controller.boot.selfcheck import config_values

    values = config_values(hw)
    assert values["serial.shoe.lost_after_ms"] == "3500" and values["gpio.pin_factory"] == "lgpio"
    assert not any(k.startswith("gpio.inputs") or k.startswith("gpio.lights") for k in values)


@pytest.mark.parametrize(
    "old,new,section,key,why",
    [
        ("bounce_ms = 20", "bounce_ms = 9000", "gpio", "bounce_ms", "above the maximum"),
        ("lockout = 17", "lockout = 17\nlockuot = 3", "gpio", "lockuot", "unknown option"),
        ("confirm = 27\n", "", "gpio", "confirm", "required option is missing"),
        ("lockout = 17", "lockout = 40", "gpio", "lockout", "not a usable BCM GPIO"),
        ("void = 22", "void = 17", "gpio", "void", "BCM 17 is used by both lockout and void"),
        ("sensors = [5, 6, 12, 13, 16, 19]", "sensors = [5, 6]", "gpio.spots.progressive", "sensors", "needs 6 pins"),
        (
            "lights = [4, 14, 15, 18, 20, 21]",
            "lights = [4, 14, 15, 18, 20, 17]",
            "gpio.spots.progressive",
            "lights",
            "BCM 17 is used by both lockout and spots.progressive.lights seat 6",
        ),
        ("[gpio.spots.progressive]", "[gpio.spots.martingale]", "gpio.spots.martingale", None, "not a wager"),
        ("baud = 115200", "baud = 12345", "serial.shoe", "baud", "is not one of"),
        ('id = "PG-01"', 'id = "PG 01!"', "table", "id", "letters, digits"),
        ('profile = "six-card-fortune"', 'profile = "no-such-game"', "table", "profile", "no table profile"),
        ('pin_factory = "lgpio"', 'pin_factory = "magic"', "gpio", "pin_factory", "is not one of"),
        # the accounting report's who and where: one printable line each
        ('asset = "A-10001"', 'asset = "' + "A" * 65 + '"', "table", "asset", "at most 64 characters"),
        (
            'casino = "Keystone Riverside Casino"',
            'casino = "Keystone\\nForged total: $0"',
            "table",
            "casino",
            "one line of printable text",
        ),  # fmt: skip
        ('location = "Pit 2, table 7"', "location = 7", "table", "location", "must be a non-empty string"),
        ('location = "Pit 2, table 7"', 'location = "  "', "table", "location", "must be a non-empty string"),
    ],
)
def test_bad_config_names_file_section_and_key(tmp_path, old, new, section, key, why):
    p = write(tmp_path, mutate(old, new))
    with pytest.raises(ConfigError) as e:
        load_hardware(p)
    msg = str(e.value)
    where = f"[{section}] {key}" if key else f"[{section}]"
    assert msg.startswith(str(p)) and where in msg and why in msg, msg


def test_the_reports_who_and_where_are_read_and_optional(tmp_path):
    hw = load_hardware(EXAMPLE)
    assert (hw.casino, hw.asset, hw.location) == ("Keystone Riverside Casino", "A-10001", "Pit 2, table 7")
    from controller.boot.selfcheck import config_values

    assert config_values(hw)["asset"] == "A-10001"  # recorded in config.loaded: the report reads it there
    text = EXAMPLE.read_text()
    for line in ('casino = "Keystone Riverside Casino"', 'asset = "A-10001"', 'location = "Pit 2, table 7"'):
        text = text.replace(line, "")
    bare = load_hardware(write(tmp_path, text))
    assert (bare.casino, bare.asset, bare.location) == ("", "", "")


def test_unknown_section_is_refused(tmp_path):
    p = write(tmp_path, EXAMPLE.read_text() + "\n[extra]\nx = 1\n")
    with pytest.raises(ConfigError, match=r"\] extra: unknown option"):
        load_hardware(p)


def test_not_toml_is_refused(tmp_path):
    p = write(tmp_path, "[table\nid=")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_hardware(p)


def test_run_exits_2_before_touching_hardware(tmp_path, capsys, monkeypatch):
    touched = []
    import drivers.gpio as g
    import drivers.serialdev as sd

    monkeypatch.setattr(g, "make_pin_factory", lambda *a: touched.append("pins"))
    monkeypatch.setattr(sd, "open_serial", lambda *a: touched.append("port"))
    p = write(tmp_path, mutate("bounce_ms = 20", "bounce_ms = 0"))
    assert main(["run", "--config", str(p)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"table\.toml: \[gpio\] bounce_ms: 0 is below the minimum 1", err), err
    assert touched == []


def test_run_check_offline_accepts_valid_config(capsys, tmp_path, monkeypatch):
    from controller.books.ledgerkey import init_key

    init_key(tmp_path / "creds" / "tablectl-ledger-key")  # what systemd's LoadCredential= hands over
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path / "creds"))
    assert main(["run", "--config", str(EXAMPLE), "--check", "--offline"]) == 0
    assert "OK" in capsys.readouterr().out


def test_run_check_without_the_ledger_key_is_a_configuration_error(capsys, tmp_path, monkeypatch):
    """The key comes from systemd's LoadCredential=; none is exit 2 naming where it was looked for."""
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))
    assert main(["run", "--config", str(EXAMPLE), "--check", "--offline"]) == 2
    err = capsys.readouterr().err
    assert "[ledger] key_credential" in err and str(tmp_path / "tablectl-ledger-key") in err, err


def test_profile_paytable_must_exist(tmp_path):
    prof = tmp_path / "p.toml"
    prof.write_text(
        '[game]\nid = "six-card-fortune"\n[progressive]\npaytable = "Nope"\nwager = "$1"\n'
        'seed = "$5,000"\nincrement_rate = "21%"\n'
    )
    doc = {"table": {"id": "T1", "profile": str(prof)}, "gpio": {}, "serial": {}}
    with pytest.raises(ConfigError, match=r"\[progressive\] paytable: no paytable named 'Nope'"):
        parse_hardware(doc, "x.toml")


@pytest.mark.parametrize("key", ["seed", "increment_rate", "reserve_rate"])
def test_progressive_seed_rate_reserve_are_required(tmp_path, capsys, key):
    """The rate, reserve and seed come from the casino's Rules Submission (§ 601a.2;
    § 687a and § 659a print no rate): a table profile must state each, and a missing one is a
    configuration error naming file, section and key (exit 2, no traceback).  Before, a
    missing reserve_rate was silently 0%."""
    import tomllib

    from controller.settings.config import parse_profile

    src = (Path(__file__).resolve().parents[2] / "config" / "tables" / "dj-wild.toml").read_text()
    doc = tomllib.loads(src)
    assert key in doc["progressive"]
    del doc["progressive"][key]
    with pytest.raises(ConfigError, match=rf"dj-wild\.toml: \[progressive\] {key}: required option is missing"):
        parse_profile(doc, "dj-wild.toml")
    prof = tmp_path / "dj-wild.toml"
    prof.write_text(re.sub(rf"(?m)^{key} = .*$", "", src))
    conf = tmp_path / "table.toml"
    conf.write_text(re.sub(r"(?m)^profile = .*$", f'profile = "{prof}"', EXAMPLE.read_text()))
    assert main(["run", "--config", str(conf), "--check"]) == 2
    err = capsys.readouterr().err
    assert f"[progressive] {key}: required option is missing" in err and "Traceback" not in err
