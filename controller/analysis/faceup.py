"""Exact analysis of Face Up Pai Gow Poker's optional wagers (58 Pa. Code ch. 688a).

Everything is counted exactly over the 53-card deck (52 + joker, § 688a.3(a)); no
sampling.  The classifications are those of the rules engine
(:func:`controller.rules.faceup_bonus.classify_counts`), applied to representative
hands, so the table and the analysis cannot disagree.

* ``face-up/fortune`` (Fortune Bonus 1-6, § 688a.12(c)) and ``face-up/progressive``
  (Progressive 1-7, § 688a.12(d)) use the distribution of the best seven-card hand
  over all C(53,7) = 154,143,080 hands.  It is computed from rank multisets, not card
  by card: every hand with a flush (five or more natural cards of one suit, or four
  and the joker) is enumerated as (flush-suit ranks, the at most two other cards up to
  a relabelling of the three other suits, x4 suits); every other hand is classified
  once per rank multiset, weighted by its number of suit assignments less the flush
  ones.  A few seconds instead of 154 million evaluations.
* ``face-up/ace-high`` (Ace High 1-5, § 688a.12(b)) needs the dealer's seven cards and
  the player's seven from the remaining 46 jointly: an Ace High Pai Gow has seven
  distinct ranks (six and the joker), so pairs of rank sets are counted with the
  number of suit assignments that avoid a flush and give shared ranks different suits.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from itertools import combinations, product
from math import comb

from controller.analysis import AnalysisResult, AnalysisRow, MeterValues, analyzer, meter_values
from controller.rules.faceup_bonus import (
    BONUS_ORDER,
    BONUS_READINGS,
    HIGH_CARD,
    QUADS,
    STRAIGHT,
    JokerMode,
    classify_counts,
    paytable_keys,
)
from controller.rules.paytables import Payout, Paytable, get_paytable, parse_money, parse_percent

RANKS: tuple[int, ...] = tuple(range(2, 15))
ACE = 14


# --------------------------------------------------------------------------------------
# the seven-card distribution
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SevenCardDistribution:
    counts: dict[int, int]  # BONUS_ORDER index -> number of seven-card hands
    joker_counts: dict[int, int]  # the same, for hands holding the joker
    straight_with_trips: int  # straights whose cards also hold a three-of-a-kind
    total: int


def _other_cards(ranks: Sequence[int], k: int) -> Iterator[tuple[tuple[tuple[int, int], ...], int]]:
    """The k (<= 2) cards outside the flush suit, up to relabelling the three other
    suits (labels 1, 2), with the number of actual card choices each stands for."""
    if k == 0:
        yield (), 1
    elif k == 1:
        for r in ranks:
            yield ((r, 1),), 3
    elif k == 2:
        for i, r1 in enumerate(ranks):
            yield ((r1, 1), (r1, 2)), 3  # a pair: C(3,2) suit choices
            for r2 in ranks[i + 1 :]:
                yield ((r1, 1), (r2, 1)), 3  # same suit: 3
                yield ((r1, 1), (r2, 2)), 6  # different suits: 3*2
    else:  # pragma: no cover - a flush leaves at most two other cards
        raise ValueError(k)


def _count_vectors(n_ranks: int, total: int, cap: int = 4) -> Iterator[tuple[int, ...]]:
    if n_ranks == 1:
        if total <= cap:
            yield (total,)
        return
    for m in range(min(cap, total) + 1):
        for rest in _count_vectors(n_ranks - 1, total - m, cap):
            yield (m, *rest)


def seven_card_distribution(mode: JokerMode = "bug", ranks: Sequence[int] = RANKS) -> SevenCardDistribution:
    """Exact counts of the best seven-card hand (§ 688a.6(e), (f)) over every 7-card hand
    from a deck of the given ranks x 4 suits + the joker (the real deck by default)."""
    return _distribution(mode, tuple(ranks))


@lru_cache(maxsize=8)
def _distribution(mode: JokerMode, ranks: tuple[int, ...]) -> SevenCardDistribution:
    counts: Counter[int] = Counter()
    jcounts: Counter[int] = Counter()
    straight_trips = 0
    for joker in (False, True):
        flush_weight = _count_flushes(mode, ranks, joker, counts, jcounts)
        straight_trips += _count_plain(mode, ranks, joker, flush_weight, counts, jcounts)
    total = sum(counts.values())
    return SevenCardDistribution(dict(counts), dict(jcounts), straight_trips, total)


def _tally(counts: Counter[int], jcounts: Counter[int], k: int, w: int, joker: bool) -> None:
    counts[k] += w
    if joker:
        jcounts[k] += w


def _count_flushes(
    mode: JokerMode, ranks: tuple[int, ...], joker: bool, counts: Counter[int], jcounts: Counter[int]
) -> dict[tuple[int, ...], int]:
    """(1) hands with a flush: the flush suit is unique (5+5 > 7, 4+4 > 6); fix it, x4.
    Returns the weight of the flushes per rank count vector."""
    n = 6 if joker else 7  # natural cards
    flush_at = 4 if joker else 5  # natural cards of one suit that make a flush
    flush_weight: dict[tuple[int, ...], int] = defaultdict(int)
    for f in range(flush_at, n + 1):
        for fl in combinations(ranks, f):
            fmask = 0
            for r in fl:
                fmask |= 1 << r
            for others, w in _other_cards(ranks, n - f):
                cnt, masks = _flush_hand(fl, fmask, others)
                k = classify_counts(cnt, masks, joker, mode)
                _tally(counts, jcounts, k, 4 * w, joker)
                flush_weight[tuple(cnt[r] for r in ranks)] += 4 * w
    return flush_weight


def _flush_hand(fl: tuple[int, ...], fmask: int, others: Iterable[tuple[int, int]]) -> tuple[list[int], list[int]]:
    cnt = [0] * 15
    masks = [fmask, 0, 0, 0]
    for r in fl:
        cnt[r] += 1
    for r, s in others:
        cnt[r] += 1
        masks[s] |= 1 << r
    return cnt, masks


def _count_plain(
    mode: JokerMode,
    ranks: tuple[int, ...],
    joker: bool,
    flush_weight: Mapping[tuple[int, ...], int],
    counts: Counter[int],
    jcounts: Counter[int],
) -> int:
    """(2) the rest: one representative per rank multiset (suits dealt round-robin,
    at most 2 per suit, so no flush); weight = suit assignments without a flush.
    Returns the weight of the straights that also hold three of a kind."""
    straight_trips = 0
    for cv in _count_vectors(len(ranks), 6 if joker else 7):
        w = _plain_weight(cv, flush_weight)
        if not w:
            continue
        cnt, masks = _plain_hand(ranks, cv)
        k = classify_counts(cnt, masks, joker, mode)
        _tally(counts, jcounts, k, w, joker)
        if k == STRAIGHT and (max(cv) >= 3 or (joker and cnt[ACE] >= 2)):
            straight_trips += w
    return straight_trips


def _plain_weight(cv: tuple[int, ...], flush_weight: Mapping[tuple[int, ...], int]) -> int:
    """The suit assignments of the rank counts ``cv`` that hold no flush."""
    ways = 1
    for c in cv:
        ways *= comb(4, c)
    w = ways - flush_weight.get(cv, 0)
    if w < 0:  # pragma: no cover - would be a counting bug
        raise AssertionError(f"negative weight for {cv}")
    return w


def _plain_hand(ranks: tuple[int, ...], cv: tuple[int, ...]) -> tuple[list[int], list[int]]:
    cnt = [0] * 15
    masks = [0, 0, 0, 0]
    s = 0
    for r, c in zip(ranks, cv):
        cnt[r] = c
        for _ in range(c):
            masks[s % 4] |= 1 << r
            s += 1
    return cnt, masks


def _reading(options: dict[str, str]) -> str:
    reading = options.get("reading", FORTUNE_READINGS[0])
    if reading not in FORTUNE_READINGS:
        raise ValueError(f"reading={reading!r}: one of {', '.join(FORTUNE_READINGS)}")
    return reading


def _straight_with_trips(
    pt: Paytable, dist: SevenCardDistribution, counts: dict[int, int], reading: str, base: Fraction, wager: int
) -> list[AnalysisRow]:
    """Reading 688a-7 ``best-pay``: the straights that also hold three of a kind move to a
    row of their own, paid the higher of the two rows (``counts`` is adjusted).  Only when
    the paytable prices both and three of a kind pays more (Fortune 1-6, Progressive 4)."""
    st, tr = pt.payout("straight"), pt.payout("three-of-a-kind")
    if reading != "best-pay" or st is None or tr is None or dist.straight_with_trips == 0:
        return []
    if tr.kind == "fixed" and st.kind == "fixed":
        gain_tr, gain_st = Fraction(tr.cents, wager), Fraction(st.cents, wager)
    else:
        gain_tr, gain_st = Fraction(tr.net_win(1)), Fraction(st.net_win(1))
    if gain_tr <= gain_st:
        return []
    counts[STRAIGHT] -= dist.straight_with_trips
    return [AnalysisRow("straight-and-three-of-a-kind", dist.straight_with_trips, tr.text, base + gain_tr)]


def _row_payout(pt: Paytable, category: str) -> tuple[str, Payout] | tuple[None, None]:
    for key in paytable_keys(category):
        p = pt.payout(key)
        if p is not None:
            return key, p
    return None, None


# --------------------------------------------------------------------------------------
# Fortune Bonus
# --------------------------------------------------------------------------------------
FORTUNE_READINGS = BONUS_READINGS  # reading 688a-7; the first is the default


#: the Fortune Bonus note per reading: best pay (default), ranking (True)
_FORTUNE_READING_NOTES = {
    False: "best paying hand, 688a-7 (straight with trips paid as trips, § 688a.12(c))",
    True: "highest ranking hand, § 688a.6(b) (straight above three-of-a-kind)",
}


def _fortune_rows(pt: Paytable, counts: Mapping[int, int], extra: list[AnalysisRow]) -> list[AnalysisRow]:
    """One row per paid category in the order of § 688a.6 (the straight with trips rows after the
    straight), then the hands that lose."""
    rows: list[AnalysisRow] = []
    lose = 0
    for k, cat in enumerate(BONUS_ORDER):
        c = counts.get(k, 0)
        _, p = _row_payout(pt, cat)
        if p is None:
            lose += c
            continue
        rows.append(AnalysisRow(cat, c, p.text, Fraction(p.net_win(1))))
        if cat == "straight":
            rows.extend(extra)
    rows.append(AnalysisRow("lose", lose, "lose", Fraction(-1)))
    return rows


def _envy_value(envy: Paytable, counts: Mapping[int, int], total: int) -> Fraction:
    """What another player's hand is worth in cents to a Qualifying Wager, by the envy paytable
    (quads and better)."""
    e = Fraction(0)
    for k, c in counts.items():
        if k > QUADS:
            continue
        _, p = _row_payout(envy, BONUS_ORDER[k])
        if p is not None:
            e += Fraction(c * p.cents, total)
    return e


@analyzer("face-up", "fortune", "Face Up Fortune 1")
def analyze_fortune(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Fortune Bonus Wager (§ 688a.7(e)(2), § 688a.11(h)(2), § 688a.12(c)).

    ``-o reading=best-pay`` (default, as the table settles, reading 688a-7): a hand that
    holds both a straight and a three-of-a-kind is paid as three-of-a-kind (§ 688a.12(c)
    and § 659a.6(d)(10)-(11) rank it higher; 3 to 1 beats 2 to 1).  ``-o reading=ranking``:
    the § 688a.6(b) order (straight above three-of-a-kind), for comparison."""
    name = paytable or "Face Up Fortune 1"
    pt = get_paytable(name)
    if pt.game != "face-up" or pt.wager != "fortune":
        raise ValueError(f"{name!r} is not a Face Up Fortune Bonus paytable")
    reading = _reading(options)
    dist = seven_card_distribution("bug")
    counts = dict(dist.counts)
    extra = _straight_with_trips(pt, dist, counts, reading, Fraction(0), 1)
    rows = _fortune_rows(pt, counts, extra)
    ev = sum((Fraction(r.count) * r.net for r in rows), Fraction(0))
    payback = 1 + ev / dist.total
    notes = [f"reading={reading}: " + _FORTUNE_READING_NOTES[reading == "ranking"]]
    envy_name = pt.options.get("envy_paytable")
    if envy_name:
        e = _envy_value(get_paytable(str(envy_name)), dist.counts, dist.total)
        notes.append(
            f"envy ({envy_name}): each other player's hand is worth ${float(e) / 100:.5f} "
            f"to a Qualifying Wager (not included in the payback)"
        )
    return AnalysisResult(
        f"Face Up Pai Gow Poker — Fortune Bonus, {name} (§ 688a.12(c))", rows, dist.total, payback, notes
    )


# --------------------------------------------------------------------------------------
# Progressive
# --------------------------------------------------------------------------------------
@dataclass
class _ProgressiveRows:
    rows: list[AnalysisRow]
    lose: int = 0  # hands that pay nothing
    resets: int = 0  # hands that take the whole meter (it resets to the seed)
    share: Fraction = Fraction(0)  # meter fractions won, summed over hands
    ev: Fraction = Fraction(0)

    def add_paid(self, cat: str, c: int, p: Payout | None, mp: Payout | None, base: Fraction, wager: int) -> None:
        """The row of ``c`` hands of ``cat`` paid ``p`` (the paytable's) and/or ``mp`` (the meter paytable's)."""
        pays = [x for x in (p, mp) if x is not None]
        fixed = Fraction(p.cents, wager) if p is not None and p.kind == "fixed" else Fraction(0)
        meter = [x.ratio for x in pays if x.kind == "meter"]
        if 1 in meter:
            self.resets += c
        self.share += c * sum(meter, Fraction(0))
        self.rows.append(AnalysisRow(cat, c, " + ".join(x.text for x in pays), base + fixed))
        self.ev += c * (base + fixed)


def _progressive_rows(
    pt: Paytable,
    meter_pt: Paytable | None,
    counts: Mapping[int, int],
    extra: list[AnalysisRow],
    base: Fraction,
    wager: int,
) -> _ProgressiveRows:
    """One row per paid category (fixed pays and meter pays), in the order of § 688a.6."""
    t = _ProgressiveRows([])
    for k, cat in enumerate(BONUS_ORDER):
        c = counts.get(k, 0)
        if not c:
            continue
        _, p = _row_payout(pt, cat)
        mp = meter_pt.payout(cat) if meter_pt else None
        if p is None and mp is None:
            t.lose += c
            continue
        t.add_paid(cat, c, p, mp, base, wager)
        if cat == "straight":
            t.rows.extend(extra)
            t.ev += sum((r.count * r.net for r in extra), Fraction(0))
    return t


def _meter(options: dict[str, str], pt: Paytable, name: str) -> tuple[MeterValues, int, Fraction]:
    """The meter figures (--seed, --rate, --meter over the seed and rate of progression the
    paytable prints, § 688a.12(d)): with the seed and the rate used."""
    mv = meter_values(
        options,
        (parse_money(str(pt.options["seed"])), f"{pt.section} {name}"),
        (parse_percent(str(pt.options["rate_of_progression"])), f"{pt.section} {name}"),
    )
    assert mv.seed is not None and mv.rate is not None
    return mv, mv.seed, mv.rate


@analyzer("face-up", "progressive", "Face Up Progressive 1")
def analyze_progressive(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Progressive Payout Wager (§ 688a.7(e)(3), § 688a.12(d)), long-run payback.

    Payback = fixed pays + rate of progression + P(meter reset) x seed / wager: in the
    long run the meter pays out every increment, plus the seed each time a 100%-of-meter
    pay resets it (docs/rules-readings/688a.md; reproduces the regulator's Paytables 1,
    2, 3 and 5)."""
    name = paytable or "Face Up Progressive 1"
    pt = get_paytable(name)
    if pt.game != "face-up" or pt.wager != "progressive":
        raise ValueError(f"{name!r} is not a Face Up Progressive paytable")
    o = pt.options
    mode: JokerMode = str(o.get("joker", "bug"))  # type: ignore[assignment]
    wager = pt.per_wager_cents or 100
    returned = bool(o.get("original_wager_returned", False))
    mv, seed, rate = _meter(options, pt, name)
    meter_pt = get_paytable(str(o["meter_paytable"])) if "meter_paytable" in o else None
    dist = seven_card_distribution(mode)
    reading = _reading(options)
    counts = dict(dist.counts)
    base = Fraction(0) if returned else Fraction(-1)
    extra = _straight_with_trips(pt, dist, counts, reading, base, wager)
    t = _progressive_rows(pt, meter_pt, counts, extra, base, wager)
    rows, lose, resets, share, ev = t.rows, t.lose, t.resets, t.share, t.ev
    rows.append(AnalysisRow("lose", lose, "lose", Fraction(-1)))
    ev -= lose
    reseed = Fraction(resets * seed, dist.total * wager)
    payback = 1 + ev / dist.total + rate + reseed
    at_meter = 1 + ev / dist.total + share * Fraction(mv.meter, wager) / dist.total
    notes = [
        mv.note,
        f"at a meter of ${mv.meter / 100:,.2f} held fixed (increments not counted): {float(at_meter) * 100:.4f}%",
        f"joker: {mode}; wager ${wager / 100:.2f}; original wager {'returned' if returned else 'not returned'}",
        f"reading={reading} (688a-7)"
        + (": straight with trips paid as trips, § 688a.12(d)" if extra else ": no straight and trips rows to choose"),
        f"meter pays: rate of progression {float(rate) * 100:g}% of each wager + reseed "
        f"{resets}/{dist.total} x ${seed / 100:,.0f} / wager = {float(reseed) * 100:.4f}% (included)",
    ]
    if "reserve_rate" in o:
        notes.append(f"reserve rate {o['reserve_rate']} funds the reseed (not counted again)")
    return AnalysisResult(
        f"Face Up Pai Gow Poker — Progressive, {name} (§ 688a.12(d))", rows, dist.total, payback, notes
    )


# --------------------------------------------------------------------------------------
# Ace High Bonus
# --------------------------------------------------------------------------------------
def _is_ace_high_ranks(rank_set: Sequence[int], joker: bool) -> bool:
    """Whether distinct ``rank_set`` (+ joker) without a flush is an Ace High Pai Gow,
    asked of the rules engine on a flush-free representative."""
    cnt = [0] * 15
    masks = [0, 0, 0, 0]
    for i, r in enumerate(rank_set):
        cnt[r] = 1
        masks[i % 4] |= 1 << r
    if classify_counts(cnt, masks, joker, "bug") != HIGH_CARD:
        return False
    return joker or cnt[ACE] == 1


@lru_cache(maxsize=1)
def ace_high_rank_sets() -> dict[bool, tuple[int, ...]]:
    """Rank sets (as bitmasks) of the Ace High Pai Gow hands, without / with the joker.

    Seven distinct ranks with an ace (no pair, § 688a.6(b)); or six distinct ranks and
    the joker as the ace (a natural ace would pair it) — neither making a straight."""
    out: dict[bool, tuple[int, ...]] = {}
    for joker, n in ((False, 7), (True, 6)):
        sets = []
        for rs in combinations(RANKS, n):
            if _is_ace_high_ranks(rs, joker):
                sets.append(sum(1 << r for r in rs))
        out[joker] = tuple(sets)
    return out


#: natural cards of one suit that make a flush: 5, or 4 with the joker (§ 688a.6(a))
FLUSH_AT = {False: 5, True: 4}


@cache
def _assignments(n: int, limit: int) -> tuple[tuple[int, ...], ...]:
    """Suit assignments of n cards with fewer than ``limit`` cards in every suit."""
    return tuple(a for a in product(range(4), repeat=n) if max(a.count(s) for s in range(4)) < limit)


@cache
def suit_pairs(nd: int, ld: int, np_: int, lp: int, shared: int) -> int:
    """Pairs (dealer suits, player suits) for nd and np_ cards of distinct ranks, each
    with fewer than ld / lp cards of any suit, whose first ``shared`` cards have the
    same ranks (so must differ in suit).

    The player's count for a dealer prefix depends only on how many shared cards the
    dealer holds in each suit (suits and positions are interchangeable), so the dealer
    prefixes are grouped by that shape."""
    shapes: Counter[tuple[int, ...]] = Counter(
        tuple(sorted((a[:shared].count(s) for s in range(4)), reverse=True)) for a in _assignments(nd, ld)
    )
    total = 0
    for shape, dn in shapes.items():
        rep = tuple(s for s, m in enumerate(shape) for _ in range(m))
        pn = sum(1 for a in _assignments(np_, lp) if all(x != y for x, y in zip(a, rep)))
        total += dn * pn
    return total


@dataclass(frozen=True)
class AceHighCounts:
    both: int  # dealer and player both Ace High Pai Gow
    dealer_joker: int  # only the dealer, with the joker
    dealer_natural: int  # only the dealer, without it
    dealer_hands: dict[bool, int]  # dealer Ace High hands (of C(53,7)) without / with joker
    total: int  # C(53,7) * C(46,7)


@lru_cache(maxsize=1)
def ace_high_counts() -> AceHighCounts:
    sets = ace_high_rank_sets()
    n_cards = {False: 7, True: 6}
    dealer_hands = {j: len(sets[j]) * len(_assignments(n_cards[j], FLUSH_AT[j])) for j in (False, True)}
    both = {False: 0, True: 0}
    for dj in (False, True):
        for pj in (False, True):
            if dj and pj:
                continue  # one joker (§ 688a.3(a))
            overlap = Counter((d & p).bit_count() for d in sets[dj] for p in sets[pj])
            for k, m in overlap.items():
                both[dj] += m * suit_pairs(n_cards[dj], FLUSH_AT[dj], n_cards[pj], FLUSH_AT[pj], k)
    rest = comb(46, 7)
    return AceHighCounts(
        both=both[False] + both[True],
        dealer_joker=dealer_hands[True] * rest - both[True],
        dealer_natural=dealer_hands[False] * rest - both[False],
        dealer_hands=dealer_hands,
        total=comb(53, 7) * rest,
    )


@analyzer("face-up", "ace-high", "Ace High 1")
def analyze_ace_high(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Ace High Bonus Wager (§ 688a.7(e)(1), § 688a.6(d), § 688a.11(h)(1), § 688a.12(b)):
    wins when the dealer's seven cards are an Ace High Pai Gow; pays more when the
    player's seven are one too, or when the dealer's uses the joker."""
    name = paytable or "Ace High 1"
    pt = get_paytable(name)
    if pt.game != "face-up" or pt.wager != "ace-high":
        raise ValueError(f"{name!r} is not an Ace High Bonus paytable")
    a = ace_high_counts()
    rows = []
    for key, c in (
        ("both-ace-high", a.both),
        ("dealer-ace-high-joker", a.dealer_joker),
        ("dealer-ace-high-natural", a.dealer_natural),
    ):
        p = pt.payout(key)
        if p is None:
            raise ValueError(f"{name!r} has no {key!r} row")
        rows.append(AnalysisRow(key, c, p.text, Fraction(p.net_win(1))))
    lose = a.total - a.both - a.dealer_joker - a.dealer_natural
    rows.append(AnalysisRow("lose", lose, "lose", Fraction(-1)))
    ev = sum((Fraction(r.count) * r.net for r in rows), Fraction(0))
    notes = [
        f"dealer Ace High Pai Gow: {a.dealer_hands[False]} natural + {a.dealer_hands[True]} with joker "
        f"of {comb(53, 7)} hands; player from the other 46 cards"
    ]
    return AnalysisResult(
        f"Face Up Pai Gow Poker — Ace High Bonus, {name} (§ 688a.12(b))", rows, a.total, 1 + ev / a.total, notes
    )
