"""Settlement, as a mixin of :class:`controller.table.Table`: every wager of the
round settled by the game's rules (§ 670a.11(e)-(h) and peers), fixed pays
recorded, percentage-of-meter hits held for a floorperson's validation
(§ 670a.11(h)(3)(i)(B)(III)) and paid one at a time in settlement order from
the meter as it then stands (§ 670a.12(d)(3)), and the round closed in the
ledger (§ 670a.11(j)).  Runs on the reactor thread only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from controller.ledger import Record
from controller.progressive import LEVEL
from controller.rules.positions import seat_to_position
from controller.rules.settlement import WagerResult
from drivers import protocol as P


class SettlingMixin:
    # provided by Table
    round: Any
    state: str
    proc: Any
    progressive: Any
    board: Any
    dev: Any
    meters: dict[str, Any]

    def _result_records(self, results: Sequence[WagerResult]) -> list[Record]:
        recs = [
            self.rec(
                "wager.result",
                seat=r.seat,
                wager=r.wager,
                cents=r.amount,
                outcome=r.outcome,
                net=r.net,
                hand=r.hand,
                pays=r.pays,
                commission=r.commission or None,
                detail=r.detail,
            )
            for r in results
        ]
        # what the table hands back: the wager and the win, or the wager alone on a push/return
        recs += [
            self.rec("payout", seat=r.seat, wager=r.wager, cents=r.amount + r.net, hand=r.hand, paid_by="table")
            for r in results
            if r.amount + r.net > 0
        ]
        if self.progressive:
            recs += self.progressive.fixed_records(results, self.round_no)
            # a progressive wager returned at settlement (a player voids his hand, § 688a.13(d)):
            # its meter contribution, credited at the count, is reversed like a void's
            # (procedures opt in with ``returned_reverses_meter``)
            back = {r.seat: r.amount for r in results if r.wager == "progressive" and r.outcome == "returned"}
            if (
                back
                and getattr(self.proc, "returned_reverses_meter", False)
                and self.round is not None
                and self.round.credited
            ):
                recs += self.progressive.void_records(back, True, self.round_no, returned=False)
        return recs

    def _phase_settle(self) -> None:
        rnd = self.round
        if rnd is None or self.proc.phase(self.state) is None:
            return
        if rnd.entered or rnd.unread or self.out_of_order.get("shoe"):
            results = self.proc.settle_entered(rnd)
        else:
            results = self.proc.settle(rnd)
        settled_before = len(rnd.results)
        rnd.results = rnd.results + list(results)
        rnd.pending_hits = [r for r in results if r.is_meter_pay]
        recs = self._result_records(results)
        recs += [
            self.rec(
                "hit.pending",
                seat=r.seat,
                hand=r.hand,
                fraction=str(r.meter_fraction),
                cents=r.amount,
                paytable=r.paytable,
                pays=r.pays,
                order=i + 1,
            )
            for i, r in enumerate(rnd.pending_hits)
        ]
        recs.append(
            self.rec(
                "round.settled", results=len(rnd.results), earlier=settled_before, pending_hits=len(rnd.pending_hits)
            )
        )
        self.commit(recs, lambda _e: self._after_settle())

    def _after_settle(self) -> None:
        rnd = self.round
        for r in rnd.results:
            if r.outcome == "win" and r.wager == "progressive" and ("progressive", r.seat) in self.board.state:
                (self.board.flash if r.is_meter_pay else self.board.steady)("progressive", r.seat)
        self._next_hit_or_complete()

    def _next_hit_or_complete(self) -> None:
        rnd = self.round
        if rnd.pending_hits:
            hit = rnd.pending_hits[0]
            # § 670a.11(h)(3)(i)(B)(II): the appropriate light illuminated; (III) floor validates
            if self.state != "floor_validation":
                self.hit_needs_validation()
            # the sign's legend numbers the hands of the progressive paytable (1 = the top award)
            light = self.proc.hand_light(hit.hand)
            self.dev.sign.hand_light(light, P.LIGHT_BLINK)
            self.dev.sign.seat_light(seat_to_position(hit.seat, self.seats), P.LIGHT_BLINK)
            self.dev.sign.message(f"HIT SEAT {hit.seat} {hit.hand.upper()} - CALL FLOOR")
            self._emit("hit", seat=hit.seat, hand=hit.hand)
            return
        self.settled()
        # the procedure's state for the next round is written with the round's close (one transaction)
        self.proc.round_ended(rnd, void=False)
        self.commit(
            [
                self.rec("round.complete", meter=str(self.meters[LEVEL].value) if LEVEL in self.meters else None),
                *self._carry_records(),
            ],
            lambda _e: self._round_done(),
        )

    def validate_hit(self, by: str) -> bool:
        """A floorperson validates the pending hit (key switch, or PIN at the console),
        § 670a.11(h)(3)(i)(B)(III).  Hits are paid one at a time in settlement order,
        each from the meter as it then stands (§ 670a.12(d)(3)); the order is recorded."""
        rnd = self.round
        if self.state != "floor_validation" or rnd is None or not rnd.pending_hits:
            self.log.info("validate.ignored", state=self.state, by=by)
            return False
        hit = rnd.pending_hits.pop(0)
        order = len(rnd.payouts) + 1
        recs, cents = self.progressive.hit_payment(self.meters[LEVEL], hit, order, by, self.round_no)
        rnd.payouts.append({"seat": hit.seat, "hand": hit.hand, "cents": cents, "order": order})
        self.hit_validated()
        self.commit(recs, lambda _e: self._after_hit_paid())
        return True

    def _after_hit_paid(self) -> None:
        paid = self.round.payouts[-1] if self.round and self.round.payouts else None
        if paid is not None:
            self._emit("hit_paid", round=self.round_no, **paid)
        self._show_meters()
        self.dev.sign.hand_light(0, P.LIGHT_OFF)
        self._next_hit_or_complete()

    def _round_done(self) -> None:
        if self.state != "round_complete":
            return
        rnd = self.round
        self._emit("round", round=rnd.number, data=rnd, meter=self.meters.get(LEVEL))
        self.next_round()
