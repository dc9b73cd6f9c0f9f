"""The serial drivers through pyserial on a real pty against the simulators
(docs/protocols.md sections 1 and 3): exclusive open, messages posted as events,
and a USB unplug/replug under the same by-id name handled by reopen with back-off."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from controller.core.clock import ScaledClock
from controller.core.log import LogContext
from drivers.serialdev import SerialSettings, open_serial
from drivers.shaker import SerialShaker
from drivers.shoe import SerialShoe
from hil.devices import ShakerSim, ShoeSim


class Events:
    def __init__(self):
        self.items: list[tuple[str, str, dict[str, Any]]] = []
        self.cv = threading.Condition()

    def post(
        self,
        kind: str,
        source: str = "",
        data: Mapping[str, Any] | None = None,
        ctx: Mapping[str, Any] | None = None,
        t: float | None = None,
    ) -> None:
        with self.cv:
            self.items.append((kind, source, dict(data or {})))
            self.cv.notify_all()

    def wait(self, pred, timeout=5.0):
        with self.cv:
            assert self.cv.wait_for(lambda: any(pred(*i) for i in self.items), timeout), self.items


def _cfg(device, port, **kw):
    base = dict(baud=115200, ack_timeout_ms=200, retries=3, heartbeat_ms=200, lost_after_ms=1000)
    base.update(kw)
    return SerialSettings(device=device, port=port, **base)


@pytest.fixture
def clock():
    return ScaledClock(50.0)


def test_shoe_shuffle_and_dispense_over_pyserial(tmp_path, clock):
    sim = ShoeSim(clock, random.Random(1), link_dir=tmp_path)
    ev = Events()
    shoe = SerialShoe(_cfg("shoe", sim.path), ev.post, LogContext("T1"))
    sim.start()
    shoe.start()
    try:
        shoe.shuffle()
        ev.wait(lambda k, s, d: k == "shoe" and d["msg"] == "SHUFFLED" and d["cards"] == 53)
        shoe.dispense(1, 6)
        ev.wait(lambda k, s, d: k == "shoe" and d["msg"] == "STACK")
        stack = next(d for k, s, d in ev.items if k == "shoe" and d["msg"] == "STACK")
        assert stack["stack"] == 1 and stack["count"] == 6 and stack["remaining"] == 47
        assert len(stack["cards"]) == 6 and all(0 <= c <= 52 for c in stack["cards"])
        assert shoe.link.stats.faults == 0
    finally:
        shoe.stop()
        sim.stop()


def test_port_is_opened_exclusively(tmp_path, clock):
    sim = ShoeSim(clock, random.Random(1), link_dir=tmp_path)
    first = open_serial(_cfg("shoe", sim.path))
    try:
        import serial

        with pytest.raises(serial.SerialException):
            open_serial(_cfg("shoe", sim.path))
    finally:
        first.close()
        sim.stop()


def test_unplug_is_reported_and_replug_reopens_the_same_name(tmp_path, clock):
    sim = ShakerSim(clock, random.Random(2), link_dir=tmp_path)
    ev = Events()
    shaker = SerialShaker(_cfg("shaker", sim.path), ev.post, LogContext("T1"))
    sim.start()
    shaker.start()
    try:
        shaker.request_status()
        ev.wait(lambda k, s, d: k == "shaker" and d["msg"] == "STATUS")
        sim.unplug()
        ev.wait(lambda k, s, d: k == "link" and d["event"] == "disconnected")
        time.sleep(0.3)
        sim.replug()
        ev.wait(lambda k, s, d: k == "link" and d["event"] == "up", timeout=8)
        assert shaker.link.stats.reopens == 1
        n = sum(1 for k, s, d in ev.items if k == "shaker" and d["msg"] == "STATUS")
        shaker.request_status()  # a new session: HELLO, then the request
        ev.wait(lambda k, s, d: sum(1 for k2, s2, d2 in ev.items if k2 == "shaker" and d2["msg"] == "STATUS") > n)
    finally:
        shaker.stop()
        sim.stop()


def test_dead_device_is_a_fault_then_lost_never_a_silent_retry(tmp_path, clock):
    sim = ShoeSim(clock, random.Random(3), link_dir=tmp_path)
    ev = Events()
    shoe = SerialShoe(_cfg("shoe", sim.path), ev.post, LogContext("T1"))
    sim.start()
    shoe.start()
    try:
        sim.port.mute = True
        shoe.shuffle()
        ev.wait(lambda k, s, d: k == "link" and d["event"] == "fault" and "4 transmissions" in d["detail"])
        ev.wait(lambda k, s, d: k == "link" and d["event"] == "lost")
        assert not any(k == "shoe" for k, s, d in ev.items)
    finally:
        shoe.stop()
        sim.stop()


def test_shaker_sim_refuses_activate_when_not_armed_and_takes_the_armed_seat_button(clock):
    sim = ShakerSim(clock, random.Random(4))
    sim.link.send = lambda *a: None  # type: ignore[method-assign]  # not started: record what it sends only
    sim.on_ACTIVATE(who=0)
    assert sim.sent[-1][0] == "ERROR" and sim.sent[-1][1]["code"] == 2
    sim.on_ARM(who=3)
    assert not sim.press_button(2)  # not the armed seat
    assert sim.press_button(3)  # § 621a.2(f): player-activated
    assert sim.sent[-1] == ("SHAKING", {"who": 3, "planned_ms": 5000})
    sim.stop()


def _pty_port() -> tuple[int, Any]:
    """A pty whose far end nobody reads, opened as the table opens a device."""
    import os
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    return master, open_serial(_cfg("sign", os.ttyname(slave)))


def test_a_write_that_went_out_is_not_a_timeout_however_late_its_thread_ran():
    """pyserial's write looks at its clock after a complete ``os.write``: a thread descheduled past
    the write timeout (a loaded machine) got "Write timeout" for a frame that had gone out, and the
    device's link reported a fault for nothing."""
    import os

    from drivers.serialdev import BoundedWrites

    master, port = _pty_port()
    try:
        assert isinstance(port, BoundedWrites)
        ticks = iter([0.0, 10.0, 10.0, 10.0])  # the deadline is long past once the write returns
        port.clock = lambda: next(ticks)
        assert port.write(b"\x02frame\x03") == 7
        time.sleep(0.05)
        assert os.read(master, 100) == b"\x02frame\x03"
        # and it still says what is waiting (the link reads that much, not a fixed count that
        # would wait out the port's timeout each time: a keypad scenario missed its prompts)
        os.write(master, b"abc")
        time.sleep(0.05)
        assert port.in_waiting == 3 and port.read(3) == b"abc"
    finally:
        port.close()
        os.close(master)


def test_a_write_the_device_never_takes_fails_at_its_deadline_naming_what_is_unsent():
    import os

    import serial

    master, port = _pty_port()
    try:
        t0 = time.monotonic()
        with pytest.raises(
            serial.SerialTimeoutException, match=r"write timeout: \d+ of 1000000 bytes unsent after 0.5 s"
        ):
            port.write(b"x" * 1_000_000)  # far more than a pty's buffer holds
        assert 0.4 <= time.monotonic() - t0 < 3.0
    finally:
        port.close()
        os.close(master)
