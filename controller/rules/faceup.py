"""Face Up Pai Gow Poker (58 Pa. Code chapter 688a): hands, setting, comparison.

Pure: no I/O, no hardware imports.

* A hand is the seven cards dealt to a position (§ 688a.8(d)), set into a five-card
  high hand and a two-card low hand (§ 688a.1 "Setting the hands", § 688a.11(c)).
* High hands rank per § 688a.6(a)-(c) (the bug-joker family of
  :mod:`controller.rules.poker`); low hands per § 688a.6(b)(11) and (c): a pair beats
  any two unpaired cards, pairs by rank, otherwise the highest card, then the other;
  the joker is an ace there (it cannot complete a straight or flush in two cards).
* :func:`is_foul` — § 688a.11(c), § 688a.11(f)(1)(iii): the high hand must rank equal
  to or higher than the low hand.
* :func:`base_outcome` — § 688a.11(f): win / push / lose of the Face Up Pai Gow
  Poker Wager, including the push when the dealer has an Ace High Pai Gow
  (§ 688a.11(f)(2)(iii)).

The dealer's house way lives in :mod:`controller.rules.faceup_houseway`, the
seven-card bonus hands in :mod:`controller.rules.faceup_bonus`, the settlement of a
round in :mod:`controller.rules.faceup_settle`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from controller.rules.cards import JOKER, CardError, card_str, cards_str, parse_cards
from controller.rules.faceup_bonus import ace_high_kind
from controller.rules.poker import Category, HandRank, eval_five

ACE = 14
RANK_WORDS = {
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
    11: "jack",
    12: "queen",
    13: "king",
    14: "ace",
}


class FaceUpError(CardError):
    """Bad input to the Face Up Pai Gow Poker rules (a ``ValueError``)."""


class SettingError(FaceUpError):
    """A setting that is not a 5/2 split of the seven cards dealt."""


def _as_cards(cards: Iterable[int] | str, what: str, count: int) -> tuple[int, ...]:
    if isinstance(cards, str):
        try:
            return parse_cards(cards, count=count)
        except CardError as e:
            raise FaceUpError(f"{what}: {e}", e.token) from None
    out = tuple(cards)
    _check_card_numbers(out, what)
    dup = [c for c, n in Counter(out).items() if n > 1]
    if dup:
        raise FaceUpError(f"{what}: duplicate card {card_str(dup[0])}", card_str(dup[0]))
    if len(out) != count:
        raise FaceUpError(f"{what}: wrong number of cards: got {len(out)}, expected {count}")
    return out


def _check_card_numbers(out: tuple[int, ...], what: str) -> None:
    """Every card a card number of the 53-card deck (0..52)."""
    for c in out:
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= JOKER:
            raise FaceUpError(f"{what}: {c!r} is not a card number (0..52)", str(c))


def check_seven(cards: Iterable[int] | str, what: str = "hand") -> tuple[int, ...]:
    """Seven distinct cards from the 53-card deck (§ 688a.3(a), § 688a.8(d))."""
    return _as_cards(cards, what, 7)


def card_rank(card: int) -> int:
    """Rank for pairing and high cards: the joker is an ace (§ 688a.6(a))."""
    return ACE if card == JOKER else card // 4 + 2


# --------------------------------------------------------------------------- low hand
def low_key(low: Sequence[int]) -> tuple[int, int, int]:
    """Total order of two-card low hands (§ 688a.6(b)(11), (c)): (is pair, high, low)."""
    if len(low) != 2:
        raise FaceUpError(f"a low hand is two cards (§ 688a.1), got {len(low)}")
    a, b = sorted((card_rank(c) for c in low), reverse=True)
    return (1 if a == b else 0, a, b)


def low_text(low: Sequence[int]) -> str:
    pair, a, b = low_key(low)
    return f"pair-of-{RANK_WORDS[a]}s" if pair else f"{RANK_WORDS[a]}-{RANK_WORDS[b]}"


def compare_low(a: Sequence[int], b: Sequence[int]) -> int:
    ka, kb = low_key(a), low_key(b)
    return (ka > kb) - (ka < kb)


# -------------------------------------------------------------------------- high hand
@lru_cache(maxsize=65536)
def _high_rank(high: tuple[int, ...]) -> HandRank:
    return eval_five(high, "bug")


def high_rank(high: Sequence[int]) -> HandRank:
    """The five-card high hand's rank, § 688a.6(a)-(c) (bug joker)."""
    if len(high) != 5:
        raise FaceUpError(f"a high hand is five cards (§ 688a.1), got {len(high)}")
    return _high_rank(tuple(sorted(high)))


def compare_high(a: Sequence[int], b: Sequence[int]) -> int:
    sa, sb = high_rank(a).score, high_rank(b).score
    return (sa > sb) - (sa < sb)


def is_foul(high: Sequence[int], low: Sequence[int]) -> bool:
    """§ 688a.11(c): the five-card hand must rank equal to or higher than the two-card
    hand ("if the two-card hand contains a pair of sevens, the five-card hand must
    contain at least a pair of sevens and the three remaining cards").  Compared by
    § 688a.6(b)-(c): any hand better than a pair beats every low hand; pair against
    pair by rank (equal is allowed); unpaired against unpaired card by card."""
    pair, a, b = low_key(low)
    cat = high_rank(high).category
    if cat not in (Category.HIGH_CARD, Category.PAIR):
        return False
    ranks = sorted((card_rank(c) for c in high), reverse=True)
    if cat == Category.PAIR:
        if not pair:
            return False
        hp = next(r for r, n in Counter(ranks).items() if n == 2)
        return hp < a
    if pair:
        return True
    return (ranks[0], ranks[1]) < (a, b)


# ---------------------------------------------------------------------------- setting
@dataclass(frozen=True)
class Setting:
    """A seven-card hand set into a five-card high hand and a two-card low hand."""

    high: tuple[int, ...]
    low: tuple[int, ...]

    @property
    def foul(self) -> bool:
        return is_foul(self.high, self.low)

    @property
    def cards(self) -> tuple[int, ...]:
        return self.high + self.low

    def __str__(self) -> str:
        return f"{cards_str(self.high)} / {cards_str(self.low)}"


def make_setting(dealt: Iterable[int] | str, high: Iterable[int] | str, low: Iterable[int] | str) -> Setting:
    """Check that ``high`` (5) and ``low`` (2) split exactly the seven cards ``dealt``
    (§ 688a.11(c)); a foul setting is allowed here (it loses, § 688a.11(f)(1)(iii))."""
    d = check_seven(dealt, "dealt hand")
    h = _as_cards(high, "high hand", 5)
    lo = _as_cards(low, "low hand", 2)
    if sorted(h + lo) != sorted(d):
        extra = [c for c in h + lo if c not in d]
        if extra:
            raise SettingError(f"{card_str(extra[0])} was not dealt to this hand", card_str(extra[0]))
        raise SettingError("the high and low hands use a card twice (§ 688a.11(f)(1)(iv))")
    return Setting(h, lo)


def all_settings(cards: Sequence[int]) -> list[Setting]:
    """The 21 ways to set seven cards (foul ones included)."""
    cs = tuple(cards)
    out = []
    for lo in combinations(range(len(cs)), 2):
        low = (cs[lo[0]], cs[lo[1]])
        high = tuple(c for i, c in enumerate(cs) if i not in lo)
        out.append(Setting(high, low))
    return out


# ----------------------------------------------------------------------- base outcome
@dataclass(frozen=True)
class BaseResult:
    outcome: str  # "win", "push", "lose"
    section: str  # the paragraph of § 688a.11(f) that decided it
    high: int  # player's high hand against the dealer's: 1, 0, -1 (0 when not compared)
    low: int


def base_outcome(player: Setting, dealer: Setting, dealer_ace_high: bool) -> BaseResult:
    """The Face Up Pai Gow Poker Wager (§ 688a.11(f)).

    The dealer's Ace High Pai Gow pushes every wager, a fouled hand included: the
    layout inscription § 688a.2(b)(8) and § 688a.11(f)(2)(iii) make it unconditional
    (docs/rules-readings/688a.md).  Otherwise a fouled hand loses ((f)(1)(iii)); both
    hands higher wins ((f)(3)); exactly one higher pushes ((f)(2)(i)-(ii)); neither
    higher — lower or identical ("copy") — loses ((f)(1)(i)-(ii))."""
    if dealer_ace_high:
        return BaseResult("push", "§ 688a.11(f)(2)(iii)", 0, 0)
    if player.foul:
        return BaseResult("lose", "§ 688a.11(f)(1)(iii)", 0, 0)
    hi = compare_high(player.high, dealer.high)
    lo = compare_low(player.low, dealer.low)
    if hi > 0 and lo > 0:
        return BaseResult("win", "§ 688a.11(f)(3)", hi, lo)
    if hi > 0:
        return BaseResult("push", "§ 688a.11(f)(2)(i)", hi, lo)
    if lo > 0:
        return BaseResult("push", "§ 688a.11(f)(2)(ii)", hi, lo)
    if hi == 0 or lo == 0:
        return BaseResult("lose", "§ 688a.11(f)(1)(ii)", hi, lo)
    return BaseResult("lose", "§ 688a.11(f)(1)(i)", hi, lo)


def dealer_ace_high(cards: Sequence[int]) -> bool:
    """Whether the dealer's seven cards are an Ace High Pai Gow (a helper of the rules' tests;
    the table asks controller/rules/faceup_bonus.py directly)."""
    return ace_high_kind(check_seven(cards, "dealer's hand")) is not None


def setting_text(s: Setting) -> str:
    return f"{high_rank(s.high).category.text}/{low_text(s.low)}"


__all__ = [
    "BaseResult",
    "FaceUpError",
    "Setting",
    "SettingError",
    "all_settings",
    "base_outcome",
    "card_rank",
    "check_seven",
    "compare_high",
    "compare_low",
    "dealer_ace_high",
    "high_rank",
    "is_foul",
    "low_key",
    "low_text",
    "make_setting",
    "setting_text",
]
