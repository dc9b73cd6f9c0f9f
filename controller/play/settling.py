"""Settlement: every wager of the round settled by the game's rules
(§ 670a.11(e)-(h) and peers; the dice wagers right after the roll, § 621a.6(b)),
fixed pays recorded, percentage-of-meter hits held for a floorperson's validation
(§ 670a.11(h)(3)(i)(B)(III)) and paid one at a time in settlement order from the
meter as it then stands (§ 670a.12(d)(3)), and the round closed in the ledger
(§ 670a.11(j)).

:class:`Settling` is a component of :class:`controller.play.table.Table`.  It owns what was
settled in the round (:class:`~controller.games.round.Settled`: the results, the pending
hits, the payouts, a linked table's claims; the only writer).  It is given the roles it
uses (controller/play/context.py), the sign, the winning spots' lights (controller/play/wagering.py),
which devices are out of order (keyed hands when the shoe is) and the link to the LAP
(controller/play/linked.py; a :class:`~controller.play.context.NullLink` when the table is not
linked).  Runs on the reactor thread only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from controller.books.ledger import Record, StoredEvent
from controller.core.records import Kind
from controller.games.round import Payout, Round, Settled, SettledView
from controller.play.bundles import Shared
from controller.play.context import Link, carry_records
from controller.play.dealing import Alternatives
from controller.play.machine import TableState
from controller.play.progressive import LapAnswer, ProgressiveSystem
from controller.rules.positions import seat_to_position
from controller.rules.settlement import WagerResult
from drivers import protocol as P
from drivers.sign import Sign


class WinLights(Protocol):
    """The winning progressive spots lit (controller/play/wagering.py)."""

    def light_wins(self, results: Sequence[WagerResult]) -> None: ...


class Settling:
    def __init__(
        self,
        shared: Shared,
        *,
        sign: Sign,
        lights: WinLights,
        devices: Alternatives,
        link: Link,
        linked: bool,
    ):
        self.books, self.machine, self.game, self.rounds = shared.books, shared.machine, shared.game, shared.rounds
        self.sign, self.lights, self.devices = sign, lights, devices
        #: the LAP; ``linked``: hits are paid what it answers (docs/linked.md), else from the meter
        self.link, self.linked = link, linked
        self.raise_tilt, self.emit = shared.raise_tilt, shared.emit
        self.show_meters, self.log = shared.show_meters, shared.log
        self._s = Settled()

    # ---- the round's record -------------------------------------------------------------
    @property
    def record(self) -> SettledView:
        """What was settled in the round in play (read-only)."""
        return self._s

    def new_round(self) -> SettledView:
        self._s = Settled()
        return self._s

    def restore(
        self, results: Iterable[WagerResult], pending: Iterable[WagerResult], validated_by: str | None
    ) -> SettledView:
        """A settled round recovered at start-up, still owing validated hits (controller/play/recovery.py)."""
        self._s = Settled(results=list(results), pending_hits=list(pending), validated_by=validated_by)
        return self._s

    def note_claims(self, events: Sequence[StoredEvent]) -> None:
        """Remember each durable hit claim's seq: the LAP answers by it."""
        for e in events:
            if e.kind == Kind.LINK_HIT:
                self._s.link_hits[(int(e.data["seat"]), str(e.data["hand"] or ""))] = e.seq

    # ---- records ------------------------------------------------------------------------
    def result_records(self, rnd: Round, results: Sequence[WagerResult]) -> list[Record]:
        books, progressive = self.books, self.game.progressive
        recs = [
            books.rec(
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
            books.rec(Kind.PAYOUT, seat=r.seat, wager=r.wager, cents=r.amount + r.net, hand=r.hand, paid_by="table")
            for r in results
            if r.amount + r.net > 0
        ]
        if progressive:
            recs += self._progressive_records(progressive, rnd, results)
        return recs

    def _progressive_records(
        self, progressive: ProgressiveSystem, rnd: Round, results: Sequence[WagerResult]
    ) -> list[Record]:
        """The progressive's fixed pays, and the meter contributions of wagers returned at settlement."""
        round_no = self.books.round_no
        recs = list(progressive.fixed_records(results, round_no))
        # a progressive wager returned at settlement (a player voids his hand, § 688a.13(d)):
        # its meter contribution, credited at the count, is reversed like a void's
        # (procedures opt in with ``returned_reverses_meter``)
        back = {r.seat: r.amount for r in results if r.wager == "progressive" and r.outcome == "returned"}
        if back and self.game.proc.returned_reverses_meter and rnd.credited:
            recs += progressive.void_records(back, True, round_no, returned=False)
        return recs

    # ---- wagers settled right after the roll (§ 621a.6(b)) -------------------------------
    def phase_dice_wagers(self, rnd: Round) -> None:
        results = self.game.proc.after_roll(rnd)
        self._s.results += results
        self.books.commit(self.result_records(rnd, results), lambda _e: self.machine.advance())

    # ---- the settlement phase -------------------------------------------------------------
    def phase_settle(self) -> None:
        rnd = self.rounds.round
        if rnd is None or self.machine.phase() is None:
            return
        proc, s = self.game.proc, self._s
        if rnd.entered or rnd.unread or self.devices.alternative("shoe"):
            results = proc.settle_entered(rnd)
        else:
            results = proc.settle(rnd)
        settled_before = len(s.results)
        s.results = s.results + list(results)
        s.pending_hits = [r for r in results if r.is_meter_pay]
        recs = self.result_records(rnd, results) + self._hit_records()
        recs.append(
            self.books.rec(
                Kind.ROUND_SETTLED, results=len(s.results), earlier=settled_before, pending_hits=len(s.pending_hits)
            )
        )
        self.books.commit(recs, lambda evs: self._settled(rnd, evs))

    def _hit_records(self) -> list[Record]:
        """The hits held for a floorperson, in settlement order; a linked table's claims."""
        books, progressive, pending = self.books, self.game.progressive, self._s.pending_hits
        recs = [
            books.rec(
                Kind.HIT_PENDING,
                seat=r.seat,
                hand=r.hand,
                fraction=str(r.meter_fraction),
                cents=r.amount,
                paytable=r.paytable,
                pays=r.pays,
                order=i + 1,
            )
            for i, r in enumerate(pending)
        ]
        if progressive and progressive.linked and pending:
            # claimed at once: the LAP orders the hits and decides each amount (docs/linked.md)
            recs += progressive.hit_claims(pending, books.round_no)
        return recs

    def _settled(self, rnd: Round, events: list[StoredEvent]) -> None:
        self.note_claims(events)
        self.after_settle(rnd)

    def after_settle(self, rnd: Round) -> None:
        """The settlement is durable (or recovered at start-up): light the winning
        progressive spots, then the first hit to validate or the round's close."""
        self.lights.light_wins(self._s.results)
        self.next_hit_or_complete(rnd)

    def next_hit_or_complete(self, rnd: Round) -> None:
        if self.machine.state == TableState.TILT:
            # a fault came while the settlement was being written: the table stays stopped, and the
            # technician's clear completes the round or hands its hits to the floorperson
            # (controller/play/faults.py ``clear``), so nothing here is done twice
            return
        if self._s.pending_hits:
            self._show_hit(self._s.pending_hits[0])
            return
        self.machine.trigger("settled")
        # the procedure's state for the next round is written with the round's close (one transaction)
        proc, books = self.game.proc, self.books
        proc.round_ended(rnd, void=False)
        meter = books.meter
        recs = [books.rec(Kind.ROUND_COMPLETE, meter=str(meter.value) if meter is not None else None)]
        books.commit(recs + carry_records(books, proc), lambda _e: self._round_done(rnd))

    def _show_hit(self, hit: WagerResult) -> None:
        # § 670a.11(h)(3)(i)(B)(II): the appropriate light illuminated; (III) floor validates
        if self.machine.state != TableState.FLOOR_VALIDATION:
            self.machine.trigger("hit_needs_validation")
        # the sign's legend numbers the hands of the progressive paytable (1 = the top award)
        hand = hit.hand or ""
        self.sign.hand_light(self.game.proc.hand_light(hand), P.LIGHT_BLINK)
        self.sign.seat_light(seat_to_position(hit.seat, self.game.profile.seats), P.LIGHT_BLINK)
        if self.linked and self._s.validated_by is not None:
            # validated before a restart (``hit.awaiting_lap``, restored): paid once answered
            self.emit("hit", seat=hit.seat, hand=hit.hand)
            self.pay_linked()
            return
        if self.linked and self._answer(hit) is None:
            self.sign.message(f"HIT SEAT {hit.seat} {hand.upper()} - WAITING FOR LINK")
        else:
            self.sign.message(f"HIT SEAT {hit.seat} {hand.upper()} - CALL FLOOR")
        self.emit("hit", seat=hit.seat, hand=hit.hand)

    # ---- a floorperson's validation -----------------------------------------------------------
    def validate_hit(self, by: str) -> bool:
        """A floorperson validates the pending hit (key switch, or PIN at the console),
        § 670a.11(h)(3)(i)(B)(III).  Hits are paid one at a time in settlement order,
        each from the meter as it then stands (§ 670a.12(d)(3)); the order is recorded."""
        rnd, s, state = self.rounds.round, self._s, self.machine.state
        if state != TableState.FLOOR_VALIDATION or rnd is None or not s.pending_hits:
            self.log.info("validate.ignored", state=state, by=by)
            return False
        if self.linked:
            if s.validated_by is not None:  # already validated (recorded): waiting for the LAP
                self.log.info("validate.already", by=by, validated_by=s.validated_by)
                return True
            s.validated_by = by
            return self.pay_linked(record=True)
        progressive, meter = self.game.progressive, self.books.meter
        if progressive is None or meter is None:  # a meter hit needs the meter it is paid from
            self.raise_tilt("controller", "a progressive hit is pending but the table has no progressive meter")
            return False
        hit = s.pending_hits.pop(0)
        order = len(s.payouts) + 1
        recs, cents = progressive.hit_payment(meter, hit, order, by, self.books.round_no)
        s.payouts.append(Payout(hit.seat, hit.hand, cents, order))
        self.machine.trigger("hit_validated")
        self.books.commit(recs, lambda _e: self._after_hit_paid(rnd))
        return True

    # ---- a linked hit: paid what the LAP answered ----------------------------------------------
    def _answer(self, hit: WagerResult) -> tuple[int, int, int] | None:
        """(claim seq, LAP order, amount) once the LAP has answered the hit's claim."""
        seq = self._s.link_hits.get((hit.seat, hit.hand or ""))
        if not self.linked or seq is None or seq not in self.link.answers:
            return None
        order, amount = self.link.answers[seq]
        return seq, order, amount

    def pay_linked(self, record: bool = False) -> bool:
        """Pay the first pending linked hit when it is both validated by a floorperson and
        answered by the LAP (in either order); until then it stays pending.  A validation given
        before the answer (``record``) is a ledger record, ``hit.awaiting_lap``, durable before
        the sign says so: start-up recovery restores it (controller/play/recovery.py), so a restart
        in the wait does not ask the floor again (§ 670a.11(h)(3)(i)(B)(III))."""
        rnd, s = self.rounds.round, self._s
        if self.machine.state != TableState.FLOOR_VALIDATION or rnd is None or not s.pending_hits:
            return False
        if s.validated_by is None:
            return False
        hit = s.pending_hits[0]
        answer = self._answer(hit)
        progressive = self.game.progressive
        if progressive is None:
            self.raise_tilt("controller", "a linked hit is pending but the table has no progressive")
            return False
        if answer is None:
            self._await_lap(hit, s.validated_by, record)
            return True
        seq, lap_order, cents = answer
        s.pending_hits.pop(0)
        by, s.validated_by = s.validated_by, None
        order = len(s.payouts) + 1
        answered = LapAnswer(seq, lap_order, cents, self.link.proofs.get(seq))
        recs = progressive.linked_payment(hit, order, by, answered, self.books.round_no)
        s.payouts.append(Payout(hit.seat, hit.hand, cents, order))
        self.machine.trigger("hit_validated")
        self.books.commit(recs, lambda _e: self._after_hit_paid(rnd))
        return True

    def _await_lap(self, hit: WagerResult, by: str, record: bool) -> None:
        """Validated, not yet answered: recorded (``hit.awaiting_lap``) once, then shown."""
        self.log.info("hit.awaiting_lap", seat=hit.seat, hand=hit.hand, by=by)
        if not record:  # already recorded (before a restart, or at the validation)
            self._show_validated(hit)
            return
        claim = self._s.link_hits.get((hit.seat, hit.hand or ""))
        self.books.commit(
            [self.books.rec(Kind.HIT_AWAITING_LAP, seat=hit.seat, hand=hit.hand, by=by, hit_seq=claim)],
            lambda _e: self._show_validated(hit),
        )

    def _show_validated(self, hit: WagerResult) -> None:
        """The sign, once the validation is durable, if the hit still waits for the LAP."""
        s = self._s
        if self.machine.state == TableState.FLOOR_VALIDATION and s.pending_hits and s.pending_hits[0] is hit:
            if s.validated_by is not None and self._answer(hit) is None:
                self.sign.message(f"HIT SEAT {hit.seat} VALIDATED - WAITING FOR LINK")

    def on_answer(self) -> None:
        """The LAP answered a claim: pay it if validated, else tell the floor to come."""
        s = self._s
        if self.rounds.round is None or self.machine.state != TableState.FLOOR_VALIDATION or not s.pending_hits:
            return
        if s.validated_by is not None:
            self.pay_linked()
        else:
            hit = s.pending_hits[0]
            if self._answer(hit) is not None:
                self.sign.message(f"HIT SEAT {hit.seat} {(hit.hand or '').upper()} - CALL FLOOR")

    def _after_hit_paid(self, rnd: Round) -> None:
        paid = self._s.payouts[-1] if self._s.payouts else None
        if paid is not None:
            self.emit("hit_paid", round=self.books.round_no, **paid.as_dict())
        self.show_meters()
        self.sign.hand_light(0, P.LIGHT_OFF)
        self.next_hit_or_complete(rnd)

    def _round_done(self, rnd: Round) -> None:
        if self.machine.state != TableState.ROUND_COMPLETE:
            return
        self.emit("round", round=rnd.number, data=rnd, meter=self.books.meter)
        self.machine.trigger("next_round")
