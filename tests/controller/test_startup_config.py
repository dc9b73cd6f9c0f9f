"""Bad configuration never crash-loops ("Start-up and bad input never
crash-loop"): each problem is exit 2 from ``tablectl run`` / ``run --check`` with a
message naming file, section and key, never a traceback; random mutations of
the shipped configurations give a ConfigError and nothing else (hypothesis)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config" / "examples" / "table.toml"
PROFILES = sorted((ROOT / "config" / "tables").glob("*.toml"))


def hardware(tmp_path: Path, profile: str | Path = "six-card-fortune", state_dir: str | None = None) -> Path:
    """The example hardware file with mock pins, a state directory under tmp_path and ``profile``."""
    sd = state_dir if state_dir is not None else str(tmp_path / "state")
    text = (
        EXAMPLE.read_text()
        .replace('pin_factory = "lgpio"', 'pin_factory = "mock"')
        .replace('profile = "six-card-fortune"', f"profile = {json.dumps(str(profile))}")
        .replace('state_dir = "/var/lib/tablectl"', f"state_dir = {json.dumps(sd)}")
    )
    p = tmp_path / "table.toml"
    p.write_text(text)
    return p


def profile(tmp_path: Path, name: str, old: str = "", new: str = "") -> Path:
    text = (ROOT / "config" / "tables" / f"{name}.toml").read_text()
    assert old in text, old
    p = tmp_path / f"{name}-edited.toml"
    p.write_text(text.replace(old, new, 1))
    return p


def check(cfg: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["run", "--config", str(cfg), "--check"])
    cap = capsys.readouterr()
    return rc, cap.err


def assert_names(err: str, file: Path | str, section: str, key: str | None) -> None:
    where = f"[{section}] {key}" if key else f"[{section}]"
    assert f"{file}: {where}" in err, err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- the hardware file


def test_a_relative_state_dir_is_a_configuration_error(tmp_path, capsys):
    cfg = hardware(tmp_path, state_dir="var/lib/tablectl")
    rc, err = check(cfg, capsys)
    assert rc == 2
    assert_names(err, cfg, "table", "state_dir")
    assert "absolute" in err


def test_a_state_dir_that_is_a_file_is_a_configuration_error(tmp_path, capsys):
    (tmp_path / "state").write_text("not a directory\n")
    cfg = hardware(tmp_path)
    rc, err = check(cfg, capsys)
    assert rc == 2
    assert_names(err, cfg, "table", "state_dir")
    assert "not a directory" in err


def test_a_non_utf8_hardware_file_is_named_and_not_echoed(tmp_path, capsys):
    cfg = tmp_path / "table.toml"
    cfg.write_bytes(b'[table]\nid = "PG-01"\n# caf\xe9 \xff\xfe secret-ish bytes\n')
    rc, err = check(cfg, capsys)
    assert rc == 2
    assert f"{cfg}: not UTF-8 text (byte 27, line 3)" in err, err
    assert "secret-ish" not in err and "Traceback" not in err


def test_a_non_utf8_profile_names_the_profile_key_and_the_profile(tmp_path, capsys):
    prof = tmp_path / "p.toml"
    prof.write_bytes((ROOT / "config/tables/six-card-fortune.toml").read_bytes().replace(b"Poker", b"P\xf6ker", 1))
    cfg = hardware(tmp_path, prof)
    rc, err = check(cfg, capsys)
    assert rc == 2
    assert_names(err, cfg, "table", "profile")
    assert f"{prof}: not UTF-8 text" in err


def test_a_profile_that_is_a_directory_names_the_profile_key(tmp_path, capsys):
    d = tmp_path / "six-card.toml"
    d.mkdir()
    cfg = hardware(tmp_path, d)
    rc, err = check(cfg, capsys)
    assert rc == 2
    assert_names(err, cfg, "table", "profile")
    assert "is not a file" in err


def test_an_unreadable_hardware_file_is_exit_2(tmp_path, capsys):
    rc, err = check(tmp_path / "missing.toml", capsys)
    assert rc == 2 and "missing.toml: cannot read: No such file or directory" in err, err
    rc, err = check(tmp_path, capsys)  # a directory
    assert rc == 2 and f"{tmp_path}: is a directory" in err, err


# --------------------------------------------------------------------------- the profile


@pytest.mark.parametrize(
    "name,old,new,section,key",
    [
        # [game] options = 5 (a value where the [game.options] table belongs)
        (
            "six-card-fortune",
            '[game.options]\nkeyed = ["base", "double-down", "fortune", "insurance"]   # wagers the dealer keys\n'
            "base_min_cents = 500\nbase_max_cents = 100000\n",
            "",
            "game.options",
            None,
        ),
        ("six-card-fortune", "base_min_cents = 500", 'base_min_cents = "x"', "game.options", "base_min_cents"),
        ("six-card-fortune", "base_min_cents = 500", "base_min_cents = 200000", "game.options", "base_min_cents"),
        ("six-card-fortune", "base_min_cents = 500", "base_min_cents = 500\nbase_min = 5", "game.options", "base_min"),
        (
            "six-card-fortune",
            'keyed = ["base", "double-down", "fortune", "insurance"]',
            "keyed = 5",
            "game.options",
            "keyed",
        ),
        ("fortune-asia", "base_min_cents = 500", 'base_min_cents = "x"', "game.options", "base_min_cents"),
        ("fortune-asia", "base_min_cents = 500", "base_min_cents = 200000", "game.options", "base_min_cents"),
        ("face-up", "base_min_cents = 500", 'base_min_cents = "x"', "game.options", "base_min_cents"),
        ("face-up", "base_min_cents = 500", "base_min_cents = 200000", "game.options", "base_min_cents"),
        ("pai-gow-tiles", "base_min_cents = 500", 'base_min_cents = "x"', "game.options", "base_min_cents"),
        ("pai-gow-tiles", "base_min_cents = 500", "base_min_cents = 200000", "game.options", "base_min_cents"),
        ("over-under", "ante_min_cents = 500", "ante_min_cents = 200000", "game.options", "ante_min_cents"),
        ("dj-wild", "ante_min_cents = 500", "ante_min_cents = 200000", "game.options", "ante_min_cents"),
        (
            "six-card-fortune",
            'start_method = "shaker"',
            'start_method = "shaker"\nsensed = ["progressive", "progressive"]',
            "game",
            "sensed",
        ),
    ],
)
def test_bad_profile_values_name_file_section_and_key(tmp_path, capsys, name, old, new, section, key):
    if section == "game.options" and key is None:  # options = 5
        prof = profile(tmp_path, name, old, new)
        text = prof.read_text().replace('start_method = "shaker"', 'start_method = "shaker"\noptions = 5', 1)
        prof.write_text(text)
    else:
        prof = profile(tmp_path, name, old, new)
    rc, err = check(hardware(tmp_path, prof), capsys)
    assert rc == 2, err
    assert_names(err, prof, section, key)


# --------------------------------------------------------------------------- fuzzed TOML


def _toml_value(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v) if not isinstance(v, float) or v == v and abs(v) != float("inf") else "nan"


def _dump(doc: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in doc.items())


_scalars = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.text(max_size=12),
    st.sampled_from(["$5", "$-1", "21%", "150%", "x", "", "lgpio", "/dev/null", "mock", "progressive", "base"]),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def _mutated(draw: st.DrawFn, doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: Any = doc
        for k in path[:-1]:
            parent = parent[k]
        how = draw(st.sampled_from(["replace", "delete", "add"]))
        if how == "delete":
            del parent[path[-1]]
        elif how == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["x", "options", "sensed", "spots", "port", "id"]))] = draw(_values)
        else:
            parent[path[-1]] = draw(_values)
    return doc


def _docs() -> list[tuple[str, dict[str, Any]]]:
    import tomllib

    return [("hardware", tomllib.loads(EXAMPLE.read_text()))] + [
        (p.stem, tomllib.loads(p.read_text())) for p in PROFILES
    ]


def _load_must_only_raise_config_errors(tmp_path: Path, which: str, text: str | bytes) -> None:
    from controller.boot.startup import load_config
    from controller.settings.config import ConfigError

    if which == "hardware":
        cfg = tmp_path / "fuzz-table.toml"
        prof = None
    else:
        prof = tmp_path / f"fuzz-{which}.toml"
        cfg = hardware(tmp_path, prof)
    target = cfg if prof is None else prof
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text)
    try:
        load_config(cfg)
    except ConfigError as e:
        assert re.match(r"^\S+: ", str(e)), e  # names the file
        return


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("TABLECTL_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_fuzzed_configurations_give_a_config_error_never_a_traceback(tmp_path, data):
    """Random mutations of the shipped example configuration and of every table
    profile: a value replaced, deleted or added (any TOML type), or bytes flipped.
    Loading gives the configuration or a ConfigError — any other exception fails."""
    which, doc = data.draw(st.sampled_from(_docs()))
    if data.draw(st.booleans()):
        text: str | bytes = _dump(data.draw(_mutated(doc)))
        if which == "hardware":
            assert isinstance(text, str)
            text = text.replace('"lgpio"', '"mock"')
    else:
        src = bytearray((EXAMPLE if which == "hardware" else ROOT / "config/tables" / f"{which}.toml").read_bytes())
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(src) - 1))
            src[i] = data.draw(st.integers(0, 255))
        text = bytes(src)
    _load_must_only_raise_config_errors(tmp_path, which, text)


# --------------------------------------------------------------------------- run --check: pins and ports


def test_check_refuses_the_example_whose_pin_factory_is_not_installed(capsys):
    """The example selects lgpio, which this machine lacks: exit 2 naming the key, not OK."""
    pytest.importorskip("gpiozero")
    try:
        import lgpio  # noqa: F401
    except ImportError:
        pass
    else:  # pragma: no cover - a Pi
        pytest.skip("lgpio is installed here")
    rc = main(["run", "--config", str(EXAMPLE), "--check"])
    err = capsys.readouterr().err
    assert rc == 2
    assert f"{EXAMPLE}: [gpio] pin_factory: 'lgpio' cannot be used here: its library is not installed" in err, err
    assert "OK" not in err and "Traceback" not in err


def _ptys(n: int) -> tuple[list[int], list[str]]:
    masters, paths = [], []
    for _ in range(n):
        m, s = os.openpty()
        masters.append(m)
        paths.append(os.ttyname(s))
        os.close(s)
    return masters, paths


def test_check_opens_and_closes_every_serial_port(tmp_path, capsys, monkeypatch):
    from controller.books.ledgerkey import init_key

    init_key(tmp_path / "creds" / "tablectl-ledger-key")  # what systemd's LoadCredential= hands over
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path / "creds"))
    masters, paths = _ptys(4)
    try:
        text = hardware(tmp_path).read_text()
        for dev, path in zip(("shoe", "shaker", "sign", "keypad"), paths, strict=True):
            text = text.replace(f'"/dev/tablectl-{dev}"', json.dumps(path))
        cfg = tmp_path / "table.toml"
        cfg.write_text(text)
        assert main(["run", "--config", str(cfg), "--check"]) == 0
        out = capsys.readouterr().out
        assert "gpio: pin factory mock loads" in out and f"serial.keypad: {paths[3]} opens" in out
        assert f"{cfg}: OK" in out
        # closed again: the service can open each one exclusively
        from controller.settings.hardware import load_hardware
        from drivers.serialdev import open_serial

        for sc in load_hardware(cfg).serial.values():
            open_serial(sc).close()
        # a port that is missing is exit 2 naming the device's section and key
        cfg.write_text(text.replace(json.dumps(paths[2]), '"/dev/tablectl-no-such-sign"'))
        assert main(["run", "--config", str(cfg), "--check"]) == 2
        err = capsys.readouterr().err
        assert f"{cfg}: [serial.sign] port: /dev/tablectl-no-such-sign cannot be opened" in err, err
        assert "Traceback" not in err
    finally:
        for m in masters:
            os.close(m)


def test_preflight_takes_more_checks_and_prints_their_lines(tmp_path):
    """The seam another check (a pin budget) plugs into: PREFLIGHT is a list of
    ``check(hw, report)``; what it reports is printed, its errors are exit 2."""
    from controller.boot import startup
    from controller.settings.config import ConfigError

    hw, _ = startup.load_config(hardware(tmp_path))

    def budget(hw: Any, report: startup.Report) -> None:
        report.info(f"pins: {len(hw.gpio.driver_settings().inputs)} inputs")
        report.error(ConfigError(hw.file, "gpio", "lockout", "clash"))

    rep = startup.preflight(hw, [budget])
    assert rep.lines == ["pins: 11 inputs"] and [e.key for e in rep.errors] == ["lockout"]


def test_the_unit_does_not_restart_a_configuration_error_and_checks_files_before_starting(tmp_path, capsys):
    """systemd/tablectl.service: exit 2 is not restarted; the pre-start check is the
    files only, so a device unplugged at boot is the running table's latched tilt."""
    unit = (ROOT / "systemd" / "tablectl.service").read_text()
    settings = [tuple(x.strip() for x in line.split("=", 1)) for line in unit.splitlines() if line[:1].isalpha()]
    assert ("RestartPreventExitStatus", "2") in settings
    (pre,) = [v for k, v in settings if k == "ExecStartPre"]
    args = pre.split()[1:]
    assert args[:1] == ["run"] and "--check" in args and "--offline" in args
    cfg = hardware(tmp_path, state_dir="relative/state")
    args[args.index("--config") + 1] = str(cfg)
    assert main(args) == 2
    assert_names(capsys.readouterr().err, cfg, "table", "state_dir")


def test_an_error_quotes_a_bad_value_cut_short_not_the_file(tmp_path, capsys):
    cfg = hardware(tmp_path)
    cfg.write_text(cfg.read_text().replace("bounce_ms = 20", f'bounce_ms = "{"A" * 5000}"'))
    rc, err = check(cfg, capsys)
    assert rc == 2
    assert_names(err, cfg, "gpio", "bounce_ms")
    assert "AAAA..." in err and len(err) < 400, len(err)
