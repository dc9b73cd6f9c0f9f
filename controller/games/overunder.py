"""Over/Under at the table (58 Pa. Code 686a).

The round (§ 686a.6, § 686a.7):

1. Wagers open: the dealer keys each player's Ante Wager (required to play,
   § 686a.6(d)) and the optional Bonus Wager (§ 686a.6(e), only with an Ante), all
   before the first card (§ 686a.6(c)).  There is no starting position.
2. ``first_card`` — the shoe dispenses one card face up to each position with an
   Ante, from the player farthest to the dealer's left clockwise (seat 1 first,
   § 686a.7(e)); after each shuffle the first card out is burned (§ 686a.7(c)).
3. ``over_under_decisions`` — the dealer asks each player in the same order
   (§ 686a.7(f)) and keys the answer (§ 686a.7(g)): ``OVER <seat>`` (an Over 23
   Wager equal to the Ante), ``UNDER <seat>`` (an Under 18 Wager equal to the Ante)
   or ``SURRENDER <seat>`` (the Ante is forfeited; a Bonus Wager stays, (h)).
4. ``two_more_cards`` — two more cards to every position, surrendered ones too
   (§ 686a.7(i)).
5. ``shoe_count`` — only when the shoe did not read the cards: the cards left are
   counted and the dealer keys the hands (as for § 670a.10(d)); a continuous shoe
   has no stub count otherwise.
6. ``settlement`` — every wager, seat by seat in the dealing order (§ 686a.7(j)-(l),
   § 686a.8), through controller/rules/overunder.py.

The shoe is a six-deck batch of 312 cards with a cover card (§ 686a.3(a)), dealt
continuously across rounds: it is reshuffled only when the cover card has come out
(§ 686a.7(d), § 686a.5(f)) — including a cover card the shoe failed to report, as
the controller knows where it lies — after a void, and before a round the cards
left could not complete (§ 686a.9(b), docs/rules-readings/686a.md 686a-7).  A card
found face up in the shoe is discarded and the round goes on (§ 686a.9(a)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from controller.core.records import PhaseKind
from controller.games.base import (
    DecisionState,
    Entry,
    EntryError,
    GameRound,
    Phase,
    Procedure,
    Stack,
    WagerSpec,
    by_seat,
    seat_arg,
    split_entry,
)
from controller.rules.cards import CardError, cards_str
from controller.rules.overunder import (
    BONUS_PAYTABLE,
    HAND_CARDS,
    SHOE_CARDS,
    Decision,
    OverUnderError,
    SeatPlay,
    max_cover_position,
    parse_hand,
    point_total,
    settle_round,
)
from controller.rules.paytables import get_paytable
from controller.rules.settlement import WagerResult

if TYPE_CHECKING:
    from controller.games.round import Round
    from controller.settings.config import TableProfile

DECIDE = "over-under"
OPTIONS = ("bonus", "bonus_paytable", "ante_min_cents", "ante_max_cents", "bonus_min_cents", "bonus_max_cents")
KEYS = {"O": "over-23", "U": "under-18", "S": "surrender"}  # one-letter keys on the keypad
MAX_SEATS = 6  # § 686a.2(a): betting positions for no more than six players


@dataclass(frozen=True)
class CoverSeen:
    """Where the cover card came out (§ 686a.5(c)(2)): the shoe's stack, and the betting
    area it appeared on (None: between deals)."""

    stack: object
    to: str | None


@dataclass
class OverUnderRound(GameRound):
    cover: CoverSeen | None = None


class OverUnder(Procedure):
    play: OverUnderRound
    game = "over-under"
    chapter = "58 Pa. Code 686a"
    deck = SHOE_CARDS  # § 686a.3(a): six 52-card decks, no joker
    stack_size = HAND_CARDS  # the hand the dealer keys when the cards were not read
    multi_deck = True
    burn_limit = SHOE_CARDS  # § 686a.9(a): every face-up card is discarded; no void
    phases = (
        Phase("first_card", PhaseKind.DEAL, "§ 686a.7(c),(e)", "first"),
        Phase("over_under_decisions", PhaseKind.DECIDE, "§ 686a.7(f)-(h)", DECIDE),
        Phase("two_more_cards", PhaseKind.DEAL, "§ 686a.7(i)", "more"),
        Phase("shoe_count", PhaseKind.STUB, "§ 686a.7(i); cards not read only"),
        Phase("settlement", PhaseKind.SETTLE, "§ 686a.7(j)-(l), § 686a.8"),
    )

    def __init__(self, profile: TableProfile):
        super().__init__(profile)
        where = f"{profile.file}: [game.options]"
        opts = dict(profile.options)
        bad = sorted(k for k in opts if k not in OPTIONS)
        if bad:
            raise ValueError(f"{where} {bad[0]!r} is not an Over/Under option ({', '.join(OPTIONS)})")
        self._check_table(profile)

        cents = partial(_cents, opts, where)
        bonus = opts.get("bonus", True)
        if not isinstance(bonus, bool):
            raise ValueError(f"{where} bonus = {bonus!r}: true or false (the Bonus Wager is offered, § 686a.6(e))")
        self.bonus_paytable = _bonus_paytable(str(opts.get("bonus_paytable", BONUS_PAYTABLE)), where)
        ante_min, ante_max = cents("ante_min_cents", 500), cents("ante_max_cents", 100_000)
        bonus_min, bonus_max = cents("bonus_min_cents", 100), cents("bonus_max_cents", 10_000)
        if ante_min > ante_max:
            raise ValueError(f"{where} ante_min_cents = {ante_min}: above ante_max_cents ({ante_max})")
        if bonus_min > bonus_max:
            raise ValueError(f"{where} bonus_min_cents = {bonus_min}: above bonus_max_cents ({bonus_max})")
        w = {
            "ante": WagerSpec("ante", "§ 686a.6(d)", min_cents=ante_min, max_cents=ante_max),
            # § 686a.7(g)(1),(2): equal to the Ante, made after the first card
            "over-23": WagerSpec(
                "over-23", "§ 686a.7(g)(1)", needs="ante", late=True, min_cents=ante_min, max_cents=ante_max
            ),
            "under-18": WagerSpec(
                "under-18", "§ 686a.7(g)(2)", needs="ante", late=True, min_cents=ante_min, max_cents=ante_max
            ),
        }
        if bonus:
            w["bonus"] = WagerSpec("bonus", "§ 686a.6(e)", needs="ante", min_cents=bonus_min, max_cents=bonus_max)
        self.wagers = w
        # a new procedure (start-up, profile change) starts the continuous shoe with a fresh batch
        self.reshuffle_due = True
        self.burn_due = False
        self.left = 0  # cards in the shoe, as the controller counts them
        self.cover_at = 0  # cards above the cover card after the last shuffle
        self.dealt_since_shuffle = 0

    def _check_table(self, profile: TableProfile) -> None:
        """At most :data:`MAX_SEATS` betting positions (§ 686a.2(a)), and no progressive (§ 686a.6)."""
        if not 1 <= self.seats <= MAX_SEATS:
            raise ValueError(
                f"{profile.file}: [game] seats = {self.seats}: Over/Under has at most "
                f"{MAX_SEATS} betting positions (§ 686a.2(a))"
            )
        if profile.progressive is not None:
            raise ValueError(
                f"{profile.file}: Over/Under has no progressive wager (§ 686a.6); remove the [progressive] section"
            )

    def new_play(self) -> OverUnderRound:
        return OverUnderRound()

    # ---- wagers -------------------------------------------------------------------------
    def keyed_wager(self, seat: int, wager: str, cents: int, *, late: bool = False) -> None:
        if wager in ("over-23", "under-18") and not late:
            raise EntryError(
                f"the {wager} wager is made after the first card, by the player's decision (§ 686a.6(c), § 686a.7(g))"
            )
        super().keyed_wager(seat, wager, cents, late=late)

    def antes(self, rnd: Round) -> list[int]:
        """Seats with an Ante Wager, in the dealing order: from the player farthest to the
        dealer's left (seat 1), clockwise (§ 686a.7(e),(f))."""
        return sorted(s for (s, w) in rnd.wagers if w == "ante")

    def settlement_order(self) -> list[int]:
        return list(range(1, self.seats + 1))  # § 686a.7(j): player by player, in the dealing order

    # ---- the shoe -------------------------------------------------------------------------
    def needs_shuffle(self) -> bool:
        """§ 686a.7(d), § 686a.5(f): after the cover card came out; § 686a.9(b) (reading
        686a-7): before a round the cards left might not complete — one card to burn, three
        per position, and a face-up card per position."""
        return self.reshuffle_due or self.left < 1 + (HAND_CARDS + 1) * self.seats

    def on_shuffled(self, cards: int) -> bool:
        if cards != self.deck:
            return False
        self.reshuffle_due = False
        self.burn_due = True  # § 686a.7(c): the first card after a full batch is burned
        self.left = cards
        self.dealt_since_shuffle = 0
        return True

    def cover_problem(self, cards: int, cover: int) -> str | None:
        if cover == 0:
            return "the shoe reports no cover card (§ 686a.3(a): at least one cover card)"
        limit = max_cover_position(cards)
        if cover > limit:
            return (
                f"the cover card lies {cards - cover} cards from the bottom: it must be at least 1/4 of the way "
                f"in from the bottom, i.e. at most {limit} cards above it (§ 686a.5(d))"
            )
        self.cover_at = cover
        return None

    def on_cover_card(self, rnd: Round | None, data: Mapping[str, Any]) -> None:
        """§ 686a.7(d): the cover card came out; the round is completed and the cards are
        reshuffled before the next one.  Noted for the cut (§ 686a.5(c)(2)): the position
        on whose betting area it appeared."""
        self.reshuffle_due = True
        if rnd is not None:
            where = rnd.to_dispense[0].to if rnd.to_dispense else None
            self.play.cover = CoverSeen(data.get("stack"), where)

    def new_dealer(self) -> str:
        """§ 686a.7(c): each new dealer who comes to the table removes one card to the
        discard rack before dealing any cards to the players."""
        self.burn_due = True
        return "one card is burned before the next deal (§ 686a.7(c))"

    def round_ended(self, rnd: Round, void: bool) -> None:
        used = sum(s.cards for s in rnd.dealt_stacks) + rnd.face_up
        self.left -= used
        self.dealt_since_shuffle += used
        if "burn" in rnd.cards:
            self.burn_due = False
        if self.cover_at and self.dealt_since_shuffle > self.cover_at:
            self.reshuffle_due = True  # past the cover card even if the shoe did not report it
        if void and rnd.phase >= 0:
            self.reshuffle_due = True  # void once dealing began (a jam, a misdeal): collect every card, reshuffle

    def plan(self, rnd: Round, name: str) -> list[Stack]:
        seats = self.antes(rnd)
        if not seats:
            return []
        if name == "first":  # § 686a.7(c) the burn card, § 686a.7(e) one card to each Ante
            burn = [Stack("burn", 1)] if self.burn_due else []
            return burn + [Stack(f"seat:{s}", 1) for s in seats]
        return [Stack(f"seat:{s}", 2) for s in seats]  # § 686a.7(i): even after a surrender

    def expected_remaining(self, rnd: Round) -> int:
        return self.left - sum(s.cards for s in rnd.dealt_stacks) - rnd.face_up

    stub_skip_reason = "a continuous six-deck shoe: no stub count (§ 686a.7)"

    def stub_due(self, rnd: Round) -> bool:
        """A continuous shoe has no stub count; only unread cards are counted before the
        dealer keys the hands."""
        return bool(rnd.unread)

    def deck_card_limit(self) -> int:
        return 52  # no joker (§ 686a.3(a))

    def parse_hand(self, rnd: Round, seat: int, text: str) -> tuple[int, ...]:
        if seat == 0:
            raise EntryError("Over/Under has no dealer's hand")
        return parse_hand(text, HAND_CARDS)

    def hand_entry_seats(self, rnd: Round) -> set[int]:
        return set(self.antes(rnd))

    # ---- decisions (§ 686a.7(f)-(h)) ------------------------------------------------------
    def decision_state(self, rnd: Round, name: str) -> DecisionState:
        seats = tuple(self.antes(rnd))
        return DecisionState(required=seats, done=not seats)

    def decision_prompt(self, rnd: Round, name: str) -> str:
        seats = self.antes(rnd)
        return f"OVER/UNDER SEATS {','.join(map(str, seats))}: 'OVER <seat>', 'UNDER <seat>', 'SURRENDER <seat>'"

    def apply_entry(self, rnd: Round, name: str, text: str) -> Entry:
        ds = rnd.decisions[name]
        parts = split_entry(text)
        if len(parts) != 2:
            raise EntryError("enter OVER <seat>, UNDER <seat> or SURRENDER <seat>")
        try:
            decision = Decision.parse(KEYS.get(parts[0].upper(), parts[0]))
        except OverUnderError:
            raise EntryError(f"{parts[0]!r} is not OVER, UNDER or SURRENDER") from None
        seat = seat_arg(parts[1], list(ds.required))
        if seat in ds.answers:
            raise EntryError(f"seat {seat} has already decided ({ds.answers[seat]}); a decision stands (§ 686a.6(c))")
        nxt = next(s for s in ds.required if s not in ds.answers)
        if seat != nxt:
            raise EntryError(
                f"seat {nxt} decides first: from the player farthest to the dealer's left, clockwise (§ 686a.7(f))"
            )
        ante = rnd.wagers[(seat, "ante")]
        record = {"seat": seat, "decision": decision.value}
        answer = (seat, decision.value)
        if decision is Decision.SURRENDER:  # § 686a.7(g)(3)
            return Entry(f"SEAT {seat} SURRENDERS THE ANTE {ante / 100:,.2f}", record, answer=answer)
        # § 686a.7(g)(1),(2): a wager equal to the Ante
        return Entry(
            f"SEAT {seat} {decision.value.upper()} {ante / 100:,.2f}",
            record,
            late={(seat, decision.value): ante},
            answer=answer,
        )

    # ---- settlement -------------------------------------------------------------------------
    def _plays(self, rnd: Round, hands: Mapping[int, Sequence[int]]) -> list[SeatPlay]:
        ws = by_seat(rnd.wagers)
        answers = rnd.decisions[DECIDE].answers
        return [
            SeatPlay(
                seat=s, ante=ws[s]["ante"], decision=answers[s], cards=tuple(hands[s]), bonus=ws[s].get("bonus", 0)
            )
            for s in self.antes(rnd)
        ]

    def settle(self, rnd: Round) -> list[WagerResult]:
        return settle_round(
            self._plays(rnd, {s: rnd.cards[f"seat:{s}"] for s in self.antes(rnd)}), bonus_paytable=self.bonus_paytable
        )

    def hand_entry_complete(self, rnd: Round) -> str | None:
        ds = rnd.decisions.get(DECIDE)
        undecided = [str(s) for s in self.antes(rnd) if ds is None or s not in ds.answers]
        if undecided:
            # the shoe was out of order from the first card: the decisions were never keyed
            return (
                f"no Over/Under decision for seats {', '.join(undecided)}: void the round "
                "(decisions are keyed after the first card, § 686a.7(f))"
            )
        missing = [str(s) for s in self.antes(rnd) if s not in rnd.entered]
        return f"enter the three cards of seats: {', '.join(missing)}" if missing else None

    def settle_entered(self, rnd: Round) -> list[WagerResult]:
        problem = self.hand_entry_complete(rnd)
        if problem:
            raise EntryError(problem)
        return settle_round(self._plays(rnd, rnd.entered), bonus_paytable=self.bonus_paytable)

    def describe(self, rnd: Round) -> str:
        parts = []
        answers = rnd.decisions[DECIDE].answers if DECIDE in rnd.decisions else {}
        for s in self.antes(rnd):
            cards = rnd.cards.get(f"seat:{s}", ())
            try:
                total = f"={point_total(cards)}" if len(cards) == HAND_CARDS else ""
            except (CardError, OverUnderError):
                total = ""
            parts.append(f"s{s} {cards_str(cards) if 0xFF not in cards else '??'}{total} {answers.get(s, '-')}")
        return "; ".join(parts)


def _cents(opts: Mapping[str, Any], where: str, key: str, default: int) -> int:
    """The option ``key``: a whole number of cents, 1 to 10,000,000."""
    v = opts.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 10_000_000:
        raise ValueError(f"{where} {key} = {v!r}: a whole number of cents, 1 to 10,000,000")
    return v


def _bonus_paytable(name: str, where: str) -> str:
    """``bonus_paytable``: an Over/Under Bonus paytable of config/paytables."""
    try:
        pt = get_paytable(name)
    except (KeyError, ValueError):
        raise ValueError(f"{where} bonus_paytable: no paytable named {name!r}") from None
    if getattr(pt, "game", "over-under") != "over-under" or getattr(pt, "wager", "bonus") != "bonus":
        raise ValueError(f"{where} bonus_paytable: {name!r} is not an Over/Under Bonus paytable")
    return name
