"""The simulator's idle-skipping game clock (hil/simclock.py): it jumps to the
earliest wake-up only when every party waits and nothing is in flight, in order, and
never turns a silent device's real-time deadline into a loop of skips."""

from __future__ import annotations

import threading
import time

import pytest

from controller.core.clock import MonotonicClock, ScaledClock
from controller.core.reactor import Reactor
from hil import simclock
from hil.simclock import SimClock


def _armed(speed: float = 1.0) -> SimClock:
    c = SimClock(speed)
    c.armed = True
    c.register()  # this test's thread drives, as Rig.start registers the rig's driver
    return c


def _in_thread(fn, name: str = "party") -> threading.Thread:
    t = threading.Thread(target=fn, name=name, daemon=True)
    t.start()
    return t


def test_real_clocks_idle_does_nothing():
    for clock in (MonotonicClock(), ScaledClock(10.0)):
        t0, w0 = clock.now(), time.monotonic()
        with clock.idle(1.0, lambda: False, lambda: None):
            pass
        # neither slept nor skipped ahead to the 1.0 s wake-up: a real clock keeps real time
        assert time.monotonic() - w0 < 0.1 and clock.now() - t0 < 1.0, type(clock).__name__


def test_a_lone_sleeper_skips_to_its_wake_up():
    c = _armed(speed=1.0)
    t0, g0 = time.monotonic(), c.now()
    c.sleep(3600.0)  # an hour of game time at speed 1
    assert c.now() - g0 >= 3600.0
    assert time.monotonic() - t0 < 1.0
    assert c.skips == 1 and c.skipped_s == pytest.approx(3600.0, abs=0.5)


def test_nothing_is_skipped_before_the_clock_is_armed_or_with_skip_off():
    for c in (SimClock(100.0), SimClock(100.0, skip=False)):
        if not c.skip:
            c.armed = True
        c.register()
        t0 = time.monotonic()
        c.sleep(5.0)  # 50 ms at speed 100
        assert time.monotonic() - t0 >= 0.045
        assert c.skips == 0


def test_a_busy_party_stops_the_skip():
    """Registered and not waiting on the clock: busy, so game time only runs at its speed."""
    c = _armed(speed=100.0)
    done = threading.Event()

    def sleeper():
        c.sleep(10.0)  # 100 ms at speed 100
        done.set()

    t0 = time.monotonic()
    _in_thread(sleeper)
    assert done.wait(5)
    assert time.monotonic() - t0 >= 0.09  # the test's thread was busy in done.wait, unknown to the clock
    assert c.skips == 0


def test_wake_ups_come_in_order_and_on_time():
    c = _armed(speed=1.0)
    woke: list[tuple[str, float]] = []
    lock = threading.Lock()
    start = c.now()

    def sleeper(name: str, s: float):
        def run():
            c.sleep(s)
            with lock:
                woke.append((name, c.now() - start))

        return run

    threads = [_in_thread(sleeper(n, s), n) for n, s in (("b", 700.0), ("a", 300.0), ("c", 1100.0))]
    c.wait_for(lambda: len(woke) == 3, real_s=5.0)  # the driver waits, idle
    for t in threads:
        t.join(1)
    assert [n for n, _ in woke] == ["a", "b", "c"]
    for (_, at), due in zip(woke, (300.0, 700.0, 1100.0), strict=True):
        assert due <= at < due + 1.0
    assert c.skips >= 3


def test_a_flight_in_progress_stops_the_skip_until_it_lands():
    c = _armed(speed=100.0)
    c.flight_begin("shoe>ctl")
    landed = threading.Timer(0.1, c.flight_end, args=("shoe>ctl",))
    landed.start()
    t0 = time.monotonic()
    c.sleep(1000.0)  # 10 s at speed 100, unless skipped once the flight has landed
    took = time.monotonic() - t0
    assert 0.09 <= took < 2.0
    assert c.skips == 1
    assert c.open_flights() == {}


def test_a_flight_that_never_lands_is_forgotten_after_the_expiry(monkeypatch):
    monkeypatch.setattr(simclock, "FLIGHT_EXPIRY_S", 0.1)
    c = _armed(speed=10.0)
    c.flight_begin("ctl>shaker")  # e.g. a message to a muted device
    t0 = time.monotonic()
    c.sleep(100.0)  # 10 s at speed 10 without a skip
    assert time.monotonic() - t0 < 3.0
    assert c.expired == 1 and c.skips >= 1


def test_a_party_that_is_ready_stops_the_skip():
    """``ready()`` true: the party is about to act (e.g. its status predicate already holds)."""
    c = _armed(speed=100.0)
    flag = threading.Event()
    flag.set()
    entered = threading.Event()

    def watcher():
        with c.idle(ready=flag.is_set):
            entered.set()
            time.sleep(0.3)

    _in_thread(watcher, "watcher")
    assert entered.wait(2)
    t0 = time.monotonic()
    c.sleep(10.0)  # 100 ms at speed 100: not skipped while the watcher is ready
    assert time.monotonic() - t0 >= 0.09
    assert c.skips == 0


def _reactor(c: SimClock, *, skip_to: bool, name: str) -> tuple[Reactor, threading.Thread]:
    r = Reactor(c)
    c.expect(name, skip_to=skip_to)
    th = threading.Thread(target=r.run, name=name, daemon=True)
    th.start()
    return r, th


def test_the_controllers_timers_are_never_skipped_to_nor_over():
    """The reactor (the controller) is a held party: its timers (device deadlines, debounce
    windows) come at the clock's speed, and a simulated party's later wake-up waits for them —
    the table judges time as it did before the clock skipped anything."""
    c = _armed(speed=10.0)
    fired: list[float] = []
    r, th = _reactor(c, skip_to=False, name="reactor-held")
    t0, g0 = time.monotonic(), c.now()
    r.call_soon_threadsafe(r.call_later, 3.0, lambda: fired.append(c.now() - g0))  # 0.3 s real at 10x
    try:
        c.sleep(1000.0)  # a simulated party's long pause: skipped, but only after the timer fired
    finally:
        r.stop()
        th.join(2)
    assert len(fired) == 1 and 3.0 <= fired[0] < 4.0
    assert time.monotonic() - t0 >= 0.25  # the timer's 3 game seconds came at 10x
    assert c.now() - g0 >= 1000.0 and c.skips == 1


def test_a_skip_wakes_the_reactor_so_its_next_timer_keeps_its_game_time():
    """Skipping to a simulated party's wake-up brings the controller's next timer nearer in game
    time: the reactor is woken to count its wait again, so the timer fires on time, not late."""
    c = _armed(speed=10.0)
    fired: list[float] = []
    r, th = _reactor(c, skip_to=False, name="reactor-held")
    g0 = c.now()
    r.call_soon_threadsafe(r.call_later, 20.0, lambda: fired.append(c.now() - g0))  # 2 s real at 10x
    try:
        c.sleep(1.0)  # let the reactor arm its timer and wait (0.1 s real)
        t0 = time.monotonic()
        c.sleep(14.0)  # skipped at once: game +15
        assert time.monotonic() - t0 < 0.2
        assert c.wait_for(lambda: fired, real_s=5.0)
        took = time.monotonic() - t0
    finally:
        r.stop()
        th.join(2)
    assert 20.0 <= fired[0] < 20.6  # on time in game time
    assert 0.35 <= took < 1.5  # the 5 game seconds left, at 10x


def test_a_reactor_that_may_be_skipped_to_fires_its_timers_in_order():
    """The mechanism in general (the rig holds the controller's reactor, see above): a party
    waiting through ``Clock.idle`` is skipped to and woken, timer after timer."""
    c = _armed(speed=1.0)
    fired: list[tuple[str, float]] = []
    r, th = _reactor(c, skip_to=True, name="reactor-free")
    t0 = c.now()
    r.call_soon_threadsafe(r.call_later, 300.0, lambda: fired.append(("late", c.now() - t0)))
    r.call_soon_threadsafe(r.call_later, 100.0, lambda: fired.append(("early", c.now() - t0)))
    try:
        assert c.wait_for(lambda: len(fired) == 2, real_s=5.0)
    finally:
        r.stop()
        th.join(2)
    assert [n for n, _ in fired] == ["early", "late"]
    assert 100.0 <= fired[0][1] < 101.0 and 300.0 <= fired[1][1] < 301.0


def test_a_rig_skips_the_shakes_and_the_dealing_delays(make_rig):
    """Playing rounds on the rig, the clock skips the idle game time — at least the 5-second
    shake of each round (§ 621a.2(f)(2)) — and no flight is left open afterwards."""
    import random

    from hil.people import People

    rig = make_rig(profile="six-card-fortune").start()
    people = People(rig, random.Random(3))
    for _ in range(2):
        people.play_round()
    rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 10)
    assert rig.clock.skips > 0
    assert rig.clock.skipped_s >= 2 * 5.0
    assert rig.clock.wait_for(lambda: not rig.clock.open_flights(), real_s=5.0)
    assert rig.clock.expired == 0  # every message and commit was counted in and out
