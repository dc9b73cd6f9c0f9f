"""The dealing phases of a round, as a mixin of :class:`controller.table.Table`:
the starting position from the shaker or the RNG (§ 670a.5(i); no roll →
reshake, § 670a.13(a),(b)); wagers settled right after the roll (§ 621a.6(b));
the shoe's stacks (§ 670a.10(c)) as the game's procedure plans them; the count
of the cards left (§ 670a.10(d),(e)); the shoe's irregularities (§ 670a.13(f),
(h),(k),(l),(m)); and keypad entry of the hands when the shoe is out of order or
did not read them (§ 670a.13(n)).  Runs on the reactor thread only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from controller.reactor import Event
from drivers import protocol as P

SHAKE_MIN_S = 5.0  # § 621a.2(f)(2): shaken for at least five seconds
DEVICE_TIMEOUT_S = 30.0
MIN_REAL_S = 2.0  # a response deadline is never shorter than this in real time


class DealingMixin:
    # provided by Table
    round: Any
    state: str
    proc: Any
    profile: Any
    seats: int
    dev: Any
    out_of_order: dict[str, str]

    # ---- starting position -----------------------------------------------------------
    def start_method(self) -> str:
        """The shaker, or the RNG when the profile says so or the shaker is out of
        order with the RNG as its alternative (§ 670a.13(n), § 670a.5(i)(2))."""
        if self.profile.start_method == "rng" or self.out_of_order.get("shaker") == "rng":
            return "rng"
        return "shaker"

    def _phase_start(self) -> None:
        self._show_meters()
        if self.start_method() == "shaker":
            who = self.proc.shaker_activator(self.round) if hasattr(self.proc, "shaker_activator") else P.DEALER
            self.dev.shaker.arm(who)
            if who == P.DEALER:
                self.dev.shaker.activate(P.DEALER)
            self._set_timer(DEVICE_TIMEOUT_S * (4 if who != P.DEALER else 1), "shaker", "no dice result")
            return
        if self.dev.rng is None:
            self.raise_tilt("rng", "the starting position needs the RNG but none is configured")
            return
        # § 670a.5(i)(2): select and display a number from 1 to 7 (1 to 8 for tiles, § 621a.6(c))
        rnd = self.round
        rnd.rng_value = self.dev.rng.draw(self.proc.positions)
        rnd.start = self.proc.starting_position(rnd, rnd.rng_value)
        self.commit(
            [self.rec("rng.draw", value=rnd.rng_value, range=self.proc.positions, start=rnd.start)],
            lambda _e: self._started(),
        )

    def _on_shaker(self, ev: Event) -> None:
        msg = ev.data["msg"]
        rnd = self.round
        if msg == "ERROR":
            self.raise_tilt("shaker", f"shaker error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        phase = self.proc.phase(self.state)
        starting = phase is not None and phase.kind == "start"
        lid_open = (msg == "LID" and ev.data.get("open")) or (
            msg == "NO_ROLL" and ev.data.get("reason") == P.NO_ROLL_LID_OPEN
        )
        if lid_open and starting:
            # § 621a.2(f)(1), § 670a.2(d)(1)(ii): the dice must stay covered; an open lid is
            # not a no-roll to reshake forever but a fault for the technician
            self._cancel_timer()
            self.commit(
                [self.rec("dice.no_roll", reason=P.NO_ROLL_LID_OPEN, shake_ms=ev.data.get("shake_ms"))]
                if msg == "NO_ROLL"
                else []
            )
            self.raise_tilt("shaker", "shaker lid open during the shake")
            return
        if msg in ("STATUS", "SHAKING", "LID") or not starting or rnd is None:
            return
        if msg == "NO_ROLL" or (msg == "RESULT" and ev.data["shake_ms"] < SHAKE_MIN_S * 1000):
            # § 670a.13(a),(b); § 621a.10(a),(b): no roll -> reshake
            reason = ev.data.get("reason", P.NO_ROLL_SHORT_SHAKE) if msg == "NO_ROLL" else P.NO_ROLL_SHORT_SHAKE
            rnd.no_rolls += 1
            self._cancel_timer()
            self.no_roll()
            self.commit(
                [self.rec("dice.no_roll", reason=reason, shake_ms=ev.data.get("shake_ms"))],
                lambda _e: self._phase_start() if self.proc.phase(self.state) else None,
            )
            return
        dice = (ev.data["d1"], ev.data["d2"], ev.data["d3"])
        if not all(1 <= d <= 6 for d in dice) or ev.data["red"] > 2:
            self.raise_tilt("shaker", f"impossible dice result {dice} red={ev.data['red']}")
            return
        self._cancel_timer()
        rnd.dice, rnd.red = dice, ev.data["red"]
        rnd.start = self.proc.starting_position(rnd, sum(dice))  # § 670a.5(i)(1)(iii), § 621a.6(c)
        self.commit(
            [
                self.rec(
                    "dice", dice=list(dice), red=rnd.red, total=sum(dice), start=rnd.start, shake_ms=ev.data["shake_ms"]
                )
            ],
            lambda _e: self._started(),
        )

    def _started(self) -> None:
        rnd = self.round
        self.dev.sign.seat_light(rnd.start, P.LIGHT_ON)
        shown = f"RNG {rnd.rng_value} - " if rnd.rng_value is not None else ""
        self.dev.sign.message(f"{shown}START POSITION {rnd.start}")
        self._emit("start", position=rnd.start, dice=rnd.dice, rng=rnd.rng_value)
        self._advance()

    # ---- wagers settled right after the roll (§ 621a.6(b)) -------------------------------
    def _phase_dice_wagers(self) -> None:
        results = self.proc.after_roll(self.round)
        self.round.results += results
        self.commit(self._result_records(results), lambda _e: self._advance())

    # ---- the shoe -----------------------------------------------------------------------
    def _phase_deal(self, name: str) -> None:
        rnd = self.round
        if self.out_of_order.get("shoe") == "manual":
            # § 670a.13(n): the shoe is out of order; the dealer deals by hand (§ 670a.8/670a.9)
            # and enters the hands on the keypad after the last deal.  A deal before another
            # (Over/Under's first card, § 686a.7(e)) is only recorded: the players decide on
            # the cards they see, and the dealer keys the whole hands at the end.
            if any(p.kind == "deal" for p in self.proc.phases[rnd.phase + 1 :]):
                self.commit([self.rec("deal.manual", phase=self.state)], lambda _e: self._advance())
                return
            self.enter_hands()
            self._begin_hand_entry()
            return
        rnd.to_dispense = list(self.proc.plan(rnd, name))
        if not rnd.to_dispense:
            self._advance()
            return
        self._dispense_next()

    def _dispense_next(self) -> None:
        rnd = self.round
        n = len(rnd.dealt_stacks) + 1
        self.dev.shoe.dispense(n, rnd.to_dispense[0].cards)
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
            self.shuffled_once = True
            self.deck_ready = self.proc.on_shuffled(ev.data["cards"])
            if not self.deck_ready:
                self.raise_tilt(
                    "shoe", f"shoe reports {ev.data['cards']} cards after shuffle, expected {self.proc.deck}"
                )
                return
            cover = ev.data.get("cover", P.NO_COVER)
            problem = self.proc.cover_problem(ev.data["cards"], cover)  # § 686a.3(a), § 686a.5(d)
            if problem:
                self.deck_ready = False
                self.raise_tilt("shoe", problem)
            elif self.proc.multi_deck:  # a shoe dealt over many rounds: each shuffle is on record
                self.commit([self.rec("shoe.shuffled", cards=ev.data["cards"], cover=cover)])
            return
        if msg == "ERROR":
            self.raise_tilt("shoe", f"shoe error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg == "COVER":
            # § 686a.7(d): the cover card is set aside and the round completed; the procedure
            # asks for the reshuffle before the next round (needs_shuffle)
            if hasattr(self.proc, "on_cover_card"):
                self.proc.on_cover_card(rnd, ev.data)
            self.commit(
                [
                    self.rec(
                        "shoe.cover",
                        stack=ev.data.get("stack"),
                        dealt=ev.data.get("dealt"),
                        remaining=ev.data.get("remaining"),
                        state=self.state,
                    )
                ]
            )
            return
        if msg == "STATUS":
            return
        phase = self.proc.phase(self.state)
        kind = phase.kind if phase else None
        if rnd is None or kind not in ("deal", "stub"):
            self.log.warning("shoe.unexpected", msg=msg, state=self.state)
            return
        if msg == "JAM":
            # § 670a.13(m): jam / failure to deal all cards -> void, return wagers, reshuffle
            self._void(f"shoe jammed at stack {ev.data['stack']} (§ 670a.13(m))")
        elif msg == "FACE_UP":
            rnd.face_up += 1
            if rnd.face_up > self.proc.burn_limit:  # § 670a.13(f): more than one face-up card -> void
                self._void(f"{rnd.face_up} cards found face up while dealing (§ 670a.13(f))")
            else:  # § 670a.13(f): one face-up card is not used (burned)
                self.commit([self.rec("card.burned", stack=ev.data["stack"], card=ev.data["card"])])
        elif msg == "STACK" and kind == "deal":
            self._on_stack(ev.data)
        elif msg == "REMAINING" and kind == "stub":
            self._cancel_timer()
            want = self.proc.expected_remaining(rnd)  # a burned face-up card left the deck (§ 670a.13(f))
            if ev.data["remaining"] != want or ev.data["stacks"] != len(rnd.dealt_stacks):
                # § 670a.10(e), § 670a.13(h),(k): wrong count -> misdeal, all hands void
                self._void(
                    f"misdeal: {ev.data['stacks']} stacks dispensed and {ev.data['remaining']} cards left, "
                    f"expected {len(rnd.dealt_stacks)} and {want} (§ 670a.10(e))"
                )
                return
            if rnd.unread:
                self.enter_hands()
                self.commit(
                    [self.rec("stub.verified", remaining=ev.data["remaining"], cards_read=False)],
                    lambda _e: self._begin_hand_entry(),
                )
                return
            self.commit([self.rec("stub.verified", remaining=ev.data["remaining"])], lambda _e: self._advance())

    def _on_stack(self, d: Mapping[str, Any]) -> None:
        rnd = self.round
        n = len(rnd.dealt_stacks) + 1
        want = rnd.to_dispense[0] if rnd.to_dispense else None
        if want is None or d["stack"] != n or d["count"] != want.cards or len(d["cards"]) != d["count"]:
            self._void(
                f"misdeal: stack {d['stack']} with {d['count']} cards, expected stack {n} of "
                f"{want.cards if want else 0} (§ 670a.13(h),(k))"
            )
            return
        cards = list(d["cards"])
        if any(c == P.CARD_UNREAD for c in cards):
            rnd.unread = True  # the dealer will enter the hands (keypad)
        elif any(not 0 <= c < self.proc.deck_card_limit() for c in cards):
            self.raise_tilt("shoe", f"shoe reported impossible card bytes {cards}")
            return
        self._cancel_timer()
        rnd.to_dispense.pop(0)
        rnd.dealt_stacks.append(want)
        rnd.stacks.append(cards)
        rnd.cards[want.to] = rnd.cards.get(want.to, ()) + tuple(cards)
        if rnd.to_dispense:
            self._dispense_next()
            return
        seen = [c for s in rnd.stacks for c in s if c != P.CARD_UNREAD]
        if len(set(seen)) != len(seen) and not self.proc.multi_deck:
            self.raise_tilt("shoe", "the shoe reported the same card twice in one deal")
            return
        if not rnd.unread:
            self.proc.dealt(rnd, self.state)
        rec = self.rec(
            "deal",
            phase=self.state,
            start=rnd.start,
            cards_read=not rnd.unread,
            stacks=[self.proc.show_cards(s) for s in rnd.stacks],
            hands={k: self.proc.show_cards(v) for k, v in sorted(rnd.cards.items())},
        )
        self.commit([rec], lambda _e: self._advance())

    def _phase_stub(self) -> None:
        if not self.proc.stub_due(self.round) or self.out_of_order.get("shoe") == "manual":
            why = (
                "dealt by hand (§ 670a.13(n))"
                if self.out_of_order.get("shoe") == "manual"
                else getattr(self.proc, "stub_skip_reason", "not due this round")
            )
            self.commit([self.rec("stub.skipped", reason=why)], lambda _e: self._advance())
            return
        self.dev.shoe.request_count()  # § 670a.10(d)
        self._set_timer(DEVICE_TIMEOUT_S, "shoe", "no remaining-card count")

    # ---- keypad entry of hands ---------------------------------------------------------------
    def _begin_hand_entry(self) -> None:
        if self.state != "hand_entry":
            return
        if self.dev.keypad is None:
            self.raise_tilt("keypad", "the cards must be entered but no keypad is configured")
            return
        seats = ",".join(str(s) for s in sorted(self.proc.hand_entry_seats(self.round))) or "-"
        self.dev.keypad.prompt(f"ENTER WINNING HANDS SEATS {seats}: '<seat> <{self.proc.stack_size} cards>' ... DONE")
        self._emit("hand_entry", seats=sorted(self.round.accepted))

    def _hand_entry(self, text: str) -> bool:
        from controller.games.base import EntryError

        rnd = self.round
        if text.upper() == "DONE":
            missing = getattr(self.proc, "hand_entry_complete", lambda r: None)(rnd)
            if missing:
                raise EntryError(missing)
            return True
        head, _, rest = text.partition(" ")
        if head.upper() == "DEALER":
            seat = 0
        elif not head.isdigit():
            raise EntryError(f"{head!r} is not a seat number; enter '<seat> <cards>', 'DEALER <cards>' or DONE")
        else:
            seat = int(head)
            if seat not in self.proc.hand_entry_seats(rnd):
                raise EntryError(f"seat {seat} has no accepted wager")
        cards = self.proc.parse_hand(rnd, seat, rest)
        others = {c for s, cs in rnd.entered.items() if s != seat for c in cs}
        dup = [] if self.proc.multi_deck else [c for c in cards if c in others]  # § 686a.3: six decks
        if dup:
            raise EntryError(f"{self.proc.show_cards(dup)} already entered for another seat")
        rnd.entered[seat] = cards
        self.dev.keypad.prompt(f"{'DEALER' if seat == 0 else f'SEAT {seat}'} OK: {self.proc.show_cards(cards)}")
        return False

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
        phase = self.proc.phase(self.state)
        if device == "shoe" and phase is not None and phase.kind in ("deal", "stub"):
            # § 670a.13(m): the shoe stops dealing -> void; and the device is suspect -> tilt
            self._void(f"shoe stopped dealing: {what} (§ 670a.13(m))")
        self.raise_tilt(device, f"{device} timed out: {what}")
