"""Pai Gow tiles: positions, the starting position from the dice, the bank's
cut and the dealing styles (§§ 621a.6(c),(d), 621a.7, 621a.9(g), (j), (k)).

Pure: no I/O.

Positions are numbered in counterclockwise order around the table::

    0 = the dealer, 1..6 = the betting positions (1 is farthest to the dealer's
    right), 7 = the Dead Hand (to the dealer's left, § 621a.2(b)(3))

so counting "beginning with the dealer as number one and continuing around the
table in a counterclockwise manner" (§ 621a.6(c)) visits 0, 1, ..., 7, 0, ...
A total of 9 gives the dealer and 15 the sixth betting position, the
examples of § 621a.6(c)(1)-(2).  With a player bank the count begins with the
bank's betting position (§ 621a.9(j)).

Stacks are the eight stacks of four tiles in front of the dealer, indexed
``0..7`` from the dealer's right to the dealer's left; within a stack, level
``0`` is the top tile.  A dealing style is a *plan*: for the k-th position
served (k = 0 the starting position, then counterclockwise), the four
``(stack, level)`` places its tiles come from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TypeVar

from controller.rules.tiles import FULL_SET, TileError, check_multiplicity, tile_str

DEALER = 0
DEAD_HAND = 7
SEATS = (1, 2, 3, 4, 5, 6)
POSITIONS = 8
POSITION_NAMES = {DEALER: "dealer", DEAD_HAND: "dead-hand", **{s: f"seat-{s}" for s in SEATS}}

Place = tuple[int, int]  # (stack 0..7 from the dealer's right, level 0 = top)
Plan = tuple[tuple[Place, ...], ...]


def position_name(p: int) -> str:
    try:
        return POSITION_NAMES[p]
    except KeyError:
        raise ValueError(f"{p!r} is not a position (0 dealer, 1..6 seats, 7 Dead Hand)") from None


def starting_position(count: int, first: int = DEALER) -> int:
    """The position that receives the first stack (§ 621a.6(c); § 621a.9(j) with a bank).

    ``count`` is the total of the three dice (3..18) or the number shown by the
    random number generator; ``first`` is the position counted as number one:
    the dealer, or the bank's betting position when a player banks."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"{count!r} is not a count (the dice total or the RNG number, 1 or more)")
    if first not in POSITION_NAMES or first == DEAD_HAND:
        raise ValueError(f"{first!r} cannot be counted as number one (the dealer 0 or a bank seat 1..6)")
    return (first + count - 1) % POSITIONS


def dealing_order(start: int) -> tuple[int, ...]:
    """The positions in the order they receive tiles: start, then counterclockwise (§ 621a.6(d))."""
    position_name(start)
    return tuple((start + k) % POSITIONS for k in range(POSITIONS))


# --------------------------------------------------------------------------- dealing styles


def _whole_stacks(order: Sequence[int]) -> Plan:
    return tuple(tuple((s, lv) for lv in range(4)) for s in order)


def _pairs_of_stacks(pairs: Sequence[tuple[int, int]]) -> Plan:
    """Top two tiles of each stack of a pair to one position, the bottom two to the next."""
    plan: list[tuple[Place, ...]] = []
    for a, b in pairs:
        plan.append(((a, 0), (a, 1), (b, 0), (b, 1)))
        plan.append(((a, 2), (a, 3), (b, 2), (b, 3)))
    return tuple(plan)


def _pin_say(first: Sequence[int], second: Sequence[int]) -> Plan:
    plan: list[tuple[Place, ...]] = []
    for lv in range(4):
        plan.append(tuple((s, lv) for s in first))
        plan.append(tuple((s, lv) for s in second))
    return tuple(plan)


def _dragon_phoenix(d1: tuple[int, int], d2: tuple[int, int], tail: Sequence[int]) -> Plan:
    # d1 (first two stacks) is placed on d2 (third and fourth): two 8-tile stacks whose top
    # halves are d1 and bottom halves d2; each dragon-head delivery takes the top two tiles of each.
    plan: list[tuple[Place, ...]] = []
    heads = [(d1, 0), (d1, 2), (d2, 0), (d2, 2)]
    for k, (pair, lv) in enumerate(heads):
        plan.append(((pair[0], lv), (pair[0], lv + 1), (pair[1], lv), (pair[1], lv + 1)))
        plan.append(tuple((s, k) for s in tail))
    return tuple(plan)


def _mirror(plan: Plan) -> Plan:
    return tuple(tuple((7 - s, lv) for s, lv in pos) for pos in plan)


#: § 621a.6(d) and § 621a.7(1)-(9)
STYLES: dict[str, tuple[str, Plan]] = {
    "standard": ("§ 621a.6(d)", _whole_stacks(range(8))),
    "house-way-left": ("§ 621a.7(1)", _whole_stacks(range(7, -1, -1))),
    "cup-say-right": ("§ 621a.7(2)", _pairs_of_stacks(((0, 1), (2, 3), (4, 5), (6, 7)))),
    "cup-say-left": ("§ 621a.7(3)", _mirror(_pairs_of_stacks(((0, 1), (2, 3), (4, 5), (6, 7))))),
    "jung-quat": ("§ 621a.7(4)", _pairs_of_stacks(((3, 4), (2, 5), (1, 6), (0, 7)))),
    "chee-yee": ("§ 621a.7(5)", _pairs_of_stacks(((0, 7), (1, 6), (2, 5), (3, 4)))),
    "pin-say-right": ("§ 621a.7(6)", _pin_say((0, 1, 2, 3), (7, 6, 5, 4))),
    "pin-say-left": ("§ 621a.7(7)", _mirror(_pin_say((0, 1, 2, 3), (7, 6, 5, 4)))),
    "dragon-phoenix-right": ("§ 621a.7(8)", _dragon_phoenix((0, 1), (2, 3), (4, 5, 6, 7))),
    "dragon-phoenix-left": ("§ 621a.7(9)", _mirror(_dragon_phoenix((0, 1), (2, 3), (4, 5, 6, 7)))),
}


def dealing_plan(style: str = "standard") -> Plan:
    """Where each position's four tiles come from, in dealing order (§ 621a.6(d), § 621a.7)."""
    try:
        return STYLES[style][1]
    except KeyError:
        raise ValueError(f"unknown dealing style {style!r}; known: {', '.join(STYLES)}") from None


def _check_stacks(stacks: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    st = tuple(tuple(s) for s in stacks)
    if len(st) != 8 or any(len(s) != 4 for s in st):
        raise TileError(f"expected eight stacks of four tiles (§ 621a.4(d)), got {[len(s) for s in st]}")
    flat = [t for s in st for t in s]
    for t in flat:
        tile_str(t)
    check_multiplicity(flat)
    if Counter(flat) != Counter(FULL_SET):  # pragma: no cover - implied by multiplicity and count 32
        raise TileError("the stacks are not one full set of 32 tiles")
    return st


def deal(stacks: Sequence[Sequence[int]], start: int, style: str = "standard") -> dict[int, tuple[int, ...]]:
    """The four tiles each position receives: ``{position: tiles}`` (§ 621a.6(d), § 621a.7)."""
    st = _check_stacks(stacks)
    plan = dealing_plan(style)
    return {pos: tuple(st[s][lv] for s, lv in places) for pos, places in zip(dealing_order(start), plan)}


T = TypeVar("T")  # a stack, as the caller names it


def _check_cut(blocks: list[tuple[int, int]], n: int) -> None:
    """One or two ranges of the ``n`` stacks; two together one run of adjacent stacks (§ 621a.9(g)(2))."""
    if not blocks:
        raise ValueError("a cut moves at least one stack (§ 621a.9(g)); with no cut, leave the stacks as they are")
    for i, j in blocks:
        if not (0 <= i < j <= n):
            raise ValueError(f"stack range {(i, j)} is not within 0..{n}")
    if len(blocks) == 2:
        (_a, b), (c, _d) = sorted(blocks)
        if b != c:
            raise ValueError("the stacks moved to both ends must be one run of adjacent stacks (§ 621a.9(g)(2))")


def cut_stacks(
    order: Sequence[T], *, to_right: tuple[int, int] | None = None, to_left: tuple[int, int] | None = None
) -> tuple[T, ...]:
    """The bank's cut (§ 621a.9(g)): move adjacent stacks to the end(s).

    ``order`` lists the stacks (anything) from the dealer's right; ``to_right`` /
    ``to_left`` are half-open index ranges ``(i, j)`` of adjacent stacks moved to
    the right / left end.  With both, the two ranges must together be one run of
    adjacent stacks (§ 621a.9(g)(2)); with one, it is § 621a.9(g)(1).
    """
    st = list(order)
    blocks = [b for b in (to_right, to_left) if b is not None]
    _check_cut(blocks, len(st))
    moved: set[int] = set()
    right = st[to_right[0] : to_right[1]] if to_right else []
    left = st[to_left[0] : to_left[1]] if to_left else []
    for i, j in blocks:
        moved.update(range(i, j))
    middle = [x for k, x in enumerate(st) if k not in moved]
    return tuple(right + middle + left)
