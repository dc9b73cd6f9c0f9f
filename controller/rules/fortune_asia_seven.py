"""Fortune Asia Poker seven-card hands: Fortune Bonus (§ 659a.6(d)), Progressive
(§ 659a.6(e)) and Insurance (§ 659a.7(e)(2), § 659a.11(h)(2)).

Pure: no I/O.  The dealer "rearrange[s] the seven cards of any player and
form[s] the highest ranking hand" (§ 659a.11(h)), so these hands are a property
of the seven cards alone, whatever way the player set them.

Every classification here is a function of :class:`SevenFacts` -- the rank
counts, whether the joker is present, the ranks held in the (unique) flush suit
and whether a Royal Match is present.  The exact analysis
(``controller/analysis/fortune_asia.py``) enumerates the same facts
combinatorially and calls the same functions, so the analysis and the table
cannot disagree about a hand.

The joker (§ 659a.6(a)) "shall be used and ranked as an ace or may be used as any
card to complete a straight, a flush, a straight flush or a royal flush": it pairs
only with aces (five aces = four aces and the joker, § 659a.6(d)(4)) and fills one
gap of a straight or flush.  An ace plays high, or low in A-2-3-4-5 (§ 659a.6(a)).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from controller.rules.cards import ACE, JOKER, KING, QUEEN, CardError, rank_of, suit_of

# --- hand names (paytable keys, config/paytables/659a.toml) ----------------------
SEVEN_SF = "seven-card-straight-flush"
ROYAL_MATCH = "royal-flush-royal-match"
SEVEN_SF_JOKER = "seven-card-straight-flush-joker"
FIVE_ACES = "five-aces"
ROYAL = "royal-flush"
STRAIGHT_FLUSH = "straight-flush"
QUADS = "four-of-a-kind"
FULL_HOUSE = "full-house"
FLUSH = "flush"
TRIPS = "three-of-a-kind"
STRAIGHT = "straight"
THREE_PAIR = "three-pair"

#: § 659a.6(d)(1)-(11), highest first; three pair (Paytable C, § 659a.12(b)) last.
#: Note the order: three of a kind (d)(10) ranks ABOVE a straight (d)(11).
FORTUNE_ORDER: tuple[str, ...] = (
    SEVEN_SF,
    ROYAL_MATCH,
    SEVEN_SF_JOKER,
    FIVE_ACES,
    ROYAL,
    STRAIGHT_FLUSH,
    QUADS,
    FULL_HOUSE,
    FLUSH,
    TRIPS,
    STRAIGHT,
    THREE_PAIR,
)
#: Envy Bonus Qualifying Hand: "four-of-a-kind or better" (§ 659a.1).
ENVY_HANDS: frozenset[str] = frozenset(FORTUNE_ORDER[: FORTUNE_ORDER.index(QUADS) + 1])
#: § 659a.6(e)(1)-(6), highest first.
PROGRESSIVE_ORDER: tuple[str, ...] = (SEVEN_SF, FIVE_ACES, ROYAL, STRAIGHT_FLUSH, QUADS, FULL_HOUSE)
#: § 659a.12(c) rows.
INSURANCE_HANDS: dict[int, str] = {
    9: "nine-high",
    10: "ten-high",
    11: "jack-high",
    12: "queen-high",
    13: "king-high",
    14: "ace-high",
}

#: five-card windows: A-2-3-4-5 (ace low, § 659a.6(a)), 2-6 ... T-A
WINDOWS5: tuple[frozenset[int], ...] = (frozenset({ACE, 2, 3, 4, 5}),) + tuple(
    frozenset(range(lo, lo + 5)) for lo in range(2, 11)
)
ROYAL_RANKS = frozenset(range(10, 15))
#: seven-card windows: A-2-...-7, 2-8, ..., 8-A
WINDOWS7: tuple[frozenset[int], ...] = (frozenset({ACE, 2, 3, 4, 5, 6, 7}),) + tuple(
    frozenset(range(lo, lo + 7)) for lo in range(2, 9)
)


@dataclass(frozen=True)
class SevenFacts:
    """What decides every seven-card hand of § 659a.6(d)/(e) and the Insurance.

    ``counts[r]`` is the number of natural cards of rank r (index 2..14; 0 and 1
    unused).  ``flush_ranks`` is the set of ranks held in the one suit that makes
    a flush -- five or more natural cards, or four or more with the joker -- or
    ``None`` (two suits can never both qualify with seven cards).
    ``royal_match``: a royal flush (with or without the joker) plus an additional
    king and queen of one suit (§ 659a.6(d)(2)).
    """

    counts: tuple[int, ...]
    joker: bool
    flush_ranks: frozenset[int] | None
    royal_match: bool = False

    @property
    def ace_count(self) -> int:
        """Aces for pairing: the joker ranks as an ace (§ 659a.6(a))."""
        return self.counts[ACE] + (1 if self.joker else 0)


def seven_facts(cards: Sequence[int]) -> SevenFacts:
    """The facts of seven cards; refuses a wrong count or a duplicate (CardError)."""
    cs = list(cards)
    _check_seven(cs)
    joker = JOKER in cs
    nat = [c for c in cs if c != JOKER]
    counts = [0] * 15
    by_suit: list[set[int]] = [set(), set(), set(), set()]
    for c in nat:
        counts[rank_of(c)] += 1
        by_suit[suit_of(c)].add(rank_of(c))
    need = 4 if joker else 5
    flush = next((frozenset(s) for s in by_suit if len(s) >= need), None)
    return SevenFacts(tuple(counts), joker, flush, _royal_match(nat, joker))


def _check_seven(cs: list[int]) -> None:
    """Seven distinct card numbers (§ 659a.8(c))."""
    if len(cs) != 7:
        raise CardError(f"a Fortune Asia Poker hand has seven cards (§ 659a.8(c)), got {len(cs)}")
    if len(set(cs)) != 7:
        raise CardError("duplicate card in a seven-card hand")
    for c in cs:
        if not (isinstance(c, int) and 0 <= c <= JOKER):
            raise CardError(f"{c!r} is not a card number (0..52)", str(c))


def _royal_match(nat: list[int], joker: bool) -> bool:
    """§ 659a.6(d)(2): A-K-Q-J-T of one suit "with or without a joker", and an
    additional king and queen of one (other) suit.  The joker is never the
    additional king or queen: it may only be an ace or complete a flush/straight."""
    for s in range(4):
        royal = {c for c in nat if suit_of(c) == s and rank_of(c) >= 10}
        missing = 5 - len(royal)
        if missing <= (1 if joker else 0) and _king_queen_suited([c for c in nat if c not in royal]):
            return True
    return False


def _king_queen_suited(rest: list[int]) -> bool:
    """The two other cards are a king and a queen of one suit."""
    if len(rest) != 2:
        return False
    a, b = rest
    return {rank_of(a), rank_of(b)} == {KING, QUEEN} and suit_of(a) == suit_of(b)


# --- building blocks ---------------------------------------------------------------
def _has_window(ranks: frozenset[int] | set[int], windows: Sequence[frozenset[int]], gaps: int) -> bool:
    return any(len(w - ranks) <= gaps for w in windows)


def has_straight(f: SevenFacts) -> bool:
    """Five consecutive ranks, the joker filling at most one gap (§ 659a.6(d)(11))."""
    return _straight(f.counts, f.joker)


@lru_cache(maxsize=1 << 17)
def _straight(counts: tuple[int, ...], joker: bool) -> bool:
    present = frozenset(r for r in range(2, 15) if counts[r])
    return _has_window(present, WINDOWS5, 1 if joker else 0)


def _sf_kind(f: SevenFacts) -> str | None:
    """The best straight-flush-family hand in the flush suit, or None."""
    return _sf(f.flush_ranks, f.joker)


@lru_cache(maxsize=1 << 14)
def _sf(fr: frozenset[int] | None, joker: bool) -> str | None:
    if fr is None:
        return None
    g = 1 if joker else 0
    seven = _seven_card_sf(fr, joker)
    if seven is not None:
        return seven
    if len(ROYAL_RANKS - fr) <= g:
        return ROYAL
    if _has_window(fr, WINDOWS5, g):
        return STRAIGHT_FLUSH
    return FLUSH


def _seven_card_sf(fr: frozenset[int], joker: bool) -> str | None:
    """A seven-card straight flush: seven natural consecutive ranks of the suit, or six with the joker."""
    if not joker and len(fr) == 7 and any(w == fr for w in WINDOWS7):
        return SEVEN_SF
    if joker and len(fr) == 6 and any(fr <= w for w in WINDOWS7):
        return SEVEN_SF_JOKER
    return None


def _pair_kind(f: SevenFacts) -> str | None:
    """Hands made of matched ranks, the joker counting as an ace."""
    return _pairs(f.counts, f.joker)


@lru_cache(maxsize=1 << 17)
def _pairs(counts: tuple[int, ...], joker: bool) -> str | None:
    eff = list(counts)
    eff[ACE] += 1 if joker else 0
    if eff[ACE] == 5:
        return FIVE_ACES
    if max(eff) >= 4:
        return QUADS
    trips = sum(1 for r in range(2, 15) if eff[r] >= 3)
    pairs = sum(1 for r in range(2, 15) if eff[r] == 2)
    return _trips_kind(trips, pairs) if trips else _PAIRS_KIND.get(min(pairs, 3))


#: hands of pairs alone, by how many (three or more: three pair)
_PAIRS_KIND = {1: "pair", 2: "two-pair", 3: THREE_PAIR}


def _trips_kind(trips: int, pairs: int) -> str:
    """A full house (two three-of-a-kinds, or one with a pair), else three of a kind."""
    return FULL_HOUSE if trips >= 2 or pairs >= 1 else TRIPS


# --- the three seven-card classifications -----------------------------------------
def fortune_hand(f: SevenFacts, qualifier: str = STRAIGHT) -> str | None:
    """The § 659a.6(d) hand the Fortune Bonus Wager is paid on, or None (loses).

    ``qualifier`` is the lowest hand of the selected paytable: ``"straight"``
    (Paytables A, B, D) or ``"three-pair"`` (Paytable C, § 659a.11(h)(1)(i)).
    A joker royal flush counts as a royal flush (§ 659a.6(a): the joker may
    complete a royal flush)."""
    if qualifier not in (STRAIGHT, THREE_PAIR):
        raise ValueError(f"Fortune Bonus qualifier {qualifier!r} is not 'straight' or 'three-pair'")
    cands: list[str] = []
    if f.royal_match:
        cands.append(ROYAL_MATCH)
    sf = _sf_kind(f)
    if sf:
        cands.append(sf)
    pk = _pair_kind(f)
    if pk in FORTUNE_ORDER:
        cands.append(pk)
    if has_straight(f):
        cands.append(STRAIGHT)
    if not cands:
        return None
    best = min(cands, key=FORTUNE_ORDER.index)
    if best == THREE_PAIR and qualifier != THREE_PAIR:
        return None
    return best


def is_envy_qualifying(f: SevenFacts) -> bool:
    """Envy Bonus Qualifying Hand: four of a kind or better (§ 659a.1)."""
    return fortune_hand(f) in ENVY_HANDS


def progressive_hand(f: SevenFacts) -> str | None:
    """The § 659a.6(e) hand for the Progressive Payout Wager, or None (loses).

    (e)(1): a seven-card straight flush "with or without a joker"; (e)(3): a royal
    flush natural or with the joker; the Royal Match is not a progressive hand."""
    cands: list[str] = []
    sf = _sf_kind(f)
    if sf in (SEVEN_SF, SEVEN_SF_JOKER):
        cands.append(SEVEN_SF)
    elif sf in (ROYAL, STRAIGHT_FLUSH):
        cands.append(sf)
    pk = _pair_kind(f)
    if pk in PROGRESSIVE_ORDER:
        cands.append(pk)
    return min(cands, key=PROGRESSIVE_ORDER.index) if cands else None


def has_pair_or_better(f: SevenFacts, straights_flushes: bool = True) -> bool:
    """Insurance: "a pair or better, as described in § 659a.6(d)" (§ 659a.7(e)(2)).

    Reading (docs/rules-readings/659a.md): every § 659a.6(d) hand counts as
    better than a pair, so a straight or a flush -- the joker completing it --
    loses the Insurance; this reproduces the Board's 3.91%-8.05% holds.
    ``straights_flushes=False`` is the rejected pairs-only reading, kept for the
    analysis that shows it does not reproduce them."""
    if _pair_kind(f) is not None:
        return True
    return straights_flushes and (f.flush_ranks is not None or has_straight(f))


def insurance_hand(f: SevenFacts, straights_flushes: bool = True) -> str | None:
    """The § 659a.12(c) row for the Insurance Wager, or None (loses):
    no pair or better, and a nine-high or better (§ 659a.11(h)(2)).  The joker,
    completing nothing, ranks as an ace (§ 659a.6(a)): ace-high."""
    if has_pair_or_better(f, straights_flushes):
        return None
    high = ACE if f.joker else max(r for r in range(2, 15) if f.counts[r])
    return INSURANCE_HANDS.get(high)
