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
from fractions import Fraction

from controller.config import TableProfile
from controller.games import DealPlan
from controller.rules.paytables import Paytable, get_paytable
from controller.rules.positions import settlement_order
from controller.rules.settlement import WagerResult, whole_cents


class SixCardFortune:
    game = "six-card-fortune"
    plan = DealPlan(stacks=7, cards_per_stack=6, remaining=11, deck=53)   # § 670a.10(d)
    envy_qualifying = ("five-aces", "royal-flush", "straight-flush", "four-of-a-kind")  # § 670a.1

    def __init__(self, profile: TableProfile):
        if profile.progressive is None:
            raise ValueError(f"{profile.file}: six-card-fortune at the table needs a [progressive] section")
        self.profile = profile
        self.seats = profile.seats
        self.paytable: Paytable = get_paytable(profile.progressive.paytable)
        self.envy: Paytable | None = (get_paytable(profile.progressive.envy_paytable)
                                      if profile.progressive.envy_paytable else None)

    @staticmethod
    def hand_category(cards: Sequence[int]) -> str:
        """Best five of six with the joker as a bug (§ 670a.6, § 670a.11(h))."""
        from controller.rules.poker import best_five

        return best_five(tuple(cards), rules="bug").category.text

    def settle_progressive(self, hands: Mapping[int, Sequence[int]], wagers: Mapping[int, int]) -> list[WagerResult]:
        """Results for every accepted Progressive Payout Wager, in settlement order
        (§ 670a.11(e), § 670a.11(h)(3)(i)), followed by envy bonuses (§ 670a.11(h)(3)(ii))."""
        pt = self.paytable
        cats = {seat: self.hand_category(cards) for seat, cards in hands.items()}
        out: list[WagerResult] = []
        for seat in settlement_order(self.seats):
            if seat not in wagers:
                continue
            amount = wagers[seat]
            cat = cats[seat]
            pay = pt.payout(cat)
            if pay is None:   # § 670a.11(h)(3)(i)(A): no straight or better
                out.append(WagerResult(seat, "progressive", amount, "lose", -amount, cat, pt.name))
            elif pay.kind == "meter":   # § 670a.12(d)(1),(3): paid from the meter when it is this seat's turn
                out.append(WagerResult(seat, "progressive", amount, "win", 0, cat, pt.name, pay.text,
                                       meter_fraction=pay.ratio * Fraction(amount, self.profile.progressive.wager_cents)))
            else:
                net = whole_cents(pay.net_win(amount), rule="§ 670a.12(d)(1)")
                out.append(WagerResult(seat, "progressive", amount, "win", net, cat, pt.name, pay.text))
        if self.envy is not None:
            holders = [s for s in settlement_order(self.seats) if s in cats and cats[s] in self.envy_qualifying]
            for seat in settlement_order(self.seats):
                if seat not in wagers:
                    continue
                for holder in holders:
                    if holder == seat:
                        continue   # § 670a.11(h)(3)(ii): not for one's own hand
                    pay = self.envy.payout(cats[holder])
                    if pay is None:
                        continue
                    net = whole_cents(pay.net_win(wagers[seat], per_wager_cents=self.envy.per_wager_cents),
                                      rule="§ 670a.12(d)(4)")
                    out.append(WagerResult(seat, "progressive-envy", 0, "win", net, cats[holder], self.envy.name,
                                           pay.text, detail=f"envy of seat {holder}"))
        return out
