"""The one reconnect state machine every link connection goes through (controller/lap/reconnect.py),
alone: its states, its progress deadline, its claims, its back-off; a clock of the test's own."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.lap.pgconn import Backoff
from controller.lap.reconnect import BACKOFF, CONNECTING, DOWN, UP, Reconnect


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def machine(progress_s: float = 3.0) -> tuple[Reconnect, Clock, list[object]]:
    clock = Clock()
    shut: list[object] = []
    r = Reconnect("uplink T1", progress_s, Backoff(0.2, 5.0, rand=lambda: 1.0), now=clock, shutter=shut.append)
    return r, clock, shut


def test_states_down_connecting_up_backoff_and_again() -> None:
    r, _clock, _shut = machine()
    assert r.state == DOWN
    r.begin()
    assert r.state == CONNECTING
    r.opened("c1")
    assert (r.state, r.conn, r.connects) == (UP, "c1", 1)
    pause = r.fail("server closed the connection")
    assert (r.state, r.conn, r.reason) == (BACKOFF, None, "server closed the connection")
    assert pause == pytest.approx(0.2)
    assert r.connect(lambda: "c2") == "c2" and r.state == UP and r.connects == 2


def test_a_failed_attempt_backs_off_longer_each_time_and_from_the_start_after_a_connection() -> None:
    r, _clock, _shut = machine()

    def refuse() -> object:
        raise OSError("connection refused")

    pauses = []
    for _ in range(4):
        with pytest.raises(OSError):
            r.connect(refuse)
        assert r.state == BACKOFF and "connection refused" in (r.reason or "")
        pauses.append(r.pause)
    assert pauses == pytest.approx([0.2, 0.4, 0.8, 1.6])
    r.connect(lambda: "c")
    assert r.fail("cut") == pytest.approx(0.2)  # back to the first pause once a connection was made


def test_work_waiting_and_nothing_acknowledged_past_the_deadline_drops_the_connection() -> None:
    r, clock, shut = machine(3.0)
    r.connect(lambda: "c1")
    r.waiting()
    clock.t += 3.0
    assert r.overdue() is None and r.enforce() is None and shut == []
    clock.t += 0.1
    why = r.enforce()
    assert why is not None and "nothing acknowledged for 3.1 s" in why
    assert shut == ["c1"] and r.drops == 1
    assert r.enforce() is None and shut == ["c1"]  # once: the owner is dropping it
    r.fail("the socket was shut")
    assert r.reason == why  # the deadline is the reason said, not the error it caused


def test_progress_restarts_the_clock_and_nothing_waiting_stops_it() -> None:
    r, clock, shut = machine(3.0)
    r.connect(lambda: "c1")
    r.waiting()
    clock.t += 2.5
    r.progressed(more=True)  # a batch acknowledged, more to send
    clock.t += 2.5
    assert r.enforce() is None
    r.progressed()  # all acknowledged
    clock.t += 60
    assert r.enforce() is None and shut == []
    r.waiting()
    r.waiting()  # the clock runs from the first
    clock.t += 2
    r.waiting()
    clock.t += 1.5
    assert r.enforce() is not None


def test_settled_work_is_never_a_reason_to_reconnect() -> None:
    r, clock, shut = machine(3.0)
    r.connect(lambda: "c1")
    r.waiting()
    r.settled()  # held on purpose (a refusal, a latched ledger fault)
    clock.t += 100
    assert r.enforce() is None and shut == []


def test_the_deadline_applies_in_any_state_but_only_to_a_connection_that_is_up() -> None:
    r, clock, shut = machine(3.0)
    r.waiting()
    clock.t += 10
    assert r.enforce() is None  # down: nothing to drop
    r.begin()
    assert r.enforce() is None  # connecting: the connect timeout's business
    r.opened("c1")
    assert r.enforce() is None  # a fresh connection gets a full deadline
    clock.t += 3.5
    assert r.enforce() is not None and shut == ["c1"]


def test_a_claim_unanswered_past_its_deadline_drops_the_connection_and_waits_again_on_the_next() -> None:
    r, clock, shut = machine(30.0)
    r.connect(lambda: "c1")
    r.claim(("hit", 41), 4.0)
    r.claim(("hit", 41), 99.0)  # claimed again: the first deadline stands
    clock.t += 4.1
    why = r.enforce()
    assert why is not None and "claim ('hit', 41) unanswered for 4.0 s" in why and shut == ["c1"]
    r.fail("shut")
    assert r.claims() == [("hit", 41)]  # still waiting: sent again on the next connection
    clock.t += 30
    r.connect(lambda: "c2")
    clock.t += 7.9
    assert r.enforce() is None  # twice the wait on this one
    clock.t += 0.2
    assert r.enforce() is not None and shut == ["c1", "c2"]
    r.fail("shut")
    r.connect(lambda: "c3")
    r.answered(("hit", 41))
    clock.t += 1000
    assert r.enforce() is None and r.claims() == []


def test_a_refused_claim_is_forgotten() -> None:
    r, clock, _shut = machine()
    r.connect(lambda: "c1")
    r.claim(7, 1.0)
    r.forget_claims()
    clock.t += 10
    assert r.enforce() is None


def test_a_non_positive_deadline_is_refused_naming_the_connection() -> None:
    with pytest.raises(ValueError, match="the LAP: the progress deadline must be positive, not 0"):
        Reconnect("the LAP", 0)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["wait", "ack", "ack-more", "settle", "tick", "drop", "open"]),
            st.floats(0, 5, allow_nan=False),
        ),
        max_size=60,
    )
)
def test_property_a_connection_up_with_work_waiting_is_never_left_past_the_deadline(steps) -> None:
    """Whatever happens in whatever order, enforcing after every step: a connection that is up
    never has had work waiting, unacknowledged, longer than the deadline (plus the last step)."""
    r, clock, _shut = machine(3.0)
    since: float | None = None
    for op, dt in steps:
        clock.t += dt
        if op == "wait":
            r.waiting()
            since = clock.t if since is None else since
        elif op in ("ack", "settle"):
            (r.progressed if op == "ack" else r.settled)()
            since = None
        elif op == "ack-more":
            r.progressed(more=True)
            since = clock.t
        elif op == "drop" and r.state == UP:
            r.fail("cut")
        elif op == "open" and r.state != UP:
            r.connect(lambda: "c")
            since = None if since is None else clock.t
        if r.enforce() is not None:
            r.fail("dropped")
        if r.state == UP and since is not None:
            assert clock.t - since <= 3.0


def test_a_pool_s_connection_lent_past_its_deadline_is_shut_and_one_given_back_is_not() -> None:
    import threading

    from controller.lap.reconnect import Lending

    clock = Clock()
    shut: list[object] = []
    pool = Lending("floor", 7.0, threading.Event(), now=clock, shutter=shut.append)
    pool.lend("a")
    pool.lend("b")
    clock.t += 5
    pool.back("a")  # answered in time, back in the pool
    clock.t += 2.5
    assert pool.enforce() == 1 and shut == ["b"] and pool.fired == 1
    pool.back("b", kept=False)  # its statement failed: the pool closes it
    pool.lend("a")  # lent again: a fresh deadline
    clock.t += 6.9
    assert pool.enforce() == 0
    clock.t += 100
    pool.back("a")
    assert pool.enforce() == 0 and shut == ["b"]
    pool.stop.set()
