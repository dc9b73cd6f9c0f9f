"""Exact analysis of Six-Card Fortune Pai Gow Poker's optional wagers (58 Pa. Code 670a).

Every one of the C(53,6) = 22,957,480 six-card hands from the 53-card deck
(§ 670a.3(a)) is counted exactly, by combinatorics over *hand classes* rather than
hand by hand:

* A class is (joker or not, the multiset of natural ranks, and -- for the hands that
  can hold a flush -- the set ``F`` of ranks that have a card in the flush suit).
  Everything the bug-joker ranking of § 670a.6 looks at (pairs, straights, the
  flush and straight-flush candidates) is fixed by the class, so one representative
  hand per class is evaluated with the shared evaluator
  (``controller.rules.poker.best_five``).
* With six cards at most one suit can hold five naturals (or four naturals plus the
  joker), so the flush events of the four suits are disjoint.  For a rank multiset
  with ``c_r`` cards of rank ``r``, the suit assignments in which suit *s* holds
  exactly the ranks ``F`` number ``prod_{r in F} C(3, c_r - 1) * prod_{r not in F} C(3, c_r)``
  (times 4 suits); the rest of the ``prod C(4, c_r)`` assignments hold no flush.

The three analyzers share one table of exact counts (cached per process):

* ``six-card-fortune/fortune`` -- Fortune Bonus Wager, § 670a.11(h)(1), § 670a.12(b)(1).
  ``-o envy_players=N`` adds the expected Envy Bonuses from N other players
  (§ 670a.12(b)(2)) for a wager of ``-o wager=$5`` (default $5 when envy is asked
  for, else $1; envy needs a Qualifying Fortune Bonus Wager of $5 or more, § 670a.1).
* ``six-card-fortune/insurance`` -- Insurance Wager, § 670a.11(h)(2), § 670a.12(c).
* ``six-card-fortune/progressive`` -- Progressive Payout Wager, § 670a.12(d):
  ``-o meter=$N`` the meter when paid (default the seed, $5,000 for a $1 wager,
  § 670a.12(d)(2)), ``-o wager=$1``, ``-o envy_players=N`` (default 0).

Envy expectations are exact by linearity: each other player's six cards have the
same distribution as one's own, so the expected Envy Bonus per other player is the
sum over qualifying hands of P(hand) x bonus, whatever the cards at the table.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from functools import lru_cache
from itertools import combinations, islice
from math import comb, prod

import numpy as np

from controller.analysis import AnalysisResult, AnalysisRow, analyzer, meter_values
from controller.rules.cards import ACE, JOKER, make_card
from controller.rules.paytables import Paytable, get_paytable, parse_money, parse_percent
from controller.rules.poker import Category, best_five_batch
from controller.rules.sixcard import RANK_WORDS
from controller.rules.sixcard_settle import envy_table

GAME = "six-card-fortune"
TOTAL_HANDS = comb(53, 6)  # 22,957,480
RANKS = tuple(range(2, 15))

FORTUNE_ENVY = ("Six-Card Fortune Envy $1", "Six-Card Fortune Envy $5")
PROGRESSIVE_ENVY = ("Six-Card Fortune Progressive Envy $1", "Six-Card Fortune Progressive Envy $5")


# --------------------------------------------------------------------------- classes


def rank_multisets(n: int) -> list[tuple[int, ...]]:
    """Count vectors (c_2..c_14), each 0..4, summing to ``n``."""
    out: list[tuple[int, ...]] = []

    def rec(i: int, left: int, acc: list[int]) -> None:
        if i == len(RANKS):
            if left == 0:
                out.append(tuple(acc))
            return
        for c in range(min(4, left) + 1):
            acc.append(c)
            rec(i + 1, left - c, acc)
            acc.pop()

    rec(0, n, [])
    return out


def flush_subsets(counts: tuple[int, ...], joker: bool) -> list[tuple[frozenset[int], int]]:
    """Each possible set ``F`` of ranks holding a card of the flush suit (at least five
    naturals, or four with the joker) and the number of suit assignments in which one
    given suit holds exactly those ranks."""
    need = 4 if joker else 5
    present = [RANKS[i] for i, c in enumerate(counts) if c]
    cnt = {RANKS[i]: c for i, c in enumerate(counts) if c}
    out = []
    for k in range(need, len(present) + 1):
        for f in combinations(present, k):
            fs = frozenset(f)
            w = _suit_ways(cnt, fs)
            if w:
                out.append((fs, w))
    return out


def _suit_ways(cnt: dict[int, int], fs: frozenset[int]) -> int:
    """The suit assignments in which one given suit holds exactly the ranks ``fs`` (``cnt``: the
    cards of each rank present): the others of each rank from the three other suits."""
    return prod(comb(3, c - 1) if r in fs else comb(3, c) for r, c in cnt.items())


def representative(counts: tuple[int, ...], joker: bool, flush: frozenset[int] | None) -> tuple[int, ...]:
    """A hand of the class: ranks in ``flush`` get a card of suit 0 (clubs), every other
    card a suit from 1..3; with ``flush`` None the suits are spread so no suit holds
    more than two cards (so no flush, even with the joker)."""
    cards: list[int] = []
    load = [0, 0, 0, 0]
    for i, c in enumerate(counts):
        if not c:
            continue
        r = RANKS[i]
        if flush is not None:
            suits = ([0] if r in flush else []) + [1, 2, 3][: c - (1 if r in flush else 0)]
        else:
            suits = sorted(range(4), key=lambda s: (load[s], s))[:c]
        for s in suits:
            load[s] += 1
            cards.append(make_card(r, s))
    if joker:
        cards.append(JOKER)
    return tuple(cards)


def class_representative(cards: tuple[int, ...]) -> tuple[int, ...]:
    """The representative of the class a six-card hand belongs to (for tests: a hand
    and its representative must rank alike)."""
    joker = JOKER in cards
    nat = [c for c in cards if c != JOKER]
    counts = tuple(sum(1 for c in nat if c // 4 + 2 == r) for r in RANKS)
    return representative(counts, joker, _flush_ranks(nat, 4 if joker else 5))


def _flush_ranks(naturals: list[int], need: int) -> frozenset[int] | None:
    """The ranks of the (last) suit holding at least ``need`` of ``naturals``, or None."""
    flush = None
    for s in range(4):
        in_suit = frozenset(c // 4 + 2 for c in naturals if c % 4 == s)
        if len(in_suit) >= need:
            flush = in_suit
    return flush


def hand_classes() -> Iterator[tuple[tuple[int, ...], int]]:
    """Yield ``(representative hand, number of hands in the class)``; the weights sum
    to C(53,6)."""
    for joker in (False, True):
        for counts in rank_multisets(5 if joker else 6):
            total = prod(comb(4, c) for c in counts)
            flushed = 0
            for fs, w in flush_subsets(counts, joker):
                flushed += 4 * w
                yield representative(counts, joker, fs), 4 * w
            yield representative(counts, joker, None), total - flushed


def _keys_batch(hands: np.ndarray) -> list[str]:
    """``hand_key`` of each row of an (N, 6) card array, with the batch evaluator."""
    cat, _, _ = best_five_batch(hands, "bug")
    ranks = np.where(hands == JOKER, ACE, hands // 4 + 2)  # a lone joker ranks as an ace, § 670a.6(a)
    top = ranks.max(axis=1)
    high = int(Category.HIGH_CARD)
    return [f"{RANK_WORDS[int(t)]}-high" if int(c) == high else Category(int(c)).text for c, t in zip(cat, top)]


def _by_classes() -> Counter[str]:
    reps, weights = [], []
    for rep, w in hand_classes():
        if w:
            reps.append(rep)
            weights.append(w)
    dist: Counter[str] = Counter()
    for key, w in zip(_keys_batch(np.array(reps, dtype=np.int64)), weights):
        dist[key] += w
    return dist


def _by_enumeration(chunk: int = 1_000_000) -> Counter[str]:
    """Every six-card hand, one by one (15-25 s with the batch evaluator): a cross-check of the classes."""
    dist: Counter[str] = Counter()
    for a in range(53 - 5):
        rest = combinations(range(a + 1, 53), 5)
        while True:
            block = np.fromiter((x for t in islice(rest, chunk) for x in t), dtype=np.int64)
            if not block.size:
                break
            hands = np.column_stack([np.full(block.size // 5, a), block.reshape(-1, 5)])
            cat, _, _ = best_five_batch(hands, "bug")
            ranks = np.where(hands == JOKER, ACE, hands // 4 + 2).max(axis=1)
            high = cat == int(Category.HIGH_CARD)
            for c, n in zip(*np.unique(cat[~high], return_counts=True)):
                dist[Category(int(c)).text] += int(n)
            for t, n in zip(*np.unique(ranks[high], return_counts=True)):
                dist[f"{RANK_WORDS[int(t)]}-high"] += int(n)
    return dist


def six_card_distribution(method: str = "classes") -> tuple[tuple[tuple[str, int], ...], float]:
    """Exact number of six-card hands per paytable key (``hand_key``: category, or
    ``"<rank>-high"``), over all C(53,6) hands, and the seconds it took.

    ``method="classes"`` (default, about a second) counts hand classes;
    ``method="enumerate"`` evaluates all 22,957,480 hands (15-25 s)."""
    return _distribution(method)


@lru_cache(maxsize=2)
def _distribution(method: str) -> tuple[tuple[tuple[str, int], ...], float]:
    t0 = time.perf_counter()
    if method == "classes":
        dist = _by_classes()
    elif method == "enumerate":
        dist = _by_enumeration()
    else:
        raise ValueError(f"method={method!r}: use 'classes' or 'enumerate'")
    n = sum(dist.values())
    if n != TOTAL_HANDS:  # pragma: no cover - a bug in the class weights
        raise AssertionError(f"{method}: {n} hands counted, not C(53,6) = {TOTAL_HANDS}")
    return tuple(sorted(dist.items())), time.perf_counter() - t0


# --------------------------------------------------------------------------- analyzers


def _money(options: dict[str, str], key: str, default: int) -> int:
    if key not in options:
        return default
    try:
        v = parse_money(options[key]) if options[key].strip().startswith("$") else int(options[key]) * 100
    except ValueError:
        raise ValueError(f"{key}={options[key]!r}: give an amount like $5 or $10,000") from None
    if v <= 0:
        raise ValueError(f"{key}={options[key]!r}: must be more than $0")
    return v


def _count(options: dict[str, str], key: str) -> int:
    raw = options.get(key, "0")
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"{key}={raw!r}: give a whole number") from None
    if not 0 <= n <= 5:
        raise ValueError(f"{key}={n}: between 0 and 5 other players (six seats, § 670a.2(a))")
    return n


_KNOWN = {
    "fortune": {"wager", "envy_players", "method"},
    "insurance": {"method"},
    "progressive": {"wager", "meter", "seed", "rate", "envy_players", "method"},
}


def _check_options(wager: str, options: dict[str, str]) -> None:
    extra = set(options) - _KNOWN[wager]
    if extra:
        allowed = ", ".join(sorted(_KNOWN[wager])) or "none"
        raise ValueError(f"unknown option(s) {', '.join(sorted(extra))} for {GAME}/{wager} (allowed: {allowed})")


def _rows(
    pt: Paytable, dist: dict[str, int], wager_cents: int, meter_cents: int | None
) -> tuple[list[AnalysisRow], Fraction]:
    rows: list[AnalysisRow] = []
    ret = Fraction(0)
    won = 0
    for key, payout in pt.pays:
        n = dist.get(key, 0)
        if payout.kind == "meter":
            # the meter amount is all that is paid for the wager, which was collected at
            # "no more bets" -- like the "N for 1" pays beside it
            net = payout.ratio * Fraction(meter_cents or 0, wager_cents) - 1
        else:
            net = payout.net_win(wager_cents, meter_cents) / wager_cents
        rows.append(AnalysisRow(key, n, payout.text, net))
        ret += Fraction(n, TOTAL_HANDS) * net
        won += n
    rows.append(AnalysisRow("lose", TOTAL_HANDS - won, "lose", Fraction(-1)))
    ret += Fraction(TOTAL_HANDS - won, TOTAL_HANDS) * -1
    return rows, 1 + ret


def _envy_rows(
    names: tuple[str, ...], dist: dict[str, int], wager_cents: int, players: int
) -> tuple[list[AnalysisRow], Fraction, list[str]]:
    """Expected Envy Bonus per unit wagered from ``players`` other players (exact)."""
    if not players:
        return [], Fraction(0), []
    pt = envy_table([get_paytable(n) for n in names], wager_cents)
    if pt is None:
        return [], Fraction(0), [f"no Envy Bonus table for a {wager_cents / 100:.2f} wager"]
    rows, ev = [], Fraction(0)
    for key, payout in pt.pays:
        n = dist.get(key, 0)
        per = Fraction(payout.cents * players, wager_cents)
        rows.append(AnalysisRow(f"envy x{players}: {key}", n, payout.text, per))
        ev += Fraction(n, TOTAL_HANDS) * per
    return (
        rows,
        ev,
        [
            f"Envy Bonuses from {players} other player(s) by {pt.name} (rows: that player's hand; "
            f"'return' counts all {players}); expectation exact by linearity"
        ],
    )


def _timing(options: dict[str, str], dt: float) -> str:
    how = "every hand enumerated" if options.get("method") == "enumerate" else "hand classes counted"
    return f"{how} in {dt:.2f} s (cached for this process; -o method=enumerate|classes)"


@analyzer(GAME, "fortune", default_paytable="Six-Card Fortune Bonus")
def analyze_fortune(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    _check_options("fortune", options)
    pt = get_paytable(paytable or "Six-Card Fortune Bonus")
    players = _count(options, "envy_players")
    wager = _money(options, "wager", 500 if players else 100)
    items, dt = six_card_distribution(options.get("method", "classes"))
    dist = dict(items)
    rows, payback = _rows(pt, dist, wager, None)
    notes = [f"all C(53,6) = {TOTAL_HANDS:,} six-card hands, best five of six (§ 670a.11(h))", _timing(options, dt)]
    if players:
        if wager < 500:
            notes.append("wager under $5 is not a Qualifying Fortune Bonus Wager (§ 670a.1): no Envy Bonus")
        else:
            erows, ev, enotes = _envy_rows(FORTUNE_ENVY, dist, wager, players)
            rows += erows
            payback += ev
            notes += enotes
    else:
        notes.append("Envy Bonuses left out (add -o envy_players=N for N other players)")
    return AnalysisResult(
        f"Six-Card Fortune: Fortune Bonus Wager ({pt.name}, {pt.section})", rows, TOTAL_HANDS, payback, notes
    )


@analyzer(GAME, "insurance", default_paytable="Six-Card Fortune Insurance")
def analyze_insurance(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    _check_options("insurance", options)
    pt = get_paytable(paytable or "Six-Card Fortune Insurance")
    items, dt = six_card_distribution(options.get("method", "classes"))
    rows, payback = _rows(pt, dict(items), 100, None)
    notes = [
        f"all C(53,6) = {TOTAL_HANDS:,} six-card hands; a no-pair hand with the joker is ace-high "
        "(§ 670a.6(a)) and loses",
        _timing(options, dt),
    ]
    return AnalysisResult(
        f"Six-Card Fortune: Insurance Wager ({pt.name}, {pt.section})", rows, TOTAL_HANDS, payback, notes
    )


def _long_run(
    pt: Paytable, rows: list[AnalysisRow], dist: dict[str, int], rate: Fraction, seed_per_wager: Fraction
) -> Fraction:
    """The Progressive's long-run return (envy left out): every increment is paid out of the meter
    and the seed is put up again after each five-aces reset (a royal flush pays 10% without a
    reset), so the meter pays per unit wagered: increment rate + P(five aces) x seed / wager."""
    fixed = sum(
        (
            r.net * Fraction(r.count, TOTAL_HANDS)
            for r in rows[: len(pt.pays) + 1]
            if (p := pt.payout(r.outcome)) is None or p.kind != "meter"
        ),
        Fraction(0),
    )
    on_meter = sum((Fraction(dist.get(k, 0), TOTAL_HANDS) for k, p in pt.pays if p.kind == "meter"), Fraction(0))
    five_aces = Fraction(dist.get("five-aces", 0), TOTAL_HANDS)
    return 1 + fixed - on_meter + rate + five_aces * seed_per_wager


@analyzer(GAME, "progressive", default_paytable="Six-Card Fortune Progressive")
def analyze_progressive(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    _check_options("progressive", options)
    pt = get_paytable(paytable or "Six-Card Fortune Progressive")
    offered = parse_money(str(pt.options.get("wager", "$1")))
    wager = _money(options, "wager", offered)
    printed_seed = pt.options.get("seed")  # "$5,000 for 1", § 670a.12(d)(2)
    printed_rate = pt.options.get("increment_rate")  # 21%, § 670a.12(d)(2)
    mv = meter_values(
        options,
        (parse_money(str(printed_seed)) * wager // 100, "§ 670a.12(d)(2), per $1") if printed_seed else None,
        (parse_percent(str(printed_rate)), "§ 670a.12(d)(2)") if printed_rate else None,
    )
    seed, meter = mv.seed, mv.meter
    players = _count(options, "envy_players")
    items, dt = six_card_distribution(options.get("method", "classes"))
    dist = dict(items)
    rows, payback = _rows(pt, dist, wager, meter)
    erows, ev, enotes = _envy_rows(PROGRESSIVE_ENVY, dist, wager, players)
    rows += erows
    payback += ev
    notes = [
        f"all C(53,6) = {TOTAL_HANDS:,} six-card hands; meter ${meter / 100:,.2f} for a ${wager / 100:,.2f} wager",
        mv.note,
        _timing(options, dt),
    ] + enotes
    if not players:
        notes.append("Envy Bonuses left out (add -o envy_players=N for N other players with a progressive wager)")
    if mv.rate is not None and seed is not None:
        long_run = _long_run(pt, rows, dist, mv.rate, Fraction(seed, wager))
        notes.append(
            f"long-run return with the {float(mv.rate) * 100:g}% increment: {float(long_run) * 100:.4f}% "
            "(fixed pays + increment rate + P(five aces) x seed per wager)"
            + (f", plus envy {float(ev) * 100:.4f}%" if ev else "")
        )
    return AnalysisResult(
        f"Six-Card Fortune: Progressive Payout Wager ({pt.name}, {pt.section})", rows, TOTAL_HANDS, payback, notes
    )
