"""Face Up Pai Gow Poker (58 Pa. Code ch. 688a): seven-card classifications.

Pure: no I/O, no hardware imports.

* :func:`bonus_hand` — the best seven-card hand for the Fortune Bonus Wager
  (§ 688a.6(b) and (e)) and the Progressive Payout Wager (§ 688a.6(f)), with the
  joker as a bug (§ 688a.6(a)) or, for the progressive paytables marked "Fully wild
  joker" (§ 688a.12(d), Paytables 2, 5, 6 and 7), fully wild.
* :func:`ace_high_pai_gow` — § 688a.1 / § 688a.6(d): the seven cards rank no higher
  than ace high (no pair, straight or flush, and an ace or the joker).

One core, :func:`classify_counts`, works on rank counts and per-suit rank masks so
that the exact analysis (controller/analysis/faceup.py) classifies its
representative hands with the very same code the table uses.

Categories, best first (``BONUS_ORDER``)::

    seven-card-natural-straight-flush   § 688a.6(e)(1), (f)(2)
    royal-flush-royal-match             § 688a.6(e)(2), (f)(4)
    seven-card-wild-straight-flush      § 688a.6(e)(3), (f)(3)
    five-aces                           § 688a.6(b)(1), (f)(5)
    five-of-a-kind                      § 688a.6(f)(6) (fully wild joker only)
    royal-flush ... high-card           § 688a.6(b)(2)-(11), three-pair (b)(9) between
                                        three-of-a-kind and two-pair

Seven-card straights use the same ace rule as five-card ones (§ 688a.6(a)): the ace
is high (8-9-T-J-Q-K-A) or low only in a run through 2-3-4-5 (A-2-3-4-5-6-7);
no wrap-around.  See docs/rules-readings/688a.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from controller.rules.cards import JOKER, CardError, card_str

JokerMode = Literal["bug", "fully-wild"]

BONUS_ORDER: tuple[str, ...] = (
    "seven-card-natural-straight-flush",
    "royal-flush-royal-match",
    "seven-card-wild-straight-flush",
    "five-aces",
    "five-of-a-kind",
    "royal-flush",
    "straight-flush",
    "four-of-a-kind",
    "full-house",
    "flush",
    "straight",
    "three-of-a-kind",
    "three-pair",
    "two-pair",
    "pair",
    "high-card",
)
(
    SF7_NATURAL,
    ROYAL_MATCH,
    SF7_WILD,
    FIVE_ACES,
    FIVE_KIND,
    ROYAL,
    STRAIGHT_FLUSH,
    QUADS,
    FULL_HOUSE,
    FLUSH,
    STRAIGHT,
    TRIPS,
    THREE_PAIR,
    TWO_PAIR,
    PAIR,
    HIGH_CARD,
) = range(len(BONUS_ORDER))

#: § 688a.1 "Envy Bonus Qualifying Hand": four-of-a-kind or better from the seven cards
ENVY_QUALIFYING = frozenset(BONUS_ORDER[: QUADS + 1])

ACE = 14
_ROYAL = sum(1 << r for r in range(10, 15))
#: five-card runs as rank bitmasks; bit 1 stands for the ace played low (A-2-3-4-5 only)
_RUN5 = tuple(0b11111 << lo for lo in range(1, 11))
#: seven-card runs: A-2-..-7 (ace low) up to 8-9-T-J-Q-K-A
_RUN7 = tuple(0b1111111 << lo for lo in range(1, 9))


class BonusHandError(CardError):
    """Not a seven-card hand from one 53-card deck."""


def _with_low_ace(mask: int) -> int:
    return mask | 2 if mask >> ACE & 1 else mask


def _has_run(mask: int, runs: tuple[int, ...], need_missing: int) -> bool:
    """True when some run in ``runs`` misses at most ``need_missing`` ranks of ``mask``."""
    m = _with_low_ace(mask)
    for run in runs:
        if (run & ~m).bit_count() <= need_missing:
            return True
    return False


def classify_counts(counts: Sequence[int], suit_masks: Sequence[int], joker: bool, mode: JokerMode = "bug") -> int:
    """Best seven-card category (an index into ``BONUS_ORDER``).

    ``counts[r]`` is the number of natural cards of rank r (index 2..14), ``suit_masks[s]``
    the bitmask (bit r) of the natural ranks held in suit s, ``joker`` whether the joker
    is among the seven cards.  ``mode`` "bug": the joker is an ace or completes a
    straight, flush, straight flush or royal flush (§ 688a.6(a)); "fully-wild": any card
    (§ 688a.12(d) Paytables 2, 5, 6, 7).
    """
    j = 1 if joker else 0
    # suit-based categories: the joker completes these in both modes
    best_flush = min((_suit_category(s, m, suit_masks, j) for s, m in enumerate(suit_masks)), default=HIGH_CARD)
    if best_flush <= ROYAL:
        return best_flush
    return _rank_category(counts, j, mode, best_flush)


def _suit_category(s: int, m: int, suit_masks: Sequence[int], j: int) -> int:
    """The best suit-based category of suit ``s`` (natural ranks ``m``, ``j`` jokers)."""
    n = m.bit_count()
    if n + j < 5:
        return HIGH_CARD
    # § 688a.6(e)(1)/(f)(2) and (e)(3)/(f)(3): seven suited cards in a run
    if not j and n == 7 and _has_run(m, _RUN7, 0):
        return SF7_NATURAL
    best = SF7_WILD if j and n == 6 and _has_run(m, _RUN7, 1) else FLUSH
    if (_ROYAL & ~m).bit_count() <= j:
        return min(best, _royal_category(s, suit_masks))
    if _has_run(m, _RUN5, j):
        return min(best, STRAIGHT_FLUSH)
    return best


def _royal_category(s: int, suit_masks: Sequence[int]) -> int:
    """§ 688a.6(e)(2): a royal flush in suit ``s``, a Royal Match with a natural king and
    queen of one other suit."""
    kq = 1 << 13 | 1 << 12
    if any(t != s and (mt & kq) == kq for t, mt in enumerate(suit_masks)):
        return ROYAL_MATCH
    return ROYAL


def _rank_category(counts: Sequence[int], j: int, mode: JokerMode, best_flush: int) -> int:
    """The best category below a royal flush, from the rank counts (and a flush found)."""
    c, jw = _joker_counts(counts, j, mode)
    top = sorted(c, reverse=True)
    c1, c2, c3 = top[0], top[1], top[2]
    five = _five_category(c, c1, jw, mode)
    if five is not None:
        return five
    if best_flush == STRAIGHT_FLUSH:
        return STRAIGHT_FLUSH
    if c1 + jw >= 4:
        return QUADS
    if (c1 >= 3 and c2 + jw >= 2) or (c1 + jw >= 3 and c2 >= 2):
        return FULL_HOUSE
    if best_flush == FLUSH:
        return FLUSH
    if _has_run(_rank_mask(counts), _RUN5, j):
        return STRAIGHT
    return _sets_category(c1, c2, c3, jw)


def _joker_counts(counts: Sequence[int], j: int, mode: JokerMode) -> tuple[list[int], int]:
    """The rank counts with the joker placed, and the wild jokers left to join a rank."""
    c = list(counts)
    if mode != "bug":
        return c, j  # a fully wild joker joins whichever rank helps most
    if j:
        c[ACE] += 1  # § 688a.6(a): otherwise the joker is an ace
    return c, 0


def _five_category(c: Sequence[int], c1: int, jw: int, mode: JokerMode) -> int | None:
    if mode == "bug" and c[ACE] >= 5:
        return FIVE_ACES
    if jw and c1 == 4:
        return FIVE_ACES if c[ACE] == 4 else FIVE_KIND
    return None


def _rank_mask(counts: Sequence[int]) -> int:
    ranks = 0
    for r in range(2, 15):
        if counts[r]:
            ranks |= 1 << r
    return ranks


def _sets_category(c1: int, c2: int, c3: int, jw: int) -> int:
    if c1 + jw >= 3:
        return TRIPS
    if c3 >= 2:
        return THREE_PAIR  # § 688a.6(b)(9); with a wild joker trips (above) is better
    if c2 >= 2 or (c1 >= 2 and jw):
        return TWO_PAIR
    if c1 + jw >= 2:
        return PAIR
    return HIGH_CARD


def counts_and_masks(cards: Sequence[int]) -> tuple[list[int], list[int], bool]:
    """Rank counts, per-suit rank masks and joker flag of a hand (validated)."""
    counts = [0] * 15
    masks = [0, 0, 0, 0]
    joker = False
    seen: set[int] = set()
    for c in cards:
        if not isinstance(c, int) or not 0 <= c <= JOKER:
            raise BonusHandError(f"{c!r} is not a card number (0..52)", str(c))
        if c in seen:
            raise BonusHandError(f"duplicate card {card_str(c)}", card_str(c))
        seen.add(c)
        if c == JOKER:
            joker = True
            continue
        r, s = c // 4 + 2, c % 4
        counts[r] += 1
        masks[s] |= 1 << r
    return counts, masks, joker


def _seven(cards: Sequence[int]) -> tuple[list[int], list[int], bool]:
    if len(cards) != 7:
        raise BonusHandError(f"a Face Up Pai Gow Poker hand is seven cards (§ 688a.8(d)), got {len(cards)}")
    return counts_and_masks(cards)


@dataclass(frozen=True)
class BonusHand:
    category: str  # a key of BONUS_ORDER, as used in config/paytables/688a.toml
    order: int  # index into BONUS_ORDER: lower is better
    natural: bool  # False when the joker is among the seven cards


def bonus_hand(cards: Sequence[int], mode: JokerMode = "bug") -> BonusHand:
    """The best seven-card hand for the Fortune Bonus / Progressive (§ 688a.6(e), (f))."""
    counts, masks, joker = _seven(cards)
    k = classify_counts(counts, masks, joker, mode)
    return BonusHand(BONUS_ORDER[k], k, not joker)


#: readings of a hand that is both a straight and a three-of-a-kind (688a-7)
BONUS_READINGS = ("best-pay", "ranking")


def straight_holds_trips(counts: Sequence[int], joker: bool, mode: JokerMode = "bug") -> bool:
    """Whether seven cards classified as a straight can also form a three-of-a-kind:
    natural trips, or (bug joker, § 688a.6(a)) the joker as the third ace beside two
    natural aces, or (fully wild) the joker beside a pair."""
    top = max(counts)
    if mode == "fully-wild":
        return top + (1 if joker else 0) >= 3
    return top >= 3 or (joker and counts[ACE] >= 2)


def bonus_categories(cards: Sequence[int], mode: JokerMode = "bug") -> tuple[str, ...]:
    """The categories the seven cards can be paid as, highest ranking first (§ 688a.6).

    One category, except a straight that also holds a three-of-a-kind:
    ``("straight", "three-of-a-kind")``.  § 688a.6(b) ranks the straight higher,
    § 688a.12(c)'s paytables (and § 659a.6(d)(10)-(11) for the same tables) rank three of
    a kind higher and pay it more; under the default reading ``best-pay`` (688a-7) the
    wager is paid the higher of the two rows."""
    counts, masks, joker = _seven(cards)
    k = classify_counts(counts, masks, joker, mode)
    if k == STRAIGHT and straight_holds_trips(counts, joker, mode):
        return (BONUS_ORDER[STRAIGHT], BONUS_ORDER[TRIPS])
    return (BONUS_ORDER[k],)


def ace_high_kind(cards: Sequence[int]) -> str | None:
    """§ 688a.1 "Ace High Pai Gow": ``"joker"`` / ``"natural"`` when the seven cards rank
    only ace high (the ace being the joker, or a natural ace), else ``None``."""
    counts, masks, joker = _seven(cards)
    if classify_counts(counts, masks, joker, "bug") != HIGH_CARD:
        return None
    if joker:
        return "joker"  # no natural ace (that would pair the joker): the joker is the ace
    return "natural" if counts[ACE] else None


def ace_high_pai_gow(cards: Sequence[int]) -> bool:
    """Whether the seven cards are an Ace High Pai Gow (a helper of the analysis and the tests; the
    table decides with :func:`ace_high_kind`)."""
    return ace_high_kind(cards) is not None


def paytable_keys(category: str) -> tuple[str, ...]:
    """Paytable rows that may price ``category``, most specific first.

    Progressive Paytables 1, 3, 5-7 print one "7 card straight flush" row, with or
    without a joker (§ 688a.6(f)(1)); a fully-wild paytable without a "Five aces" row
    prices five aces as five-of-a-kind (§ 688a.6(f)(5), (6)); a royal flush with Royal
    Match is at least a royal flush where no Royal Match row is printed.
    """
    if category in ("seven-card-natural-straight-flush", "seven-card-wild-straight-flush"):
        return (category, "seven-card-straight-flush")
    if category == "five-aces":
        return ("five-aces", "five-of-a-kind")
    if category == "royal-flush-royal-match":
        return ("royal-flush-royal-match", "royal-flush")
    return (category,)
