"""Playing cards: the model shared by every card game in the rules engine.

Pure: no I/O, no hardware imports.

A card is a small ``int`` so that evaluators can index lookup tables with it:

    card = (rank - 2) * 4 + suit      rank 2..14 (ace = 14), suit 0..3 = c, d, h, s
    JOKER = 52

so ``0`` is the deuce of clubs and ``51`` the ace of spades.  Text form is two
characters, rank then suit (``"As"``, ``"Td"``, ``"2c"``), and ``"Jk"`` for the
joker (§ 670a.3(a): one deck of 52 plus one joker).  ``"10"`` is accepted as
a synonym for ``"T"`` on input; output always uses ``"T"``.

Every parse error is a :class:`CardError` (a ``ValueError``) that names the
offending token, so a bad line from a keypad, a shoe or a test never becomes a
wrong answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
JOKER = 52
JOKER_TEXT = "Jk"

#: ranks as used throughout the engine
TWO, THREE, FOUR, FIVE, SIX, SEVEN, EIGHT, NINE, TEN, JACK, QUEEN, KING, ACE = range(2, 15)

#: a standard deck (52) and the Pai Gow poker deck (52 + joker, § 670a.3(a))
DECK_52: tuple[int, ...] = tuple(range(52))
DECK_53: tuple[int, ...] = tuple(range(53))


class CardError(ValueError):
    """A string that is not a card, a duplicate card, or a wrong card count."""

    def __init__(self, message: str, token: str | None = None):
        super().__init__(message)
        self.token = token


def make_card(rank: int, suit: int) -> int:
    if not (2 <= rank <= 14) or not (0 <= suit <= 3):
        raise CardError(f"no card with rank {rank!r} and suit {suit!r}")
    return (rank - 2) * 4 + suit


def rank_of(card: int) -> int:
    """Rank 2..14 of a natural card. The joker has no rank of its own."""
    if card == JOKER:
        raise CardError("the joker has no natural rank", JOKER_TEXT)
    return card // 4 + 2


def suit_of(card: int) -> int:
    if card == JOKER:
        raise CardError("the joker has no suit", JOKER_TEXT)
    return card % 4


def is_joker(card: int) -> bool:
    return card == JOKER


def card_str(card: int) -> str:
    if card == JOKER:
        return JOKER_TEXT
    if not 0 <= card < 52:
        raise CardError(f"{card!r} is not a card number (0..52)")
    return RANK_CHARS[card // 4] + SUIT_CHARS[card % 4]


def cards_str(cards: Iterable[int]) -> str:
    return " ".join(card_str(c) for c in cards)


def parse_card(token: str) -> int:
    """Parse one card token such as ``"As"``, ``"10h"``, ``"Jk"``."""
    t = token.strip()
    if t.lower() in ("jk", "joker"):
        return JOKER
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2:
        raise CardError(f"{token!r} is not a card (expected rank+suit like 'As', 'Td', or 'Jk')", token)
    r = RANK_CHARS.find(t[0].upper())
    s = SUIT_CHARS.find(t[1].lower())
    if r < 0:
        raise CardError(f"{token!r} is not a card: unknown rank {t[0]!r} (use {RANK_CHARS})", token)
    if s < 0:
        raise CardError(f"{token!r} is not a card: unknown suit {t[1]!r} (use {SUIT_CHARS})", token)
    return r * 4 + s


def parse_cards(
    text: str | Sequence[str],
    *,
    count: int | Sequence[int] | None = None,
    allow_duplicates: bool = False,
    allow_joker: bool = True,
) -> tuple[int, ...]:
    """Parse a space-separated hand (``"As Kd Qh Jc Ts 9d Jk"``) or a list of tokens.

    ``count`` is the number of cards required (an int or a collection of
    allowed counts).  Duplicates are refused unless ``allow_duplicates`` (a
    multi-deck shoe, § 686a.3).  The joker is refused when ``allow_joker`` is
    false (games dealt from a 52-card deck).
    """
    tokens = text.split() if isinstance(text, str) else list(text)
    cards: list[int] = []
    seen: dict[int, str] = {}
    for tok in tokens:
        c = parse_card(tok)
        if c == JOKER and not allow_joker:
            raise CardError(f"{tok!r}: this game is dealt without a joker", tok)
        if not allow_duplicates and c in seen:
            raise CardError(f"{tok!r}: duplicate card (also given as {seen[c]!r})", tok)
        seen.setdefault(c, tok)
        cards.append(c)
    if count is not None:
        check_count(len(cards), count)
    return tuple(cards)


def check_count(n: int, count: int | Sequence[int]) -> None:
    """``n`` cards is the number, or one of the numbers, required."""
    allowed = (count,) if isinstance(count, int) else tuple(count)
    if n not in allowed:
        want = " or ".join(str(a) for a in allowed)
        raise CardError(f"wrong number of cards: got {n}, expected {want}")
