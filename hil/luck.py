"""``--hit-rate``: progressive hits on demand (``tablectl sim --hit-rate R``, as ``bench link-chaos``
has).  A shuffled deck hits a progressive too seldom for a newcomer to see one — five aces come
about once in tens of thousands of hands — so, for a share ``R`` of the rounds, the shoe is loaded
with a deck whose first cards are five aces (the joker as the fifth, § 670a.12(d)(1)'s top hand:
100 % of the meter) or, as often, a royal flush (10 %): the first stack dealt holds them, and it goes
to the position the dice start at, a hit when a progressive wager sits there.  Only a shoe of one
53-card deck (the Pai Gow poker games, DJ Wild Stud) is loaded; the others deal as ever.  The luck is
seeded, so the same seed hits the same rounds.
"""

from __future__ import annotations

import random
from typing import Any

#: the first six cards of a loaded deck: the top hand (five aces, 100 % of the meter) or the next one
#: (a royal flush, 10 %: § 670a.12(d)(1)), so that the meter is seen both taken whole and in part
TOP_HANDS = ("Ac Ad Ah As Jk 2c", "As Ks Qs Js Ts 2c")


def five_aces_first(rng: random.Random, first: str = TOP_HANDS[0]) -> list[int]:
    """A deck (top card first) whose first six cards are ``first``, the rest shuffled."""
    from controller.rules.cards import parse_cards

    top = list(parse_cards(first))
    rest = [c for c in range(53) if c not in top]
    rng.shuffle(rest)
    return top + rest


def maybe_stack(rig: Any, rng: random.Random, rate: float) -> bool:
    """Before a round: with probability ``rate``, load the shoe with a deck dealing five aces or a
    royal flush first (a shoe of one 53-card deck only); True when it did."""
    if rate <= 0 or rig.shoe.deck_size != 53 or rig.shoe.decks:
        return False
    if rng.random() >= rate:
        return False
    rig.shoe.stacked_decks.append(five_aces_first(rng, rng.choice(TOP_HANDS)))
    return True
