"""Exact analyses for Pai Gow tiles (chapter 621a): the dice wagers over the
216 equally likely rolls of three dice (§ 621a.5(e)(2)-(4), § 621a.11(c)-(e)),
and Pair Fortunes over the C(32,4) = 35,960 equally likely four-tile hands
(§ 621a.5(e)(1), § 621a.11(b)).  Everything is counted, nothing sampled."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from itertools import combinations

from controller.analysis import AnalysisResult, AnalysisRow, analyzer
from controller.rules.dice import Dice, all_rolls
from controller.rules.paytables import Paytable, get_paytable
from controller.rules.tiles import FULL_SET, classify_pair_fortunes
from controller.rules.tiles_dice import beat_it_keys, best_row, match_keys, sum_keys

GAME = "pai-gow-tiles"


def _table(name: str | None, wager: str, default: str) -> Paytable:
    pt = get_paytable(name or default)
    if pt.game != GAME or pt.wager != wager:
        raise ValueError(f"paytable {pt.name!r} is for {pt.game}/{pt.wager}, not {GAME}/{wager}")
    return pt


def _result(title: str, pt: Paytable, counts: Counter[str | None], total: int, notes: list[str]) -> AnalysisResult:
    rows: list[AnalysisRow] = []
    ret = Fraction(0)
    for hand, payout in pt.pays:
        n = counts.get(hand, 0)
        net = payout.net_win(1)
        rows.append(AnalysisRow(hand, n, payout.text, net))
        ret += n * net
    lose = counts.get(None, 0)
    rows.append(AnalysisRow("lose", lose, "lose", Fraction(-1)))
    ret -= lose
    assert sum(r.count for r in rows) == total, "every case is counted once"
    return AnalysisResult(title, rows, total, 1 + ret / total, notes)


def _dice(pt: Paytable, key_fn: Callable[[Dice], tuple[str, ...]], title: str, notes: list[str]) -> AnalysisResult:
    counts: Counter[str | None] = Counter()
    for d in all_rolls(with_red=True):
        counts[best_row(key_fn(d), pt)] += 1
    return _result(title, pt, counts, 216, notes)


@analyzer(GAME, "sum", default_paytable="Tiles Sum A")
def analyze_sum(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    pt = _table(paytable, "sum", "Tiles Sum A")
    return _dice(
        pt,
        sum_keys,
        f"{pt.name} ({pt.section}): Sum Wager over the 216 rolls of three dice",
        ["a roll pays at the best row of the paytable it makes; 'two-match' is exactly two alike"],
    )


@analyzer(GAME, "match", default_paytable="Tiles Match")
def analyze_match(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    pt = _table(paytable, "match", "Tiles Match")
    raw = options.get("value", "1")
    if not raw.isdigit() or not 1 <= int(raw) <= 6:
        raise ValueError(f"-o value={raw!r}: the value matched is 1..6")
    v = int(raw)
    return _dice(
        pt,
        lambda d: match_keys(d, v),
        f"{pt.name} ({pt.section}): Match Wager on {v} over the 216 rolls of three dice",
        ["every value 1..6 gives the same figures"],
    )


@analyzer(GAME, "beat-it", default_paytable="Tiles Beat It A")
def analyze_beat_it(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    pt = _table(paytable, "beat-it", "Tiles Beat It A")
    return _dice(
        pt,
        beat_it_keys,
        f"{pt.name} ({pt.section}): Beat It Wager over the 216 rolls (first die red)",
        [
            "red-*: red die vs sum of the blue dice (§ 621a.5(e)(4)(i)); any-*: any die vs the other two "
            "(§ 621a.5(e)(4)(ii))"
        ],
    )


def pair_fortunes_counts() -> Counter[str]:
    """Counts of each Pair Fortunes outcome over the C(32,4) four-tile hands (identical tiles distinct)."""
    cache: dict[tuple[int, ...], str] = {}
    counts: Counter[str] = Counter()
    for combo in combinations(FULL_SET, 4):
        key = tuple(sorted(combo))
        h = cache.get(key)
        if h is None:
            h = cache[key] = classify_pair_fortunes(key)
        counts[h] += 1
    return counts


@analyzer(GAME, "pair-fortunes", default_paytable="Tiles Pair Fortunes")
def analyze_pair_fortunes(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    pt = _table(paytable, "pair-fortunes", "Tiles Pair Fortunes")
    counts: Counter[str | None] = Counter()
    for h, n in pair_fortunes_counts().items():
        counts[h if h in pt else None] += n
    return _result(
        f"{pt.name} ({pt.section}): Pair Fortunes over the C(32,4) = 35,960 four-tile hands",
        pt,
        counts,
        35960,
        ["pairs are the Supreme Pair and the matched and mixed pairs of § 621a.3(c); wongs and gongs are not pairs"],
    )
