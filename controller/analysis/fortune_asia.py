"""Exact analysis of the Fortune Asia Poker seven-card side wagers (58 Pa. Code 659a).

Fortune Bonus A-D (§ 659a.12(b)), Insurance A-C (§ 659a.12(c)) and the
Progressive (§ 659a.12(d)(1)) are decided by the player's seven cards alone,
dealt from one deck with one joker (§ 659a.3(a)): C(53,7) = 154,143,080 equally
likely hands.

Method (exact, no sampling): enumerate rank multisets (each rank 0..4 times,
seven naturals or six and the joker).  Suits matter only through a flush, and
seven cards can hold at most one flush suit, so for every multiset we enumerate
the set F of ranks in the flush suit (five or more naturals, or four or more
with the joker) and count its suit assignments exactly:

    flush weight(F)  = 4 * prod_{r in F} C(3, c_r - 1) * prod_{r not in F} C(3, c_r)
    no-flush weight  = prod_r C(4, c_r) - sum_F flush weight(F)

The Royal Match (§ 659a.6(d)(2)) also depends on the suits of the extra king and
queen: of the 9 ways to place them in the other three suits, 3 share a suit.
Each (multiset, F) is classified by the very functions the table uses
(``controller/rules/fortune_asia_seven.py``).  One pass (about 70,000 classes)
feeds every paytable; it is cached per process.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from functools import lru_cache
from itertools import combinations
from math import comb, prod

from controller.analysis import AnalysisResult, AnalysisRow, analyzer
from controller.rules import fortune_asia_seven as fs
from controller.rules.cards import KING, QUEEN
from controller.rules.paytables import get_paytable, parse_money

TOTAL_HANDS = comb(53, 7)
RANKS = tuple(range(2, 15))


def _multisets(n: int, i: int = 0) -> Iterator[tuple[int, ...]]:
    """All count vectors over the 13 ranks (each 0..4) summing to n."""
    if i == 12:
        if n <= 4:
            yield (n,)
        return
    for c in range(min(4, n) + 1):
        for rest in _multisets(n - c, i + 1):
            yield (c,) + rest


def facts_of_multiset(counts: tuple[int, ...], joker: bool) -> Iterator[tuple[fs.SevenFacts, int]]:
    """The classes of one rank multiset (``counts`` indexed by rank 0..14) and
    their exact numbers of hands (sum = prod C(4, c_r))."""
    need = 4 if joker else 5
    present = [r for r in RANKS if counts[r]]
    total = prod(comb(4, counts[r]) for r in present)
    flush_total = 0
    for k in range(need, len(present) + 1):
        for fset in combinations(present, k):
            f = frozenset(fset)
            w = _flush_ways(counts, present, f)
            if not w:
                continue
            flush_total += w
            yield from _flush_classes(counts, joker, present, f, w)
    if total - flush_total:
        yield fs.SevenFacts(counts, joker, None, False), total - flush_total


def _flush_ways(counts: tuple[int, ...], present: list[int], f: frozenset[int]) -> int:
    """The hands whose flush suit holds exactly the ranks ``f`` (x4: the flush suit)."""
    w = 1
    for r in present:
        w *= comb(3, counts[r] - 1) if r in f else comb(3, counts[r])
        if not w:
            return 0
    return w * 4  # the flush suit


def _flush_classes(
    counts: tuple[int, ...], joker: bool, present: list[int], f: frozenset[int], w: int
) -> Iterator[tuple[fs.SevenFacts, int]]:
    """The ``w`` hands with the flush ranks ``f``: split by a Royal Match when the cards off
    the flush are a king and a queen beside a royal flush."""
    extra = {r: counts[r] - (1 if r in f else 0) for r in present}
    if {r: c for r, c in extra.items() if c} == {KING: 1, QUEEN: 1} and len(fs.ROYAL_RANKS - f) <= (1 if joker else 0):
        # 9 placements of the extra K and Q in the other three suits; 3 match
        yield fs.SevenFacts(counts, joker, f, True), w // 3
        yield fs.SevenFacts(counts, joker, f, False), w - w // 3
    else:
        yield fs.SevenFacts(counts, joker, f, False), w


def enumerate_facts() -> Iterator[tuple[fs.SevenFacts, int]]:
    """Every seven-card class with its exact number of hands (sum = C(53,7))."""
    for joker in (False, True):
        for cv in _multisets(6 if joker else 7):
            yield from facts_of_multiset((0, 0) + cv, joker)


Key = tuple[str | None, str | None, str | None, str | None, str | None]


@lru_cache(maxsize=1)
def distribution() -> tuple[dict[Key, int], float]:
    """Counts of (fortune A/B/D hand, fortune C hand, progressive, insurance,
    insurance under the rejected pairs-only reading) over all C(53,7) hands,
    and the seconds it took."""
    t0 = time.perf_counter()
    dist: Counter[Key] = Counter()
    for facts, w in enumerate_facts():
        key = (
            fs.fortune_hand(facts, fs.STRAIGHT),
            fs.fortune_hand(facts, fs.THREE_PAIR),
            fs.progressive_hand(facts),
            fs.insurance_hand(facts, True),
            fs.insurance_hand(facts, False),
        )
        dist[key] += w
    total = sum(dist.values())
    if total != TOTAL_HANDS:  # pragma: no cover - an enumeration bug, never a wrong answer
        raise AssertionError(f"enumerated {total} hands, expected C(53,7) = {TOTAL_HANDS}")
    return dict(dist), time.perf_counter() - t0


def marginal(index: int) -> Counter[str | None]:
    out: Counter[str | None] = Counter()
    for key, w in distribution()[0].items():
        out[key[index]] += w
    return out


def _paytable_result(
    title: str, paytable: str, counts: Counter[str | None], notes: list[str], meter_units: Fraction | None = None
) -> AnalysisResult:
    pt = get_paytable(paytable)
    rows: list[AnalysisRow] = []
    total = sum(counts.values())
    ret = Fraction(0)
    paid = 0
    for hand, payout in pt.pays:
        n = counts.get(hand, 0)
        paid += n
        if payout.kind == "meter":
            assert meter_units is not None
            net = payout.ratio * meter_units - 1  # the meter share is the whole pay
        else:
            net = payout.net_win(1)
        rows.append(AnalysisRow(hand, n, payout.text, net))
        ret += n * net
    rows.append(AnalysisRow("lose", total - paid, "lose", Fraction(-1)))
    ret -= total - paid
    return AnalysisResult(title, rows, total, 1 + ret / total, notes)


def _timing_note() -> str:
    return (
        f"exact enumeration of C(53,7) = {TOTAL_HANDS:,} hands by rank multiset and flush suit: "
        f"{distribution()[1]:.2f} s"
    )


@analyzer("fortune-asia", "insurance", "Fortune Asia Insurance A")
def insurance(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Insurance A-C (§ 659a.12(c)).  ``-o reading=pairs-only`` analyses the
    rejected reading in which straights and flushes do not count as better than
    a pair (docs/rules-readings/659a.md)."""
    name = paytable or "Fortune Asia Insurance A"
    reading = options.get("reading", "published")
    if reading not in ("published", "pairs-only"):
        raise ValueError(f"reading {reading!r}: use 'published' or 'pairs-only'")
    counts = marginal(3 if reading == "published" else 4)
    notes = [
        _timing_note(),
        "pair or better (loses) = any § 659a.6(d) hand: pairs, straights and flushes, the joker completing them"
        if reading == "published"
        else "rejected reading: only matched ranks count as a pair or better",
    ]
    return _paytable_result(f"Fortune Asia Poker Insurance: {name} (§ 659a.12(c))", name, counts, notes)


@analyzer("fortune-asia", "fortune", "Fortune Asia Fortune A")
def fortune(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Fortune Bonus A-D (§ 659a.12(b)); Paytable C pushes three pair."""
    name = paytable or "Fortune Asia Fortune A"
    pt = get_paytable(name)
    counts = marginal(1 if pt.options.get("qualifier") == fs.THREE_PAIR else 0)
    return _paytable_result(
        f"Fortune Asia Poker Fortune Bonus: {name} (§ 659a.12(b))",
        name,
        counts,
        [_timing_note(), "envy bonuses are paid to other players and are not in this return"],
    )


@analyzer("fortune-asia", "progressive", "Fortune Asia Progressive")
def progressive(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Progressive (§ 659a.12(d)(1)) with the meter at ``-o meter=$N`` (default the
    $2,000 minimum reset, § 659a.12(d)(2)) for a ``-o wager=$N`` wager (default $1).
    The meter is held fixed: the return of the increments is not included."""
    from controller.analysis import meter_values

    name = paytable or "Fortune Asia Progressive"
    # § 659a.12(d)(2): the reset amount is the Rules Submission's, at least $2,000; no rate
    mv = meter_values(options, (200_000, "§ 659a.12(d)(2) minimum reset; the Rules Submission's may be higher"))
    meter = mv.meter
    wager = parse_money(options.get("wager", "$1"))
    if wager <= 0:
        raise ValueError("the wager must be a positive amount")
    if mv.seed is not None and mv.seed < 200_000:
        raise ValueError(f"--seed ${mv.seed / 100:,.2f}: § 659a.12(d)(2) requires at least $2,000")
    counts = marginal(2)
    res = _paytable_result(
        f"Fortune Asia Poker Progressive: {name} (§ 659a.12(d)(1)), "
        f"meter ${meter / 100:,.2f}, wager ${wager / 100:,.2f}",
        name,
        counts,
        [
            _timing_note(),
            "percentage-of-meter pays use the stated meter and are the whole pay (the wager is not returned on top)",
            mv.note,
        ],
        meter_units=Fraction(meter, wager),
    )
    if mv.rate is not None and mv.seed is not None and res.payback is not None:
        # the long-run return: the meter pays out every increment, and the seed after each 100% reset
        total = sum(counts.values())
        meter_pays = [(counts.get(k, 0), p.ratio) for k, p in get_paytable(name).pays if p.kind == "meter"]
        at_meter = sum((Fraction(n * meter, total * wager) * ratio for n, ratio in meter_pays), Fraction(0))
        resets = sum(n for n, ratio in meter_pays if ratio == 1)
        long_run = res.payback - at_meter + mv.rate + Fraction(resets * mv.seed, total * wager)
        res.notes.append(
            f"long-run return with rate {float(mv.rate) * 100:g}%: {float(long_run) * 100:.4f}% "
            "(fixed pays + rate + P(100% pay) x seed / wager)"
        )
    return res
