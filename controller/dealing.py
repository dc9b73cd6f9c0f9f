"""The dealing steps of a round, as a mixin of :class:`controller.table.Table`:
the starting position from the shaker (§ 670a.5(i)(1); no roll → reshake,
§ 670a.13(a),(b)), the automated shoe's stacks (§ 670a.10(c)), the count of the
cards left (§ 670a.10(d),(e)) and the shoe's irregularities (§ 670a.13(f),(h),
(k),(m)).  Runs on the reactor thread only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from controller.reactor import Event
from controller.rules.cards import cards_str
from controller.rules.positions import delivery_order, position_to_seat, start_position
from drivers import protocol as P

SHAKE_MIN_S = 5.0      # § 621a.2(f)(2): shaken for at least five seconds
DEVICE_TIMEOUT_S = 30.0
MIN_REAL_S = 2.0       # a response deadline is never shorter than this in real time


def _text(cards: Any) -> str:
    """Cards as text; a card the shoe did not read is ``??``."""
    return " ".join("??" if c == P.CARD_UNREAD else cards_str([c]) for c in cards)


class DealingMixin:
    # provided by Table
    round: Any
    out_of_order: dict[str, str]
    state: str
    proc: Any
    profile: Any
    seats: int
    dev: Any

    # ---- starting position -------------------------------------------------------------
    def start_method(self) -> str:
        """The shaker, or the RNG when the profile says so or the shaker is out of
        order with the RNG as its alternative (§ 670a.13(n), § 670a.5(i)(2))."""
        if self.profile.start_method == "rng" or self.out_of_order.get("shaker") == "rng":
            return "rng"
        return "shaker"

    def _begin_start_position(self) -> None:
        if self.state != "starting_position":
            return
        self._show_meters()
        if self.start_method() == "shaker":
            self.dev.shaker.arm(P.DEALER)
            self.dev.shaker.activate(P.DEALER)
            self._set_timer(DEVICE_TIMEOUT_S, "shaker", "no dice result")
            return
        if self.dev.rng is None:
            self.raise_tilt("rng", "the starting position needs the RNG but none is configured")
            return
        # § 670a.5(i)(2): select and display a number from 1 to 7; count from the dealer as one
        rnd = self.round
        rnd.rng_value = self.dev.rng.draw(self.profile.positions)
        rnd.start = start_position(rnd.rng_value, self.profile.positions)
        self.start_determined()
        self.commit([self.rec("rng.draw", value=rnd.rng_value, range=self.profile.positions, start=rnd.start)],
                    lambda _e: self._begin_dispense())

    def _on_shaker(self, ev: Event) -> None:
        msg = ev.data["msg"]
        rnd = self.round
        if msg == "ERROR":
            self.raise_tilt("shaker", f"shaker error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        lid_open = (msg == "LID" and ev.data.get("open")) or \
            (msg == "NO_ROLL" and ev.data.get("reason") == P.NO_ROLL_LID_OPEN)
        if lid_open and self.state == "starting_position":
            # § 621a.2(f)(1), § 670a.2(d)(1)(ii): the dice must stay covered; an open lid is
            # not a no-roll to reshake forever but a fault for the technician
            self._cancel_timer()
            self.commit([self.rec("dice.no_roll", reason=P.NO_ROLL_LID_OPEN, shake_ms=ev.data.get("shake_ms"))]
                        if msg == "NO_ROLL" else [])
            self.raise_tilt("shaker", "shaker lid open during the shake")
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
        shown = f"RNG {rnd.rng_value} - " if rnd.rng_value is not None else ""
        self.dev.sign.message(f"{shown}START POSITION {rnd.start}")
        self._emit("start", position=rnd.start, dice=rnd.dice, rng=rnd.rng_value)
        if self.out_of_order.get("shoe") == "manual":
            # § 670a.13(n): the shoe is out of order; the dealer deals by hand (§ 670a.8/670a.9)
            # and enters the winning hands on the keypad
            self.trigger("manual_deal")
            self._begin_hand_entry()
            return
        self._dispense_next()

    # ---- keypad entry of winning hands ----------------------------------------------------
    def _begin_hand_entry(self) -> None:
        if self.state != "hand_entry":
            return
        if self.dev.keypad is None:
            self.raise_tilt("keypad", "the cards must be entered but no keypad is configured")
            return
        seats = ",".join(str(s) for s in sorted(self.round.accepted)) or "-"
        self.dev.keypad.prompt(f"ENTER WINNING HANDS SEATS {seats}: '<seat> <6 cards>' ... then DONE")
        self._emit("hand_entry", seats=sorted(self.round.accepted))

    def _on_keypad(self, ev: Event) -> None:
        msg = ev.data.get("msg")
        if msg == "ERROR":
            self.raise_tilt("keypad", f"keypad error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg != "ENTRY":
            return
        text = str(ev.data.get("text", "")).strip()
        if self.state != "hand_entry" or self.round is None:
            self.dev.keypad.prompt(f"NOT EXPECTING AN ENTRY NOW ({self.state})")
            return
        try:
            done = self._hand_entry(text)
        except ValueError as e:
            # bad input changes nothing: say what was wrong (§ 670a.11(h)(3)(i)(B)(I))
            self.commit([self.rec("keypad.rejected", text=text[:80], error=str(e)[:160])])
            self.dev.keypad.prompt(f"ERROR: {e}"[:120])
            return
        if done:
            self.hands_entered()
            entered = {str(s): cards_str(c) for s, c in sorted(self.round.entered.items())}
            self.commit([self.rec("hands.entered", hands=entered)], lambda _e: self._settle())

    def _hand_entry(self, text: str) -> bool:
        from controller.rules.cards import parse_cards

        rnd = self.round
        if text.upper() == "DONE":
            return True
        head, _, rest = text.partition(" ")
        if not head.isdigit():
            raise ValueError(f"{head!r} is not a seat number; enter '<seat> <6 cards>' or DONE")
        seat = int(head)
        if seat not in rnd.accepted:
            raise ValueError(f"seat {seat} has no accepted progressive wager")
        cards = parse_cards(rest, count=self.proc.plan.cards_per_stack)
        others = {c for s, cs in rnd.entered.items() if s != seat for c in cs}
        dup = [c for c in cards if c in others]
        if dup:
            raise ValueError(f"{cards_str(dup)} already entered for another seat")
        rnd.entered[seat] = cards
        self.dev.keypad.prompt(f"SEAT {seat} OK: {cards_str(cards)}")
        return False

    def _dispense_next(self) -> None:
        n = len(self.round.stacks) + 1
        self.dev.shoe.dispense(n, self.proc.plan.cards_per_stack)
        self._set_timer(DEVICE_TIMEOUT_S, "shoe", f"stack {n} not dispensed")

    def _on_shoe(self, ev: Event) -> None:
        msg = ev.data["msg"]
        rnd = self.round
        if msg == "SHUFFLE_FAILED":
            # § 670a.13(l): the shuffler jammed or did not complete a cycle -> reshuffle;
            # bounded: a shuffler that fails three times in a row cannot be used (tilt)
            self.shuffle_failures += 1
            self.deck_ready = False
            self.commit([self.rec("shuffle.failed", code=ev.data.get("code"), attempt=self.shuffle_failures)])
            if self.shuffle_failures >= 3:
                self.raise_tilt("shoe", f"shuffler failed {self.shuffle_failures} times in a row (§ 670a.13(l),(n))")
            elif self.state == "open_for_wagers":
                self.dev.shoe.shuffle()
            return
        if msg == "SHUFFLED":
            self.shuffle_failures = 0
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
            if rnd.unread:
                self.cards_unread()
                self.commit([self.rec("stub.verified", remaining=ev.data["remaining"], cards_read=False)],
                            lambda _e: self._begin_hand_entry())
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
            rnd.unread = True          # the dealer will enter the winning hands (keypad)
        elif any(not 0 <= c <= 52 for c in cards):
            self.raise_tilt("shoe", f"shoe reported impossible card bytes {cards}")
            return
        rnd.stacks.append(cards)
        self._cancel_timer()
        if len(rnd.stacks) < plan.stacks:
            self._dispense_next()
            return
        seen = [c for s in rnd.stacks for c in s if c != P.CARD_UNREAD]
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
        recs = [self.rec("deal", stacks=[_text(s) for s in rnd.stacks], start=rnd.start,
                         dealer=_text(rnd.dealer), cards_read=not rnd.unread,
                         hands={str(s): _text(h) for s, h in sorted(rnd.hands.items())})]
        self.commit(recs, lambda _e: self._stub_check())

    def _stub_check(self) -> None:
        if self.state != "stub_check":
            return
        self.dev.shoe.request_count()                        # § 670a.10(d)
        self._set_timer(DEVICE_TIMEOUT_S, "shoe", "no remaining-card count")

    # ---- device deadlines --------------------------------------------------------------
    def _set_timer(self, seconds: float, device: str, what: str) -> None:
        """A device response deadline: ``seconds`` of game time, and never less than
        ``MIN_REAL_S`` of real time — a device answers in real time, and a simulation
        running faster than real time must not turn a busy machine into a fault."""
        self._cancel_timer()
        real_deadline = time.monotonic() + max(self.reactor.clock.to_real(seconds), MIN_REAL_S)
        self._timer = self.reactor.call_later(seconds, self._timeout, device, what, real_deadline)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timeout(self, device: str, what: str, real_deadline: float) -> None:
        left = real_deadline - time.monotonic()
        if left > 0:
            speed = getattr(self.reactor.clock, "speed", 1.0)
            self._timer = self.reactor.call_later(left * speed, self._timeout, device, what, real_deadline)
            return
        self._timer = None
        if device == "shoe" and self.state in ("dispensing", "stub_check"):
            # § 670a.13(m): the shoe stops dealing -> void; and the device is suspect -> tilt
            self._void(f"shoe stopped dealing: {what} (§ 670a.13(m))")
        self.raise_tilt(device, f"{device} timed out: {what}")
