"""Settlement: every wager of the round settled by the game's rules
(§ 670a.11(e)-(h) and peers; the dice wagers right after the roll, § 621a.6(b)),
fixed pays recorded, percentage-of-meter hits held for a floorperson's validation
(§ 670a.11(h)(3)(i)(B)(III)) and paid one at a time in settlement order from the
meter as it then stands (§ 670a.12(d)(3)), and the round closed in the ledger
(§ 670a.11(j)).

:class:`Settling` is a component of :class:`controller.table.Table`.  It holds
no state of its own beyond the round's (the results, the pending hits, the
payouts live in :class:`~controller.round.RoundData`); it is given the table's
context (controller/context.py), the bet board (to light a winning progressive
spot) and the device registry (keyed hands when the shoe is out of order).
Runs on the reactor thread only.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.betting import BetBoard
from controller.context import TableContext
from controller.devices import DeviceRegistry
from controller.ledger import Record, StoredEvent
from controller.progressive import LEVEL
from controller.records import Kind
from controller.round import RoundData
from controller.rules.positions import seat_to_position
from controller.rules.settlement import WagerResult
from drivers import protocol as P


class Settling:
    def __init__(self, ctx: TableContext, board: BetBoard, devices: DeviceRegistry):
        self.ctx = ctx
        self.board = board
        self.devices = devices

    def result_records(self, rnd: RoundData, results: Sequence[WagerResult]) -> list[Record]:
        ctx = self.ctx
        recs = [
            ctx.rec(
                Kind.WAGER_RESULT,
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
            ctx.rec(Kind.PAYOUT, seat=r.seat, wager=r.wager, cents=r.amount + r.net, hand=r.hand, paid_by="table")
            for r in results
            if r.amount + r.net > 0
        ]
        if ctx.progressive:
            recs += ctx.progressive.fixed_records(results, ctx.round_no)
            # a progressive wager returned at settlement (a player voids his hand, § 688a.13(d)):
            # its meter contribution, credited at the count, is reversed like a void's
            # (procedures opt in with ``returned_reverses_meter``)
            back = {r.seat: r.amount for r in results if r.wager == "progressive" and r.outcome == "returned"}
            if back and ctx.proc.returned_reverses_meter and rnd.credited:
                recs += ctx.progressive.void_records(back, True, ctx.round_no, returned=False)
        return recs

    # ---- wagers settled right after the roll (§ 621a.6(b)) -------------------------------
    def phase_dice_wagers(self, rnd: RoundData) -> None:
        results = self.ctx.proc.after_roll(rnd)
        rnd.results += results
        self.ctx.commit(self.result_records(rnd, results), lambda _e: self.ctx.advance())

    # ---- the settlement phase -------------------------------------------------------------
    def phase_settle(self) -> None:
        ctx = self.ctx
        rnd = ctx.round
        if rnd is None or ctx.phase() is None:
            return
        if rnd.entered or rnd.unread or self.devices.alternative("shoe"):
            results = ctx.proc.settle_entered(rnd)
        else:
            results = ctx.proc.settle(rnd)
        settled_before = len(rnd.results)
        rnd.results = rnd.results + list(results)
        rnd.pending_hits = [r for r in results if r.is_meter_pay]
        recs = self.result_records(rnd, results)
        recs += [
            ctx.rec(
                Kind.HIT_PENDING,
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
        if ctx.progressive and ctx.progressive.linked and rnd.pending_hits:
            # claimed at once: the LAP orders the hits and decides each amount (docs/linked.md)
            recs += ctx.progressive.hit_claims(rnd.pending_hits, ctx.round_no)
        recs.append(
            ctx.rec(
                Kind.ROUND_SETTLED,
                results=len(rnd.results),
                earlier=settled_before,
                pending_hits=len(rnd.pending_hits),
            )
        )
        ctx.commit(recs, lambda evs: self._settled(rnd, evs))

    def _settled(self, rnd: RoundData, events: list[StoredEvent]) -> None:
        note_claims(rnd, events)
        self.after_settle(rnd)

    def after_settle(self, rnd: RoundData) -> None:
        """The settlement is durable (or recovered at start-up): light the winning
        progressive spots, then the first hit to validate or the round's close."""
        for r in rnd.results:
            if r.outcome == "win" and r.wager == "progressive" and ("progressive", r.seat) in self.board.state:
                (self.board.flash if r.is_meter_pay else self.board.steady)("progressive", r.seat)
        self.next_hit_or_complete(rnd)

    def next_hit_or_complete(self, rnd: RoundData) -> None:
        ctx = self.ctx
        if rnd.pending_hits:
            hit = rnd.pending_hits[0]
            # § 670a.11(h)(3)(i)(B)(II): the appropriate light illuminated; (III) floor validates
            if ctx.state != "floor_validation":
                ctx.trigger("hit_needs_validation")
            # the sign's legend numbers the hands of the progressive paytable (1 = the top award)
            hand = hit.hand or ""
            ctx.dev.sign.hand_light(ctx.proc.hand_light(hand), P.LIGHT_BLINK)
            ctx.dev.sign.seat_light(seat_to_position(hit.seat, ctx.profile.seats), P.LIGHT_BLINK)
            if ctx.link is not None and rnd.validated_by is not None:
                # validated before a restart (``hit.awaiting_lap``, restored): paid once answered
                ctx.emit("hit", seat=hit.seat, hand=hit.hand)
                self.pay_linked(rnd)
                return
            if ctx.link is not None and self._answer(rnd, hit) is None:
                ctx.dev.sign.message(f"HIT SEAT {hit.seat} {hand.upper()} - WAITING FOR LINK")
            else:
                ctx.dev.sign.message(f"HIT SEAT {hit.seat} {hand.upper()} - CALL FLOOR")
            ctx.emit("hit", seat=hit.seat, hand=hit.hand)
            return
        ctx.trigger("settled")
        # the procedure's state for the next round is written with the round's close (one transaction)
        ctx.proc.round_ended(rnd, void=False)
        meter = ctx.meter
        ctx.commit(
            [
                ctx.rec(Kind.ROUND_COMPLETE, meter=str(meter.value) if meter is not None else None),
                *ctx.carry_records(),
            ],
            lambda _e: self._round_done(rnd),
        )

    # ---- a floorperson's validation -----------------------------------------------------------
    def validate_hit(self, by: str) -> bool:
        """A floorperson validates the pending hit (key switch, or PIN at the console),
        § 670a.11(h)(3)(i)(B)(III).  Hits are paid one at a time in settlement order,
        each from the meter as it then stands (§ 670a.12(d)(3)); the order is recorded."""
        ctx = self.ctx
        rnd = ctx.round
        if ctx.state != "floor_validation" or rnd is None or not rnd.pending_hits:
            ctx.log.info("validate.ignored", state=ctx.state, by=by)
            return False
        if ctx.link is not None:
            if rnd.validated_by is not None:  # already validated (recorded): waiting for the LAP
                ctx.log.info("validate.already", by=by, validated_by=rnd.validated_by)
                return True
            rnd.validated_by = by
            return self.pay_linked(rnd, record=True)
        progressive, meter = ctx.progressive, ctx.meter
        if progressive is None or meter is None:  # a meter hit needs the meter it is paid from
            ctx.raise_tilt("controller", "a progressive hit is pending but the table has no progressive meter")
            return False
        hit = rnd.pending_hits.pop(0)
        order = len(rnd.payouts) + 1
        recs, cents = progressive.hit_payment(meter, hit, order, by, ctx.round_no)
        rnd.payouts.append({"seat": hit.seat, "hand": hit.hand, "cents": cents, "order": order})
        ctx.trigger("hit_validated")
        ctx.commit(recs, lambda _e: self._after_hit_paid(rnd))
        return True

    # ---- a linked hit: paid what the LAP answered ----------------------------------------------
    def _answer(self, rnd: RoundData, hit: WagerResult) -> tuple[int, int, int] | None:
        """(claim seq, LAP order, amount) once the LAP has answered the hit's claim."""
        link = self.ctx.link
        seq = rnd.link_hits.get((hit.seat, hit.hand or ""))
        if link is None or seq is None or seq not in link.answers:
            return None
        order, amount = link.answers[seq]
        return seq, order, amount

    def pay_linked(self, rnd: RoundData, record: bool = False) -> bool:
        """Pay the first pending linked hit when it is both validated by a floorperson and
        answered by the LAP (in either order); until then it stays pending.  A validation given
        before the answer (``record``) is a ledger record, ``hit.awaiting_lap``, durable before
        the sign says so: start-up recovery restores it (controller/recovery.py), so a restart
        in the wait does not ask the floor again (§ 670a.11(h)(3)(i)(B)(III))."""
        ctx = self.ctx
        if ctx.state != "floor_validation" or not rnd.pending_hits or rnd.validated_by is None:
            return False
        hit = rnd.pending_hits[0]
        answer = self._answer(rnd, hit)
        progressive = ctx.progressive
        if progressive is None:
            ctx.raise_tilt("controller", "a linked hit is pending but the table has no progressive")
            return False
        if answer is None:
            by = rnd.validated_by
            ctx.log.info("hit.awaiting_lap", seat=hit.seat, hand=hit.hand, by=by)
            if not record:  # already recorded (before a restart, or at the validation)
                self._show_validated(rnd, hit)
                return True
            claim = rnd.link_hits.get((hit.seat, hit.hand or ""))
            ctx.commit(
                [ctx.rec(Kind.HIT_AWAITING_LAP, seat=hit.seat, hand=hit.hand, by=by, hit_seq=claim)],
                lambda _e: self._show_validated(rnd, hit),
            )
            return True
        seq, lap_order, cents = answer
        rnd.pending_hits.pop(0)
        by, rnd.validated_by = rnd.validated_by, None
        order = len(rnd.payouts) + 1
        recs = progressive.linked_payment(hit, order, by, seq, cents, lap_order, ctx.round_no)
        rnd.payouts.append({"seat": hit.seat, "hand": hit.hand, "cents": cents, "order": order})
        ctx.trigger("hit_validated")
        ctx.commit(recs, lambda _e: self._after_hit_paid(rnd))
        return True

    def _show_validated(self, rnd: RoundData, hit: WagerResult) -> None:
        """The sign, once the validation is durable, if the hit still waits for the LAP."""
        if self.ctx.state == "floor_validation" and rnd.pending_hits and rnd.pending_hits[0] is hit:
            if rnd.validated_by is not None and self._answer(rnd, hit) is None:
                self.ctx.dev.sign.message(f"HIT SEAT {hit.seat} VALIDATED - WAITING FOR LINK")

    def on_answer(self) -> None:
        """The LAP answered a claim: pay it if validated, else tell the floor to come."""
        rnd = self.ctx.round
        if rnd is None or self.ctx.state != "floor_validation" or not rnd.pending_hits:
            return
        if rnd.validated_by is not None:
            self.pay_linked(rnd)
        else:
            hit = rnd.pending_hits[0]
            if self._answer(rnd, hit) is not None:
                self.ctx.dev.sign.message(f"HIT SEAT {hit.seat} {(hit.hand or '').upper()} - CALL FLOOR")

    def _after_hit_paid(self, rnd: RoundData) -> None:
        ctx = self.ctx
        paid = rnd.payouts[-1] if rnd.payouts else None
        if paid is not None:
            ctx.emit("hit_paid", round=ctx.round_no, **paid)
        ctx.show_meters()
        ctx.dev.sign.hand_light(0, P.LIGHT_OFF)
        self.next_hit_or_complete(rnd)

    def _round_done(self, rnd: RoundData) -> None:
        ctx = self.ctx
        if ctx.state != "round_complete":
            return
        ctx.emit("round", round=rnd.number, data=rnd, meter=ctx.meters.get(LEVEL))
        ctx.trigger("next_round")


def note_claims(rnd: RoundData, events: Sequence[StoredEvent]) -> None:
    """Remember each durable hit claim's seq: the LAP answers by it."""
    for e in events:
        if e.kind == Kind.LINK_HIT:
            rnd.link_hits[(int(e.data["seat"]), str(e.data["hand"] or ""))] = e.seq
