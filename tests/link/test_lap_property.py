"""Property: whatever the sequence of contributions and hits, the LAP's meter, reserve and every
amount it answers equal an exact Fraction model (remainders carried, never dropped; a
percentage hit takes ⌊fraction × shown cents⌋; a 100 % hit resets to reset + reserve)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

RATE, RESERVE, RESET = Fraction(125, 1000), Fraction(15, 1000), 50_000

op = st.one_of(
    st.tuples(st.just("contribution"), st.integers(1, 100_000)),
    st.tuples(st.just("hit"), st.sampled_from([Fraction(1), Fraction(1, 10), Fraction(1, 8), Fraction(7, 8)])),
)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op, min_size=1, max_size=12))
def test_lap_meter_matches_an_exact_model(make_lap, ops):
    # one schema for the whole run (the fixture is set up once per test, not per example):
    # each example goes on from the meter as the previous one left it
    lap = make_lap(
        tables=1,
        seed="$1,000",
        reset="$500",
        increment_rate="12.5%",
        reserve_rate="1.5%",
        max_wager="$1,000",
        meter_pays=["100%", "10%", "12.5%", "87.5%"],
    )
    first = lap.store._rows("SELECT coalesce(max(seq), 0) + 1 AS n FROM {s}.events")[0]["n"]
    seq = itertools.count(int(first))
    start = lap.store.levels()["primary"]
    value, reserve = start.value, start.reserve
    for kind, x in ops:
        s = next(seq)
        if kind == "contribution":
            lap.send("T1", s, "contribution", {"wager": x, "seat": 1, "round": s})
            value += x * RATE
            reserve += x * RESERVE
        else:
            # a claim is for a (round, seat) the table wagered on: a 1-cent wager in a round of its own
            lap.send("T1", s, "contribution", {"wager": 1, "seat": 2, "round": s})
            value += RATE
            reserve += RESERVE
            s = next(seq)
            lap.send(
                "T1", s, "hit", {"fraction_num": x.numerator, "fraction_den": x.denominator, "seat": 2, "round": s - 1}
            )
            shown = value.numerator // value.denominator
            amount = (x * shown).numerator // (x * shown).denominator
            got = lap.store._rows("SELECT amount_cents, meter_cents_before FROM {s}.hits WHERE seq = %s", (s,))[0]
            assert (got["meter_cents_before"], got["amount_cents"]) == (shown, amount)
            value -= amount
            if x == 1:
                value += RESET + reserve
                reserve = Fraction(0)
        now = lap.store.levels()["primary"]
        assert (now.value, now.reserve) == (value, reserve)
    assert lap.store.refusals() == []
    assert lap.store.reconcile().ok
