"""Exact analysis of Over/Under (58 Pa. Code Chapter 686a).

The three cards of a hand are the first three cards of a shuffled six-deck shoe,
dealt without replacement (§ 686a.3(a)); every ordered triple of the 312 cards is
equally likely, so the weights are exact integers (312·311·310 in all).  Only the
ten point values matter (§ 686a.3(d)), so the enumeration is over values with
their multiplicities.  ``-o decks=N`` analyses an N-deck shoe; ``-o decks=infinite``
draws with replacement (for comparison only: the published figures are those of
the six-deck shoe, docs/rules-readings/686a.md).

* ``over-under/ante`` — the required wagers (Ante + Over 23 / Under 18) played
  with the best decision after the first card (§ 686a.7(g)); payback is the
  amount returned over the total amount wagered (Ante plus the decision wager;
  just the Ante after a surrender).  Regulator: 98.95%.
* ``over-under/bonus`` — the Bonus Wager (§ 686a.7(l), § 686a.8(b)).  Regulator:
  94.393% (printed); exact six-deck figure 94.3948%.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from fractions import Fraction

from controller.analysis import AnalysisResult, AnalysisRow, analyzer
from controller.rules.cards import DECK_52
from controller.rules.overunder import (
    BONUS_PAYTABLE,
    BONUS_WINS,
    DECKS,
    Decision,
    bonus_hand,
    card_points,
    decision_wins,
)
from controller.rules.paytables import get_paytable

INFINITE = "infinite"


def _value_counts(decks: int | None) -> dict[int, int]:
    """Cards per point value in the shoe (``None``: infinite deck, weights per 52)."""
    per_deck = Counter(card_points(c) for c in DECK_52)
    return {v: n * (decks or 1) for v, n in sorted(per_deck.items())}


def _parse_decks(options: dict[str, str]) -> int | None:
    raw = str(options.get("decks", DECKS)).strip().lower()
    if raw in (INFINITE, "inf"):
        return None
    try:
        d = int(raw)
    except ValueError:
        raise ValueError(f"decks={raw!r}: give a number of decks or 'infinite'") from None
    if d < 1:
        raise ValueError(f"decks={d}: at least one deck")
    return d


def total_distribution(first: int, decks: int | None = DECKS) -> dict[int, int]:
    """Integer weights of the three-card total given the first card's value, over the
    ordered pairs of the next two cards (without replacement unless ``decks`` is None)."""
    counts = _value_counts(decks)
    if decks is not None:
        counts[first] -= 1
    out: Counter[int] = Counter()
    for v2, c2 in counts.items():
        for v3, c3 in counts.items():
            w = c2 * (c3 - (1 if (decks is not None and v2 == v3) else 0))
            if w:
                out[first + v2 + v3] += w
    return dict(out)


def decision_ev(first: int, decision: Decision, decks: int | None = DECKS, other_side: str = "lose") -> Fraction:
    """Expected net, in Ante units, of ``decision`` after a first card of value ``first``."""
    if decision is Decision.SURRENDER:
        return Fraction(-1)
    dist = total_distribution(first, decks)
    n = sum(dist.values())
    ev = Fraction(0)
    for total, w in dist.items():
        ev += w * _net(decision, total, other_side)
    return ev / n


def _net(decision: Decision, total: int, other_side: str) -> int:
    """Net of Ante + decision wager, in Ante units (both even money, § 686a.8(a))."""
    won = decision_wins(decision, total)
    if won:
        return 2
    other = total < 18 if decision is Decision.OVER_23 else total > 23
    if other and other_side == "push":
        return 0  # the rejected reading (docs/rules-readings/686a.md): the wagers push
    return -2


def best_decision(first: int, decks: int | None = DECKS) -> Decision:
    """The decision with the highest expected value after the first card (ties: the
    earlier of over-23, under-18, surrender)."""
    evs = {d: decision_ev(first, d, decks) for d in Decision}
    return max(evs, key=lambda d: evs[d])


def _first_card_rows(
    first: int, c1: int, best: Decision, dist: Mapping[int, int], other_side: str
) -> list[AnalysisRow]:
    """The rows of the rounds whose first card is worth ``first`` (``c1`` of them), played by the
    ``best`` decision: a surrender, or the win, push and lose rows of the totals ``dist``."""
    if best is Decision.SURRENDER:
        return [AnalysisRow(f"first {first}: surrender", c1 * sum(dist.values()), "lose ante", Fraction(-1))]
    by_net: Counter[int] = Counter()
    for total, w in dist.items():
        by_net[_net(best, total, other_side)] += w
    return [
        AnalysisRow(
            f"first {first}: {best.value} {_NET_LABEL[net]}", c1 * w, "1 to 1" if net > 0 else "", Fraction(net)
        )
        for net, w in sorted(by_net.items(), reverse=True)
    ]


#: a decided round's outcome by its net (in Ante units: the Ante and the Over/Under wager)
_NET_LABEL = {2: "win", 0: "push", -2: "lose"}


@analyzer("over-under", "ante")
def analyze_ante(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    decks = _parse_decks(options)
    other_side = options.get("other_side", options.get("other-side", "lose"))
    if other_side not in ("lose", "push"):
        raise ValueError("other_side must be 'lose' (the project's reading) or 'push'")
    counts = _value_counts(decks)
    n = sum(counts.values())
    rows: list[AnalysisRow] = []
    total_weight = 0
    wagered = Fraction(0)  # per Ante, weighted
    notes: list[str] = []
    strategy: list[str] = []
    for first, c1 in counts.items():
        evs = {d: decision_ev(first, d, decks, other_side) for d in Decision}
        best = max(evs, key=lambda d: evs[d])
        strategy.append(f"{first}:{best.value}")
        dist = total_distribution(first, decks)
        m = sum(dist.values())
        rows += _first_card_rows(first, c1, best, dist, other_side)
        wagered += (1 if best is Decision.SURRENDER else 2) * c1 * m  # a surrender leaves the Ante alone
        total_weight += c1 * m
    ev = sum((r.count * r.net for r in rows), Fraction(0))  # per Ante, weighted
    payback = 1 + ev / wagered
    deck_text = f"{decks} deck(s), without replacement" if decks else "infinite deck"
    notes.append(f"{deck_text}; best decision after the first card (value:decision) " + " ".join(strategy))
    notes.append(f"average amount wagered per round: {float(wagered / total_weight):.6f} Ante units")
    notes.append(f"Over 23 on 6-17 / Under 18 on 24-33: {other_side}")
    notes.append(f"first-card weights over {n} cards; regulator's figure 98.95% (six decks)")
    return AnalysisResult(
        title=f"Over/Under required wagers (Ante + Over 23 / Under 18), § 686a.7-686a.8(a), {deck_text}",
        rows=rows,
        total=total_weight,
        payback=payback,
        notes=notes,
        wagered=wagered / total_weight,
    )


@analyzer("over-under", "bonus", BONUS_PAYTABLE)
def analyze_bonus(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    decks = _parse_decks(options)
    table = get_paytable(paytable or BONUS_PAYTABLE)
    counts = _value_counts(decks)
    by_total: Counter[int] = Counter()
    for first, c1 in counts.items():
        for total, w in total_distribution(first, decks).items():
            by_total[total] += c1 * w
    rows: list[AnalysisRow] = []
    ret = Fraction(0)
    weight = sum(by_total.values())
    for total in sorted(by_total):
        w = by_total[total]
        pay = table.payout(bonus_hand(total)) if total in BONUS_WINS else None
        net = pay.net_win(1) if pay is not None else Fraction(-1)
        rows.append(AnalysisRow(bonus_hand(total), w, pay.text if pay else "", Fraction(net)))
        ret += w * net
    deck_text = f"{decks} deck(s), without replacement" if decks else "infinite deck"
    return AnalysisResult(
        title=f"Over/Under Bonus Wager, paytable {table.name!r} ({table.section}), {deck_text}",
        rows=rows,
        total=weight,
        payback=1 + ret / weight,
        notes=["regulator's figure 94.393% (preamble); six-deck exact 94.3948% (docs/rules-readings/686a.md)"],
    )
