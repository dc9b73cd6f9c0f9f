"""Pai Gow tiles dice wagers: Sum, Match and Beat It (§ 621a.5(e)(2)-(4)),
settled right after the roll and before the tiles are dealt (§ 621a.6(b)),
at the odds of § 621a.11(c)-(e).

Pure: no I/O.  The paytables are data (config/paytables/621a.toml); this module
only says which outcome ("hand" key) a roll is:

* Sum: ``total-N`` (N = 3..18), ``three-match`` / ``two-match`` (exactly two
  dice alike), ``series`` (three consecutive values).  A roll can have several
  keys (``total-9`` and ``series``); it is paid at the best row its paytable
  lists.
* Match: ``triple-match`` / ``double-match`` (exactly two) for the value chosen.
* Beat It: ``red-by-K`` (K = 1..4) or ``red-tie`` when the red die is equal to
  or greater than the sum of the blue dice (§ 621a.5(e)(4)(i)), and ``any-by-K``
  (K = 1..4) when some die exceeds the sum of the other two (§ 621a.5(e)(4)(ii)).
"""

from __future__ import annotations

from fractions import Fraction

from controller.rules.dice import Dice, DiceError
from controller.rules.paytables import Paytable, get_paytable
from controller.rules.settlement import WagerResult, whole_cents


def sum_keys(d: Dice) -> tuple[str, ...]:
    """§ 621a.5(e)(2)(i)-(iv)."""
    keys = [f"total-{d.total}"]
    if d.most_common == 3:
        keys.append("three-match")
    elif d.most_common == 2:
        keys.append("two-match")
    if d.is_series:
        keys.append("series")
    return tuple(keys)


def match_keys(d: Dice, selected: int) -> tuple[str, ...]:
    """§ 621a.5(e)(3): two or three dice showing the selected value."""
    if isinstance(selected, bool) or selected not in range(1, 7):
        raise DiceError(f"Match Wager value {selected!r} is not 1..6 (§ 621a.2(b)(5)(ii))", str(selected))
    n = d.count(selected)
    return ("triple-match",) if n == 3 else ("double-match",) if n == 2 else ()


def beat_it_keys(d: Dice, *, need_red: bool = False) -> tuple[str, ...]:
    """§ 621a.5(e)(4)(i) (red die vs the sum of the blue dice) and (ii) (any die vs the other two)."""
    keys: list[str] = []
    if d.red is not None or need_red:
        margin = d.red_value - sum(d.blue_values)
        if margin == 0:
            keys.append("red-tie")
        elif margin > 0:
            keys.append(f"red-by-{margin}")
    for x in d.values:
        m = x - (d.total - x)
        if m > 0:
            keys.append(f"any-by-{m}")
    return tuple(keys)


def best_row(keys: tuple[str, ...], pt: Paytable) -> str | None:
    """The paying key with the largest payout in ``pt`` (None: the wager loses)."""
    paying = [k for k in keys if k in pt]
    if not paying:
        return None
    return max(paying, key=lambda k: pt.payout(k).net_win(1))  # type: ignore[union-attr]


def _settle(seat: int, wager: str, amount: int, keys: tuple[str, ...], pt: Paytable, detail: str) -> WagerResult:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValueError(f"wager amount {amount!r} must be a positive number of cents")
    key = best_row(keys, pt)
    if key is None:
        return WagerResult(
            seat, wager, amount, "lose", -amount, hand=keys[0] if keys else None, paytable=pt.name, detail=detail
        )
    p = pt.payout(key)
    assert p is not None
    net = whole_cents(p.net_win(amount), rule=f"{pt.section}: {p.text} on {amount} cents")
    return WagerResult(seat, wager, amount, "win", net, hand=key, paytable=pt.name, pays=p.text, detail=detail)


def _table(name: str, wager: str) -> Paytable:
    pt = get_paytable(name)
    if pt.game != "pai-gow-tiles" or pt.wager != wager:
        raise ValueError(f"paytable {name!r} is for {pt.game}/{pt.wager}, not pai-gow-tiles/{wager}")
    return pt


def settle_sum(seat: int, amount: int, dice: Dice, paytable: str = "Tiles Sum A") -> WagerResult:
    """Sum Wager (§ 621a.5(e)(2), § 621a.11(c); settled per § 621a.6(b))."""
    return _settle(seat, "sum", amount, sum_keys(dice), _table(paytable, "sum"), f"dice {dice}")


def settle_match(seat: int, amount: int, dice: Dice, selected: int, paytable: str = "Tiles Match") -> WagerResult:
    """Match Wager on ``selected`` (§ 621a.5(e)(3), § 621a.11(d); settled per § 621a.6(b))."""
    keys = match_keys(dice, selected)
    return _settle(seat, f"match-{selected}", amount, keys, _table(paytable, "match"), f"dice {dice}")


def settle_beat_it(seat: int, amount: int, dice: Dice, paytable: str = "Tiles Beat It A") -> WagerResult:
    """Beat It Wager (§ 621a.5(e)(4), § 621a.11(e); settled per § 621a.6(b)).  A paytable paying
    on the red die needs a roll with a red die (§ 621a.2(f)(1))."""
    pt = _table(paytable, "beat-it")
    need_red = any(h.startswith("red-") for h in pt.hands)
    return _settle(seat, "beat-it", amount, beat_it_keys(dice, need_red=need_red), pt, f"dice {dice}")


def payout_ratio(pt: Paytable, key: str | None) -> Fraction:
    """Net result per unit wagered for an outcome key (-1 when it does not pay)."""
    if key is None:
        return Fraction(-1)
    p = pt.payout(key)
    assert p is not None
    return p.net_win(1)
