"""Rejected keypad input is rate-limited and a sustained flood tilts (
controller/play/flood.py).  Before: every rejected line was a ``keypad.rejected`` record and a
PROMPT (15,153 records, 11.6 MB in 8 s), and no flood ever tilted."""

from __future__ import annotations

import pytest

from controller.settings.config import ConfigError, parse_profile
from tests.integration.harness import Harness, profile_doc, records


def junk(h: Harness, n: int, every_s: float = 0.0) -> None:
    for i in range(n):
        h.post("keypad", "keypad", msg="ENTRY", text=f"ZZ{i}")
        h.clock.advance(every_s)
        h.pump()


def test_a_flood_of_junk_is_summarised_and_tilts(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    prompts_before = len(h.keypad.calls)
    junk(h, 1000)
    assert len(records(h, "keypad.rejected")) == 20  # the first twenty of the interval, in full
    assert h.state == "tilt"
    assert "keypad flood" in h.table.tilts["keypad"]
    assert len(records(h, "tilt.raised")) == 1
    assert len(h.keypad.calls) - prompts_before <= 20  # nor is the keypad's display flooded
    h.clock.advance(10.0)
    h.pump()  # the interval ends: one summary for the rest
    (summary,) = records(h, "keypad.rejected.summary")
    assert summary.data["count"] == 980 and summary.data["last"]["text"] == "ZZ999"


def test_a_few_mistakes_are_all_recorded_and_a_slow_trickle_does_not_tilt(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    junk(h, 3, every_s=1.0)
    assert [e.data["text"] for e in records(h, "keypad.rejected")] == ["ZZ0", "ZZ1", "ZZ2"]
    assert all(c[1][0].startswith("ERROR") for c in h.keypad.calls[-3:])
    junk(h, 60, every_s=0.5)  # 2 a second for 30 s: below 100 in 10 s
    assert h.state == "open_for_wagers" and not h.table.tilts
    h.clock.advance(10.0)
    h.pump()
    detailed = len(records(h, "keypad.rejected"))
    summarised = sum(e.data["count"] for e in records(h, "keypad.rejected.summary"))
    assert detailed + summarised == 63
    assert len(records(h, "keypad.rejected.summary")) <= 4  # one per 10 s interval


@pytest.mark.parametrize(
    "keypad, key",
    [
        ({"flood_rejects": 5}, "flood_rejects"),
        ({"flood_window_s": 0}, "flood_window_s"),
        ({"reject_summary_s": 86400}, "reject_summary_s"),
        ({"reject_detail": 50, "flood_rejects": 20}, "reject_detail"),
        ({"flood_rejects": "many"}, "flood_rejects"),
        ({"flood": 3}, "flood"),
    ],
)
def test_flood_limits_are_range_checked(keypad, key):
    doc = profile_doc() | {"keypad": keypad}
    with pytest.raises(ConfigError) as e:
        parse_profile(doc, "t.toml")
    assert e.value.section == "keypad" and e.value.key == key


def test_flood_limits_are_configurable(tmp_path):
    doc = profile_doc() | {"keypad": {"flood_rejects": 20, "flood_window_s": 5, "reject_detail": 2}}
    h = Harness(tmp_path / "l.db", doc)
    h.shuffled()
    junk(h, 19)
    assert h.state == "open_for_wagers"
    junk(h, 1)
    assert h.state == "tilt"
    assert len(records(h, "keypad.rejected")) == 2
