"""Our own debounce (controller/play/inputs.py): gpiozero's mock pins do not bounce, so
chatter is produced by the test and must yield one clean change."""

from __future__ import annotations

from controller.core.reactor import Reactor
from controller.play.inputs import Debouncer


def setup(clock, window=0.02):
    r = Reactor(clock)
    changes = []
    d = Debouncer(r, window, lambda name, active, t: changes.append((name, active, round(t - 1000.0, 4))))
    d.add("bet1", False)
    return r, d, changes


def run_timers(r, clock, dt):
    clock.advance(dt)
    r.run_once(block=False)


def test_leading_edge_accepted_without_delay(manual_clock):
    r, d, ch = setup(manual_clock)
    d.edge("bet1", True, manual_clock.now())
    assert ch == [("bet1", True, 0.0)]


def test_chatter_inside_window_is_one_change(manual_clock):
    r, d, ch = setup(manual_clock)
    t = manual_clock.now()
    for i, level in enumerate([True, False, True, False, True]):
        d.edge("bet1", level, t + i * 0.002)
    run_timers(r, manual_clock, 0.05)
    assert ch == [("bet1", True, 0.0)]
    assert d.level("bet1") is True and d.stats("bet1") == (5, 4)


def test_settling_the_other_way_is_resynced_at_window_end(manual_clock):
    r, d, ch = setup(manual_clock)
    t = manual_clock.now()
    d.edge("bet1", True, t)  # chip touched the sensor ...
    d.edge("bet1", False, t + 0.005)  # ... and slid off within the window
    run_timers(r, manual_clock, 0.021)
    assert ch == [("bet1", True, 0.0), ("bet1", False, 0.021)]
    assert d.level("bet1") is False


def test_changes_after_window_are_accepted(manual_clock):
    r, d, ch = setup(manual_clock)
    d.edge("bet1", True, manual_clock.now())
    run_timers(r, manual_clock, 0.03)
    d.edge("bet1", False, manual_clock.now())
    assert [c[1] for c in ch] == [True, False]


def test_mock_pin_chatter_through_the_table(make_rig):
    """Chatter on a real (mock) pin through the whole service: the light ends ON, once."""
    from drivers.gpio import ON
    from tests.conftest import eventually

    rig = make_rig().start()
    rig.table.wait_for(lambda s: s["state"] == "open_for_wagers", 30)
    pin = rig.sensor_pin(4)
    for _ in range(10):
        pin.drive_low()
        pin.drive_high()
    pin.drive_low()
    eventually(lambda: rig.light_mode(4) == ON, 10, what="seat 4 light on")
    edges, ignored = rig.table.debounce.stats("bet.progressive.4")
    assert edges == 21 and ignored >= 19
    assert rig.table.state == "open_for_wagers" and not rig.table.tilts  # chatter is no fault
