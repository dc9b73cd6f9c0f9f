"""The full six-seat, three-spot table (config/examples/six-seat-three-spot.toml) in the
HIL rig: its sensors and lights are MCP23017 expander lines, driven through a
``MockFactory`` per gpiochip.  A chip on an expander's sensor line lights
the seat's light on the same expander; the lock-out button on the header freezes them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from drivers.gpio import OFF, ON, PinAddr
from hil.rig import TableSetup
from tests.conftest import eventually

W = 30.0
FULL = Path(__file__).resolve().parents[2] / "config" / "examples" / "six-seat-three-spot.toml"


def full_table_pins() -> dict[str, Any]:
    gpio: dict[str, Any] = tomllib.loads(FULL.read_text())["gpio"]
    del gpio["pin_factory"]  # the rig's pins are mock pins
    return gpio


def test_expander_lines_carry_the_sensors_and_lights(make_rig):
    rig = make_rig(setup=TableSetup(pins=full_table_pins()))
    rig.start()
    t = rig.table
    t.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], W)
    assert sorted(rig.pin_factories.chips()) == [0, 2, 3, 4]  # the header and the three expanders

    rig.place(3)  # seat 3's progressive sensor: chip3 GPA0
    rig.place(6)  # seat 6's: chip4 GPA3
    eventually(lambda: [rig.light_mode(s) for s in range(1, 7)] == [OFF, OFF, ON, OFF, OFF, ON], W, what="lights")
    # the light is the expander's line: chip3 GPB0 (line 8) and chip4 GPB3 (line 11) driven high
    assert rig.pin("chip3:GPB0").state and rig.pin(PinAddr(4, 11)).state
    assert not rig.pin("chip3:GPB3").state  # seat 4's light, same chip, stays off
    rig.press("lockout")  # on the header, BCM 17
    st = t.wait_for(lambda s: s["count_shown"], W)
    assert set(st["wagers"]) == {"3:progressive", "6:progressive"}
    assert rig.sign.wait_message("NO MORE BETS - COUNT 2", W)
