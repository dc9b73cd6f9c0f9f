"""The dealer's (and co-bank's) house way for Pai Gow tiles, § 621a.8(d).

Pure: no I/O.

§ 621a.8(d) prints the house way as four steps:

1. If the dealer has the Supreme Pair, it is played as the Supreme Pair.
2. If possible, the dealer always plays a pair, wong or gong (§ 621a.3(c)).
3. Otherwise the dealer plays any two tiles together whose value is nine, eight or seven.
4. Otherwise the dealer plays the highest-ranking tile with the lowest-ranking tile.

The text does not say which combination to play when a step can be met more
than one way (e.g. Twelve, Two, Nine, Nine: a mixed pair of nines *or* two
wongs).  The default :func:`house_way` plays, among the splits the first
applicable step allows, the one whose qualifying hand ranks highest (the step's
own list runs from the best combination down: pairs in § 621a.3(c) order, then
nine, eight, seven), and on equal qualifying hands the one whose other hand
ranks highest.  Step 4 is always unambiguous: two tiles of equal individual
rank are identical or a mixed pair, which step 2 already plays; tiles are
ranked there by the § 621a.3(h) table (1-2 seventeenth, 2-4 fifteenth).
See docs/rules-readings/621a.md.

A casino whose Rules Submission (§ 621a.9(e), § 621a.10(f)) sets the dealer's or
the co-bank's hands differently registers its own function in
:data:`HOUSE_WAYS`; a house way is any ``fn(tiles) -> Setting``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from controller.rules.tiles import GEE_JOON, KINDS, HandRank, Setting, TileError, as_tiles, make_setting, settings

HouseWay = Callable[[Sequence[int]], Setting]


def _qualifies_step2(h: HandRank) -> bool:
    return h.pair_rank is not None


def _qualifies_step3(h: HandRank) -> bool:
    return h.pair_rank is None and h.value in (7, 8, 9)


def _best_qualifying(splits: Sequence[Setting], ok: Callable[[HandRank], bool]) -> Setting | None:
    """Of the settings with a hand that ``ok`` takes, the one whose best such hand, then the
    other hand, scores highest; None when no setting has one."""
    cands = []
    for s in splits:
        q = [h for h in (s.high, s.low) if ok(h)]
        if q:
            best = max(q, key=lambda h: h.score)
            other = s.low if best is s.high else s.high
            cands.append(((best.score, other.score), s))
    return max(cands, key=lambda c: c[0])[1] if cands else None


def house_way_step(tiles: Sequence[int] | str) -> tuple[int, Setting]:
    """The step of § 621a.8(d) that applies (1-4) and the setting it gives."""
    ts = as_tiles(tiles, 4)
    splits = settings(ts)
    # (1) the Supreme Pair is played as the Supreme Pair
    if GEE_JOON <= set(ts):
        for s in splits:
            if s.high.pair_rank == 1:
                return 1, s
    # (2) always a pair, wong or gong; (3) two tiles valued nine, eight or seven
    for step, ok in ((2, _qualifies_step2), (3, _qualifies_step3)):
        best_split = _best_qualifying(splits, ok)
        if best_split is not None:
            return step, best_split
    # (4) the highest-ranking tile with the lowest-ranking tile (§ 621a.3(h) ranks)
    order = sorted(ts, key=lambda t: KINDS[t].rank)
    hi, lo = order[0], order[-1]
    if KINDS[hi].rank == KINDS[order[1]].rank or KINDS[lo].rank == KINDS[order[2]].rank:
        # cannot happen: equal-rank tiles form a pair that step 2 plays
        raise TileError(f"house way step 4 reached with tied ranks: {ts}")  # pragma: no cover
    rest = list(ts)
    rest.remove(hi)
    rest.remove(lo)
    return 4, make_setting((hi, lo), rest)


def house_way(tiles: Sequence[int] | str) -> Setting:
    """The dealer's setting under § 621a.8(d) (default tie-breaks, see module docstring)."""
    return house_way_step(tiles)[1]


#: house ways a table profile may name (the Rules Submission's choice); "621a.8(d)" is the default
HOUSE_WAYS: dict[str, HouseWay] = {"621a.8(d)": house_way}


def get_house_way(name: str = "621a.8(d)") -> HouseWay:
    try:
        return HOUSE_WAYS[name]
    except KeyError:
        raise ValueError(f"no house way named {name!r}; known: {', '.join(sorted(HOUSE_WAYS))}") from None
