"""The shared poker hand evaluator (§ 670a.6, § 687a.6; plain poker for 52-card use).

Pure: no I/O, no hardware imports.  Every poker game in the rules engine ranks
five-card hands through this module.

Rules families (the ``rules`` argument):

``"bug"``
    § 670a.6 (and the same rankings in 659a and 688a): the joker is an ace, or
    completes a straight, a flush or a straight flush (§ 670a.6(a)).  Order
    (§ 670a.6(b)): five aces (four aces + joker) > royal flush (A-K-Q-J-T suited,
    the joker may be any one of the five) > straight flush (A-2-3-4-5 highest,
    then K-high down to 6-high) > four of a kind > full house > flush > straight
    (A-K-Q-J-T highest, A-2-3-4-5 second, then K-high down to 6-high) > three of
    a kind > two pair > pair > high card.  The ace never wraps (Q-K-A-2-3 is no
    straight).  Ties: the highest card not in the other hand (§ 670a.6(c)).
``"dj-wild"``
    § 687a.6: the four deuces and the joker are wild (§ 687a.6(b)).  Order:
    five wilds > royal flush > five of a kind > straight flush > four of a kind
    > full house > flush > straight > three of a kind > two pair > pair > high
    card.  Five of a kind is not listed in § 687a.6(c) but every § 687a.12
    paytable ranks it between royal flush and straight flush; see
    docs/rules-readings/poker.md.  A-2-3-4-5 is the lowest straight.
``"natural"``
    Plain 52-card poker: no joker, no wild card, A-2-3-4-5 the lowest straight.

A hand's :class:`HandRank` carries ``score``: an int that totally orders hands
within one rules family (higher beats lower, equal means an exact tie).  Do not
compare scores across families, and do not use ``int(Category)`` as an order.

``natural`` is True when the hand's category can be made without any wild card:
from the cards other than the joker, every deuce at face value.  For DJ Wild this
is the "Natural" column of the § 687a.12(d) Trips paytables (reading 687a-1,
docs/rules-readings/687a.md: a deuce not needed as a wild card counts as a deuce;
it reproduces the regulator's printed Trips figures), so 2c 5c 8c Jc Kc is a
natural flush while Kc Kd 2h 9s 5h is three kings "with wild".  For the bug family
a joker that only plays as an ace kicker (K-K-Jk-7-5) leaves the hand natural.
Five wilds and five of a kind are never natural.

Speed: the single-hand path below works on rank counts and per-suit rank
bitmasks (no 5-subset loop), about 20-60 microseconds per 7-card hand in
CPython.  For throughput, :func:`best_five_batch` evaluates numpy arrays of
hands with precomputed lookup tables (controller/rules/poker_batch.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from controller.rules.cards import JOKER, CardError, card_str, check_count, parse_cards

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from controller.rules.poker_batch import BatchResult

__all__ = [
    "Category",
    "HandRank",
    "RULES",
    "eval_five",
    "best_five",
    "compare",
    "best_five_batch",
    "score_category",
    "category_levels",
]

RULES = ("bug", "dj-wild", "natural")


class Category(IntEnum):
    """Identity of a five-card hand category; ``.text`` is its kebab-case name.

    The int values are identities, NOT the ranking order (the families order
    five of a kind and royal flush differently): compare hands with ``score``.
    """

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9
    FIVE_ACES = 10  # bug-joker family only (§ 670a.6(b)(1))
    FIVE_OF_A_KIND = 11  # dj-wild only (§ 687a.12 paytables)
    FIVE_WILDS = 12  # dj-wild only (§ 687a.6(c)(1))

    @property
    def text(self) -> str:
        return self.name.lower().replace("_", "-")

    @classmethod
    def from_text(cls, text: str) -> Category:
        return cls[text.strip().upper().replace("-", "_")]


C = Category

#: ranking order, lowest first, per rules family (§ 670a.6(b); § 687a.6(c) + § 687a.12)
_ORDER: dict[str, tuple[Category, ...]] = {
    "bug": (
        C.HIGH_CARD,
        C.PAIR,
        C.TWO_PAIR,
        C.THREE_OF_A_KIND,
        C.STRAIGHT,
        C.FLUSH,
        C.FULL_HOUSE,
        C.FOUR_OF_A_KIND,
        C.STRAIGHT_FLUSH,
        C.ROYAL_FLUSH,
        C.FIVE_ACES,
    ),
    "dj-wild": (
        C.HIGH_CARD,
        C.PAIR,
        C.TWO_PAIR,
        C.THREE_OF_A_KIND,
        C.STRAIGHT,
        C.FLUSH,
        C.FULL_HOUSE,
        C.FOUR_OF_A_KIND,
        C.STRAIGHT_FLUSH,
        C.FIVE_OF_A_KIND,
        C.ROYAL_FLUSH,
        C.FIVE_WILDS,
    ),
    "natural": (
        C.HIGH_CARD,
        C.PAIR,
        C.TWO_PAIR,
        C.THREE_OF_A_KIND,
        C.STRAIGHT,
        C.FLUSH,
        C.FULL_HOUSE,
        C.FOUR_OF_A_KIND,
        C.STRAIGHT_FLUSH,
        C.ROYAL_FLUSH,
    ),
}
_LEVEL: dict[str, dict[Category, int]] = {r: {c: i for i, c in enumerate(o)} for r, o in _ORDER.items()}

#: score = level << 20 | five 4-bit tie-break values, most significant first
_SHIFT = 20

#: group shapes of the non-straight categories, largest group first
_SHAPES: dict[Category, tuple[int, ...]] = {
    C.FIVE_OF_A_KIND: (5,),
    C.FIVE_ACES: (5,),
    C.FOUR_OF_A_KIND: (4, 1),
    C.FULL_HOUSE: (3, 2),
    C.THREE_OF_A_KIND: (3, 1, 1),
    C.TWO_PAIR: (2, 2, 1),
    C.PAIR: (2, 1, 1, 1),
    C.HIGH_CARD: (1, 1, 1, 1, 1),
}


def category_levels(rules: str) -> tuple[Category, ...]:
    """The categories of a rules family, lowest first (index = level in ``score >> 20``)."""
    return _ORDER[_check_rules(rules)]


def score_category(score: int, rules: str) -> Category:
    """The category encoded in a ``score`` of the given rules family."""
    return _ORDER[rules][score >> _SHIFT]


@dataclass(frozen=True)
class HandRank:
    category: Category
    score: int  # total order within one rules family
    best: tuple[int, ...]  # the five cards used, best first
    natural: bool  # category made without the joker, deuces at face value

    @property
    def text(self) -> str:
        return self.category.text

    def best_str(self) -> str:
        return " ".join(card_str(c) for c in self.best)


def compare(a: HandRank, b: HandRank) -> int:
    """-1, 0 or 1 as hand ``a`` ranks below, equal to, or above hand ``b`` (same rules family)."""
    return (a.score > b.score) - (a.score < b.score)


# --------------------------------------------------------------------------------------------
# scoring primitives on rank counts and suit masks (shared with the batch tables)
# --------------------------------------------------------------------------------------------


def _check_rules(rules: str) -> str:
    if rules not in _LEVEL:
        raise ValueError(f"unknown poker rules {rules!r} (use one of {', '.join(RULES)})")
    return rules


def _pack(level: int, vals: Sequence[int]) -> int:
    s = level
    for i in range(5):
        s = (s << 4) | (vals[i] if i < len(vals) else 0)
    return s


def _straight_value(high: int, rules: str) -> int:
    """Tie-break value of a straight (flush) with top card ``high`` (5 = the wheel A-2-3-4-5).

    § 670a.6(b)(3),(7): in the bug family the wheel is the second-highest
    straight and the highest straight flush below the royal, so it gets 14 and
    A-K-Q-J-T gets 15.  Elsewhere the wheel is the lowest straight (value 5).
    """
    if rules == "bug":
        return 15 if high == 14 else 14 if high == 5 else high
    return high


def _straight_high(value: int, rules: str) -> int:
    if rules == "bug":
        return 14 if value == 15 else 5 if value == 14 else value
    return value


def _window(high: int) -> tuple[int, ...]:
    """Ranks of the straight with top card ``high``, highest first (ace low in the wheel)."""
    if high == 5:
        return (5, 4, 3, 2, 14)
    return tuple(range(high, high - 5, -1))


_WINDOWS = tuple((h, _window(h)) for h in range(14, 4, -1))
_RANKS_DESC = tuple(range(14, 1, -1))


def _groups(counts: Sequence[int], wilds: int, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Lexicographically greatest ranks for the groups of ``shape`` (distinct ranks, most
    significant group first), spending at most ``wilds`` wild cards; None if impossible."""
    out: list[int] = []

    def rec(i: int, left: int) -> bool:
        if i == len(shape):
            return True
        g = shape[i]
        for r in _RANKS_DESC:
            if r in out:
                continue
            need = g - counts[r]
            if need < 0:
                need = 0
            if need <= left:
                out.append(r)
                if rec(i + 1, left - need):
                    return True
                out.pop()
        return False

    return tuple(out) if rec(0, wilds) else None


_WINDOW_MASKS = tuple((high, sum(1 << r for r in win)) for high, win in _WINDOWS)


def _groups_plain(counts: Sequence[int]) -> tuple[Category, tuple[int, ...]]:
    """Best non-straight, non-flush five of at least five natural cards (no wild card)."""
    desc = [r for r in _RANKS_DESC if counts[r]]
    c2 = [r for r in desc if counts[r] >= 2]
    if not c2:
        return C.HIGH_CARD, tuple(desc[:5])
    c3 = [r for r in c2 if counts[r] >= 3]
    if c3:
        return _groups_with_trips(counts, desc, c2, c3)
    return _groups_with_pairs(desc, c2)


def _groups_with_pairs(desc: list[int], c2: list[int]) -> tuple[Category, tuple[int, ...]]:
    """Two pair or a pair (``c2``: the ranks held twice, highest first), with the best kickers."""
    top = c2[0]
    if len(c2) >= 2:
        p1, p2 = c2[0], c2[1]
        return C.TWO_PAIR, (p1, p2, next(r for r in desc if r != p1 and r != p2))
    return C.PAIR, (top, *[r for r in desc if r != top][:3])


def _groups_with_trips(
    counts: Sequence[int], desc: list[int], c2: list[int], c3: list[int]
) -> tuple[Category, tuple[int, ...]]:
    """Four of a kind, a full house or three of a kind (``c3``: the ranks held three times or more)."""
    for q in c3:  # four of a kind beats a higher three of a kind (K-K-K + 7-7-7-7)
        if counts[q] >= 4:
            return C.FOUR_OF_A_KIND, (q, next(r for r in desc if r != q))
    t = c3[0]
    pair = next((r for r in c2 if r != t), None)
    if pair is not None:
        return C.FULL_HOUSE, (t, pair)
    return C.THREE_OF_A_KIND, (t, *[r for r in desc if r != t][:2])


def _nonflush_score(counts: Sequence[int], wilds: int, rules: str) -> int:
    """Best five-card hand ignoring suits, from natural rank ``counts`` (index 2..14) and
    ``wilds`` joker/wild cards.  Assumes at least five cards in all."""
    lv = _LEVEL[rules]
    five = _five_score(counts, wilds, rules, lv)
    if five is not None:
        return five
    group_counts: Sequence[int] = counts
    group_wilds = wilds
    if rules == "bug":
        # § 670a.6(a): the joker is an ace ...
        if wilds:
            group_counts = list(counts)
            group_counts[14] += 1
        group_wilds = 0
    # ... or completes a straight (bug); wilds complete straights (dj-wild)
    best = _straight_score(counts, wilds, rules, lv)
    if not group_wilds:
        cat, g = _groups_plain(group_counts)
        s = _pack(lv[cat], g)
        return s if s > best else best
    return _wild_groups_score(group_counts, group_wilds, lv, best)


def _five_score(counts: Sequence[int], wilds: int, rules: str, lv: Mapping[Category, int]) -> int | None:
    """Five aces (bug: four aces and the joker, § 670a.6(b)(1)), five wilds (§ 687a.6(c)(1)) or
    five of a kind (dj-wild); None for any other hand."""
    if not wilds:
        return None
    if rules == "bug":
        return _pack(lv[C.FIVE_ACES], (14,)) if counts[14] + 1 == 5 else None
    if rules != "dj-wild":
        return None
    if wilds == 5:  # § 687a.6(c)(1)
        return _pack(lv[C.FIVE_WILDS], ())
    for r in _RANKS_DESC:
        if counts[r] + wilds >= 5:
            return _pack(lv[C.FIVE_OF_A_KIND], (r,))
    return None


def _straight_score(counts: Sequence[int], wilds: int, rules: str, lv: Mapping[Category, int]) -> int:
    """The best straight the ranks (and wild cards) make; 0 if none."""
    best = 0
    present = 0
    for r in _RANKS_DESC:
        if counts[r]:
            present |= 1 << r
    for high, wm in _WINDOW_MASKS:
        if (present & wm).bit_count() + wilds >= 5:
            s = _pack(lv[C.STRAIGHT], (_straight_value(high, rules),))
            if s > best:
                best = s
            if rules != "bug":
                break  # windows are scanned highest first
    return best


def _wild_groups_score(group_counts: Sequence[int], group_wilds: int, lv: Mapping[Category, int], best: int) -> int:
    """The best of ``best`` and the highest group hand the wild cards complete."""
    for cat in (C.FOUR_OF_A_KIND, C.FULL_HOUSE, C.THREE_OF_A_KIND, C.TWO_PAIR, C.PAIR, C.HIGH_CARD):
        level = lv[cat]
        if (level + 1) << _SHIFT <= best:
            break
        groups = _groups(group_counts, group_wilds, _SHAPES[cat])
        if groups is not None:
            s = _pack(level, groups)
            return s if s > best else best
    return best


def _flush_score(mask: int, wilds: int, rules: str) -> int:
    """Best flush, straight flush or royal flush from the natural ranks of one suit (``mask``
    bit r set for rank r) and ``wilds`` joker/wild cards; 0 if no flush can be made."""
    n = mask.bit_count()
    if n + wilds < 5:
        return 0
    lv = _LEVEL[rules]
    best_sf = _straight_flush_score(mask, wilds, rules)
    if best_sf:
        return best_sf
    return _pack(lv[C.FLUSH], _flush_ranks(mask, wilds))


def _straight_flush_score(mask: int, wilds: int, rules: str) -> int:
    """Best royal or straight flush of one suit's natural ranks (``mask``) and ``wilds``; 0 if none."""
    lv = _LEVEL[rules]
    best_sf = 0
    for high, wm in _WINDOW_MASKS:
        if (mask & wm).bit_count() + wilds >= 5:
            if high == 14:
                return _pack(lv[C.ROYAL_FLUSH], ())
            best_sf = max(best_sf, _pack(lv[C.STRAIGHT_FLUSH], (_straight_value(high, rules),)))
    return best_sf


def _flush_ranks(mask: int, wilds: int) -> list[int]:
    """The five ranks of a flush: the joker/wilds take the highest ranks the suit is missing
    (§ 670a.6(a): the joker is an ace when the suit lacks one); see docs/rules-readings/poker.md."""
    ranks: list[int] = []
    left = wilds
    for r in _RANKS_DESC:
        if mask >> r & 1:
            ranks.append(r)
        elif left:
            ranks.append(r)
            left -= 1
        if len(ranks) == 5:
            break
    return ranks


def _partial_category(counts: Sequence[int]) -> Category:
    """Category of fewer than five natural cards (no straight or flush possible)."""
    top, second = ([*sorted((c for c in counts if c), reverse=True), 0, 0])[:2]  # the two largest groups
    if top >= 4:
        return C.FOUR_OF_A_KIND
    if top == 3:
        return C.FULL_HOUSE if second >= 2 else C.THREE_OF_A_KIND
    if top == 2:
        return C.TWO_PAIR if second == 2 else C.PAIR
    return C.HIGH_CARD


# --------------------------------------------------------------------------------------------
# single-hand evaluation
# --------------------------------------------------------------------------------------------


def _is_wild(card: int, rules: str) -> bool:
    if card == JOKER:
        return True
    return rules == "dj-wild" and card < 4  # § 687a.6(b): the four deuces (cards 0..3)


def _coerce(cards: Sequence[int] | str, rules: str, sizes: tuple[int, ...]) -> tuple[int, ...]:
    _check_rules(rules)
    if isinstance(cards, str):
        return parse_cards(cards, count=sizes, allow_joker=rules != "natural")
    cs = tuple(cards)
    seen: set[int] = set()
    for c in cs:
        if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c <= JOKER:
            raise CardError(f"{c!r} is not a card number (0..52)", str(c))
        if c == JOKER and rules == "natural":
            raise CardError("'Jk': the natural rules have no joker", "Jk")
        if c in seen:
            raise CardError(f"{card_str(c)!r}: duplicate card", card_str(c))
        seen.add(c)
    check_count(len(cs), sizes)
    return cs


def _analyse(cards: tuple[int, ...], rules: str) -> tuple[list[int], list[int], list[int], list[int]]:
    counts = [0] * 15
    masks = [0, 0, 0, 0]
    wild: list[int] = []
    nat: list[int] = []
    for c in cards:
        if _is_wild(c, rules):
            wild.append(c)
        else:
            r = (c >> 2) + 2
            counts[r] += 1
            masks[c & 3] |= 1 << r
            nat.append(c)
    return counts, masks, wild, nat


def _score(counts: list[int], masks: list[int], w: int, rules: str) -> tuple[int, int]:
    """(best score, suit of the best flush or -1)."""
    best = _nonflush_score(counts, w, rules)
    suit = -1
    for s in range(4):
        fs = _flush_score(masks[s], w, rules)
        if fs > best:
            best, suit = fs, s
    return best, suit


def _face_value_category(cards: tuple[int, ...]) -> Category:
    """Category of the hand's cards other than the joker, every card at face value (deuces
    as plain deuces): what the hand makes without any wild card (see ``HandRank.natural``)."""
    counts = [0] * 15
    masks = [0, 0, 0, 0]
    n = 0
    for c in cards:
        if c != JOKER:
            r = (c >> 2) + 2
            counts[r] += 1
            masks[c & 3] |= 1 << r
            n += 1
    if n < 5:
        return _partial_category(counts)
    return score_category(_score(counts, masks, 0, "natural")[0], "natural")


def _rank_slots(cat: Category, vals: list[int], rules: str) -> list[int]:
    """The rank of each of the five cards of a non-flush hand of ``cat`` (``vals``: its packed ranks)."""
    if cat is C.STRAIGHT:
        return list(_window(_straight_high(vals[0], rules)))
    slots: list[int] = []
    for g, r in zip(_SHAPES[cat], vals):
        slots.extend([r] * g)
    return slots


def _pick(
    cards: tuple[int, ...], score: int, rules: str, counts: list[int], masks: list[int], wild: list[int]
) -> tuple[int, ...]:
    """The five cards making ``score``, best first; naturals before wild cards."""
    cat = score_category(score, rules)
    vals = [(score >> (4 * (4 - i))) & 15 for i in range(5)]
    wild_left = sorted(wild)
    if cat is C.FIVE_WILDS:
        return tuple(wild_left[:5])
    if cat in (C.FLUSH, C.STRAIGHT_FLUSH, C.ROYAL_FLUSH):
        return _pick_flush(cat, vals, score, rules, masks, wild_left)
    slots = _rank_slots(cat, vals, rules)
    by_rank: dict[int, list[int]] = {}
    for c in sorted((c for c in cards if not _is_wild(c, rules)), reverse=True):
        by_rank.setdefault((c >> 2) + 2, []).append(c)
    out = []
    for r in slots:
        lst = by_rank.get(r)
        out.append(lst.pop(0) if lst else wild_left.pop(0))
    return tuple(out)


def _pick_flush(
    cat: Category, vals: list[int], score: int, rules: str, masks: list[int], wild_left: list[int]
) -> tuple[int, ...]:
    """The five cards of a flush, straight flush or royal flush making ``score``."""
    if cat is C.ROYAL_FLUSH:
        need = _window(14)
    elif cat is C.STRAIGHT_FLUSH:
        need = _window(_straight_high(vals[0], rules))
    else:
        need = tuple(vals)
    # the suit that makes it with the fewest wild cards (prefer the natural hand)
    best_suit, best_missing = -1, 99
    for s in range(4):
        if _flush_score(masks[s], len(wild_left), rules) == score:
            missing = sum(1 for r in need if not masks[s] >> r & 1)
            if missing < best_missing:
                best_suit, best_missing = s, missing
    out = []
    for r in need:
        c = (r - 2) * 4 + best_suit
        out.append(c if masks[best_suit] >> r & 1 else wild_left.pop(0))
    return tuple(out)


def _rank_hand(cards: tuple[int, ...], rules: str) -> HandRank:
    counts, masks, wild, _ = _analyse(cards, rules)
    w = len(wild)
    if rules == "dj-wild" and w == 5:
        score = _pack(_LEVEL[rules][C.FIVE_WILDS], ())
    else:
        score, _ = _score(counts, masks, w, rules)
    cat = score_category(score, rules)
    best = _pick(cards, score, rules, counts, masks, wild)
    natural = w == 0 or _face_value_category(cards) is cat
    return HandRank(cat, score, best, natural)


def eval_five(cards: Sequence[int] | str, rules: str = "bug") -> HandRank:
    """Rank exactly five cards (ints per controller.rules.cards, or text like ``"As Kd Qh Jc Jk"``)."""
    return _rank_hand(_coerce(cards, rules, (5,)), rules)


def best_five(cards: Sequence[int] | str, rules: str = "bug") -> HandRank:
    """The best five-card hand from 5, 6 or 7 cards.  Among equally ranked fives the one
    using the fewest joker/wild cards is reported in ``best``."""
    return _rank_hand(_coerce(cards, rules, (5, 6, 7)), rules)


def best_five_batch(hands: ArrayLike, rules: str = "bug") -> BatchResult:
    """Vectorised :func:`best_five` over a numpy int array of shape (N, k), k = 5, 6 or 7.

    Returns ``(category, score, natural)`` numpy arrays (int8 Category values,
    int64 scores comparable with :attr:`HandRank.score`, bool).  Raises ValueError for
    a bad shape, a card number outside 0..52, a repeated card in a row, or a joker
    under the natural rules.  See controller/rules/poker_batch.py.
    """
    from controller.rules.poker_batch import best_five_batch as _impl

    return _impl(hands, rules)
