"""The dealing phases of a round: the starting position from the shaker or the
RNG (§ 670a.5(i); no roll → reshake, § 670a.13(a),(b)); the shoe's stacks
(§ 670a.10(c)) as the game's procedure plans them; the count of the cards left
(§ 670a.10(d),(e)); the shoe's irregularities (§ 670a.13(f),(h),(k),(l),(m));
and keypad entry of the hands when the shoe is out of order or did not read
them (§ 670a.13(n)).

:class:`Dealing` is a component of :class:`controller.play.table.Table`.  It owns what
was dealt in the round (:class:`~controller.games.round.Dealt`, the only writer) and the
:class:`Deck` (whether the shoe holds a shuffled deck, the shuffle failures in a
row, whether it has shuffled since start-up), and decides what a device's
silence means when the table's deadline timer expires.  It is given the shared
roles (controller/play/bundles.py), its devices, which devices are out of order
(controller/play/devices.py) and the void (controller/play/wagering.py).  Runs on the
reactor thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from controller.core.reactor import Event
from controller.core.records import Kind, PhaseKind
from controller.games.base import DEALER, EntryError, Procedure, Stack
from controller.games.round import Dealt, DealtView, Round
from controller.play.bundles import Shared
from controller.play.devices import Devices
from controller.play.machine import TableState
from drivers import protocol as P

SHAKE_MIN_S = 5.0  # § 621a.2(f)(2): shaken for at least five seconds
DEVICE_TIMEOUT_S = 30.0


class Deck:
    """The shoe's deck as the table knows it; written here only (dealing, and a void
    spending it through :meth:`spend`)."""

    def __init__(self) -> None:
        self.ready = False  # the shoe reported a whole, shuffled deck for this round
        self.shuffle_failures = 0  # failed shuffles in a row (§ 670a.13(l))
        self.shuffled_once = False  # the shoe has shuffled since start-up (or since hand dealing ended)

    def spend(self) -> None:
        """The deck is no longer whole (a round opened, or was voided)."""
        self.ready = False

    def shuffle_failed(self) -> int:
        self.shuffle_failures += 1
        self.ready = False
        return self.shuffle_failures

    def shuffled(self, whole: bool) -> None:
        self.shuffle_failures = 0
        self.shuffled_once = True
        self.ready = whole

    def reshuffle_due(self) -> None:
        """The shoe shuffles before it deals again."""
        self.shuffled_once = False


class Alternatives(Protocol):
    """Which devices are out of order, and the alternative used (controller/play/devices.py)."""

    def alternative(self, device: str) -> str | None: ...


class Dealing:
    def __init__(
        self, shared: Shared, *, deck: Deck, devices: Devices, marks: Alternatives, void: Callable[[str], None]
    ):
        """``devices``: the shoe, shaker, RNG, sign and keypad it deals with; ``marks``: which
        of them are out of order; ``void``: the round's void (controller/play/wagering.py)."""
        self.books, self.machine, self.game, self.rounds = shared.books, shared.machine, shared.game, shared.rounds
        self.deck = deck
        self.devices = marks
        self.shoe, self.shaker, self.rng = devices.shoe, devices.shaker, devices.rng
        self.sign, self.keypad = devices.sign, devices.keypad
        self.timer = shared.timer
        self._void = void
        self.raise_tilt, self.emit = shared.raise_tilt, shared.emit
        self.show_meters, self.log = shared.show_meters, shared.log
        self._d = Dealt()

    @property
    def proc(self) -> Procedure:
        return self.game.proc

    # ---- the round's record -------------------------------------------------------------
    @property
    def record(self) -> DealtView:
        """What was dealt in the round in play (read-only)."""
        return self._d

    def new_round(self) -> DealtView:
        """A round opens: nothing dealt yet, and the deck of the last round is spent."""
        self._d = Dealt()
        self.deck.spend()
        return self._d

    def restore(self) -> DealtView:
        """A round recovered at start-up: what was dealt is not needed (it was settled)."""
        self._d = Dealt()
        return self._d

    # ---- the deck before a round ---------------------------------------------------------
    def prepare_deck(self) -> None:
        """A round opened (its record is durable): have a deck ready for it."""
        if self.devices.alternative("shoe"):
            self.deck.ready = True  # manual dealing (§ 670a.13(n)): the dealer shuffles by hand
        elif self.proc.needs_shuffle() or not self.deck.shuffled_once:
            self.shoe.shuffle()  # § 670a.5(a): shuffled after each round (automated shuffler)
        else:
            self.deck.ready = True  # a continuous shoe deals on until its cover card (§ 686a.7(d))

    def shuffle_before_next_deal(self) -> None:
        """The shoe shuffles before it deals again (the cards were dealt by hand, or a
        floorperson ordered it): now if wagers are open (the lock-out waits for the
        shuffle), else when the next round opens."""
        self.deck.reshuffle_due()
        if self.machine.state == TableState.OPEN:
            self.deck.spend()
            self.shoe.shuffle()

    # ---- starting position -----------------------------------------------------------
    def start_method(self) -> str:
        """The shaker, or the RNG when the profile says so or the shaker is out of
        order with the RNG as its alternative (§ 670a.13(n), § 670a.5(i)(2))."""
        if self.game.profile.start_method == "rng" or self.devices.alternative("shaker") == "rng":
            return "rng"
        return "shaker"

    def phase_start(self, rnd: Round) -> None:
        self.show_meters()
        if self.start_method() == "shaker":
            self._arm_shaker(rnd)
            return
        rng = self.rng
        if rng is None:
            self.raise_tilt("rng", "the starting position needs the RNG but none is configured")
            return
        # § 670a.5(i)(2): select and display a number from 1 to 7 (1 to 8 for tiles, § 621a.6(c))
        d, proc = self._d, self.proc
        d.rng_value = rng.draw(proc.positions)
        d.start = proc.starting_position(rnd, d.rng_value)
        self.books.commit(
            [self.books.rec(Kind.RNG_DRAW, value=d.rng_value, range=proc.positions, start=d.start)],
            lambda _e: self._started(),
        )

    def _arm_shaker(self, rnd: Round) -> None:
        shaker = self.shaker
        if shaker is None:
            self.raise_tilt("shaker", "the starting position needs the shaker but none is configured")
            return
        who = self.proc.shaker_activator(rnd)
        shaker.arm(who)
        if who == DEALER:
            shaker.activate(DEALER)
        self.timer.set(DEVICE_TIMEOUT_S * (4 if who != DEALER else 1), "shaker", "no dice result")

    def on_shaker(self, ev: Event) -> None:
        msg = ev.data["msg"]
        rnd = self.rounds.round
        if msg == "ERROR":
            self.raise_tilt("shaker", f"shaker error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        phase = self.machine.phase()
        starting = phase is not None and phase.kind == PhaseKind.START
        if starting and _lid_opened(msg, ev.data):
            self._lid_open(msg, ev.data)
            return
        if msg in ("STATUS", "SHAKING", "LID") or not starting or rnd is None:
            return
        if _is_no_roll(msg, ev.data):
            self._no_roll(rnd, msg, ev.data)
            return
        self._dice(rnd, ev.data)

    def _lid_open(self, msg: str, data: Mapping[str, Any]) -> None:
        # § 621a.2(f)(1), § 670a.2(d)(1)(ii): the dice must stay covered; an open lid is
        # not a no-roll to reshake forever but a fault for the technician
        books = self.books
        self.timer.cancel()
        books.commit(
            [books.rec(Kind.DICE_NO_ROLL, reason=P.NO_ROLL_LID_OPEN, shake_ms=data.get("shake_ms"))]
            if msg == "NO_ROLL"
            else []
        )
        self.raise_tilt("shaker", "shaker lid open during the shake")

    def _no_roll(self, rnd: Round, msg: str, data: Mapping[str, Any]) -> None:
        # § 670a.13(a),(b); § 621a.10(a),(b): no roll -> reshake
        reason = data.get("reason", P.NO_ROLL_SHORT_SHAKE) if msg == "NO_ROLL" else P.NO_ROLL_SHORT_SHAKE
        self._d.no_rolls += 1
        self.timer.cancel()
        self.machine.trigger("no_roll")
        self.books.commit(
            [self.books.rec(Kind.DICE_NO_ROLL, reason=reason, shake_ms=data.get("shake_ms"))],
            lambda _e: self.phase_start(rnd) if self.machine.phase() else None,
        )

    def _dice(self, rnd: Round, data: Mapping[str, Any]) -> None:
        dice = (data["d1"], data["d2"], data["d3"])
        if not all(1 <= d <= 6 for d in dice) or data["red"] > 2:
            self.raise_tilt("shaker", f"impossible dice result {dice} red={data['red']}")
            return
        self.timer.cancel()
        d = self._d
        d.dice, d.red = dice, data["red"]
        d.start = self.proc.starting_position(rnd, sum(dice))  # § 670a.5(i)(1)(iii), § 621a.6(c)
        rec = self.books.rec(
            Kind.DICE, dice=list(dice), red=d.red, total=sum(dice), start=d.start, shake_ms=data["shake_ms"]
        )
        self.books.commit([rec], lambda _e: self._started())

    def _started(self) -> None:
        d = self._d
        assert d.start is not None
        self.sign.seat_light(d.start, P.LIGHT_ON)
        shown = f"RNG {d.rng_value} - " if d.rng_value is not None else ""
        self.sign.message(f"{shown}START POSITION {d.start}")
        self.emit("start", position=d.start, dice=d.dice, rng=d.rng_value)
        self.machine.advance()

    # ---- the shoe -----------------------------------------------------------------------
    def phase_deal(self, rnd: Round, name: str) -> None:
        proc = self.proc
        if self.devices.alternative("shoe") == "manual":
            # § 670a.13(n): the shoe is out of order; the dealer deals by hand (§ 670a.8/670a.9)
            # and enters the hands on the keypad after the last deal.  A deal before another
            # (Over/Under's first card, § 686a.7(e)) is only recorded: the players decide on
            # the cards they see, and the dealer keys the whole hands at the end.
            if any(p.kind == PhaseKind.DEAL for p in proc.phases[rnd.phase + 1 :]):
                self.books.commit(
                    [self.books.rec(Kind.DEAL_MANUAL, phase=self.machine.state)], lambda _e: self.machine.advance()
                )
                return
            self.machine.trigger("enter_hands")
            self.begin_hand_entry(rnd)
            return
        self._d.to_dispense = list(proc.plan(rnd, name))
        if not self._d.to_dispense:
            self.machine.advance()
            return
        self._dispense_next()

    def _dispense_next(self) -> None:
        n = len(self._d.dealt_stacks) + 1
        self.shoe.dispense(n, self._d.to_dispense[0].cards)
        self.timer.set(DEVICE_TIMEOUT_S, "shoe", f"stack {n} not dispensed")

    def on_shoe(self, ev: Event) -> None:
        msg = ev.data["msg"]
        rnd = self.rounds.round
        if msg == "SHUFFLE_FAILED":
            self._shuffle_failed(ev.data)
        elif msg == "SHUFFLED":
            self._shuffled(ev.data)
        elif msg == "ERROR":
            self.raise_tilt("shoe", f"shoe error {ev.data.get('code')}: {ev.data.get('text')}")
        elif msg == "COVER":
            self._cover(rnd, ev.data)
        elif msg != "STATUS":
            self._dealing(rnd, msg, ev.data)

    def _shuffle_failed(self, data: Mapping[str, Any]) -> None:
        # § 670a.13(l): the shuffler jammed or did not complete a cycle -> reshuffle;
        # bounded: a shuffler that fails three times in a row cannot be used (tilt)
        failures = self.deck.shuffle_failed()
        self.books.commit([self.books.rec(Kind.SHUFFLE_FAILED, code=data.get("code"), attempt=failures)])
        if failures >= 3:
            self.raise_tilt("shoe", f"shuffler failed {failures} times in a row (§ 670a.13(l),(n))")
        elif self.machine.state == TableState.OPEN:
            self.shoe.shuffle()

    def _shuffled(self, data: Mapping[str, Any]) -> None:
        proc = self.proc
        self.deck.shuffled(proc.on_shuffled(data["cards"]))
        if not self.deck.ready:
            self.raise_tilt("shoe", f"shoe reports {data['cards']} cards after shuffle, expected {proc.deck}")
            return
        cover = data.get("cover", P.NO_COVER)
        problem = proc.cover_problem(data["cards"], cover)  # § 686a.3(a), § 686a.5(d)
        if problem:
            self.deck.spend()
            self.raise_tilt("shoe", problem)
        elif proc.multi_deck:  # a shoe dealt over many rounds: each shuffle is on record
            self.books.commit([self.books.rec(Kind.SHOE_SHUFFLED, cards=data["cards"], cover=cover)])

    def _cover(self, rnd: Round | None, data: Mapping[str, Any]) -> None:
        # § 686a.7(d): the cover card is set aside and the round completed; the procedure
        # asks for the reshuffle before the next round (needs_shuffle)
        self.proc.on_cover_card(rnd, data)
        rec = self.books.rec(
            Kind.SHOE_COVER,
            stack=data.get("stack"),
            dealt=data.get("dealt"),
            remaining=data.get("remaining"),
            state=self.machine.state,
        )
        self.books.commit([rec])

    def _dealing(self, rnd: Round | None, msg: str, data: Mapping[str, Any]) -> None:
        """A message of the shoe's deal or count, in a deal or stub phase."""
        phase = self.machine.phase()
        kind = phase.kind if phase else None
        if rnd is None or kind not in (PhaseKind.DEAL, PhaseKind.STUB):
            self.log.warning("shoe.unexpected", msg=msg, state=self.machine.state)
            return
        if msg == "JAM":
            # § 670a.13(m), § 687a.13(f): jam / failure to deal all cards -> void, return wagers, reshuffle
            self._void(f"shoe jammed at stack {data['stack']} (§ 670a.13(m))")
        elif msg == "FACE_UP":
            self._face_up(data)
        elif msg == "STACK" and kind == PhaseKind.DEAL:
            self._on_stack(rnd, data)
        elif msg == "REMAINING" and kind == PhaseKind.STUB:
            self._on_remaining(rnd, data)

    def _face_up(self, data: Mapping[str, Any]) -> None:
        self._d.face_up += 1
        if self._d.face_up > self.proc.burn_limit:  # § 670a.13(f): more than one face-up card -> void
            self._void(f"{self._d.face_up} cards found face up while dealing (§ 670a.13(f))")
        else:  # § 670a.13(f): one face-up card is not used (burned)
            self.books.commit([self.books.rec(Kind.CARD_BURNED, stack=data["stack"], card=data["card"])])

    def _on_remaining(self, rnd: Round, d: Mapping[str, Any]) -> None:
        books = self.books
        self.timer.cancel()
        want = self.proc.expected_remaining(rnd)  # a burned face-up card left the deck (§ 670a.13(f))
        dealt = len(self._d.dealt_stacks)
        if d["remaining"] != want or d["stacks"] != dealt:
            # § 670a.10(e), § 670a.13(h),(k), § 659a.10(d), § 687a.10(f): wrong count -> misdeal, all hands void
            self._void(
                f"misdeal: {d['stacks']} stacks dispensed and {d['remaining']} cards left, "
                f"expected {dealt} and {want} (§ 670a.10(e))"
            )
            return
        if self._d.unread:
            self.machine.trigger("enter_hands")
            books.commit(
                [books.rec(Kind.STUB_VERIFIED, remaining=d["remaining"], cards_read=False)],
                lambda _e: self.begin_hand_entry(rnd),
            )
            return
        books.commit([books.rec(Kind.STUB_VERIFIED, remaining=d["remaining"])], lambda _e: self.machine.advance())

    def _on_stack(self, rnd: Round, d: Mapping[str, Any]) -> None:
        dealt = self._d
        n = len(dealt.dealt_stacks) + 1
        want = dealt.to_dispense[0] if dealt.to_dispense else None
        # a stack of the wrong size: a position dealt an incorrect number of cards, every hand
        # void (§ 670a.13(h),(k), § 659a.10(d), § 687a.13(c))
        if want is None or not _stack_as_expected(d, n, want.cards):
            self._void(
                f"misdeal: stack {d['stack']} with {d['count']} cards, expected stack {n} of "
                f"{want.cards if want else 0} (§ 670a.13(h),(k))"
            )
            return
        cards = list(d["cards"])
        if any(c == P.CARD_UNREAD for c in cards):
            dealt.unread = True  # the dealer will enter the hands (keypad)
        elif any(not 0 <= c < self.proc.deck_card_limit() for c in cards):
            self.raise_tilt("shoe", f"shoe reported impossible card bytes {cards}")
            return
        self.timer.cancel()
        self._stack_taken(rnd, want, cards)

    def _stack_taken(self, rnd: Round, want: Stack, cards: list[int]) -> None:
        """The stack expected is in: its cards to their recipient, then the next stack, or the deal done."""
        dealt = self._d
        dealt.to_dispense.pop(0)
        dealt.dealt_stacks.append(want)
        dealt.stacks.append(cards)
        dealt.cards[want.to] = dealt.cards.get(want.to, ()) + tuple(cards)
        if dealt.to_dispense:
            self._dispense_next()
            return
        self._deal_done(rnd)

    def _deal_done(self, rnd: Round) -> None:
        """The last stack of a deal is in: the deal recorded, then the next phase."""
        dealt, proc, state = self._d, self.proc, self.machine.state
        if not proc.multi_deck and _card_twice(dealt.stacks):
            self.raise_tilt("shoe", "the shoe reported the same card twice in one deal")
            return
        if not dealt.unread:
            hands = proc.dealt(rnd, state)
            if hands is not None:  # the game's positions' hands are not its stacks (tiles, § 621a.7)
                dealt.cards = dict(hands)
        rec = self.books.rec(
            Kind.DEAL,
            phase=state,
            start=dealt.start,
            cards_read=not dealt.unread,
            stacks=[proc.show_cards(s) for s in dealt.stacks],
            hands={k: proc.show_cards(v) for k, v in sorted(dealt.cards.items())},
        )
        self.books.commit([rec], lambda _e: self.machine.advance())

    def phase_stub(self, rnd: Round) -> None:
        manual = self.devices.alternative("shoe") == "manual"
        if not self.proc.stub_due(rnd) or manual:
            why = "dealt by hand (§ 670a.13(n))" if manual else self.proc.stub_skip_reason
            self.books.commit([self.books.rec(Kind.STUB_SKIPPED, reason=why)], lambda _e: self.machine.advance())
            return
        self.shoe.request_count()  # § 670a.10(d)
        self.timer.set(DEVICE_TIMEOUT_S, "shoe", "no remaining-card count")

    # ---- keypad entry of hands ---------------------------------------------------------------
    def begin_hand_entry(self, rnd: Round) -> None:
        if self.machine.state != TableState.HAND_ENTRY:
            return
        if self.keypad is None:
            self.raise_tilt("keypad", "the cards must be entered but no keypad is configured")
            return
        proc = self.proc
        seats = ",".join(str(s) for s in sorted(proc.hand_entry_seats(rnd))) or "-"
        self.keypad.prompt(f"ENTER WINNING HANDS SEATS {seats}: '<seat> <{proc.stack_size} cards>' ... DONE")
        self.emit("hand_entry", seats=sorted(rnd.accepted))

    def hand_entry(self, rnd: Round, text: str) -> bool:
        """One line of the dealer's hand entry; True when the dealer keyed DONE and the
        hands are complete.  A wrong line raises :class:`EntryError` naming the problem."""
        proc = self.proc
        if text.upper() == "DONE":
            missing = proc.hand_entry_complete(rnd)
            if missing:
                raise EntryError(missing)
            return True
        head, _, rest = text.partition(" ")
        seat = self._entry_seat(rnd, head)
        cards = proc.parse_hand(rnd, seat, rest)
        if not proc.multi_deck:  # § 686a.3: six decks
            self._refuse_entered_twice(seat, cards)
        self._d.entered[seat] = cards
        if self.keypad is not None:
            self.keypad.prompt(f"{'DEALER' if seat == 0 else f'SEAT {seat}'} OK: {proc.show_cards(cards)}")
        return False

    def _refuse_entered_twice(self, seat: int, cards: Sequence[int]) -> None:
        """One deck: a card already entered for another seat is a wrong line."""
        others = {c for s, cs in self._d.entered.items() if s != seat for c in cs}
        dup = [c for c in cards if c in others]
        if dup:
            raise EntryError(f"{self.proc.show_cards(dup)} already entered for another seat")

    def _entry_seat(self, rnd: Round, head: str) -> int:
        """The seat a hand-entry line names (0: the dealer)."""
        if head.upper() == "DEALER":
            return 0
        if not head.isdigit():
            raise EntryError(f"{head!r} is not a seat number; enter '<seat> <cards>', 'DEALER <cards>' or DONE")
        seat = int(head)
        if seat not in self.proc.hand_entry_seats(rnd):
            raise EntryError(f"seat {seat} has no accepted wager")
        return seat

    # ---- device deadlines --------------------------------------------------------------
    def timed_out(self, device: str, what: str) -> None:
        """The device deadline (controller/play/timers.py) expired without an answer."""
        phase = self.machine.phase()
        if device == "shoe" and phase is not None and phase.kind in (PhaseKind.DEAL, PhaseKind.STUB):
            # § 670a.13(m): the shoe stops dealing -> void; and the device is suspect -> tilt
            self._void(f"shoe stopped dealing: {what} (§ 670a.13(m))")
        self.raise_tilt(device, f"{device} timed out: {what}")


def _lid_opened(msg: str, data: Mapping[str, Any]) -> bool:
    """The shaker's lid opened (reported as such, or as the reason of a no-roll)."""
    if msg == "LID":
        return bool(data.get("open"))
    return msg == "NO_ROLL" and data.get("reason") == P.NO_ROLL_LID_OPEN


def _is_no_roll(msg: str, data: Mapping[str, Any]) -> bool:
    """A no-roll: reported as such, or a result shaken for less than the minimum time."""
    return msg == "NO_ROLL" or (msg == "RESULT" and data["shake_ms"] < SHAKE_MIN_S * 1000)


def _stack_as_expected(d: Mapping[str, Any], n: int, cards: int) -> bool:
    """A STACK message is stack ``n`` of ``cards`` cards, and holds them all."""
    return bool(d["stack"] == n and d["count"] == cards and len(d["cards"]) == d["count"])


def _card_twice(stacks: list[list[int]]) -> bool:
    """A card read twice in one deal's stacks (cards not read aside)."""
    seen = [c for s in stacks for c in s if c != P.CARD_UNREAD]
    return len(set(seen)) != len(seen)
