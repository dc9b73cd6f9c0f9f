"""The Pai Gow (tiles) table profile's ``[game.options]`` (58 Pa. Code 621a), validated.

What a certificate holder's Rules Submission chooses (§ 601a.2) and the profile
states: the house way (§ 621a.8(d), § 621a.9(e)), the dealing style and the
styles the dealer or bank may choose (§ 621a.6(d), § 621a.7), the optional
wagers and their paytables (§ 621a.5(e), § 621a.11(b)-(e)), the player bank and
co-banking (§ 621a.9(a), (e)), the dealer's wager against a bank (§ 621a.9(h))
and the wager limits.  An unknown option or a bad value is an error naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.rules.paytables import all_paytables
from controller.rules.tiles_deal import STYLES
from controller.rules.tiles_houseway import HOUSE_WAYS

KNOWN = (
    "house_way",
    "dealing_style",
    "styles",
    "pair_fortunes",
    "sum",
    "match",
    "beat_it",
    "player_bank",
    "co_banking",
    "dealer_wager_cents",
    "base_min_cents",
    "base_max_cents",
    "side_min_cents",
    "side_max_cents",
)


@dataclass(frozen=True)
class TilesOptions:
    house_way: str = "621a.8(d)"
    dealing_style: str = "standard"  # § 621a.6(d) unless the profile names a § 621a.7 style
    styles: tuple[str, ...] = ("standard",)  # styles the dealer or the bank may choose (§ 621a.7, § 621a.9(i))
    pair_fortunes: str | None = None  # paytable name, None: not offered (§ 621a.5(e)(1))
    sum: str | None = None  # § 621a.5(e)(2), § 621a.11(c)
    match: str | None = None  # § 621a.5(e)(3), § 621a.11(d)
    beat_it: str | None = None  # § 621a.5(e)(4), § 621a.11(e)
    player_bank: bool = False  # § 621a.9(a)
    co_banking: bool = False  # § 621a.9(e)
    dealer_wager_cents: int | None = None  # § 621a.9(h): the Rules Submission's amount (else the
    #                                                bank's last wager against the dealer)
    base_min_cents: int = 500
    base_max_cents: int = 100_000
    side_min_cents: int = 100
    side_max_cents: int = 10_000

    @property
    def dice_wagers(self) -> bool:
        return any((self.sum, self.match, self.beat_it))


def _err(file: str, key: str, problem: str) -> ValueError:
    return ValueError(f"{file}: [game.options] {key}: {problem}")


def _int(file: str, opts: Mapping[str, Any], key: str, default: int | None, lo: int = 0) -> int | None:
    v = opts.get(key, default)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise _err(file, key, f"{v!r} is not a whole number of cents >= {lo}")
    return v


def _bool(file: str, opts: Mapping[str, Any], key: str) -> bool:
    v = opts.get(key, False)
    if not isinstance(v, bool):
        raise _err(file, key, f"{v!r} is not true or false")
    return v


def _paytable(file: str, opts: Mapping[str, Any], key: str, wager: str) -> str | None:
    name = opts.get(key)
    if name is None or name == "":
        return None
    if not isinstance(name, str):
        raise _err(file, key, f"{name!r} is not a paytable name")
    pt = all_paytables().get(name)
    if pt is None:
        raise _err(file, key, f"no paytable named {name!r} in config/paytables")
    if pt.game != "pai-gow-tiles" or pt.wager != wager:
        raise _err(file, key, f"paytable {name!r} is for {pt.game}/{pt.wager}, not pai-gow-tiles/{wager}")
    return name


def parse_options(file: str, opts: Mapping[str, Any], *, start_method: str) -> TilesOptions:
    bad = sorted(k for k in opts if k not in KNOWN)
    if bad:
        raise _err(file, bad[0], f"not an option of pai-gow-tiles (known: {', '.join(KNOWN)})")
    house_way = _house_way(file, opts)
    style, styles = _styles(file, opts)
    o = TilesOptions(
        house_way=house_way,
        dealing_style=style,
        styles=tuple(styles),
        pair_fortunes=_paytable(file, opts, "pair_fortunes", "pair-fortunes"),
        sum=_paytable(file, opts, "sum", "sum"),
        match=_paytable(file, opts, "match", "match"),
        beat_it=_paytable(file, opts, "beat_it", "beat-it"),
        player_bank=_bool(file, opts, "player_bank"),
        co_banking=_bool(file, opts, "co_banking"),
        dealer_wager_cents=_int(file, opts, "dealer_wager_cents", None),
        base_min_cents=_int(file, opts, "base_min_cents", 500, 1) or 500,
        base_max_cents=_int(file, opts, "base_max_cents", 100_000, 1) or 100_000,
        side_min_cents=_int(file, opts, "side_min_cents", 100, 1) or 100,
        side_max_cents=_int(file, opts, "side_max_cents", 10_000, 1) or 10_000,
    )
    _check_together(file, o, start_method)
    return o


def _house_way(file: str, opts: Mapping[str, Any]) -> str:
    house_way = opts.get("house_way", "621a.8(d)")
    if not isinstance(house_way, str) or house_way not in HOUSE_WAYS:
        raise _err(file, "house_way", f"no house way named {house_way!r}; known: {', '.join(sorted(HOUSE_WAYS))}")
    return house_way


def _styles(file: str, opts: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The dealing style and the styles offered."""
    style = opts.get("dealing_style", "standard")
    if not isinstance(style, str) or style not in STYLES:
        raise _err(file, "dealing_style", f"unknown dealing style {style!r}; known: {', '.join(STYLES)}")
    return style, _styles_offered(file, opts, style)


def _styles_offered(file: str, opts: Mapping[str, Any], style: str) -> list[str]:
    """``styles``: dealing styles, the ``dealing_style`` among them."""
    styles = opts.get("styles", [style])
    if not isinstance(styles, list) or not styles or not all(isinstance(s, str) for s in styles):
        raise _err(file, "styles", f"{styles!r} is not a list of dealing styles")
    for s in styles:
        if s not in STYLES:
            raise _err(file, "styles", f"unknown dealing style {s!r}; known: {', '.join(STYLES)}")
    if style not in styles:
        raise _err(file, "styles", f"the dealing_style {style!r} must be one of the styles offered")
    return styles


def _check_together(file: str, o: TilesOptions, start_method: str) -> None:
    """What the options require of each other (and of the table's start method)."""
    if o.co_banking and not o.player_bank:
        raise _err(file, "co_banking", "co-banking (§ 621a.9(e)) needs player_bank = true (§ 621a.9(a))")
    if o.dice_wagers and start_method != "shaker":
        raise _err(
            file,
            "sum" if o.sum else "match" if o.match else "beat_it",
            "the dice wagers need the player-activated shaker, not the RNG (§ 621a.2(b)(5), § 621a.6(b))",
        )
    for lo, hi in (("base_min_cents", "base_max_cents"), ("side_min_cents", "side_max_cents")):
        if getattr(o, lo) > getattr(o, hi):
            raise _err(file, lo, f"{getattr(o, lo)} is above {hi} ({getattr(o, hi)})")
