"""The file is the registry (docs/architecture.md "Adding a game / a device"): a game or a serial
device is declared once, in a module of its own, and every part of the table finds it.  These
tests add a throwaway game and a throwaway device in a temporary package (its own procedure,
players, paytable file, driver, simulator and diagnostics) and look for them everywhere a list
of games or devices used to be kept, without editing any list."""

from __future__ import annotations

import argparse
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import controller.gamedefs as gamedefs
import drivers.devicedefs as devicedefs

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config" / "examples" / "table.toml"

GAME_ID = "throwaway-game"
DEVICE = "zzbell"

#: the throwaway's own parts, in a temporary package of its own (nothing under controller/ or hil/)
PARTS = """
from controller.console.registry import Ctx
from controller.games.sixcard import SixCardFortune
from drivers.serialdev import SerialDevice
from hil.devices import SimDevice
from hil.players.sixcard import SixCardPlayers


class ThrowawayProcedure(SixCardFortune):
    pass


class ThrowawayPlayers(SixCardPlayers):
    pass


class SerialBell(SerialDevice):
    device = "zzbell"

    def ring(self, times: int) -> None:
        self.send("RING", times=times)


class BellSim(SimDevice):
    device = "zzbell"


def diag_bell(ctx: Ctx) -> str:
    return "zzbell: PASS"
"""

GAME = f'''
from controller.gamedefs import GameDecl

GAME = GameDecl(
    id="{GAME_ID}",
    chapter="999z",
    title="Throwaway Poker",
    procedure="throwaway_parts:ThrowawayProcedure",
    players="throwaway_parts:ThrowawayPlayers",
    paytables="{{paytables}}",
    validation=("§ 999z.11(h)(1)", "§ 999z.11(h)(2)"),
)
'''

DEVICE_DECL = f'''
from drivers.devicedefs import DeviceDecl
from drivers.protocol import msg

DEVICE = DeviceDecl(
    name="{DEVICE}",
    driver="throwaway_parts:SerialBell",
    simulator="throwaway_parts:BellSim",
    diagnostics="throwaway_parts:diag_bell",
    out_of_order=("hand-bell",),
    messages=(
        msg("{DEVICE}", "STATUS_REQ", 0x10),
        msg("{DEVICE}", "RING", 0x11, ("times", "B")),
        msg("{DEVICE}", "STATUS", 0x30, ("flags", "B")),
    ),
)
'''

PAYTABLE = f"""
[paytables."Throwaway Base"]
game = "{GAME_ID}"
wager = "base"
section = "§ 999z.12(a)"
pays = [["win", "1 to 1"]]
"""


@pytest.fixture
def throwaway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The temporary package: the parts on sys.path, the two declarations in folders joined to
    the declaration packages' search path (as a plug-in directory would be)."""
    (tmp_path / "throwaway_parts.py").write_text(PARTS)
    paytables = tmp_path / "999z.toml"
    paytables.write_text(PAYTABLE)
    games_dir, devices_dir = tmp_path / "games", tmp_path / "devices"
    games_dir.mkdir()
    devices_dir.mkdir()
    (games_dir / "throwaway.py").write_text(textwrap.dedent(GAME.replace("{paytables}", str(paytables))))
    (devices_dir / "zzbell.py").write_text(textwrap.dedent(DEVICE_DECL))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(gamedefs, "__path__", [*gamedefs.__path__, str(games_dir)])
    monkeypatch.setattr(devicedefs, "__path__", [*devicedefs.__path__, str(devices_dir)])
    _forget()
    yield tmp_path
    monkeypatch.undo()
    for mod in ("throwaway_parts", "controller.gamedefs.throwaway", "drivers.devicedefs.zzbell"):
        sys.modules.pop(mod, None)
    _forget()


def _forget() -> None:
    from controller.rules.paytables import use_paytables
    from controller.settings.paytablefiles import shipped_paytables

    gamedefs.rescan()
    devicedefs.rescan()
    use_paytables(shipped_paytables)


# --------------------------------------------------------------------------- the game


def test_a_declared_game_is_found_by_the_rules_the_table_the_players_the_bench_and_the_report(throwaway):
    from bench import sim
    from controller.games import available, procedure_class
    from controller.reports.reportview import validation_notes
    from controller.rules.paytables import get_paytable
    from hil.players import strategy_for

    assert GAME_ID in gamedefs.game_ids()
    # its paytable file is read, and the rules engine accepts its game id
    assert get_paytable("Throwaway Base").game == GAME_ID
    # the table plays it, the simulated players play it
    assert procedure_class(GAME_ID).__name__ == "ThrowawayProcedure"
    assert GAME_ID in available()
    assert strategy_for(GAME_ID).__name__ == "ThrowawayPlayers"
    # the simulation bench runs it by default
    p = argparse.ArgumentParser()
    sim.add_arguments(p)
    assert GAME_ID in p.parse_args([]).games

    # the accounting report cites its chapter's validation rule
    class Rep:
        info = {"profile.game": GAME_ID}

    notes = " ".join(validation_notes(Rep()))  # type: ignore[arg-type]
    assert "§ 999z.11(h)(1)" in notes and "§ 999z.11(h)(2)" in notes


def test_a_declared_game_is_a_profile_choice(throwaway, tmp_path):
    from controller.settings.config import parse_profile

    prof = parse_profile({"game": {"id": GAME_ID, "start_method": "rng"}}, "p.toml")
    assert prof.game == GAME_ID


def test_an_undeclared_game_is_refused_naming_the_declared_ones():
    from controller.rules.paytables import PaytableError, parse_paytables
    from controller.settings.config import ConfigError, parse_profile

    with pytest.raises(ConfigError, match="six-card-fortune"):
        parse_profile({"game": {"id": GAME_ID}}, "p.toml")
    with pytest.raises(PaytableError, match=f"game '{GAME_ID}' is not one of .*pai-gow-tiles"):
        parse_paytables(tomllib.loads(PAYTABLE), "x.toml")


# --------------------------------------------------------------------------- the device


def test_a_declared_device_speaks_its_messages(throwaway):
    from drivers import protocol as P

    mtype, payload = P.encode(DEVICE, "RING", times=3)
    assert (mtype, payload) == (0x11, b"\x03")
    assert P.decode(DEVICE, 0x30, b"\x01") == ("STATUS", {"flags": 1})
    assert any(m.device == DEVICE for m in P.messages())


def test_a_declared_device_is_configured_made_and_reachable(throwaway, tmp_path):
    from controller.core.clock import MonotonicClock
    from controller.core.log import LogContext
    from controller.daemon.deviceset import DeviceSet
    from controller.daemon.options import StandIns
    from controller.settings.hardware import parse_hardware
    from hil.mockpins import mock_factory

    doc = tomllib.loads(EXAMPLE.read_text())
    doc["table"]["state_dir"] = str(tmp_path / "state")
    doc["table"].pop("software_record", None)
    doc["ledger"] = {"witness_dir": str(tmp_path / "witness")}
    (tmp_path / "state").mkdir(mode=0o700)
    (tmp_path / "witness").mkdir(mode=0o700)
    doc["serial"][DEVICE] = {"port": "/dev/ttyBELL"}
    hw = parse_hardware(doc, "table.toml")
    assert hw.serial[DEVICE].port == "/dev/ttyBELL"

    devs = DeviceSet(hw.gpio, hw.serial, MonotonicClock(), LogContext("T"), StandIns(pin_factory=mock_factory()))
    made = devs.claim(lambda *a: None)
    try:
        bell = made.serial(DEVICE)
        assert type(bell).__name__ == "SerialBell"
        assert bell in devs.serial
    finally:
        devs.release()


def test_a_declared_device_may_be_marked_out_of_order_and_diagnosed(throwaway):
    from controller.console.cmd_basic import alternatives, ooo_devices
    from controller.console.cmd_diag import device_diagnostics, subs

    assert DEVICE in ooo_devices() and "hand-bell" in alternatives()
    assert devicedefs.out_of_order()[DEVICE] == ("hand-bell",)
    assert DEVICE in subs()
    assert device_diagnostics()[DEVICE](None) == "zzbell: PASS"  # type: ignore[arg-type]


def test_a_declared_device_has_its_simulator_and_its_scenario_faults(throwaway):
    from hil.devices import SimDevice

    sim = devicedefs.resolve(devicedefs.devices()[DEVICE].simulator)
    assert isinstance(sim, type) and issubclass(sim, SimDevice) and sim.device == DEVICE


def test_every_shipped_declaration_resolves():
    """Each declared name points at what it says: a procedure, players, a driver speaking the
    device's name, a simulator of it, a diagnostics function."""
    from controller.games.base import Procedure
    from drivers.serialdev import SerialDevice
    from hil.devices import SimDevice
    from hil.players.base import Strategy

    for g in gamedefs.games().values():
        assert issubclass(gamedefs.resolve(g.procedure), Procedure)  # type: ignore[arg-type]
        assert issubclass(gamedefs.resolve(g.players), Strategy)  # type: ignore[arg-type]
    for d in devicedefs.devices().values():
        driver, sim = devicedefs.resolve(d.driver), devicedefs.resolve(d.simulator)
        assert isinstance(driver, type) and issubclass(driver, SerialDevice) and driver.device == d.name
        assert isinstance(sim, type) and issubclass(sim, SimDevice) and sim.device == d.name
        if d.diagnostics:
            assert callable(devicedefs.resolve(d.diagnostics))


def test_a_declaration_imports_no_hardware_and_no_table():
    """A game's declaration is data the rules engine reads: it imports only its declaration type;
    a device's imports only its declaration type and the message constructor."""
    import ast

    allowed = {"controller.gamedefs", "drivers.devicedefs", "drivers.protocol", "__future__"}
    for pkg in (ROOT / "controller" / "gamedefs", ROOT / "drivers" / "devicedefs"):
        for path in pkg.glob("*.py"):
            if path.name == "__init__.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
            mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            assert mods <= allowed, f"{path.name} imports {mods - allowed}"
