"""The simulated dealer, players and floorperson.

They act only through the table's physical interfaces — bet-sensor pins, the
lock-out, confirm and key-switch pins — and watch only what a person at the
table could see (the table's published status stands in for looking at the
lights and the sign).  All their choices come from a seeded RNG, so the same
seed plays the same rounds.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from hil.rig import Rig

WAIT_S = 30.0   # real seconds to wait for the controller before calling it a hang


class People:
    def __init__(self, rig: Rig, rng: random.Random, *, bet_probability: float = 0.55,
                 late_bet_probability: float = 0.1, chatter_probability: float = 0.1):
        self.rig = rig
        self.rng = rng
        self.bet_probability = bet_probability
        self.late_bet_probability = late_bet_probability
        self.chatter_probability = chatter_probability

    def _wait(self, pred: Any, what: str) -> Mapping[str, Any]:
        try:
            return self.rig.table.wait_for(pred, WAIT_S)
        except TimeoutError as e:
            raise TimeoutError(f"waiting for {what}: {e}") from None

    def play_round(self) -> int:
        """Play one round; returns its number.  Raises TimeoutError if the table hangs."""
        rig, rng = self.rig, self.rng
        st = self._wait(lambda s: s.get("state") in ("open_for_wagers", "tilt") and
                        (s.get("deck_ready") or s.get("state") == "tilt"), "the table to open for wagers")
        if st["state"] == "tilt":
            raise RuntimeError(f"table is in tilt: {st['tilts']}")
        number = st["round"]
        seats = [s for s in range(1, rig.table.seats + 1) if rng.random() < self.bet_probability]
        for s in seats:
            rig.place(s)
            if rng.random() < self.chatter_probability:   # a chip set down unevenly: contact chatter
                for _ in range(rng.randint(1, 4)):
                    rig.remove(s)
                    rig.place(s)
        rig.clock.sleep(0.5)
        rig.press("lockout")                              # "no more bets"
        self._wait(lambda s: s.get("count_shown") or s.get("state") == "tilt", "the accepted count")
        late = []
        if rng.random() < self.late_bet_probability:
            empty = [s for s in range(1, rig.table.seats + 1) if s not in seats]
            if empty:
                late.append(rng.choice(empty))
                rig.place(late[-1])                       # too late: rejected
        rig.clock.sleep(0.5)
        for s in seats + late:                            # the dealer collects the chips (§ 670a.10(a)(2)(ii))
            rig.remove(s)
        rig.press("confirm")                              # count equals chips collected
        while True:
            st = self._wait(lambda s: s.get("state") in ("floor_validation", "tilt")
                            or (s.get("state") == "open_for_wagers" and s.get("round", 0) > number),
                            "the round to finish")
            if st["state"] == "floor_validation":
                before = st.get("pending_hits", 0)
                rig.clock.sleep(1.0)
                rig.press("key")                          # the floorperson validates the hit
                self._wait(lambda s: s.get("pending_hits", 0) < before or s.get("state") == "tilt",
                           "the validation to be taken")
                continue
            if st["state"] == "tilt":
                raise RuntimeError(f"table is in tilt: {st['tilts']}")
            return number
