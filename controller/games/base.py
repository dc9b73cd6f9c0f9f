"""What the round state machine needs to know about a game: its procedure.

A :class:`Procedure` describes one chapter's round as a sequence of
:class:`Phase` steps after the lock-out (each a state of the machine, named
after the regulation's step), the wagers the table takes (:class:`WagerSpec`),
how each deal is dispensed (:class:`Stack`), which decisions the players make
and how the dealer enters them, and how the round settles — always by calling
the pure rules engine in controller/rules/.  The table (controller/play/table.py and
its components) runs any procedure; nothing game-specific lives there.  The
optional hooks a game may override (the shaker's activator, the cover card, the
stub count's skip reason, hand-entry completeness...) have their defaults here,
so the table calls them without asking whether they exist.

Phase kinds (:class:`~controller.core.records.PhaseKind`):

==============  =================================================================
``start``       starting position from the shaker or the RNG (§ 670a.5(i), § 621a.6(c))
``dice_wagers`` wagers settled right after the roll (§ 621a.6(b))
``deal``        the shoe dispenses the stacks of :meth:`Procedure.plan` (§ 670a.10(c))
``stub``        the cards left are counted (§ 670a.10(d)), when :meth:`Procedure.stub_due`
``decide``      players' decisions, entered by the dealer on the keypad
``settle``      every wager settled (§ 670a.11(e)-(h) and peers)
==============  =================================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from controller.core.records import PhaseKind
from controller.rules.positions import delivery_order, position_to_seat, settlement_order, start_position
from controller.rules.settlement import WagerResult

if TYPE_CHECKING:
    from controller.games.round import Round
    from controller.settings.config import TableProfile

PHASE_KINDS = tuple(PhaseKind)

#: the shaker's "who" for the dealer's own activation button (drivers/protocol.py ``DEALER``)
DEALER = 0


@dataclass(frozen=True)
class Phase:
    state: str  # machine state, named after the regulation's step
    kind: PhaseKind
    section: str  # the section it implements
    name: str = ""  # which deal ("main", "first", "more") or which decision ("settings", "raise")
    #: a ``decide`` phase the round resumes at after the dealer keyed the hands (shoe out of
    #: order or not reading, § 670a.13(n)): the players still decide (DJ Wild's raise or fold,
    #: § 687a.11(b)).  Otherwise the keyed hands go straight to settlement.
    after_entry: bool = False

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", PhaseKind(self.kind))
        except ValueError:
            raise ValueError(
                f"phase {self.state}: kind {self.kind!r} is not one of {tuple(str(k) for k in PhaseKind)}"
            ) from None
        if self.after_entry and self.kind != PhaseKind.DECIDE:
            raise ValueError(f"phase {self.state}: only a decide phase can follow the hand entry")


@dataclass(frozen=True)
class Stack:
    """One stack the shoe dispenses, and who receives it: ``seat:N``, ``dealer``,
    ``dead`` (tiles' Dead Hand), ``burn``, ``replacement`` (DJ Wild's joker
    replacement card, § 687a.11(f)(1))."""

    to: str
    cards: int

    @property
    def seat(self) -> int | None:
        return int(self.to[5:]) if self.to.startswith("seat:") else None


@dataclass(frozen=True)
class WagerSpec:
    id: str
    section: str
    sensed: bool = False  # on a bet sensor: its amount is fixed (``fixed_cents``)
    fixed_cents: int | None = None
    min_cents: int = 100
    max_cents: int = 1_000_000
    needs: str | None = None  # a wager the seat must also have (e.g. "base", § 670a.7(e))
    progressive: bool = False  # contributes to the progressive meter
    late: bool = False  # may be made after "no more bets" (the Double Down, DJ Wild's Raise)


class EntryError(ValueError):
    """A keypad entry that is not valid now; the message says what was wrong."""


@dataclass(frozen=True)
class DecisionState:
    """Answers collected during one ``decide`` phase (the table's deciding component
    keeps it, controller/play/deciding.py; a procedure's :class:`Entry` says what changes)."""

    required: tuple[int, ...] = ()  # seats that must answer
    answers: Mapping[int, str] = field(default_factory=dict)
    done: bool = False  # the dealer keyed DONE (optional answers end)

    def after(self, entry: Entry) -> DecisionState:
        """The state once ``entry`` is taken: its answer added, DONE if it ended the phase."""
        if entry.answer is None and not entry.done:
            return self
        answers = dict(self.answers)
        if entry.answer is not None:
            answers[entry.answer[0]] = entry.answer[1]
        return replace(self, answers=answers, done=self.done or entry.done)


@dataclass
class Entry:
    """What a keypad entry in a decision phase did: the reply shown on the keypad,
    the details recorded in the ledger, any wagers it adds after the lock-out, the
    seat's answer to the phase (seat 0: the dealer's) and whether it ended the phase."""

    reply: str
    record: dict[str, Any] = field(default_factory=dict)
    late: dict[tuple[int, str], int] = field(default_factory=dict)
    answer: tuple[int, str] | None = None
    done: bool = False


@dataclass
class GameRound:
    """A game's own notes on the round in play, kept by its procedure (``Procedure.play``)
    and written by it only; each game extends it with what its rules need."""

    #: one player on two adjacent betting areas (``SAME <seat> <seat>``): seat -> player
    player: dict[int, str] = field(default_factory=dict)


def parse_cents(text: str) -> int:
    """``25`` / ``25.50`` / ``$1,000`` -> cents; a clear error otherwise."""
    t = text.strip().lstrip("$").replace(",", "")
    whole, _, frac = t.partition(".")
    if not whole.isdigit() or (frac and (not frac.isdigit() or len(frac) > 2)):
        raise EntryError(f"{text!r} is not an amount (like 25 or 25.50)")
    return int(whole) * 100 + (int(frac.ljust(2, "0")) if frac else 0)


class Procedure:
    """Base class: the defaults are those of a card game dealt in stacks from an
    automated shoe, from a starting position, to every position (§ 670a.10)."""

    game: str = "?"
    chapter: str = ""  # the regulation's chapter, e.g. "58 Pa. Code 670a"
    phases: tuple[Phase, ...] = ()
    deck: int = 53
    wagers: Mapping[str, WagerSpec] = {}
    stack_size: int = 0
    #: the button the dealer presses for "no more bets": the lock-out, or DJ Wild's
    #: Start Game (controller/games/djwild.py); the simulated dealer (hil/people.py) presses this one
    lockout_button: str = "lockout"
    #: § 670a.7(f), § 659a.7(f), § 688a.7(f): a player may wager on two adjacent betting
    #: areas (the profile's ``adjacent_areas``; the Rules Submission's choice)
    adjacent_areas: bool = False
    adjacent_section: str = ""  # the chapter's "(f)", for messages; "" = the game has no such rule

    #: the round in play, as this game notes it (:meth:`begin_round` starts a new one)
    play: GameRound

    def __init__(self, profile: TableProfile):
        self.profile = profile
        self.play = self.new_play()
        self.seats: int = profile.seats
        self.positions: int = profile.positions
        starts = any(p.kind == PhaseKind.START for p in self.phases)
        method = profile.start_method
        if starts and method == "none":
            raise ValueError(
                f'{profile.file}: [game] start_method: {self.game} has a starting position; use "shaker" or "rng"'
            )
        if not starts and method != "none":
            raise ValueError(f'{profile.file}: [game] start_method: {self.game} has no starting position; use "none"')

    def new_play(self) -> GameRound:
        """A new round's notes (a game with notes of its own overrides it)."""
        return GameRound()

    def begin_round(self) -> None:
        """A round opens: its notes start empty."""
        self.play = self.new_play()

    def hand_light(self, hand: str) -> int:
        """The sign's hand light for a progressive hit: the hand's row in the table's
        progressive paytable, 1 = its first row ("the appropriate light on the progressive
        table game system", § 670a.11(h)(3)(i)(B)(II)); 0 when the hand is not listed."""
        prog = self.profile.progressive
        if prog is None:
            return 0
        from controller.rules.paytables import get_paytable

        hands = get_paytable(prog.paytable).hands
        return hands.index(hand) + 1 if hand in hands else 0

    def same_player(self, rnd: Round, parts: Sequence[str]) -> Entry:
        """``SAME <seat> <seat>``: one player on two adjacent betting areas (§ 670a.7(f),
        § 688a.7(f), § 659a.7(f)).  Recorded in ``self.play.player`` (seat -> player) for
        settlement: no Envy Bonus for his own hand (§ 670a.11(h)(1)(ii), § 688a.11(h)(2)(ii)).
        Raises :class:`EntryError`, changing nothing, when the table does not permit it, the
        seats are not both playing, not adjacent, or one is already paired."""
        sec = self.adjacent_section
        if not sec or not self.adjacent_areas:
            raise EntryError(
                "this table does not permit wagers on two adjacent betting areas" + (f" ({sec})" if sec else "")
            )
        playing = sorted({s for (s, _w) in rnd.wagers} | set(rnd.accepted))
        a, b = adjacent_seats(parts, playing, f"adjacent betting areas ({sec})")
        players = self.play.player
        if a in players or b in players:
            raise EntryError(f"seat {a if a in players else b} is already one player's second betting area")
        who = f"seats {a}+{b}"
        players[a] = players[b] = who
        return Entry(f"SEATS {a} AND {b} ONE PLAYER", {"decision": "adjacent", "seats": [a, b]})

    def needs_keypad(self) -> bool:
        """Whether the dealer keys wagers or players' decisions at this table."""
        return any(not s.sensed for s in self.wagers.values()) or any(p.kind == PhaseKind.DECIDE for p in self.phases)

    # ---- phases ---------------------------------------------------------------------
    def phase(self, state: str) -> Phase | None:
        return next((p for p in self.phases if p.state == state), None)

    @property
    def settle_state(self) -> str:
        return next(p.state for p in self.phases if p.kind == PhaseKind.SETTLE)

    def in_round_states(self) -> tuple[str, ...]:
        """States in which a void may still return every wager."""
        return ("no_more_bets",) + tuple(p.state for p in self.phases if p.kind != PhaseKind.SETTLE) + ("hand_entry",)

    # ---- wagers ---------------------------------------------------------------------
    def sensed_wagers(self) -> tuple[str, ...]:
        return tuple(w for w, s in self.wagers.items() if s.sensed)

    def keyed_wager(self, seat: int, wager: str, cents: int, *, late: bool = False) -> None:
        """Validate a wager the dealer keys; raise :class:`EntryError` naming the problem."""
        if not 1 <= seat <= self.seats:
            raise EntryError(f"seat {seat} is not a seat at this table (1..{self.seats})")
        spec = self.wagers.get(wager)
        if spec is None:
            raise EntryError(f"{wager!r} is not a wager of this game ({', '.join(self.wagers)})")
        if spec.sensed:
            raise EntryError(f"the {wager} wager is sensed on the layout, not keyed")
        if late and not spec.late:  # § 670a.7(c): after "no more bets" only the Double Down
            raise EntryError(f"the {wager} wager must be made before 'no more bets' ({spec.section})")
        if cents and not spec.min_cents <= cents <= spec.max_cents:
            raise EntryError(
                f"{wager} ${cents / 100:,.2f} is outside ${spec.min_cents / 100:,.2f}..${spec.max_cents / 100:,.2f}"
            )

    def reject_unsupported(self, wagers: Mapping[tuple[int, str], int]) -> dict[tuple[int, str], str]:
        """Wagers refused at the lock-out, with the reason (e.g. no base wager, § 670a.7(e))."""
        out = {}
        for (seat, w), _c in wagers.items():
            need = self.wagers[w].needs
            if need and (seat, need) not in wagers:
                out[(seat, w)] = f"a {w} wager needs a {need} wager ({self.wagers[w].section})"
        return out

    # ---- dealing --------------------------------------------------------------------
    def plan(self, rnd: Round, name: str) -> list[Stack]:
        """Stacks of one stack size to every position, clockwise from the start (§ 670a.10(c))."""
        out = []
        for pos in delivery_order(rnd.start_position, self.positions):
            seat = position_to_seat(pos, self.seats)
            out.append(Stack("dealer" if seat is None else f"seat:{seat}", self.stack_size))
        return out

    def starting_position(self, rnd: Round, count: int) -> int:
        """The position (1 = the dealer, counting counterclockwise) that receives the first
        stack for a dice total or RNG number ``count`` (§ 670a.5(i)); a game that counts from
        elsewhere overrides it (a player bank counts from the bank, § 621a.9(j))."""
        return start_position(count, self.positions)

    def dealt(self, rnd: Round, name: str) -> Mapping[str, tuple[int, ...]] | None:
        """Called when the last stack of deal ``name`` is in, before the deal is recorded:
        a procedure whose stacks are not its positions' hands (tiles dealt by a style,
        § 621a.7) returns each recipient's cards, which replace ``rnd.cards``."""
        return None

    #: face-up cards the shoe may find in one deal and burn (§ 670a.13(f): one); more voids it
    burn_limit: int = 1

    def parse_hand(self, rnd: Round, seat: int, text: str) -> tuple[int, ...]:
        """A hand the dealer keys in hand entry (§ 670a.13(n)) as card bytes; seat 0 is the dealer."""
        from controller.rules.cards import parse_cards

        return parse_cards(text, count=self.stack_size)

    def hand_entry_seats(self, rnd: Round) -> set[int]:
        """Seats whose hands the dealer may key in hand entry: those with an accepted wager."""
        return {s for (s, _w) in rnd.wagers}

    def expected_remaining(self, rnd: Round) -> int:
        dealt = sum(s.cards for s in rnd.dealt_stacks)
        return self.deck - dealt - rnd.face_up

    def stub_due(self, rnd: Round) -> bool:
        return True

    #: recorded (``stub.skipped``) when :meth:`stub_due` says no count this round
    stub_skip_reason: str = "not due this round"

    #: a multi-deck shoe repeats cards legitimately (Over/Under, § 686a.3)
    multi_deck: bool = False

    #: a progressive wager that :meth:`settle` returns (outcome ``"returned"``, e.g. a
    #: player's void of his hand, § 688a.13(d)) also takes back its meter contribution
    #: (``meter.void``), like a round void; off by default
    returned_reverses_meter: bool = False

    def needs_shuffle(self) -> bool:
        """Whether the shoe shuffles before the next round: after every round for a
        single deck (§ 670a.5(a)); a continuous multi-deck shoe says when (§ 686a.7(d))."""
        return True

    def round_ended(self, rnd: Round, void: bool) -> None:
        """Called when a round is closed (complete or void): a procedure may note what
        the next round needs (e.g. a reshuffle after a misdeal, § 686a.9)."""

    def carry(self) -> dict[str, Any] | None:
        """What this procedure carries from one round to the next that must survive a
        restart (JSON-serialisable), or None.  The table writes it to the ledger in the
        same transaction as the round's close and hands it to :meth:`restore` at
        start-up.  State the table re-establishes anyway after a power-up (the shoe is
        reshuffled, a stub is counted) need not be carried."""
        return None

    def restore(self, state: Mapping[str, Any]) -> None:
        """Take back what :meth:`carry` returned before a restart."""

    def new_dealer(self) -> str | None:
        """A new dealer came to the table; returns what that changes, if anything."""
        return None

    def on_shuffled(self, cards: int) -> bool:
        """The shuffler reports ``cards`` in the deck: is that the whole deck?"""
        return cards == self.deck

    def on_cover_card(self, rnd: Round | None, data: Mapping[str, Any]) -> None:
        """The shoe reached the cover card (``data``: the shoe's ``COVER`` message); a
        continuous multi-deck shoe asks for a reshuffle before the next round
        (§ 686a.7(d), via :meth:`needs_shuffle`).  A single deck has no cover card."""

    def cover_problem(self, cards: int, cover: int) -> str | None:
        """What is wrong with the cover card the shuffler placed (``cover`` cards above it,
        0 = no cover card), or None: a single deck has none; a multi-deck shoe overrides
        (§ 686a.3(a), § 686a.5(d))."""
        return None

    def deck_card_limit(self) -> int:
        """Card bytes are 0..52 (cards.py numbering, 52 = joker); tiles override."""
        return 53

    def show_cards(self, cards: Sequence[int]) -> str:
        from controller.rules.cards import card_str

        return " ".join("??" if c == 0xFF else card_str(c) for c in cards)

    def hand_of(self, rnd: Round, seat: int) -> tuple[int, ...] | None:
        """A seat's cards (seat 0: the dealer's) as the shoe read them, or as the dealer
        keyed them when the shoe did not read them or is out of order."""
        if rnd.entered:
            got = rnd.entered.get(seat)
            return None if got is None else tuple(got)
        return rnd.cards.get("dealer" if seat == 0 else f"seat:{seat}")

    # ---- the starting position -------------------------------------------------------
    #: a player presses the shaker's activation button (Pai Gow tiles, § 621a.2(f),
    #: § 621a.6(a)(3)); otherwise the dealer does.  The simulated people (hil/people.py)
    #: read this flag to know whether to press it.
    player_activated_shaker: bool = False

    def shaker_activator(self, rnd: Round) -> int:
        """Who activates the shaker this round: :data:`DEALER` (0) or a seat."""
        return DEALER

    # ---- hand entry -----------------------------------------------------------------
    def hand_entry_complete(self, rnd: Round) -> str | None:
        """What the dealer still has to key before DONE ends the hand entry
        (§ 670a.13(n)), or None when the keyed hands are enough to settle."""
        return None

    def settle_entered(self, rnd: Round) -> list[WagerResult]:
        """Settle on the hands the dealer keyed (the shoe out of order or not reading,
        § 670a.13(n)); every game the table plays overrides it."""
        raise NotImplementedError(f"{self.game}: settlement on keyed hands")

    # ---- decisions ------------------------------------------------------------------
    def decision_state(self, rnd: Round, name: str) -> DecisionState:
        return DecisionState(done=True)

    def decision_prompt(self, rnd: Round, name: str) -> str:
        return "DONE"

    def apply_entry(self, rnd: Round, name: str, text: str) -> Entry:
        raise EntryError("no entries are expected now")

    # ---- settlement -----------------------------------------------------------------
    def after_roll(self, rnd: Round) -> list[WagerResult]:
        return []

    def settle(self, rnd: Round) -> list[WagerResult]:
        raise NotImplementedError

    def settlement_order(self) -> list[int]:
        return settlement_order(self.seats)

    # ---- summary for round lines ----------------------------------------------------
    def describe(self, rnd: Round) -> str:
        return ""


def seats_with(wagers: Mapping[tuple[int, str], int], wager: str) -> list[int]:
    return sorted(s for (s, w) in wagers if w == wager)


def by_seat(wagers: Mapping[tuple[int, str], int]) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    for (s, w), c in wagers.items():
        out.setdefault(s, {})[w] = c
    return out


def split_entry(text: str) -> list[str]:
    return text.replace(",", " ").split()


def entry_verb(text: str) -> tuple[str, list[str]]:
    """A keypad entry's verb (upper case) and all its words; an empty entry is an error."""
    parts = split_entry(text)
    if not parts:
        raise EntryError("empty entry")
    return parts[0].upper(), parts


def adjacent_seats(parts: Sequence[str], playing: Sequence[int], what: str) -> tuple[int, int]:
    """The two seats ``SAME <seat> <seat>`` names, both playing and side by side (``what``: the
    areas as the game's rule names them, for the error)."""
    if len(parts) != 3:
        raise EntryError("enter SAME <seat> <seat>")
    a, b = sorted(seat_arg(p, playing) for p in parts[1:3])
    if b - a != 1:
        raise EntryError(f"seats {a} and {b} are not {what}")
    return a, b


def seat_arg(token: str, seats: Sequence[int] | None = None) -> int:
    if not token.isdigit():
        raise EntryError(f"{token!r} is not a seat number")
    seat = int(token)
    if seats is not None and seat not in seats:
        raise EntryError(f"seat {seat} is not playing this round ({', '.join(map(str, seats)) or 'none'})")
    return seat
