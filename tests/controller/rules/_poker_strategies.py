"""Hypothesis strategies and helpers shared by the poker evaluator tests."""

from __future__ import annotations

from hypothesis import strategies as st

from controller.rules.cards import JOKER, parse_cards


def hands(n: int, deck: int = 53, force: tuple[int, ...] = ()) -> st.SearchStrategy[tuple[int, ...]]:
    """n distinct cards from 0..deck-1; when ``force`` is given, about half the hands
    start with one of those cards (the joker, a deuce) so wild play is exercised."""
    plain = st.lists(st.integers(0, deck - 1), min_size=n, max_size=n, unique=True).map(tuple)
    if not force:
        return plain

    def with_forced(args):
        first, rest = args
        rest = [c for c in rest if c != first][: n - 1]
        return (first, *rest)

    forced = st.tuples(
        st.sampled_from(force), st.lists(st.integers(0, deck - 1), min_size=n, max_size=n, unique=True)
    ).map(with_forced)
    return st.one_of(plain, forced)


def suit_permutations() -> st.SearchStrategy[tuple[int, ...]]:
    return st.permutations([0, 1, 2, 3]).map(tuple)


def permute_suits(cards: tuple[int, ...], perm: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(c if c == JOKER else (c // 4) * 4 + perm[c % 4] for c in cards)


def h(text: str) -> tuple[int, ...]:
    return parse_cards(text)


def sign(x) -> int:
    return int(x > 0) - int(x < 0)


JOKER_ONLY = (JOKER,)
DJ_WILDS = (0, 1, 2, 3, JOKER)
