"""Pai Gow tiles (58 Pa. Code chapter 621a): the tile set, two-tile hands,
their ranking and comparison, setting a high and a low hand, and the Pair
Fortunes classification.

Pure: no I/O, no hardware imports.

Model
-----
A tile is a small ``int``, its *kind* ``0..20``, numbered in the individual
ranking order of § 621a.3(h) (``0`` = Twelve (6-6) ... ``20`` = Three (1-2)).
Identical tiles (the eleven doubled kinds) are indistinguishable, so a hand is
a sequence of kinds; :data:`FULL_SET` is the 32-tile set with multiplicities.
Text form is the spots of the two halves, low half first: ``"6-6"``, ``"1-2"``;
input accepts either order (``"4-2"`` = ``"2-4"``) and ``/`` as separator.

Hands
-----
:func:`eval_hand` gives a :class:`HandRank` whose ``score`` is a total preorder:
higher beats lower, *equal scores are copy hands*, and a copy goes to the dealer
or bank (§ 621a.3(d), (g), (i)).  Scores:

* permissible pairs, wongs and gongs (§ 621a.3(c)): ``1000 + 21 - pair_rank``;
* other hands (§ 621a.3(e)-(g), (i)): ``value * 100 + 18 - top_rank`` where
  ``top_rank`` is the individual rank (§ 621a.3(h), adjusted by (f)) of the
  higher-ranking tile; a value of zero scores ``0`` whatever the tiles
  ("equally bad", § 621a.3(g)).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from typing import Literal


class TileError(ValueError):
    """A string that is not a tile, more copies of a tile than the set holds, or a wrong tile count."""

    def __init__(self, message: str, token: str | None = None):
        super().__init__(message)
        self.token = token


@dataclass(frozen=True)
class TileKind:
    pips: tuple[int, int]  # (low half, high half)
    name: str  # the regulation's name, § 621a.3(h): "Twelve", "Two", ...
    rank: int  # individual ranking, 1 (highest) .. 17 (lowest), § 621a.3(h)
    count: int  # number of such tiles in the set, § 621a.3(h)

    @property
    def spots(self) -> int:
        return self.pips[0] + self.pips[1]

    @property
    def text(self) -> str:
        return f"{self.pips[0]}-{self.pips[1]}"


#: § 621a.3(h), in ranking order (the index is the tile's id)
KINDS: tuple[TileKind, ...] = (
    TileKind((6, 6), "Twelve", 1, 2),
    TileKind((1, 1), "Two", 2, 2),
    TileKind((4, 4), "Eight", 3, 2),
    TileKind((1, 3), "Four", 4, 2),
    TileKind((5, 5), "Ten", 5, 2),
    TileKind((3, 3), "Six", 6, 2),
    TileKind((2, 2), "Four", 7, 2),
    TileKind((5, 6), "Eleven", 8, 2),
    TileKind((4, 6), "Ten", 9, 2),
    TileKind((1, 6), "Seven", 10, 2),
    TileKind((1, 5), "Six", 11, 2),
    TileKind((3, 6), "Nine", 12, 1),
    TileKind((4, 5), "Nine", 12, 1),
    TileKind((2, 6), "Eight", 13, 1),
    TileKind((3, 5), "Eight", 13, 1),
    TileKind((2, 5), "Seven", 14, 1),
    TileKind((3, 4), "Seven", 14, 1),
    TileKind((2, 4), "Six", 15, 1),
    TileKind((1, 4), "Five", 16, 1),
    TileKind((2, 3), "Five", 16, 1),
    TileKind((1, 2), "Three", 17, 1),
)
NUM_KINDS = len(KINDS)
_BY_PIPS = {k.pips: i for i, k in enumerate(KINDS)}


def tile(text: str) -> int:
    """Shorthand for :func:`parse_tile`."""
    return parse_tile(text)


# Named tiles used by the rules.
T66, T11, T44, T13, T55, T33, T22, T56, T46, T16, T15 = range(11)
T36, T45, T26, T35, T25, T34, T24, T14, T23, T12 = range(11, 21)
HEAVEN = T66  # Heaven Pair = two Twelve (6-6) tiles, § 621a.1
GEE_JOON = frozenset({T24, T12})  # Gee Joon / Supreme Pair: Six (2-4) and Three (1-2), § 621a.1

#: the 32-tile set, identical tiles repeated (§ 621a.3(h) "Number of Tiles in Set")
FULL_SET: tuple[int, ...] = tuple(i for i, k in enumerate(KINDS) for _ in range(k.count))
assert len(FULL_SET) == 32

#: identical (matched) kinds, i.e. those with two tiles in the set
IDENTICAL_KINDS = frozenset(i for i, k in enumerate(KINDS) if k.count == 2)

#: § 621a.3(c): permissible pairs, wongs and gongs and their ranks (1 = Supreme Pair)
PAIR_RANKS: dict[frozenset[int], int] = {}
_PAIR_NAMES: dict[int, str] = {1: "supreme-pair"}
PAIR_RANKS[GEE_JOON] = 1
for _r, _k in enumerate((T66, T11, T44, T13, T55, T33, T22, T56, T46, T16, T15), start=2):
    PAIR_RANKS[frozenset({_k})] = _r  # matched pairs, second .. twelfth
    _PAIR_NAMES[_r] = f"pair-{KINDS[_k].text}"
for _r, (_a, _b, _n) in enumerate(
    ((T36, T45, "nines"), (T26, T35, "eights"), (T25, T34, "sevens"), (T14, T23, "fives")), start=13
):
    PAIR_RANKS[frozenset({_a, _b})] = _r  # mixed pairs, thirteenth .. sixteenth
    _PAIR_NAMES[_r] = f"mixed-{_n}"
for _t in (T36, T45):  # wongs: seventeenth (with 6-6), eighteenth (with 1-1)
    PAIR_RANKS[frozenset({T66, _t})] = 17
    PAIR_RANKS[frozenset({T11, _t})] = 18
for _t in (T26, T35, T44):  # gongs: nineteenth (with 6-6), twentieth (with 1-1)
    PAIR_RANKS[frozenset({T66, _t})] = 19
    PAIR_RANKS[frozenset({T11, _t})] = 20
_PAIR_NAMES.update({17: "wong-6-6", 18: "wong-1-1", 19: "gong-6-6", 20: "gong-1-1"})

# Pair Fortunes (§ 621a.5(e)(1), § 621a.8(j), § 621a.11(b)): the Gee Joon, Heaven, Identical
# and Mixed Pairs are the Supreme Pair and the matched and mixed pairs of § 621a.3(c)
# (ranks 1-16), never a wong or a gong (docs/rules-readings/621a.md).
FORTUNE_PAIRS: tuple[frozenset[int], ...] = tuple(p for p, r in PAIR_RANKS.items() if r <= 16)


# --------------------------------------------------------------------------- text


def tile_str(t: int) -> str:
    if not isinstance(t, int) or not 0 <= t < NUM_KINDS:
        raise TileError(f"{t!r} is not a tile id (0..{NUM_KINDS - 1})")
    return KINDS[t].text


def tiles_str(ts: Iterable[int]) -> str:
    return " ".join(tile_str(t) for t in ts)


def parse_tile(token: str) -> int:
    """Parse one tile: ``"6-6"``, ``"4-2"`` (= ``"2-4"``), ``"1/3"``."""
    t = str(token).strip()
    parts = t.replace("/", "-").split("-")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise TileError(f"{token!r} is not a tile (expected the spots of its two halves, like '6-6' or '1-2')", token)
    a, b = sorted(int(p) for p in parts)
    if not (1 <= a <= 6 and 1 <= b <= 6):
        raise TileError(f"{token!r} is not a tile: each half has 1 to 6 spots", token)
    return _BY_PIPS[(a, b)]


def check_multiplicity(tiles: Sequence[int], tokens: Sequence[str] | None = None) -> None:
    """Refuse more copies of a tile than the set holds (§ 621a.3(h))."""
    seen: Counter[int] = Counter()
    for i, t in enumerate(tiles):
        tile_str(t)  # validates the id
        seen[t] += 1
        if seen[t] > KINDS[t].count:
            tok = tokens[i] if tokens is not None else KINDS[t].text
            n = KINDS[t].count
            raise TileError(
                f"{tok!r}: the set has only {n} {KINDS[t].name} ({KINDS[t].text}) tile{'s' if n > 1 else ''}", tok
            )


def parse_tiles(text: str | Sequence[str], *, count: int | Sequence[int] | None = None) -> tuple[int, ...]:
    """Parse space- or comma-separated tiles (``"6-6 1-2 2-4 5-5"``).

    Refuses a tile given more often than the set holds it (§ 621a.3(h)) and,
    when ``count`` is given, a wrong number of tiles.
    """
    tokens = text.replace(",", " ").split() if isinstance(text, str) else [str(x) for x in text]
    tiles = tuple(parse_tile(tok) for tok in tokens)
    check_multiplicity(tiles, tokens)
    if count is not None:
        allowed = (count,) if isinstance(count, int) else tuple(count)
        if len(tiles) not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise TileError(f"wrong number of tiles: got {len(tiles)}, expected {want}")
    return tiles


def as_tiles(tiles: str | Sequence[int], count: int) -> tuple[int, ...]:
    """Accept text or a sequence of tile ids; validate ids, multiplicity and count."""
    if isinstance(tiles, str):
        return parse_tiles(tiles, count=count)
    ts = tuple(tiles)
    for t in ts:
        tile_str(t)
    check_multiplicity(ts)
    if len(ts) != count:
        raise TileError(f"wrong number of tiles: got {len(ts)}, expected {count}")
    return ts


# --------------------------------------------------------------------------- hands

HandKind = Literal["pair", "wong", "gong", "points"]


@dataclass(frozen=True)
class HandRank:
    """The rank of a two-tile hand (§ 621a.3).

    ``score`` orders hands: higher beats lower and equal is a copy hand, which
    the dealer or bank wins (§ 621a.3(d), (g), (i))."""

    tiles: tuple[int, int]  # higher-ranking tile first (§ 621a.3(h) order)
    kind: HandKind
    pair_rank: int | None  # 1..20 of § 621a.3(c) for pairs, wongs and gongs, else None
    value: int | None  # 0..9 (§ 621a.3(e), Gee Joon per (f)) for other hands, else None
    top_rank: int | None  # individual rank of the highest tile (§ 621a.3(g), (h), adjusted per (f))
    score: int

    @property
    def label(self) -> str:
        if self.pair_rank is not None:
            return _PAIR_NAMES[self.pair_rank]
        return f"{self.value}-points"

    def __str__(self) -> str:
        return f"{tiles_str(self.tiles)} ({self.label})"


def _tile_options(t: int) -> tuple[tuple[int, int], ...]:
    """(spots counted, individual rank) choices for a tile used outside the Supreme Pair, § 621a.3(f)."""
    if t == T12:
        return ((3, 17), (6, 15))  # the 1-2 counted as 6 ranks fifteenth
    if t == T24:
        return ((6, 15), (3, 17))  # the 2-4 counted as 3 ranks seventeenth
    return ((KINDS[t].spots, KINDS[t].rank),)


@cache
def _eval(a: int, b: int) -> HandRank:
    ts = (a, b) if a <= b else (b, a)
    key = frozenset(ts)
    pr = PAIR_RANKS.get(key)
    if pr is not None:
        kind: HandKind = "pair" if pr <= 16 else ("wong" if pr <= 18 else "gong")
        return HandRank(ts, kind, pr, None, None, 1000 + 21 - pr)
    value, top = _best_points(ts[0], ts[1])
    score = 0 if value == 0 else value * 100 + 18 - top
    return HandRank(ts, "points", None, value, top, score)


def _best_points(a: int, b: int) -> tuple[int, int]:
    """(value, rank of the higher tile) of a hand that is not a pair: the best over the ways each
    tile may be counted (the 1-2 and 2-4 count either way, see :func:`_tile_options`)."""
    value, neg_top = max(((sa + sb) % 10, -min(ra, rb)) for sa, ra in _tile_options(a) for sb, rb in _tile_options(b))
    return value, -neg_top


def eval_hand(a: int, b: int) -> HandRank:
    """Rank the two-tile hand ``a``/``b`` (§ 621a.3(c)-(i))."""
    tile_str(a)
    tile_str(b)
    if a == b and KINDS[a].count < 2:
        raise TileError(f"{KINDS[a].text!r}: the set has only one such tile", KINDS[a].text)
    return _eval(a, b)


def hand(text: str) -> HandRank:
    """Rank a two-tile hand given as text (``"6-6 4-5"``)."""
    a, b = parse_tiles(text, count=2)
    return _eval(a, b)


def compare(a: HandRank, b: HandRank) -> int:
    """-1, 0, 1; 0 means identical rank (a copy hand, § 621a.3(d), (g), (i))."""
    return (a.score > b.score) - (a.score < b.score)


def beats(player: HandRank, banker: HandRank) -> bool:
    """True when ``player`` ranks strictly higher; copies and zero-zero ties go to the dealer/bank
    (§ 621a.3(d), (g), (i))."""
    return player.score > banker.score


# --------------------------------------------------------------------------- setting


class SettingError(ValueError):
    """A setting that does not use exactly the four tiles dealt, or whose high hand ranks below its low hand."""


@dataclass(frozen=True)
class Setting:
    """A high hand and a low hand formed from four tiles (§ 621a.1, § 621a.8(a))."""

    high: HandRank
    low: HandRank

    @property
    def tiles(self) -> tuple[int, ...]:
        return self.high.tiles + self.low.tiles

    def __str__(self) -> str:
        return f"high {self.high} / low {self.low}"


def validate_setting(high: HandRank, low: HandRank) -> None:
    """§ 621a.1: the high hand ranks higher than the low hand (a copy-equal pair of hands is
    accepted either way round).  Raises SettingError otherwise."""
    if high.score < low.score:
        raise SettingError(f"high hand {high} ranks below low hand {low} (§ 621a.1 'High hand')")


def make_setting(
    high: Sequence[int] | str, low: Sequence[int] | str, *, on_reversed: Literal["swap", "error"] = "swap"
) -> Setting:
    """Form a setting from the two-tile hands a player placed.

    The chapter prints no penalty for a player who places the hands the wrong
    way round: by § 621a.1 the *high hand* is, by definition, the one of the two
    that ranks higher, so ``on_reversed="swap"`` (default) relabels them; with
    ``"error"`` a reversed placement raises :class:`SettingError` (for a dealer
    or bank hand to be reset under § 621a.10(f)).  See docs/rules-readings/621a.md.
    """
    h = as_tiles(high, 2)
    lo = as_tiles(low, 2)
    check_multiplicity(h + lo)
    hr, lr = _eval(*h), _eval(*lo)
    if hr.score < lr.score:
        if on_reversed == "error":
            validate_setting(hr, lr)
        hr, lr = lr, hr
    return Setting(hr, lr)


def settings(tiles: Sequence[int] | str) -> tuple[Setting, ...]:
    """The three ways to split four tiles into a high and a low hand (§ 621a.8(a))."""
    ts = as_tiles(tiles, 4)
    out = []
    for j in (1, 2, 3):
        pair = (ts[0], ts[j])
        rest = tuple(ts[k] for k in (1, 2, 3) if k != j)
        a, b = _eval(*pair), _eval(*rest)
        out.append(Setting(a, b) if a.score >= b.score else Setting(b, a))
    return tuple(out)


def setting_of(tiles: Sequence[int] | str, high: Sequence[int] | str) -> Setting:
    """The setting of ``tiles`` whose high hand is ``high`` (the other two form the low hand)."""
    ts = list(as_tiles(tiles, 4))
    h = as_tiles(high, 2)
    rest = list(ts)
    for t in h:
        if t not in rest:
            raise SettingError(f"{tile_str(t)} is not among the tiles {tiles_str(ts)}")
        rest.remove(t)
    return make_setting(h, rest)


# --------------------------------------------------------------------------- outcome vs dealer/bank

Result = Literal["win", "lose", "push"]


@dataclass(frozen=True)
class Comparison:
    outcome: Result
    high: int  # compare(player high, banker high)
    low: int  # compare(player low, banker low)

    @property
    def copies(self) -> tuple[str, ...]:
        return tuple(n for n, c in (("high", self.high), ("low", self.low)) if c == 0)


def resolve(player: Setting, banker: Setting) -> Comparison:
    """§ 621a.8(g)-(i): win when both hands rank higher than the dealer's (bank's), lose when
    neither does, tie (push) otherwise; a copy or a zero-zero tie counts for the dealer/bank
    (§ 621a.3(d), (g), (i))."""
    ch = compare(player.high, banker.high)
    cl = compare(player.low, banker.low)
    wins = (ch > 0) + (cl > 0)
    outcome: Result = "win" if wins == 2 else ("lose" if wins == 0 else "push")
    return Comparison(outcome, ch, cl)


# --------------------------------------------------------------------------- Pair Fortunes

FortuneHand = Literal["gee-joon-and-heaven", "two-pair", "gee-joon-pair", "mixed-pair", "identical-pair", "no-pair"]


def fortune_pairs(tiles: Sequence[int]) -> list[tuple[frozenset[int], frozenset[int] | None]]:
    """Every way the four tiles contain a pair (or two) for Pair Fortunes, irrespective of
    how they were set (§ 621a.8(j))."""
    out: list[tuple[frozenset[int], frozenset[int] | None]] = []
    for i, j in combinations(range(4), 2):
        p = frozenset({tiles[i], tiles[j]})
        if PAIR_RANKS.get(p, 99) <= 16:
            rest = [tiles[k] for k in range(4) if k not in (i, j)]
            q = frozenset(rest)
            out.append((p, q if PAIR_RANKS.get(q, 99) <= 16 else None))
    return out


def classify_pair_fortunes(tiles: Sequence[int] | str) -> FortuneHand:
    """The best Pair Fortunes hand in four tiles (§ 621a.5(e)(1), § 621a.8(j), § 621a.11(b)).

    Gee Joon Pair and Heaven Pair > Two Pair > Gee Joon Pair > Mixed Pair > Identical Pair;
    the Heaven Pair alone is an Identical Pair (§ 621a.1)."""
    ts = as_tiles(tiles, 4)
    best: FortuneHand = "no-pair"
    order = ("no-pair", "identical-pair", "mixed-pair", "gee-joon-pair", "two-pair", "gee-joon-and-heaven")
    for p, q in fortune_pairs(ts):
        if q is not None:
            if {p, q} == {GEE_JOON, frozenset({HEAVEN})}:
                h: FortuneHand = "gee-joon-and-heaven"
            else:
                h = "two-pair"
        elif p == GEE_JOON:
            h = "gee-joon-pair"
        elif len(p) == 1:
            h = "identical-pair"
        else:
            h = "mixed-pair"
        if order.index(h) > order.index(best):
            best = h
    return best
