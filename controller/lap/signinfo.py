"""What the common progressive sign shows besides the meters: the game's name as players know it
and the pay table of the progressive wager (hand -> pay), from the member tables' games.

The LAP knows each member's game (``lap.toml`` ``[tables.*] game``); the game's own table profile
(``config/tables/<game>.toml``) names it as its chapter does and names its progressive paytable
(``config/paytables/``) and wager.  A meter pay ("10% of meter") is shown as the share of the first
level's meter (the page works its amount out as the meter moves); a pay "for 1" as the amount a
wager of the profile's size is handed back; odds as printed.  Several games on one meter: their
names together, the first game's pay table.  An unknown game: its name as written, no pay table.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from controller.reports.words import game_title, hand_name, progressive_of


@functools.lru_cache(maxsize=32)
def product(games: tuple[str, ...]) -> dict[str, Any]:
    """``{"title", "games", "wager_cents", "paytable", "section", "pays"}`` for the member games
    (in the members' order, each once)."""
    seen = list(dict.fromkeys(g for g in games if g))
    titles = list(dict.fromkeys(game_title(g) for g in seen))
    out: dict[str, Any] = {"title": " · ".join(titles), "games": titles, "wager_cents": None, "paytable": None,
                           "section": None, "pays": []}  # fmt: skip
    prog = next((p for p in (progressive_of(g) for g in seen) if p is not None), None)
    table = None if prog is None else _paytable(prog[0])
    if prog is not None and table is not None:
        out.update(wager_cents=prog[1], paytable=prog[0], section=table.section, pays=_pays(table.pays, prog[1]))
    return out


def _paytable(name: str) -> Any:
    from controller.rules.paytables import PaytableError, all_paytables

    try:
        return all_paytables().get(name)
    except PaytableError:
        return None


def _pays(rows: Sequence[tuple[str, Any]], wager: int) -> list[dict[str, Any]]:
    """Each (hand, payout) as the sign shows it."""
    out = []
    for hand, p in rows:
        row: dict[str, Any] = {"hand": hand_name(hand), "share": None, "cents": None, "text": p.text}
        if p.kind == "meter":
            row["share"] = [p.ratio.numerator, p.ratio.denominator]
            row["text"] = f"{_pct(p.ratio)} of the jackpot"
        elif p.kind == "for":
            row["cents"] = int(p.ratio * wager)
        elif p.kind == "fixed":
            row["cents"] = p.cents
        elif p.kind == "odds":
            row["text"] = f"{_num(p.ratio)} to 1"
        out.append(row)
    return out


def _pct(f: Fraction) -> str:
    p = f * 100
    return f"{p.numerator}%" if p.denominator == 1 else f"{float(p):g}%"


def _num(f: Fraction) -> str:
    return f"{f.numerator:,}" if f.denominator == 1 else f"{float(f):,g}"
