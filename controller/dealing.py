"""The dealing phases of a round: the starting position from the shaker or the
RNG (§ 670a.5(i); no roll → reshake, § 670a.13(a),(b)); the shoe's stacks
(§ 670a.10(c)) as the game's procedure plans them; the count of the cards left
(§ 670a.10(d),(e)); the shoe's irregularities (§ 670a.13(f),(h),(k),(l),(m));
and keypad entry of the hands when the shoe is out of order or did not read
them (§ 670a.13(n)).

:class:`Dealing` is a component of :class:`controller.table.Table`.  It owns the
:class:`Deck` (whether the shoe holds a shuffled deck, the shuffle failures in a
row, whether it has shuffled since start-up) and decides what a device's
silence means when the table's deadline timer expires.  It is given the table's
context (controller/context.py), the device registry (which devices are out of
order) and the void (controller/wagering.py).  Runs on the reactor thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.context import TableContext
from controller.devices import DeviceRegistry
from controller.games.base import DEALER, EntryError
from controller.reactor import Event
from controller.records import Kind, PhaseKind
from controller.round import RoundData
from drivers import protocol as P

SHAKE_MIN_S = 5.0  # § 621a.2(f)(2): shaken for at least five seconds
DEVICE_TIMEOUT_S = 30.0


@dataclass
class Deck:
    """The shoe's deck as the table knows it."""

    ready: bool = False  # the shoe reported a whole, shuffled deck for this round
    shuffle_failures: int = 0  # failed shuffles in a row (§ 670a.13(l))
    shuffled_once: bool = False  # the shoe has shuffled since start-up (or since hand dealing ended)


class Dealing:
    deck: Deck  # owned here; wagering marks it spent on a void

    def __init__(self, ctx: TableContext, devices: DeviceRegistry, deck: Deck, void: Callable[[str], None]):
        self.ctx = ctx
        self.devices = devices
        self.deck = deck
        self._void = void

    # ---- the deck before a round ---------------------------------------------------------
    def prepare_deck(self) -> None:
        """A round opened (its record is durable): have a deck ready for it."""
        ctx = self.ctx
        if self.devices.alternative("shoe"):
            self.deck.ready = True  # manual dealing (§ 670a.13(n)): the dealer shuffles by hand
        elif ctx.proc.needs_shuffle() or not self.deck.shuffled_once:
            ctx.dev.shoe.shuffle()  # § 670a.5(a): shuffled after each round (automated shuffler)
        else:
            self.deck.ready = True  # a continuous shoe deals on until its cover card (§ 686a.7(d))

    def shuffle_before_next_deal(self) -> None:
        """The shoe shuffles before it deals again (the cards were dealt by hand, or a
        floorperson ordered it): now if wagers are open (the lock-out waits for the
        shuffle), else when the next round opens."""
        self.deck.shuffled_once = False
        if self.ctx.state == "open_for_wagers":
            self.deck.ready = False
            self.ctx.dev.shoe.shuffle()

    # ---- starting position -----------------------------------------------------------
    def start_method(self) -> str:
        """The shaker, or the RNG when the profile says so or the shaker is out of
        order with the RNG as its alternative (§ 670a.13(n), § 670a.5(i)(2))."""
        if self.ctx.profile.start_method == "rng" or self.devices.alternative("shaker") == "rng":
            return "rng"
        return "shaker"

    def phase_start(self, rnd: RoundData) -> None:
        ctx = self.ctx
        ctx.show_meters()
        if self.start_method() == "shaker":
            shaker = ctx.dev.shaker
            if shaker is None:
                ctx.raise_tilt("shaker", "the starting position needs the shaker but none is configured")
                return
            who = ctx.proc.shaker_activator(rnd)
            shaker.arm(who)
            if who == DEALER:
                shaker.activate(DEALER)
            ctx.timer.set(DEVICE_TIMEOUT_S * (4 if who != DEALER else 1), "shaker", "no dice result")
            return
        rng = ctx.dev.rng
        if rng is None:
            ctx.raise_tilt("rng", "the starting position needs the RNG but none is configured")
            return
        # § 670a.5(i)(2): select and display a number from 1 to 7 (1 to 8 for tiles, § 621a.6(c))
        rnd.rng_value = rng.draw(ctx.proc.positions)
        rnd.start = ctx.proc.starting_position(rnd, rnd.rng_value)
        ctx.commit(
            [ctx.rec(Kind.RNG_DRAW, value=rnd.rng_value, range=ctx.proc.positions, start=rnd.start)],
            lambda _e: self._started(rnd),
        )

    def on_shaker(self, ev: Event) -> None:
        ctx = self.ctx
        msg = ev.data["msg"]
        rnd = ctx.round
        if msg == "ERROR":
            ctx.raise_tilt("shaker", f"shaker error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        phase = ctx.phase()
        starting = phase is not None and phase.kind == PhaseKind.START
        lid_open = (msg == "LID" and ev.data.get("open")) or (
            msg == "NO_ROLL" and ev.data.get("reason") == P.NO_ROLL_LID_OPEN
        )
        if lid_open and starting:
            # § 621a.2(f)(1), § 670a.2(d)(1)(ii): the dice must stay covered; an open lid is
            # not a no-roll to reshake forever but a fault for the technician
            ctx.timer.cancel()
            ctx.commit(
                [ctx.rec(Kind.DICE_NO_ROLL, reason=P.NO_ROLL_LID_OPEN, shake_ms=ev.data.get("shake_ms"))]
                if msg == "NO_ROLL"
                else []
            )
            ctx.raise_tilt("shaker", "shaker lid open during the shake")
            return
        if msg in ("STATUS", "SHAKING", "LID") or not starting or rnd is None:
            return
        if msg == "NO_ROLL" or (msg == "RESULT" and ev.data["shake_ms"] < SHAKE_MIN_S * 1000):
            # § 670a.13(a),(b); § 621a.10(a),(b): no roll -> reshake
            reason = ev.data.get("reason", P.NO_ROLL_SHORT_SHAKE) if msg == "NO_ROLL" else P.NO_ROLL_SHORT_SHAKE
            rnd.no_rolls += 1
            ctx.timer.cancel()
            ctx.trigger("no_roll")
            ctx.commit(
                [ctx.rec(Kind.DICE_NO_ROLL, reason=reason, shake_ms=ev.data.get("shake_ms"))],
                lambda _e: self.phase_start(rnd) if ctx.phase() else None,
            )
            return
        dice = (ev.data["d1"], ev.data["d2"], ev.data["d3"])
        if not all(1 <= d <= 6 for d in dice) or ev.data["red"] > 2:
            ctx.raise_tilt("shaker", f"impossible dice result {dice} red={ev.data['red']}")
            return
        ctx.timer.cancel()
        rnd.dice, rnd.red = dice, ev.data["red"]
        rnd.start = ctx.proc.starting_position(rnd, sum(dice))  # § 670a.5(i)(1)(iii), § 621a.6(c)
        ctx.commit(
            [
                ctx.rec(
                    Kind.DICE,
                    dice=list(dice),
                    red=rnd.red,
                    total=sum(dice),
                    start=rnd.start,
                    shake_ms=ev.data["shake_ms"],
                )
            ],
            lambda _e: self._started(rnd),
        )

    def _started(self, rnd: RoundData) -> None:
        ctx = self.ctx
        assert rnd.start is not None
        ctx.dev.sign.seat_light(rnd.start, P.LIGHT_ON)
        shown = f"RNG {rnd.rng_value} - " if rnd.rng_value is not None else ""
        ctx.dev.sign.message(f"{shown}START POSITION {rnd.start}")
        ctx.emit("start", position=rnd.start, dice=rnd.dice, rng=rnd.rng_value)
        ctx.advance()

    # ---- the shoe -----------------------------------------------------------------------
    def phase_deal(self, rnd: RoundData, name: str) -> None:
        ctx = self.ctx
        if self.devices.alternative("shoe") == "manual":
            # § 670a.13(n): the shoe is out of order; the dealer deals by hand (§ 670a.8/670a.9)
            # and enters the hands on the keypad after the last deal.  A deal before another
            # (Over/Under's first card, § 686a.7(e)) is only recorded: the players decide on
            # the cards they see, and the dealer keys the whole hands at the end.
            if any(p.kind == PhaseKind.DEAL for p in ctx.proc.phases[rnd.phase + 1 :]):
                ctx.commit([ctx.rec(Kind.DEAL_MANUAL, phase=ctx.state)], lambda _e: ctx.advance())
                return
            ctx.trigger("enter_hands")
            self.begin_hand_entry(rnd)
            return
        rnd.to_dispense = list(ctx.proc.plan(rnd, name))
        if not rnd.to_dispense:
            ctx.advance()
            return
        self._dispense_next(rnd)

    def _dispense_next(self, rnd: RoundData) -> None:
        n = len(rnd.dealt_stacks) + 1
        self.ctx.dev.shoe.dispense(n, rnd.to_dispense[0].cards)
        self.ctx.timer.set(DEVICE_TIMEOUT_S, "shoe", f"stack {n} not dispensed")

    def on_shoe(self, ev: Event) -> None:
        ctx = self.ctx
        deck = self.deck
        msg = ev.data["msg"]
        rnd = ctx.round
        if msg == "SHUFFLE_FAILED":
            # § 670a.13(l): the shuffler jammed or did not complete a cycle -> reshuffle;
            # bounded: a shuffler that fails three times in a row cannot be used (tilt)
            deck.shuffle_failures += 1
            deck.ready = False
            ctx.commit([ctx.rec(Kind.SHUFFLE_FAILED, code=ev.data.get("code"), attempt=deck.shuffle_failures)])
            if deck.shuffle_failures >= 3:
                ctx.raise_tilt("shoe", f"shuffler failed {deck.shuffle_failures} times in a row (§ 670a.13(l),(n))")
            elif ctx.state == "open_for_wagers":
                ctx.dev.shoe.shuffle()
            return
        if msg == "SHUFFLED":
            deck.shuffle_failures = 0
            deck.shuffled_once = True
            deck.ready = ctx.proc.on_shuffled(ev.data["cards"])
            if not deck.ready:
                ctx.raise_tilt("shoe", f"shoe reports {ev.data['cards']} cards after shuffle, expected {ctx.proc.deck}")
                return
            cover = ev.data.get("cover", P.NO_COVER)
            problem = ctx.proc.cover_problem(ev.data["cards"], cover)  # § 686a.3(a), § 686a.5(d)
            if problem:
                deck.ready = False
                ctx.raise_tilt("shoe", problem)
            elif ctx.proc.multi_deck:  # a shoe dealt over many rounds: each shuffle is on record
                ctx.commit([ctx.rec(Kind.SHOE_SHUFFLED, cards=ev.data["cards"], cover=cover)])
            return
        if msg == "ERROR":
            ctx.raise_tilt("shoe", f"shoe error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg == "COVER":
            # § 686a.7(d): the cover card is set aside and the round completed; the procedure
            # asks for the reshuffle before the next round (needs_shuffle)
            ctx.proc.on_cover_card(rnd, ev.data)
            ctx.commit(
                [
                    ctx.rec(
                        Kind.SHOE_COVER,
                        stack=ev.data.get("stack"),
                        dealt=ev.data.get("dealt"),
                        remaining=ev.data.get("remaining"),
                        state=ctx.state,
                    )
                ]
            )
            return
        if msg == "STATUS":
            return
        phase = ctx.phase()
        kind = phase.kind if phase else None
        if rnd is None or kind not in (PhaseKind.DEAL, PhaseKind.STUB):
            ctx.log.warning("shoe.unexpected", msg=msg, state=ctx.state)
            return
        if msg == "JAM":
            # § 670a.13(m): jam / failure to deal all cards -> void, return wagers, reshuffle
            self._void(f"shoe jammed at stack {ev.data['stack']} (§ 670a.13(m))")
        elif msg == "FACE_UP":
            rnd.face_up += 1
            if rnd.face_up > ctx.proc.burn_limit:  # § 670a.13(f): more than one face-up card -> void
                self._void(f"{rnd.face_up} cards found face up while dealing (§ 670a.13(f))")
            else:  # § 670a.13(f): one face-up card is not used (burned)
                ctx.commit([ctx.rec(Kind.CARD_BURNED, stack=ev.data["stack"], card=ev.data["card"])])
        elif msg == "STACK" and kind == PhaseKind.DEAL:
            self._on_stack(rnd, ev.data)
        elif msg == "REMAINING" and kind == PhaseKind.STUB:
            self._on_remaining(rnd, ev.data)

    def _on_remaining(self, rnd: RoundData, d: Mapping[str, Any]) -> None:
        ctx = self.ctx
        ctx.timer.cancel()
        want = ctx.proc.expected_remaining(rnd)  # a burned face-up card left the deck (§ 670a.13(f))
        if d["remaining"] != want or d["stacks"] != len(rnd.dealt_stacks):
            # § 670a.10(e), § 670a.13(h),(k): wrong count -> misdeal, all hands void
            self._void(
                f"misdeal: {d['stacks']} stacks dispensed and {d['remaining']} cards left, "
                f"expected {len(rnd.dealt_stacks)} and {want} (§ 670a.10(e))"
            )
            return
        if rnd.unread:
            ctx.trigger("enter_hands")
            ctx.commit(
                [ctx.rec(Kind.STUB_VERIFIED, remaining=d["remaining"], cards_read=False)],
                lambda _e: self.begin_hand_entry(rnd),
            )
            return
        ctx.commit([ctx.rec(Kind.STUB_VERIFIED, remaining=d["remaining"])], lambda _e: ctx.advance())

    def _on_stack(self, rnd: RoundData, d: Mapping[str, Any]) -> None:
        ctx = self.ctx
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
        elif any(not 0 <= c < ctx.proc.deck_card_limit() for c in cards):
            ctx.raise_tilt("shoe", f"shoe reported impossible card bytes {cards}")
            return
        ctx.timer.cancel()
        rnd.to_dispense.pop(0)
        rnd.dealt_stacks.append(want)
        rnd.stacks.append(cards)
        rnd.cards[want.to] = rnd.cards.get(want.to, ()) + tuple(cards)
        if rnd.to_dispense:
            self._dispense_next(rnd)
            return
        seen = [c for s in rnd.stacks for c in s if c != P.CARD_UNREAD]
        if len(set(seen)) != len(seen) and not ctx.proc.multi_deck:
            ctx.raise_tilt("shoe", "the shoe reported the same card twice in one deal")
            return
        if not rnd.unread:
            ctx.proc.dealt(rnd, ctx.state)
        rec = ctx.rec(
            Kind.DEAL,
            phase=ctx.state,
            start=rnd.start,
            cards_read=not rnd.unread,
            stacks=[ctx.proc.show_cards(s) for s in rnd.stacks],
            hands={k: ctx.proc.show_cards(v) for k, v in sorted(rnd.cards.items())},
        )
        ctx.commit([rec], lambda _e: ctx.advance())

    def phase_stub(self, rnd: RoundData) -> None:
        ctx = self.ctx
        manual = self.devices.alternative("shoe") == "manual"
        if not ctx.proc.stub_due(rnd) or manual:
            why = "dealt by hand (§ 670a.13(n))" if manual else ctx.proc.stub_skip_reason
            ctx.commit([ctx.rec(Kind.STUB_SKIPPED, reason=why)], lambda _e: ctx.advance())
            return
        ctx.dev.shoe.request_count()  # § 670a.10(d)
        ctx.timer.set(DEVICE_TIMEOUT_S, "shoe", "no remaining-card count")

    # ---- keypad entry of hands ---------------------------------------------------------------
    def begin_hand_entry(self, rnd: RoundData) -> None:
        ctx = self.ctx
        if ctx.state != "hand_entry":
            return
        if ctx.dev.keypad is None:
            ctx.raise_tilt("keypad", "the cards must be entered but no keypad is configured")
            return
        seats = ",".join(str(s) for s in sorted(ctx.proc.hand_entry_seats(rnd))) or "-"
        ctx.dev.keypad.prompt(f"ENTER WINNING HANDS SEATS {seats}: '<seat> <{ctx.proc.stack_size} cards>' ... DONE")
        ctx.emit("hand_entry", seats=sorted(rnd.accepted))

    def hand_entry(self, rnd: RoundData, text: str) -> bool:
        """One line of the dealer's hand entry; True when the dealer keyed DONE and the
        hands are complete.  A wrong line raises :class:`EntryError` naming the problem."""
        proc = self.ctx.proc
        if text.upper() == "DONE":
            missing = proc.hand_entry_complete(rnd)
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
            if seat not in proc.hand_entry_seats(rnd):
                raise EntryError(f"seat {seat} has no accepted wager")
        cards = proc.parse_hand(rnd, seat, rest)
        others = {c for s, cs in rnd.entered.items() if s != seat for c in cs}
        dup = [] if proc.multi_deck else [c for c in cards if c in others]  # § 686a.3: six decks
        if dup:
            raise EntryError(f"{proc.show_cards(dup)} already entered for another seat")
        rnd.entered[seat] = cards
        keypad = self.ctx.dev.keypad
        if keypad is not None:
            keypad.prompt(f"{'DEALER' if seat == 0 else f'SEAT {seat}'} OK: {proc.show_cards(cards)}")
        return False

    # ---- device deadlines --------------------------------------------------------------
    def timed_out(self, device: str, what: str) -> None:
        """The device deadline (controller/timers.py) expired without an answer."""
        ctx = self.ctx
        phase = ctx.phase()
        if device == "shoe" and phase is not None and phase.kind in (PhaseKind.DEAL, PhaseKind.STUB):
            # § 670a.13(m): the shoe stops dealing -> void; and the device is suspect -> tilt
            self._void(f"shoe stopped dealing: {what} (§ 670a.13(m))")
        ctx.raise_tilt(device, f"{device} timed out: {what}")
