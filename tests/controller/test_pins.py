"""Pins for six seats: expander lines in the configuration ("chip2:5",
"chip2:GPA5"), the pin budget ``tablectl run --check`` prints, and the refusal of a line
used twice across the header and the expanders, naming both uses (exit 2)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.cli import main
from controller.settings.config import ConfigError
from controller.settings.hardware import load_hardware
from controller.settings.pins import Expander, PinClash, Use, allocate, budget, budget_lines
from drivers.gpio import PinAddr, parse_pin

ROOT = Path(__file__).resolve().parents[2]
FULL = ROOT / "config" / "examples" / "six-seat-three-spot.toml"


def mutate(tmp_path: Path, old: str, new: str) -> Path:
    text = FULL.read_text()
    assert old in text, old
    p = tmp_path / "table.toml"
    p.write_text(text.replace(old, new, 1))
    return p


@pytest.mark.parametrize(
    "text, addr",
    [
        ("chip2:5", PinAddr(2, 5)),
        ("chip2:GPA5", PinAddr(2, 5)),
        ("chip3:gpb0", PinAddr(3, 8)),
        ("chip4:GPB7", PinAddr(4, 15)),
        ("chip0:17", PinAddr(0, 17)),
        (" chip12:15 ", PinAddr(12, 15)),
    ],
)
def test_parse_pin(text, addr):
    assert parse_pin(text) == addr


@pytest.mark.parametrize("text", ["17", "chip2", "chip2:", "chipx:1", "chip2:GPC1", "chip2:GPA8", "gpio17", "2:5"])
def test_parse_pin_refuses_what_is_not_a_line(text):
    with pytest.raises(ValueError, match="is not a pin"):
        parse_pin(text)


def test_port_names():
    assert PinAddr(2, 0).port_name() == "GPA0" and PinAddr(2, 8).port_name() == "GPB0"
    assert str(PinAddr(2, 13)) == "chip2:13" and str(PinAddr(0, 17)) == "BCM 17"


def test_full_table_example_loads_with_every_spot_on_the_expanders():
    hw = load_hardware(FULL)
    g = hw.gpio
    assert set(g.expanders) == {2, 3, 4}
    assert g.expanders[3] == Expander(3, "mcp23017", 0x21, 5)
    assert set(g.spots) == {"progressive", "fortune", "base"}
    assert g.spots["progressive"].sensors[2] == PinAddr(3, 0)  # seat 3 on chip3 GPA0
    assert g.spots["base"].lights[5] == PinAddr(4, 13)  # seat 6 on chip4 GPB5
    assert g.lockout == PinAddr(0, 17)
    s = g.driver_settings()
    assert len(s.inputs) == 6 + 18 and len(s.lights) == 18 + 1
    assert s.inputs["bet.fortune.2"] == PinAddr(2, 4)


def test_budget_counts_every_line_and_the_buses_pins():
    hw = load_hardware(FULL)
    chips = {b.chip: b for b in budget(hw.gpio.pin_uses(), hw.gpio.expanders)}
    assert set(chips) == {0, 2, 3, 4}
    header = chips[0]
    assert header.used[2].startswith("I2C SDA1") and header.used[3].startswith("I2C SCL1")
    assert header.used[4] == "chip2 interrupt (mcp23017 0x20 INTA)"
    assert header.used[17] == "lockout"
    assert len(header.used) == 2 + 3 + 7 and len(header.free) == 26 - 12
    for c in (2, 3, 4):
        assert len(chips[c].used) == 12 and chips[c].free == [6, 7, 14, 15]
    assert chips[3].used[8] == "spots.progressive.lights seat 3"


@pytest.fixture
def ledger_key(tmp_path, monkeypatch):
    """The ledger key as systemd's LoadCredential= hands it over (run --check loads it)."""
    from controller.books.ledgerkey import init_key

    init_key(tmp_path / "creds" / "tablectl-ledger-key")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path / "creds"))


def test_run_check_prints_the_pin_budget(capsys, ledger_key):
    # --offline --config-only: the example's chips, ports and ledger are not on this machine
    assert main(["run", "--config", str(FULL), "--check", "--offline", "--config-only"]) == 0
    out = capsys.readouterr().out
    assert "OK" in out
    assert re.search(r"^chip0: header \(BCM\): 12 used, 14 free$", out, re.M), out
    assert re.search(r"^  BCM  4  chip2 interrupt \(mcp23017 0x20 INTA\)$", out, re.M), out
    assert re.search(r"^chip3: mcp23017 at I2C 0x21, interrupt BCM 5: 12 used, 4 free$", out, re.M), out
    assert re.search(r"^  chip3:9  GPB1  spots\.fortune\.lights seat 3$", out, re.M), out
    assert re.search(r"^  free: GPA6, GPA7, GPB6, GPB7$", out, re.M), out
    assert out.rstrip().endswith("pins: 48 used, 26 free")


def test_run_check_prints_the_budget_of_a_header_only_table(capsys, ledger_key):
    example = ROOT / "config" / "examples" / "table.toml"
    assert main(["run", "--config", str(example), "--check", "--offline", "--config-only"]) == 0
    out = capsys.readouterr().out
    assert "BCM 17  lockout" in out and "pins: 18 used, 8 free" in out and "chip2" not in out


@pytest.mark.parametrize(
    "old, new, section, key, both",
    [
        # the same expander line twice
        (
            '"chip2:GPA1", "chip2:GPA4"',
            '"chip2:GPA0", "chip2:GPA4"',
            "gpio.spots.fortune",
            "sensors",
            "chip2:0 (GPA0) is used by both spots.progressive.sensors seat 1 and spots.fortune.sensors seat 1",
        ),
        # the same line spelled two ways: by number and by port name
        (
            'lights = ["chip2:GPB2"',
            'lights = ["chip2:8"',
            "gpio.spots.base",
            "lights",
            "chip2:8 (GPB0) is used by both spots.progressive.lights seat 1 and spots.base.lights seat 1",
        ),
        # a header pin as a number and as chip0
        ("start_game = 26", 'start_game = "chip0:17"', "gpio", "start_game", "BCM 17 is used by both lockout and"),
        # a button on an expander's interrupt pin (across chips)
        (
            "beacon = 25",
            "beacon = 5",
            "gpio",
            "beacon",
            "BCM 5 is used by both chip3 interrupt (mcp23017 0x21 INTA) and beacon",
        ),
        # a button on the I2C bus the expanders need
        (
            "door = 24",
            "door = 3",
            "gpio",
            "door",
            "BCM 3 is used by both I2C SCL1 (expanders chip2, chip3, chip4) and door",
        ),
        # two expanders on one interrupt pin
        ("interrupt = 6", "interrupt = 5", "gpio.expanders.chip4", "interrupt", "BCM 5 is used by both chip3"),
    ],
)
def test_a_line_used_twice_is_refused_naming_both_uses(tmp_path, old, new, section, key, both):
    p = mutate(tmp_path, old, new)
    with pytest.raises(ConfigError) as e:
        load_hardware(p)
    msg = str(e.value)
    assert f"[{section}] {key}" in msg and both in msg, msg


def test_run_check_exits_2_on_a_clash_naming_both_uses(tmp_path, capsys):
    p = mutate(tmp_path, '"chip3:GPA2", "chip3:GPA5"', '"chip3:GPA2", "chip2:GPA2"')
    assert main(["run", "--config", str(p), "--check"]) == 2
    err = capsys.readouterr().err
    assert "chip2:2 (GPA2) is used by both spots.base.sensors seat 1 and spots.base.sensors seat 4" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "old, new, section, key, why",
    [
        (
            '"chip2:GPA0", "chip2:GPA3", "chip3:GPA0"',
            '"chip2:GPA0", "chip2:GPA3", "chip7:GPA0"',
            "gpio.spots.progressive",
            "sensors",
            "item 3: 'chip7:GPA0': chip7 is not a declared expander",
        ),
        (
            '"chip2:GPA0", "chip2:GPA3"',
            '"chip2:16", "chip2:GPA3"',
            "gpio.spots.progressive",
            "sensors",
            "a mcp23017 has lines 0..15",
        ),
        ("lockout = 17", 'lockout = "17"', "gpio", "lockout", "is not a pin"),
        ("lockout = 17", "lockout = 1", "gpio", "lockout", "not a usable BCM GPIO"),
        ("address = 0x21", "address = 0x20", "gpio.expanders.chip3", "address", "also chip2's I2C address"),
        ("address = 0x22", "address = 0x30", "gpio.expanders.chip4", "address", "above the maximum"),
        (
            'type = "mcp23017"\naddress = 0x20',
            'type = "pcf8574"\naddress = 0x20',
            "gpio.expanders.chip2",
            "type",
            "not one of mcp23017",
        ),
        ("[gpio.expanders.chip2]", "[gpio.expanders.chip0]", "gpio.expanders.chip0", None, "chip0 is the header"),
        ("interrupt = 4", "interrupt = 4\nirq = 5", "gpio.expanders.chip2", "irq", "unknown option"),
        ('pin_factory = "lgpio"', 'pin_factory = "rpigpio"', "gpio", "pin_factory", "expanders need lgpio"),
    ],
)
def test_bad_expander_config_names_section_and_key(tmp_path, old, new, section, key, why):
    p = mutate(tmp_path, old, new)
    with pytest.raises(ConfigError) as e:
        load_hardware(p)
    msg = str(e.value)
    where = f"[{section}] {key}" if key else f"[{section}]"
    assert where in msg and why in msg, msg


def test_allocate_reports_the_first_owner_and_the_second():
    a = Use(PinAddr(2, 3), "x", "s", "k")
    b = Use(PinAddr(2, 3), "y", "t", "l")
    assert allocate([a]) == {PinAddr(2, 3): a}
    with pytest.raises(PinClash) as e:
        allocate([a, Use(PinAddr(0, 3), "z", "u", None), b])
    assert e.value.first is a and e.value.second is b
    assert str(e.value) == "chip2:3 (GPA3) is used by both x and y"


def test_budget_lines_of_the_example_name_every_used_line_once():
    lines = budget_lines(load_hardware(FULL).gpio)
    used = [ln for ln in lines if ln.startswith("  ") and not ln.startswith("  free")]
    assert len(used) == 48 and len(set(used)) == 48


def test_wiring_doc_matches_the_example_budget():
    doc = (ROOT / "docs" / "wiring.md").read_text()
    chips = {b.chip: b for b in budget(load_hardware(FULL).gpio.pin_uses(), load_hardware(FULL).gpio.expanders)}
    for line in chips[0].used:
        assert re.search(rf"^\| {line} +\|", doc, re.M), f"BCM {line} is not in docs/wiring.md's header table"
    free = ", ".join(str(n) for n in chips[0].free)
    assert f"Free: BCM {free} ({len(chips[0].free)} lines)" in doc
    assert "48 lines used" in doc and "26 free" in doc


def test_open_expander_chips_names_the_chip_that_cannot_be_opened():
    from controller.settings.pins import open_expander_chips

    opened, closed = [], []

    class Factory:
        def __init__(self, chip):
            self.chip = chip

        def close(self):
            closed.append(self.chip)

    def make(name, chip):
        opened.append((name, chip))
        if chip == 3:
            raise OSError("[Errno 2] No such file or directory: '/dev/gpiochip3'")
        return Factory(chip)

    problems = open_expander_chips(load_hardware(FULL).gpio, make)
    assert opened == [("lgpio", 2), ("lgpio", 3), ("lgpio", 4)] and closed == [2, 4]
    assert problems == [
        "[gpio.expanders.chip3]: cannot open /dev/gpiochip3 (mcp23017 at I2C 0x21) with the lgpio pin factory: "
        "[Errno 2] No such file or directory: '/dev/gpiochip3'"
    ]
    assert open_expander_chips(load_hardware(ROOT / "config" / "examples" / "table.toml").gpio, make) == []
