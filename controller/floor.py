"""Between-rounds actions of the floorperson, the technician and the dealer: a
device marked out of order and back in service (§ 670a.13(n)), a reshuffle
ordered by a floorperson (§ 670a.5(a), § 686a.5(a),(f)) and a new dealer at the
table (§ 686a.7(c)).  Each is recorded before it takes effect; each is refused,
changing nothing, once wagers are locked out.

:class:`Floor` is a component of :class:`controller.table.Table`.  It changes the
device registry's out-of-order marks (controller/devices.py ``DeviceRegistry``)
and asks dealing (controller/dealing.py) for a shuffle before the next deal.
Runs on the reactor thread only.
"""

from __future__ import annotations

from controller.context import TableContext
from controller.dealing import Dealing
from controller.devices import ALTERNATIVES, DeviceRegistry
from controller.records import Kind

BETWEEN_ROUNDS = ("open_for_wagers", "tilt", "self_test")


class Floor:
    def __init__(self, ctx: TableContext, devices: DeviceRegistry, dealing: Dealing):
        self.ctx = ctx
        self.devices = devices
        self.dealing = dealing

    def mark_out_of_order(self, device: str, by: str, alternative: str, reason: str = "") -> None:
        """§ 670a.13(n): a device that cannot be used is marked out of order before any
        other method is used; the alternative is recorded (e.g. the RNG for the shaker,
        § 670a.5(i)(2))."""
        ctx = self.ctx
        if device not in ALTERNATIVES:
            raise ValueError(f"{device!r} is not a device that can be marked out of order ({', '.join(ALTERNATIVES)})")
        if alternative not in ALTERNATIVES[device]:
            raise ValueError(
                f"{alternative!r} is not an alternative for the {device} ({', '.join(ALTERNATIVES[device])})"
            )
        if ctx.state not in BETWEEN_ROUNDS:
            raise ValueError("a device can be marked out of order only between rounds")
        self.devices.out_of_order[device] = alternative
        ctx.commit([ctx.rec(Kind.DEVICE_OUT_OF_ORDER, device=device, alternative=alternative, by=by, reason=reason)])

    def mark_in_service(self, device: str, by: str) -> None:
        """A repaired device is put back in service (recorded); its alternative ends."""
        ctx = self.ctx
        if device not in self.devices.out_of_order:
            raise ValueError(f"the {device} is not out of order")
        if ctx.state not in BETWEEN_ROUNDS:
            raise ValueError("a device can be put back in service only between rounds")
        del self.devices.out_of_order[device]
        ctx.commit(
            [ctx.rec(Kind.DEVICE_IN_SERVICE, device=device, by=by)],
            (lambda _e: self.dealing.shuffle_before_next_deal()) if device == "shoe" else None,
        )

    def floor_reshuffle(self, by: str) -> None:
        """A floorperson (or above) directs a reshuffle (§ 670a.5(a); § 686a.5(a),(f)): before
        the next deal the shoe shuffles, and a multi-deck shoe burns its first card
        (§ 686a.7(c)).  Between rounds only."""
        ctx = self.ctx
        if ctx.state not in BETWEEN_ROUNDS:
            raise ValueError(f"a reshuffle is ordered between rounds only (state {ctx.state})")
        manual = self.devices.alternative("shoe") == "manual"
        ctx.commit(
            [ctx.rec(Kind.SHOE_RESHUFFLE_ORDERED, by=by, manual=manual)],
            None if manual else (lambda _e: self.dealing.shuffle_before_next_deal()),
        )

    def new_dealer(self, by: str) -> str | None:
        """A new dealer comes to the table: recorded, and the procedure told (Over/Under's
        new dealer burns one card before dealing, § 686a.7(c)).  Between rounds only."""
        ctx = self.ctx
        if ctx.state not in BETWEEN_ROUNDS:
            raise ValueError(f"a new dealer is recorded between rounds only (state {ctx.state})")
        note = ctx.proc.new_dealer()
        ctx.commit([ctx.rec(Kind.DEALER_CHANGED, by=by, **({"note": note} if note else {}))])
        return note
