"""Exact analysis of DJ Wild Stud Poker (58 Pa. Code Chapter 687a).

Every hand is one of the C(53,5) = 2,869,685 five-card hands, all equally likely.
Evaluating each with the shared evaluator would take minutes, so hands are grouped
into classes whose every member provably ranks the same, and one representative
per class goes through ``controller.rules.poker`` / ``controller.rules.djwild``:

* *score class* (the DJ Wild rank, § 687a.6): the multiset of natural ranks (3..A),
  the number of wild cards (deuces and joker, § 687a.6(b)) and whether the natural
  cards share one suit.  Suits matter only through a flush, for which every natural
  card must share a suit; a wild card takes any rank and suit.
* *trips class* (category and the "Natural" column, § 687a.12(d)): the multiset of
  all non-joker ranks (deuces included), whether the joker is present, whether all
  non-joker cards share a suit and whether the non-deuce ones do (reading 687a-1
  plays deuces as deuces for "natural").

Tests check the class lookup against direct evaluation on random hands.

The dealer comparison (Ante/Blind/Raise, Two-Way Bad Beat) is exact too: for a
player hand P the dealer holds one of the C(48,5) hands disjoint from P, and the
number with a lower (or not higher) score is, by inclusion–exclusion over the
subsets T of P, ``sum_T (-1)^|T| #{hands H ⊇ T : score(H) < s}``.  For each size
k the pairs (T, score(H)) over all hands H ⊇ T are sorted once; the pairs a player
hand queries are the same multiset, so every count is a position in a sorted array
(no sampling, no per-hand loop).  About a minute and ~2 GB on the lab machine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import combinations
from math import comb

import numpy as np

from controller.analysis import AnalysisResult, AnalysisRow, MeterValues, analyzer
from controller.rules import djwild, poker
from controller.rules.cards import JOKER
from controller.rules.paytables import Paytable, get_paytable

N_HANDS = comb(53, 5)  # 2,869,685
N_DEALER = comb(48, 5)  # 1,712,304 dealer hands per player hand
_DECK = 53


@lru_cache(maxsize=1)
def all_hands() -> np.ndarray:
    """Every five-card hand of the 53-card deck (§ 687a.3(a)), shape (2869685, 5), sorted cards."""
    arr = np.fromiter(combinations(range(_DECK), 5), dtype=np.dtype((np.int8, 5)), count=N_HANDS)
    arr.setflags(write=False)
    return arr


def _suited(suits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Row-wise: do all cards selected by ``mask`` share one suit (vacuously True)?"""
    hi = np.where(mask, suits, -1).max(axis=1)
    lo = np.where(mask, suits, 9).min(axis=1)
    same: np.ndarray = (hi == lo) | ~mask.any(axis=1)
    return same


def _features(h: np.ndarray) -> dict[str, np.ndarray]:
    h = h.astype(np.int64)
    joker = h == JOKER
    deuce = h < 4
    natural = ~joker & ~deuce
    rank_idx = np.where(joker, 0, h // 4)  # 0 = deuce .. 12 = ace
    suits = h % 4
    weight = np.where(joker, 0, 5**rank_idx)  # base-5 rank-count code (at most 4 per rank)
    return {
        "nat_code": np.where(natural, weight, 0).sum(axis=1),
        "all_code": weight.sum(axis=1),
        "wilds": (joker | deuce).sum(axis=1),
        "has_joker": joker.any(axis=1),
        "suited_nat": _suited(suits, natural),
        "suited_all": _suited(suits, ~joker),
    }


#: hands per block when computing features: all 2.87M at once take ~600 MB of int64 temporaries
_FEATURE_BLOCK = 1 << 18


def _feature_key(h: np.ndarray, key_fn: Callable[[dict[str, np.ndarray]], np.ndarray]) -> np.ndarray:
    """``key_fn(_features(h))``, block by block (``tablectl analyze`` under 500 MB)."""
    out = np.empty(len(h), dtype=np.int64)
    for lo in range(0, len(h), _FEATURE_BLOCK):
        out[lo : lo + _FEATURE_BLOCK] = key_fn(_features(h[lo : lo + _FEATURE_BLOCK]))
    return out


def _classes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of one representative per class, class id of every hand)."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def score_key(f: dict[str, np.ndarray]) -> np.ndarray:
    key: np.ndarray = (f["nat_code"] * 8 + f["wilds"]) * 2 + f["suited_nat"]
    return key


def trips_key(f: dict[str, np.ndarray]) -> np.ndarray:
    key: np.ndarray = ((f["all_code"] * 2 + f["has_joker"]) * 2 + f["suited_all"]) * 2 + f["suited_nat"]
    return key


@lru_cache(maxsize=1)
def scores() -> np.ndarray:
    """DJ Wild score (``HandRank.score``, § 687a.6) of every hand in :func:`all_hands` order."""
    h = all_hands()
    first, inv = _classes(_feature_key(h, score_key))
    rep = np.array(
        [poker.eval_five(tuple(int(c) for c in h[i]), rules=djwild.RULES).score for i in first], dtype=np.int64
    )
    out: np.ndarray = rep[inv]
    out.setflags(write=False)
    return out


@lru_cache(maxsize=1)
def trips_classes() -> Counter[str]:
    """Number of hands per Trips key (``natural-flush``, ``wild-pair`` ...) over all C(53,5) hands."""
    h = all_hands()
    first, inv = _classes(_feature_key(h, trips_key))
    counts = np.bincount(inv, minlength=len(first))
    out: Counter[str] = Counter()
    for i, n in zip(first, counts):
        out[djwild.trips_key(tuple(int(c) for c in h[i]))] += int(n)
    return out


def _trips_rows(paytable: str) -> AnalysisResult:
    table = get_paytable(paytable)
    if table.game != "dj-wild" or table.wager != "trips":
        raise ValueError(f"{paytable!r} is not a DJ Wild Trips paytable (DJWT-04..07)")
    cls = trips_classes()
    rows: list[AnalysisRow] = []
    ret = Fraction(0)
    losing = 0
    for key, _pay in table.pays:
        n = cls.get(key, 0)
        pay = table.payout(key)
        assert pay is not None
        rows.append(AnalysisRow(key, n, pay.text, pay.net_win(1)))
        ret += n * pay.net_win(1)
    unpaid = {k: n for k, n in cls.items() if k not in table}
    for key in sorted(unpaid, key=lambda k: -unpaid[k]):
        losing += unpaid[key]
    rows.append(AnalysisRow("lose (below three-of-a-kind)", losing, "", Fraction(-1)))
    ret -= losing
    total = sum(cls.values())
    return AnalysisResult(
        title=f"DJ Wild Trips Bonus, paytable {table.name} ({table.section}), all C(53,5) hands",
        rows=rows,
        total=total,
        payback=1 + ret / total,
        notes=["natural = no joker and the same category with every deuce played as a deuce (reading 687a-1)"],
    )


@analyzer("dj-wild", "trips", "DJWT-05")
def analyze_trips(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    res = _trips_rows(paytable or "DJWT-05")
    figures = {
        "DJWT-04": "98.843% printed; 93.843% exact (typo, reading 687a-2)",
        "DJWT-05": "92.474%",
        "DJWT-06": "92.338%",
        "DJWT-07": "91.454%",
    }
    if (paytable or "DJWT-05") in figures:
        res.notes.append(f"regulator's figure: {figures[paytable or 'DJWT-05']}")
    return res


# ----------------------------------------------------------------------------- Progressive Bonus


@lru_cache(maxsize=1)
def progressive_classes() -> Counter[str]:
    """Hands per category for the Progressive Bonus Wager (§ 687a.11(f)(1), reading 687a-3).

    The joker, when dealt to the player, is replaced by the set-aside card, a uniformly
    random one of the 48 cards the player does not hold; so a hand with the joker
    becomes four uniform cards of the 52 plus a uniform fifth from the other 48 — a
    uniform five-card hand of the 52, exactly like a hand dealt without the joker.  The
    Progressive hand is therefore a uniform C(52,5) hand, ranked without wild cards."""
    h = all_hands()
    h = h[(h != JOKER).all(axis=1)]
    first, inv = _classes(_feature_key(h, lambda f: f["all_code"] * 2 + f["suited_all"]))
    counts = np.bincount(inv, minlength=len(first))
    out: Counter[str] = Counter()
    for i, n in zip(first, counts):
        out[djwild.progressive_rank(tuple(int(c) for c in h[i]), None).category.text] += int(n)
    return out


def _progressive_pay_rows(
    table: Paytable, cls: Mapping[str, int], meter: int, wager: int
) -> tuple[list[AnalysisRow], Fraction, int]:
    """One row per pay of the paytable, the meter pays valued at ``meter``; with the return of the
    fixed pays and the count of hands that take the whole meter (a 100% pay resets it)."""
    rows: list[AnalysisRow] = []
    fixed = Fraction(0)
    resets = 0
    for key, pay in table.pays:
        n = cls.get(key, 0)
        if pay.kind == "meter":
            net = Fraction(pay.ratio * meter, wager)
            resets += n if pay.ratio == 1 else 0
        else:
            net = pay.net_win(wager) / wager
            fixed += n * net
        rows.append(AnalysisRow(key, n, pay.text, net))
    return rows, fixed, resets


def _meter_values(table: Paytable, options: dict[str, str]) -> MeterValues:
    """--seed, --rate, --meter over the seed the paytable prints (if it prints one)."""
    from controller.analysis import meter_values
    from controller.rules.paytables import parse_money

    printed = table.options.get("seed")
    return meter_values(options, (parse_money(str(printed)), f"{table.section} {table.name}") if printed else None)


@analyzer("dj-wild", "progressive", "DJ Wild Progressive 1")
def analyze_progressive(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Progressive Bonus (§ 687a.12(c)) with the meter at ``--meter`` (default the seed the
    paytable prints, or ``--seed``).  § 687a prints no rate of progression: only ``--rate``
    (the Rules Submission's) adds the long-run return of the increments."""
    table = get_paytable(paytable or "DJ Wild Progressive 1")
    if table.game != "dj-wild" or table.wager != "progressive":
        raise ValueError(f"{table.name!r} is not a DJ Wild Progressive paytable")
    wager = table.per_wager_cents or 100
    mv = _meter_values(table, options)
    meter = mv.meter
    cls = progressive_classes()
    total = sum(cls.values())
    rows, fixed, resets = _progressive_pay_rows(table, cls, meter, wager)
    ret = sum((r.count * r.net for r in rows), Fraction(0))
    losing = sum(n for k, n in cls.items() if k not in table)
    rows.append(AnalysisRow("lose", losing, "", Fraction(-1)))
    ret -= losing
    notes = [
        "joker replaced by the set-aside card, hand ranked without wild cards (reading 687a-3)",
        "percentage-of-meter pays valued at the meter (--meter, default the seed); the wager is not lost on a win",
        mv.note,
        "envy bonuses excluded; regulator's figure 77% (not reproduced, reading 687a-3)",
    ]
    if mv.rate is not None and mv.seed is not None:
        # long run: every increment is paid out, and the seed again after each 100% reset
        won = sum(cls.get(k, 0) for k, p in table.pays if p.kind == "meter")
        long_run = 1 + (fixed - losing - won) / total + mv.rate + Fraction(resets * mv.seed, total * wager)
        notes.append(
            f"long-run return with rate {float(mv.rate) * 100:g}%: {float(long_run) * 100:.4f}% "
            "(fixed pays + rate + P(100% pay) x seed / wager)"
        )
    return AnalysisResult(
        title=f"DJ Wild Progressive Bonus, {table.name} ({table.section}), meter ${meter / 100:,.2f}",
        rows=rows,
        total=total,
        payback=1 + ret / total,
        notes=notes,
    )


# ----------------------------------------------------------------------------- dealer comparison


@lru_cache(maxsize=1)
def dealer_counts() -> tuple[np.ndarray, np.ndarray, int]:
    """(# dealer hands each player hand beats, # it ties, C(48,5)), all_hands order (§ 687a.11(e))."""
    from controller.analysis._djwild_dealer import dealer_counts as _dc

    return _dc(all_hands(), scores(), _DECK)


def _levels() -> tuple[poker.Category, ...]:
    return poker.category_levels(djwild.RULES)


def _pay_by_level(paytable: str) -> list[Fraction | None]:
    table = get_paytable(paytable)
    out: list[Fraction | None] = []
    for c in _levels():
        p = table.payout(c.text)
        out.append(None if p is None else p.net_win(1))
    return out


@dataclass(frozen=True)
class MainGame:
    """Per player hand (all_hands order): dealer hands beaten / tied / lost to, out of ``nd``;
    the category level; the best decision; the Blind pay per level (Ante units)."""

    lt: np.ndarray
    tie: np.ndarray
    loss: np.ndarray
    nd: int
    lvl: np.ndarray
    raised: np.ndarray
    blind_pay: tuple[Fraction, ...]


@lru_cache(maxsize=4)
def main_game(blind_paytable: str = djwild.BLIND_PAYTABLE) -> MainGame:
    """Best raise/fold decision for every player hand (§ 687a.11(b)) and the exact counts.
    Everything in Ante units; Blind = Ante, Raise = 2 Antes (§ 687a.1).

    Raise: win +1 (Ante) +2 (Raise) + Blind pay (§ 687a.12(a),(b)); tie 0 (§ 687a.11(e)(2));
    lose -4 (§ 687a.11(e)(3)).  Fold: -2 (Ante and Blind forfeited, § 687a.11(b))."""
    lt, tie, nd = dealer_counts()
    lvl = (scores() >> 20).astype(np.int64)
    pays = _pay_by_level(blind_paytable)
    blind: list[Fraction] = []
    for c, b in zip(_levels(), pays):
        if b is None or b.denominator != 1:
            raise ValueError(f"{blind_paytable!r}: {c.text} needs a whole-number pay or 'push'")
        blind.append(b)
    bp = np.array([int(b) for b in blind], dtype=np.int64)[lvl]
    loss = nd - lt - tie
    raised = lt * (3 + bp) - 4 * loss > -2 * nd  # both sides x nd
    return MainGame(lt, tie, loss, nd, lvl, raised, tuple(blind))


@analyzer("dj-wild", "ante")
def analyze_main(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Ante + Blind + Raise with the best raise/fold decision; payback over the total wagered."""
    g = main_game(paytable or djwild.BLIND_PAYTABLE)
    rows: list[AnalysisRow] = []
    n_fold = int((~g.raised).sum()) * g.nd
    rows.append(AnalysisRow("fold", n_fold, "", Fraction(-2)))
    net_sum = -2 * n_fold
    wager_sum = 2 * n_fold
    for i, c in enumerate(_levels()):
        m = g.raised & (g.lvl == i)
        if not m.any():
            continue
        w, t, lo = int(g.lt[m].sum()), int(g.tie[m].sum()), int(g.loss[m].sum())
        b = g.blind_pay[i]
        rows.append(AnalysisRow(f"raise {c.text}: win", w, f"1+2+{b} (blind)", 3 + b))
        rows.append(AnalysisRow(f"raise {c.text}: tie", t, "push", Fraction(0)))
        rows.append(AnalysisRow(f"raise {c.text}: lose", lo, "", Fraction(-4)))
        net_sum += w * (3 + int(b)) - 4 * lo
        wager_sum += 4 * (w + t + lo)
    total = len(g.lvl) * g.nd
    return AnalysisResult(
        title="DJ Wild Stud Poker: Ante + Blind + Raise, best raise/fold strategy (§ 687a.11, § 687a.12(a),(b))",
        rows=rows,
        total=total,
        payback=1 + Fraction(net_sum, wager_sum),
        wagered=Fraction(wager_sum, total),
        notes=[
            f"all C(53,5) player hands x C(48,5) dealer hands = {total} pairs; net in Ante units",
            f"raise {int(g.raised.sum())} of {len(g.lvl)} player hands; no dealer qualification",
            f"expected net per Ante: {float(Fraction(net_sum, total)):.6f}",
            "regulator's figure 98.99% (not reproduced exactly: docs/rules-readings/687a.md, reading 687a-6)",
        ],
    )


@analyzer("dj-wild", "blind", djwild.BLIND_PAYTABLE)
def analyze_blind(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """The Blind Wager alone (per unit Blind), played with the best raise/fold strategy."""
    g = main_game(paytable or djwild.BLIND_PAYTABLE)
    n_fold = int((~g.raised).sum()) * g.nd
    rows = [AnalysisRow("fold", n_fold, "", Fraction(-1))]
    ret = Fraction(-n_fold)
    lose = push = 0
    for i, c in enumerate(_levels()):
        m = g.raised & (g.lvl == i)
        if not m.any():
            continue
        w = int(g.lt[m].sum())
        b = g.blind_pay[i]
        rows.append(AnalysisRow(f"win with {c.text}", w, "push" if b == 0 else f"{b} to 1", b))
        ret += w * b
        push += int(g.tie[m].sum())
        lose += int(g.loss[m].sum())
    rows.append(AnalysisRow("tie", push, "push", Fraction(0)))
    rows.append(AnalysisRow("lose to the dealer", lose, "", Fraction(-1)))
    ret -= lose
    total = len(g.lvl) * g.nd
    return AnalysisResult(
        title=f"DJ Wild Blind Wager, paytable {paytable or djwild.BLIND_PAYTABLE!r} (§ 687a.12(b))",
        rows=rows,
        total=total,
        payback=1 + ret / total,
        notes=["best raise/fold strategy for Ante + Blind + Raise"],
    )


def _bad_beat_rows(pays: list[Fraction | None], g: MainGame, two_way: bool) -> list[AnalysisRow]:
    """One row per paid category of losing hand: the raised hands of that level that lose
    (counted twice when the dealer's losing hand pays too)."""
    rows: list[AnalysisRow] = []
    ways = 2 if two_way else 1
    who = "player's or dealer's " if two_way else "player's "
    for i, c in enumerate(_levels()):
        p = pays[i]
        if p is None:
            continue
        n = ways * int(g.loss[g.raised & (g.lvl == i)].sum())
        rows.append(AnalysisRow(f"{who}{c.text} loses", n, f"{p} to 1", p))
    return rows


@analyzer("dj-wild", "bad-beat", "DJWBB-01")
def analyze_bad_beat(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Two-Way Bad Beat (§ 687a.11(f)(3), § 687a.12(e)) with the best raise/fold strategy.

    ``-o two_way=yes`` (default, reading 687a-4): a three-of-a-kind or better that loses —
    the player's to the dealer, or the dealer's to the player — pays by the losing hand.
    ``-o two_way=no``: only the player's losing hand pays (the literal § 687a.11(f)(3))."""
    name = paytable or "DJWBB-01"
    table = get_paytable(name)
    if table.game != "dj-wild" or table.wager != "bad-beat":
        raise ValueError(f"{name!r} is not a DJ Wild Two-Way Bad Beat paytable (DJWBB-01..04)")
    two_way = str(options.get("two_way", options.get("two-way", "yes"))).lower() in ("yes", "true", "1", "on")
    g = main_game()
    nd, lvl, raised = g.nd, g.lvl, g.raised
    pays = _pay_by_level(name)
    eligible = np.array([p is not None for p in pays])[lvl]
    # The two directions are equal in total when every eligible hand is raised: the pairs
    # (P, D) with D eligible and D < P are the pairs (D, P) with P eligible and P < D.
    if two_way and not bool(raised[eligible].all()):
        raise AssertionError("a three-of-a-kind or better is folded: the two-way symmetry does not hold")
    rows = _bad_beat_rows(pays, g, two_way)
    ret = sum((r.count * r.net for r in rows), Fraction(0))
    won = sum(r.count for r in rows)
    total = len(lvl) * nd
    rows.append(AnalysisRow("no bad beat", total - won, "", Fraction(-1)))
    ret -= total - won
    figures = {"DJWBB-01": "86.8%", "DJWBB-02": "87.682%", "DJWBB-03": "85.904%", "DJWBB-04": "85.848%"}
    return AnalysisResult(
        title=f"DJ Wild Two-Way Bad Beat, paytable {name} ({table.section}), {'two-way' if two_way else 'player only'}",
        rows=rows,
        total=total,
        payback=1 + ret / total,
        notes=[f"regulator's figure {figures.get(name, '-')}; reading 687a-4", "forfeited on a fold (§ 687a.11(b)(2))"],
    )
