"""Game procedures at the table: what the round state machine needs to know
about each game (how many stacks of how many cards, how many must remain, how
the progressive wagers settle), delegating every wager decision to the pure
rules engine in controller/rules/."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DealPlan:
    stacks: int            # stacks dispensed, one per position including the dealer
    cards_per_stack: int
    remaining: int         # cards that must remain in the shoe afterwards
    deck: int              # cards in the deck

    def __post_init__(self) -> None:
        if self.stacks * self.cards_per_stack + self.remaining != self.deck:
            raise ValueError(f"deal plan does not add up: {self.stacks}×{self.cards_per_stack} + "
                             f"{self.remaining} != {self.deck}")


def procedure_for(game: str, profile: object) -> object:
    if game == "six-card-fortune":
        from controller.games.sixcard import SixCardFortune

        return SixCardFortune(profile)  # type: ignore[arg-type]
    raise ValueError(f"game {game!r} is not yet playable at the table (rules engine only)")
