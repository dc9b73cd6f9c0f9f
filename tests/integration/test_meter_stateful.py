"""Stateful property test: for any sequence of wagers, lock-outs, hits,
validations, voids and restarts, the meter equals seed + increments − payouts
(+ reseeds − voids) with the remainder carried, exactly; it never decreases
except through a recorded payout or void; and the ledger always verifies.
(§ 670a.12(d)(2),(3); § 670a.13(m); SPEC § 5.)"""

from __future__ import annotations

import tempfile
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.integration.harness import Harness, profile_doc, stacks_for

SEED = 500_000
HANDS = {"none": None, "royal": "As Ks Qs Js Ts 4d", "aces": "Ac Ad Ah As Jk 2c", "quads": "7c 7d 7h 7s 2d 5h"}


class MeterMachine(RuleBasedStateMachine):
    @initialize(rate=st.sampled_from(["21%", "1.5%", "7.3%", "0.01%"]))
    def setup(self, rate):
        self.dir = tempfile.TemporaryDirectory()
        self.path = Path(self.dir.name) / "ledger.db"
        self.doc = profile_doc(rate=rate)
        self.rate = Fraction(rate.rstrip("%")) / 100
        self.h = Harness(self.path, self.doc)
        self.value = Fraction(SEED)  # the model's meter, exact
        self.credited: dict[int, int] = {}  # this round's credited wagers
        self.accepted: list[int] = []
        self.payouts_seen = 0
        self.last_value = self.h.table.meters["primary"].value

    def teardown(self):
        if hasattr(self, "h"):
            self.h.close()
            self.dir.cleanup()

    # ---- actions -----------------------------------------------------------
    @precondition(lambda self: self.h.state == "open_for_wagers")
    @rule(seats=st.sets(st.integers(1, 6), max_size=6))
    def bet_and_lock_out(self, seats):
        self.h.shuffled()
        for s in sorted(seats):
            self.h.edge(f"bet.progressive.{s}", True)
        self.h.press("lockout")
        for s in sorted(seats):
            self.h.edge(f"bet.progressive.{s}", False)
        self.accepted = sorted(seats)
        self.credited = {}

    @precondition(lambda self: self.h.state == "no_more_bets")
    @rule()
    def confirm(self):
        self.h.press("confirm")
        self.credited = {s: 100 for s in self.accepted}
        self.value += self.rate * 100 * len(self.accepted)

    @precondition(lambda self: self.h.state in ("no_more_bets", "starting_position"))
    @rule()
    def dealer_void(self):
        self.h.press("void")
        self.value -= self.rate * sum(self.credited.values())
        self.credited = {}

    @precondition(lambda self: self.h.state == "starting_position")
    @rule(
        d=st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6)),
        hit=st.sampled_from(sorted(HANDS)),
        pick=st.integers(0, 5),
    )
    def roll_and_deal(self, d, hit, pick):
        hands: dict[int, str] = {}
        if HANDS[hit] and self.accepted:
            hands[self.accepted[pick % len(self.accepted)]] = str(HANDS[hit])
        self.h.dice(d)
        self.h.deal(stacks_for((sum(d) - 1) % 7 + 1, hands))

    @precondition(lambda self: self.h.state == "floor_validation")
    @rule()
    def validate(self):
        hit = self.h.rnd.pending_hits[0]
        assert hit.meter_fraction is not None  # a meter hit
        cents = (hit.meter_fraction * (self.value.numerator // self.value.denominator)).__floor__()
        self.h.press("key")
        self.value -= cents
        if hit.meter_fraction == 1:
            self.value += SEED
        self.payouts_seen += 1
        event(f"validated a {hit.hand} hit ({hit.meter_fraction} of meter)")

    @rule()
    def restart(self):
        state = self.h.state
        event(f"restart in {state}")
        self.h.close()
        if state in ("no_more_bets", "starting_position", "dispensing", "stub_check"):
            self.value -= self.rate * sum(self.credited.values())  # recovery voids the round
            self.credited = {}
        self.h = Harness(self.path, self.doc)

    # ---- invariants ----------------------------------------------------------------
    @invariant()
    def meter_is_exact(self):
        m = self.h.table.meters["primary"]
        assert m.value == self.value, (m.value, self.value)
        assert m.value == m.expected_value()
        assert 0 <= m.remainder < 1
        assert m.cents == self.value.numerator // self.value.denominator

    @invariant()
    def meter_decreases_only_by_recorded_payout_or_void(self):
        m = self.h.table.meters["primary"]
        if m.value < self.last_value:
            kinds = {e.kind for e in self.h.ledger.events(newest_first=True, limit=40)}
            assert kinds & {"meter.payout", "meter.void"}
        self.last_value = m.value

    @invariant()
    def ledger_verifies(self):
        assert self.h.ledger.verify() == []


class TestMeterStateful(MeterMachine.TestCase):  # type: ignore[misc,valid-type]
    """The full run: 60 examples of 30 steps (the soak tier)."""

    settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
    pytestmark = [pytest.mark.slow, pytest.mark.soak]


class TestMeterStatefulShort(MeterMachine.TestCase):  # type: ignore[misc,valid-type]
    """The same machine, fewer examples, in the README's tier."""

    settings = settings(max_examples=10, stateful_step_count=30, deadline=None)
    pytestmark = [pytest.mark.slow]
