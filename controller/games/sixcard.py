"""Six-Card Fortune Pai Gow Poker at the table (58 Pa. Code 670a), with the
Progressive Payout Wager (§ 670a.7(e)(4)) on the progressive system.

The deal: 7 stacks of 6 from 53 cards, 11 left (§ 670a.10(c),(d)).  Settlement
of each accepted Progressive Payout Wager from the best five of the seat's six
cards (§ 670a.11(h)(3)), paid per the configured paytable (§ 670a.12(d)(1));
percentage-of-meter pays are returned as ``meter_fraction`` and paid from the
meter as it stands when the seat is paid (§ 670a.12(d)(3)); envy bonuses per
§ 670a.12(d)(4) for four-of-a-kind or better, to every *other* seat that placed a
Progressive Payout Wager (never for one's own hand or the dealer's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from controller.config import TableProfile
from controller.games import DealPlan
from controller.rules.positions import settlement_order
from controller.rules.settlement import WagerResult
from controller.rules.sixcard import hand_key, six_card_rank
from controller.rules.sixcard_settle import SixCardOptions, settle_progressive


#: the hand of a seat whose cards the dealer did not enter as a winning hand (keypad entry)
NOT_ENTERED = "no-winning-hand-entered"


class SixCardFortune:
    game = "six-card-fortune"
    plan = DealPlan(stacks=7, cards_per_stack=6, remaining=11, deck=53)   # § 670a.10(d)

    def __init__(self, profile: TableProfile):
        if profile.progressive is None:
            raise ValueError(f"{profile.file}: six-card-fortune at the table needs a [progressive] section")
        self.profile = profile
        self.seats = profile.seats
        prog = profile.progressive
        envy = (prog.envy_paytable,) if prog.envy_paytable else ()
        self.options = SixCardOptions(progressive_paytable=prog.paytable, progressive_envy_paytables=envy,
                                      progressive_wager_cents=prog.wager_cents)

    def settle_progressive(self, hands: Mapping[int, Sequence[int] | None],
                           wagers: Mapping[int, int]) -> list[WagerResult]:
        """Results for every accepted Progressive Payout Wager, in settlement order
        (§ 670a.11(e), § 670a.11(h)(3)(i)), followed by envy bonuses (§ 670a.11(h)(3)(ii)).

        ``hands`` are the seats in play (holders of a possible Envy Bonus Qualifying
        Hand); the progressive system knows a seat is in play by its accepted wager.
        A seat whose cards are None (manual dealing: the dealer entered no winning hand
        for it) has no straight or better and loses (§ 670a.11(h)(3)(i)(A))."""
        keys = {seat: (hand_key(six_card_rank(cards)) if cards is not None else NOT_ENTERED)
                for seat, cards in hands.items()}
        return settle_progressive(keys, wagers, self.options, settlement_order(self.seats))
