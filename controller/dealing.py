"""The dealing steps of a round, as a mixin of :class:`controller.table.Table`:
the starting position from the shaker (§ 670a.5(i)(1); no roll → reshake,
§ 670a.13(a),(b)), the automated shoe's stacks (§ 670a.10(c)), the count of the
cards left (§ 670a.10(d),(e)) and the shoe's irregularities (§ 670a.13(f),(h),
(k),(m)).  Runs on the reactor thread only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.reactor import Event
from controller.rules.cards import cards_str
from controller.rules.positions import delivery_order, position_to_seat, start_position
from drivers import protocol as P

SHAKE_MIN_S = 5.0      # § 621a.2(f)(2): shaken for at least five seconds
DEVICE_TIMEOUT_S = 30.0


class DealingMixin:
    # provided by Table
    round: Any
    state: str
    proc: Any
    profile: Any
    seats: int
    dev: Any

    # ---- starting position -------------------------------------------------------------
    def _begin_start_position(self) -> None:
        if self.state != "starting_position":
            return
        self._show_meters()
        if self.profile.start_method == "shaker":
            self.dev.shaker.arm(P.DEALER)
            self.dev.shaker.activate(P.DEALER)
            self._set_timer(DEVICE_TIMEOUT_S, "shaker", "no dice result")
        else:
            raise NotImplementedError("RNG starting position (§ 670a.5(i)(2)) is not wired yet")

    def _on_shaker(self, ev: Event) -> None:
        msg = ev.data["msg"]
        rnd = self.round
        if msg == "ERROR":
            self.raise_tilt("shaker", f"shaker error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg in ("STATUS", "SHAKING", "LID") or self.state != "starting_position" or rnd is None:
            return
        if msg == "NO_ROLL" or (msg == "RESULT" and ev.data["shake_ms"] < SHAKE_MIN_S * 1000):
            # § 670a.13(a),(b); § 621a.10(a): no roll -> reshake
            reason = ev.data.get("reason", P.NO_ROLL_SHORT_SHAKE) if msg == "NO_ROLL" else P.NO_ROLL_SHORT_SHAKE
            rnd.no_rolls += 1
            self._cancel_timer()
            self.no_roll()
            self.commit([self.rec("dice.no_roll", reason=reason, shake_ms=ev.data.get("shake_ms"))],
                        lambda _e: self._begin_start_position())
            return
        dice = (ev.data["d1"], ev.data["d2"], ev.data["d3"])
        if not all(1 <= d <= 6 for d in dice) or ev.data["red"] > 2:
            self.raise_tilt("shaker", f"impossible dice result {dice} red={ev.data['red']}")
            return
        self._cancel_timer()
        rnd.dice, rnd.red = dice, ev.data["red"]
        rnd.start = start_position(sum(dice), self.profile.positions)   # § 670a.5(i)(1)(iii)
        self.start_determined()
        self.commit([self.rec("dice", dice=list(dice), red=rnd.red, total=sum(dice), start=rnd.start,
                              shake_ms=ev.data["shake_ms"])], lambda _e: self._begin_dispense())

    # ---- the shoe ----------------------------------------------------------------------
    def _begin_dispense(self) -> None:
        rnd = self.round
        if self.state != "dispensing" or rnd is None:
            return
        self.dev.sign.seat_light(rnd.start, P.LIGHT_ON)
        self.dev.sign.message(f"START POSITION {rnd.start}")
        self._emit("start", position=rnd.start, dice=rnd.dice)
        self._dispense_next()

    def _dispense_next(self) -> None:
        n = len(self.round.stacks) + 1
        self.dev.shoe.dispense(n, self.proc.plan.cards_per_stack)
        self._set_timer(DEVICE_TIMEOUT_S, "shoe", f"stack {n} not dispensed")

    def _on_shoe(self, ev: Event) -> None:
        msg = ev.data["msg"]
        rnd = self.round
        if msg == "SHUFFLED":
            self.deck_ready = ev.data["cards"] == self.proc.plan.deck
            if not self.deck_ready:
                self.raise_tilt("shoe", f"shoe reports {ev.data['cards']} cards after shuffle, "
                                        f"expected {self.proc.plan.deck}")
            return
        if msg == "ERROR":
            self.raise_tilt("shoe", f"shoe error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg == "STATUS":
            return
        if rnd is None or self.state not in ("dispensing", "stub_check"):
            self.log.warning("shoe.unexpected", msg=msg, state=self.state)
            return
        if msg == "JAM":
            # § 670a.13(m): jam / failure to deal all cards -> void, return wagers, reshuffle
            self._void(f"shoe jammed at stack {ev.data['stack']} (§ 670a.13(m))")
        elif msg == "FACE_UP":
            rnd.face_up += 1
            if rnd.face_up > 1:   # § 670a.13(f): more than one face-up card -> void, reshuffle
                self._void(f"{rnd.face_up} cards found face up while dealing (§ 670a.13(f))")
            else:                 # § 670a.13(f): one face-up card is not used (burned)
                self.commit([self.rec("card.burned", stack=ev.data["stack"], card=ev.data["card"])])
        elif msg == "STACK" and self.state == "dispensing":
            self._on_stack(ev.data)
        elif msg == "REMAINING" and self.state == "stub_check":
            self._cancel_timer()
            plan = self.proc.plan
            want = plan.remaining - rnd.face_up    # a burned face-up card left the deck (§ 670a.13(f))
            if ev.data["remaining"] != want or ev.data["stacks"] != plan.stacks:
                # § 670a.10(e), § 670a.13(h),(k): wrong count -> misdeal, all hands void
                self._void(f"misdeal: {ev.data['stacks']} stacks dispensed and {ev.data['remaining']} cards left, "
                           f"expected {plan.stacks} and {want} (§ 670a.10(e))")
                return
            self.stub_verified()
            self.commit([self.rec("stub.verified", remaining=ev.data["remaining"])], lambda _e: self._settle())

    def _on_stack(self, d: Mapping[str, Any]) -> None:
        rnd = self.round
        n = len(rnd.stacks) + 1
        plan = self.proc.plan
        if d["stack"] != n or d["count"] != plan.cards_per_stack or len(d["cards"]) != d["count"]:
            self._void(f"misdeal: stack {d['stack']} with {d['count']} cards, expected stack {n} of "
                       f"{plan.cards_per_stack} (§ 670a.13(h),(k))")
            return
        cards = list(d["cards"])
        if any(c == P.CARD_UNREAD for c in cards):
            self.raise_tilt("shoe", "shoe did not read the cards; keypad entry not configured")
            return
        if any(not 0 <= c <= 52 for c in cards):
            self.raise_tilt("shoe", f"shoe reported impossible card bytes {cards}")
            return
        rnd.stacks.append(cards)
        self._cancel_timer()
        if len(rnd.stacks) < plan.stacks:
            self._dispense_next()
            return
        seen = [c for s in rnd.stacks for c in s]
        if len(set(seen)) != len(seen):
            self.raise_tilt("shoe", "the shoe reported the same card twice in one deal")
            return
        order = delivery_order(rnd.start, self.profile.positions)   # § 670a.10(c)
        for position, stack in zip(order, rnd.stacks):
            seat = position_to_seat(position, self.seats)
            if seat is None:
                rnd.dealer = tuple(stack)
            else:
                rnd.hands[seat] = tuple(stack)
        self.stacks_dispensed()
        recs = [self.rec("deal", stacks=[cards_str(s) for s in rnd.stacks], start=rnd.start,
                         dealer=cards_str(rnd.dealer),
                         hands={str(s): cards_str(h) for s, h in sorted(rnd.hands.items())})]
        self.commit(recs, lambda _e: self._stub_check())

    def _stub_check(self) -> None:
        if self.state != "stub_check":
            return
        self.dev.shoe.request_count()                        # § 670a.10(d)
        self._set_timer(DEVICE_TIMEOUT_S, "shoe", "no remaining-card count")

    # ---- device deadlines --------------------------------------------------------------
    def _set_timer(self, seconds: float, device: str, what: str) -> None:
        self._cancel_timer()
        self._timer = self.reactor.call_later(seconds, self._timeout, device, what)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timeout(self, device: str, what: str) -> None:
        self._timer = None
        if device == "shoe" and self.state in ("dispensing", "stub_check"):
            # § 670a.13(m): the shoe stops dealing -> void; and the device is suspect -> tilt
            self._void(f"shoe stopped dealing: {what} (§ 670a.13(m))")
        self.raise_tilt(device, f"{device} timed out: {what}")
