"""The simulated dealer, players and floorperson.

They act only through the table's physical interfaces — bet-sensor pins, the
lock-out, confirm, void and key-switch pins, the dealer's keypad — and watch only
what a person at the table could see (the table's published status stands in for
looking at the lights, the sign, the keypad's display and the cards on the
layout).  What the players bet and decide comes from the game's strategy
(hil/players/), and every choice from a seeded RNG, so the same seed plays the
same rounds.  ``placed`` keeps every wager the players made, for the balance.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from hil.players.base import Strategy
from hil.rig import Rig

WAIT_S = 30.0  # real seconds to wait for the controller before calling it a hang


class People:
    def __init__(
        self,
        rig: Rig,
        rng: random.Random,
        *,
        bet_probability: float = 0.55,
        late_bet_probability: float = 0.1,
        chatter_probability: float = 0.1,
        strategy: Strategy[Any] | None = None,
    ):
        from hil.players import strategy_for

        self.rig = rig
        self.rng = rng
        self.late_bet_probability = late_bet_probability
        self.chatter_probability = chatter_probability
        proc = rig.table.proc
        self.strategy = strategy or strategy_for(proc.game)(proc, rng, play_probability=bet_probability)
        #: round -> (seat, wager) -> cents: every wager the players made and the table took
        self.placed: dict[int, dict[tuple[int, str], int]] = {}
        #: round -> (seat, wager): wagers the table refused (keyed and refused, or too late)
        self.refused: dict[int, set[tuple[int, str]]] = {}
        #: called with the table's status before the floorperson validates a hit (``tablectl sim
        #: --floor``: the floorperson comes once the hit is acknowledged on the floor view)
        self.before_validation: Callable[[Mapping[str, Any]], None] | None = None

    def _wait(self, pred: Any, what: str) -> Mapping[str, Any]:
        try:
            st: Mapping[str, Any] = self.rig.table.wait_for(pred, WAIT_S)
            return st
        except TimeoutError as e:
            raise TimeoutError(f"waiting for {what}: {e}") from None

    def _key(self, text: str) -> str:
        kp = self.rig.keypad
        if kp is None:
            raise RuntimeError(f"the table needs the dealer's keypad for {text!r}")
        # the dealer reads the display first: the entry answers the latest prompt
        kp.wait_shown(int(self.rig.table.wait_for(lambda s: True, WAIT_S).get("prompt", 0)), WAIT_S)
        return kp.enter_and_wait(text, WAIT_S)

    def play_round(self) -> int:
        """Play one round; returns its number.  Raises TimeoutError if the table hangs,
        RuntimeError if it tilts."""
        st = self._open()
        number = int(st["round"])
        placed = self.placed.setdefault(number, {})
        refused = self.refused.setdefault(number, set())
        sensed_seats = self._place_bets(placed, refused)
        rig = self.rig
        rig.clock.sleep(0.5)
        rig.press(rig.table.proc.lockout_button)  # "no more bets" (lock-out; DJ Wild's Start Game)
        st = self._wait(lambda s: s.get("count_shown") or s.get("state") == "tilt", "the accepted count")
        # wagers the table refused at the lock-out (e.g. an optional wager without its base wager)
        taken = {tuple(k.split(":")) for k in st.get("wagers", {})}
        for seat, wager in list(placed):
            if (str(seat), wager) not in taken:
                refused.add((seat, wager))
                del placed[(seat, wager)]
        late = self._late_bet(sensed_seats)
        rig.clock.sleep(0.5)
        for seat, wager in sensed_seats + late:  # the dealer collects the chips (§ 670a.10(a)(2)(ii))
            rig.remove(seat, wager)
        rig.press("confirm")  # count equals chips collected
        self._finish(number, placed)
        return number

    def _opened(self) -> Mapping[str, Any]:
        return self._wait(
            lambda s: (
                s.get("state") in ("open_for_wagers", "tilt", "floor_validation")
                and (s.get("deck_ready") or s.get("state") != "open_for_wagers")
            ),
            "the table to open for wagers",
        )

    def _open(self) -> Mapping[str, Any]:
        """Wait for the table to open for wagers, validating a hit owed from before a power loss."""
        st = self._opened()
        while st["state"] == "floor_validation":
            # the table came back from a power loss still owing a validated hit (§ 670a.11(h)(3)):
            # the floorperson validates it before the next round opens
            before = st.get("pending_hits", 0)
            self.rig.press("key")
            self._wait(
                lambda s, before=before: s.get("pending_hits", 0) < before or s.get("state") == "tilt",
                "the recovered hit to be validated",
            )
            st = self._opened()
        if st["state"] == "tilt":
            raise RuntimeError(f"table is in tilt: {st['tilts']}")
        return st

    def _place_bets(self, placed: dict[tuple[int, str], int], refused: set[tuple[int, str]]) -> list[tuple[int, str]]:
        """The strategy's wagers: chips on the sensors, or keyed by the dealer; the sensed spots."""
        sensed_seats: list[tuple[int, str]] = []
        for bet in self.strategy.bets():
            if bet.sensed:
                self._place_chips(bet.seat, bet.wager)
                sensed_seats.append((bet.seat, bet.wager))
                placed[(bet.seat, bet.wager)] = bet.cents
                continue
            reply = self._key(f"BET {bet.seat} {bet.wager} {bet.cents / 100:.2f}")
            if reply.startswith("ERROR"):
                refused.add((bet.seat, bet.wager))
            else:
                placed[(bet.seat, bet.wager)] = bet.cents
        return sensed_seats

    def _place_chips(self, seat: int, wager: str) -> None:
        rig, rng = self.rig, self.rng
        rig.place(seat, wager)
        if rng.random() < self.chatter_probability:  # a chip set down unevenly: contact chatter
            for _ in range(rng.randint(1, 4)):
                rig.remove(seat, wager)
                rig.place(seat, wager)

    def _late_bet(self, sensed_seats: list[tuple[int, str]]) -> list[tuple[int, str]]:
        """Sometimes a progressive chip set down after the lock-out: rejected, never a wager."""
        rig = self.rig
        late: list[tuple[int, str]] = []
        if self.rng.random() < self.late_bet_probability and "progressive" in rig.table.proc.wagers:
            empty = [s for s in range(1, rig.table.seats + 1) if (s, "progressive") not in sensed_seats]
            if empty:
                late.append((self.rng.choice(empty), "progressive"))
                rig.place(*late[-1])  # too late: rejected, never a wager
        return late

    def _finish(self, number: int, placed: dict[tuple[int, str], int]) -> None:
        """Take the round's decisions and validations until the next round opens."""
        decided: set[str] = set()
        player_shaker = self.rig.table.proc.player_activated_shaker  # § 621a.2(f): a player presses the button
        while True:
            st = self._wait(
                lambda s: (
                    (s.get("decision") and not s["decision"]["done"])
                    or s.get("state") in ("floor_validation", "tilt", "hand_entry")
                    or (player_shaker and self._starting(s))
                    or (s.get("state") == "open_for_wagers" and s.get("round", 0) > number)
                ),
                "the round to finish",
            )
            if not self._step(st, player_shaker, decided, placed):
                return

    def _step(
        self, st: Mapping[str, Any], player_shaker: bool, decided: set[str], placed: dict[tuple[int, str], int]
    ) -> bool:
        """One thing the round waits for; False when the round is over."""
        if st["state"] == "tilt":
            raise RuntimeError(f"table is in tilt: {st['tilts']}")
        if player_shaker and self._starting(st):
            self._press_activation(st["state"])
            return True
        if st["state"] == "hand_entry":
            raise RuntimeError("the shoe did not read the cards: the simulated dealer cannot enter them")
        if _deciding(st):
            self._decide(st, decided, placed)
            return True
        if st["state"] == "floor_validation":
            self._validate_hit(st)
            return True
        return False

    def _decide(self, st: Mapping[str, Any], decided: set[str], placed: dict[tuple[int, str], int]) -> None:
        phase = st["state"]
        if phase in decided:
            raise RuntimeError(f"decision phase {phase} does not finish: {st['decision']}")
        decided.add(phase)
        for text, late_wagers in self.strategy.decide(st):
            reply = self._key(text)
            if not reply.startswith("ERROR"):
                placed.update(late_wagers)  # e.g. a Double Down, made after "no more bets"
        self._wait(
            lambda s, p=phase: s.get("state") != p or s.get("state") == "tilt",
            f"the {phase} decisions to be taken",
        )

    def _validate_hit(self, st: Mapping[str, Any]) -> None:
        before = st.get("pending_hits", 0)
        if self.before_validation is not None:
            self.before_validation(st)
        self.rig.clock.sleep(1.0)
        self.rig.press("key")  # the floorperson validates the hit
        self._wait(
            lambda s, before=before: s.get("pending_hits", 0) < before or s.get("state") == "tilt",
            "the validation to be taken",
        )

    def _starting(self, st: Mapping[str, Any]) -> bool:
        phase = self.rig.table.proc.phase(st.get("state", ""))
        return phase is not None and phase.kind == "start"

    def _press_activation(self, state: str) -> None:
        """While the table waits for the dice (a ``start`` phase), the player whose
        activation button the shaker is armed for presses it (§ 621a.2(f), § 621a.6(a)(3));
        again after a no roll, when the shaker is armed anew (§ 621a.10(a))."""
        import time

        rig = self.rig
        sh = rig.shaker
        deadline = time.monotonic() + WAIT_S

        def moved() -> bool:  # the table went on, or the shaker is armed and waits for its button
            return rig.table.status.get("state") != state or bool(sh.armed and not sh.shaking)

        while rig.table.status.get("state") == state:
            armed = sh.armed
            if armed and not sh.shaking:
                rig.press_activation(armed)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"waiting for the dice in {state}: status {dict(rig.table.status)}")
            rig.clock.wait_for(moved, real_s=min(left, 0.5), cheap=True)  # idle meanwhile, for the clock


def _deciding(st: Mapping[str, Any]) -> bool:
    """The table waits for the players' decisions (not for a floorperson's validation)."""
    return bool(st.get("decision")) and not st["decision"]["done"] and st["state"] not in ("floor_validation",)
