"""Bet sensing: the sensed wager spots of every seat, their recorded states and
their lights (§ 670a.2(c)(1),(2); § 670a.7(c); § 670a.10(a)(2)(ii); § 687a.8(c)).

Each seat has one to three sensed spots (``[gpio.spots.<wager>]``).  A spot's
state is one of:

=============  ===========================================  ===============
state          meaning                                      light
=============  ===========================================  ===============
``awaiting``   no chip sensed (before lock-out), or no       off
               wager accepted (after)
``placed``     a chip is sensed before lock-out              on
``accepted``   frozen at the lock-out edge; durable          on
``rejected``   a chip placed after lock-out                  blink-fast
=============  ===========================================  ===============

``placed`` and ``accepted`` share the steady light because they never coexist:
before lock-out every lit spot is ``placed``; after the lock-out the sign shows
"NO MORE BETS" and every lit spot is ``accepted``.  Until lock-out the lights
follow the (debounced) sensors; after it they show the recorded state only.  A
chip *removed* from an accepted spot is the dealer collecting it
(§ 670a.10(a)(2)(ii)): recorded (``wager.removed``), the spot stays accepted and
lit.  Nothing changes the accepted set until the round ends.

Runs on the reactor thread only (the table owns it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from drivers.gpio import BLINK_FAST, OFF, ON

AWAITING, PLACED, ACCEPTED, REJECTED = "awaiting", "placed", "accepted", "rejected"
LIGHT_FOR = {AWAITING: OFF, PLACED: ON, ACCEPTED: ON, REJECTED: BLINK_FAST}

Spot = tuple[str, int]  # (wager, seat)


def input_name(wager: str, seat: int) -> str:
    return f"bet.{wager}.{seat}"


def light_name(wager: str, seat: int) -> str:
    return f"light.{wager}.{seat}"


def parse_input(name: str) -> Spot | None:
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "bet" and parts[2].isdigit():
        return parts[1], int(parts[2])
    return None


@dataclass
class Late:
    """A late chip: placed after lock-out (rejected) or removed from an accepted spot."""

    wager: str
    seat: int
    kind: str  # "rejected" | "removed"
    reason: str
    t: float


#: a chip change after the lock-out, by (chip sensed, spot accepted): (what is recorded, why)
_LATE = {
    (True, False): ("rejected", "placed after lock-out"),
    (True, True): ("rejected", "chips added to an accepted wager"),
    (False, True): ("removed", "collected by the dealer"),
}


class BetBoard:
    def __init__(self, wagers: Sequence[str], seats: int, lights: object):
        self.wagers = tuple(wagers)
        self.seats = seats
        self.lights = lights
        self.level: dict[Spot, bool] = {(w, s): False for w in self.wagers for s in range(1, seats + 1)}
        self.state: dict[Spot, str] = {k: AWAITING for k in self.level}
        self.frozen = False
        #: wagers not playable now (a linked progressive whose link is lost, controller/play/linked.py):
        #: their sensors reject, their lights stay off, the lock-out accepts none of them
        self.closed: set[str] = set()

    def set_closed(self, wager: str, closed: bool) -> None:
        if closed:
            self.closed.add(wager)
        else:
            self.closed.discard(wager)
        if not self.frozen:
            for spot, on in self.level.items():
                if spot[0] == wager:
                    self.state[spot] = AWAITING if closed or not on else PLACED
                    self._show(spot)

    def spots(self) -> Iterable[Spot]:
        return self.level.keys()

    def _show(self, spot: Spot) -> None:
        self.lights.set(light_name(*spot), LIGHT_FOR[self.state[spot]])  # type: ignore[attr-defined]

    # ---- before lock-out -------------------------------------------------------------
    def open(self) -> None:
        """A new round: states and lights follow the sensors again."""
        self.frozen = False
        for spot, on in self.level.items():
            self.state[spot] = PLACED if on and spot[0] not in self.closed else AWAITING
            self._show(spot)

    def sensor(self, wager: str, seat: int, active: bool, t: float) -> Late | None:
        """A debounced sensor change.  Before lock-out the light follows at once;
        after it, the change is returned as a :class:`Late` for the table to record."""
        spot = (wager, seat)
        self.level[spot] = active
        if wager in self.closed and not self.frozen:
            return Late(wager, seat, "rejected", "linked progressive closed", t) if active else None
        if not self.frozen:
            self.state[spot] = PLACED if active else AWAITING
            self._show(spot)
            return None
        late = _LATE.get((active, self.state[spot] == ACCEPTED))
        return Late(wager, seat, *late, t) if late is not None else None

    # ---- the lock-out edge -----------------------------------------------------------
    def freeze(self) -> list[Spot]:
        """The accepted set at the lock-out edge: every spot with a chip sensed now."""
        self.frozen = True
        accepted = [
            spot
            for spot, on in sorted(self.level.items(), key=lambda kv: (kv[0][1], kv[0][0]))
            if on and spot[0] not in self.closed
        ]
        for spot in self.level:
            self.state[spot] = ACCEPTED if spot in accepted else AWAITING
        return accepted

    def show_frozen(self) -> None:
        """After the accepted set is durable: lights show the recorded states."""
        for spot in self.level:
            self._show(spot)

    def reject(self, late: Late) -> None:
        """A late chip is durable as rejected: flash it to the dealer (unless accepted)."""
        spot = (late.wager, late.seat)
        if self.frozen and self.state[spot] != ACCEPTED:
            self.state[spot] = REJECTED
            self._show(spot)

    def refuse(self, wager: str, seat: int) -> None:
        """A chip sensed at the lock-out whose wager the table cannot take (e.g. no base
        wager beside it, § 670a.7(e)): recorded as rejected, never accepted."""
        if (wager, seat) in self.state:
            self.state[(wager, seat)] = REJECTED

    def flash(self, wager: str, seat: int) -> None:
        self.lights.set(light_name(wager, seat), BLINK_FAST)  # type: ignore[attr-defined]

    def steady(self, wager: str, seat: int) -> None:
        self.lights.set(light_name(wager, seat), ON)  # type: ignore[attr-defined]

    def accepted(self, wager: str | None = None) -> list[Spot]:
        return [k for k, v in self.state.items() if v == ACCEPTED and (wager is None or k[0] == wager)]

    def snapshot(self) -> dict[str, str]:
        return {f"{w}.{s}": st for (w, s), st in sorted(self.state.items(), key=lambda kv: (kv[0][1], kv[0][0]))}


def restore_levels(board: BetBoard, is_active: Callable[[str], bool]) -> None:
    """Read the sensors' current levels at start-up (before the first round opens)."""
    for wager, seat in board.spots():
        board.level[(wager, seat)] = bool(is_active(input_name(wager, seat)))
