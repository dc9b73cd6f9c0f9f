"""Between-rounds actions of the floorperson, the technician and the dealer, as a
mixin of :class:`controller.table.Table`: a device marked out of order and back in
service (§ 670a.13(n)), a reshuffle ordered by a floorperson (§ 670a.5(a),
§ 686a.5(a),(f)) and a new dealer at the table (§ 686a.7(c)).  Each is recorded
before it takes effect; each is refused, changing nothing, once wagers are locked
out.  Runs on the reactor thread only.
"""

from __future__ import annotations

from typing import Any

BETWEEN_ROUNDS = ("open_for_wagers", "tilt", "self_test")


class FloorMixin:
    # provided by Table
    state: str
    proc: Any
    dev: Any
    out_of_order: dict[str, str]
    deck_ready: bool
    shuffled_once: bool

    def mark_out_of_order(self, device: str, by: str, alternative: str, reason: str = "") -> None:
        """§ 670a.13(n): a device that cannot be used is marked out of order before any
        other method is used; the alternative is recorded (e.g. the RNG for the shaker,
        § 670a.5(i)(2))."""
        allowed = {"shaker": ("rng",), "shoe": ("manual",), "sign": ("none",)}
        if device not in allowed:
            raise ValueError(f"{device!r} is not a device that can be marked out of order ({', '.join(allowed)})")
        if alternative not in allowed[device]:
            raise ValueError(f"{alternative!r} is not an alternative for the {device} ({', '.join(allowed[device])})")
        if self.state not in BETWEEN_ROUNDS:
            raise ValueError("a device can be marked out of order only between rounds")
        self.out_of_order[device] = alternative
        self.commit([self.rec("device.out_of_order", device=device, alternative=alternative, by=by, reason=reason)])

    def mark_in_service(self, device: str, by: str) -> None:
        """A repaired device is put back in service (recorded); its alternative ends."""
        if device not in self.out_of_order:
            raise ValueError(f"the {device} is not out of order")
        if self.state not in BETWEEN_ROUNDS:
            raise ValueError("a device can be put back in service only between rounds")
        del self.out_of_order[device]
        self.commit(
            [self.rec("device.in_service", device=device, by=by)],
            (lambda _e: self._shuffle_before_next_deal()) if device == "shoe" else None,
        )

    def _shuffle_before_next_deal(self) -> None:
        """The shoe shuffles before it deals again (the cards were dealt by hand, or a
        floorperson ordered it): now if wagers are open (the lock-out waits for the
        shuffle), else when the next round opens."""
        self.shuffled_once = False
        if self.state == "open_for_wagers":
            self.deck_ready = False
            self.dev.shoe.shuffle()

    def floor_reshuffle(self, by: str) -> None:
        """A floorperson (or above) directs a reshuffle (§ 670a.5(a); § 686a.5(a),(f)): before
        the next deal the shoe shuffles, and a multi-deck shoe burns its first card
        (§ 686a.7(c)).  Between rounds only."""
        if self.state not in BETWEEN_ROUNDS:
            raise ValueError(f"a reshuffle is ordered between rounds only (state {self.state})")
        manual = self.out_of_order.get("shoe") == "manual"
        self.commit(
            [self.rec("shoe.reshuffle_ordered", by=by, manual=manual)],
            None if manual else (lambda _e: self._shuffle_before_next_deal()),
        )

    def new_dealer(self, by: str) -> str | None:
        """A new dealer comes to the table: recorded, and the procedure told (Over/Under's
        new dealer burns one card before dealing, § 686a.7(c)).  Between rounds only."""
        if self.state not in BETWEEN_ROUNDS:
            raise ValueError(f"a new dealer is recorded between rounds only (state {self.state})")
        note = self.proc.new_dealer()
        self.commit([self.rec("dealer.changed", by=by, **({"note": note} if note else {}))])
        return note
