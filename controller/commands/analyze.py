"""``tablectl analyze``: exact analysis of a wager's paytable, or of the
best-five-card categories of the 53-card deck."""

from __future__ import annotations

import argparse
import sys
from typing import Any

NAME = "analyze"
HELP = "exact (enumerated) outcome frequencies and payback of a wager or of N cards from 53"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", help="six-card-fortune, fortune-asia, face-up, dj-wild, over-under, pai-gow-tiles")
    p.add_argument("--wager", help="wager id within the game (see --list)")
    p.add_argument(
        "--paytable",
        help="paytable from config/paytables: its name or a short form unambiguous within the game and wager "
        "(1, A, DJWT-04); without --wager the paytable's own wager (default: the game's usual one)",
    )
    p.add_argument("--rate", help='progressive: rate of progression (increment) of each wager, e.g. "20.5%%"')
    p.add_argument("--seed", help='progressive: meter seed (and reseed), e.g. "$10,000"')
    p.add_argument("--meter", help='progressive: the meter when paid, e.g. "$12,500" (default: the seed)')
    p.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="analyzer option, e.g. -o meter=$10,000 (repeatable)",
    )
    p.add_argument("--deck", type=int, help="with --cards: analyze best-five categories of N cards from this deck (53)")
    p.add_argument("--cards", type=int, help="number of cards (5, 6 or 7) for --deck")
    p.add_argument("--list", action="store_true", help="list the available analyses")


class _Usage(ValueError):
    """A usage error: said, exit 2."""


def _options(args: argparse.Namespace) -> dict[str, str]:
    options: dict[str, str] = {}
    for o in args.option:
        if "=" not in o:
            raise _Usage(f"--option {o!r} must be KEY=VALUE")
        k, v = o.split("=", 1)
        options[k.strip()] = v.strip()
    for flag in ("rate", "seed", "meter"):  # the casino's figures, never invented
        v = getattr(args, flag, None)
        if v is None:
            continue
        if flag in options and options[flag] != v:
            raise _Usage(f"--{flag} {v} and -o {flag}={options[flag]} disagree")
        options[flag] = v
    return options


def _deck(args: argparse.Namespace, analyzers: dict[Any, Any], options: dict[str, str]) -> Any:
    if args.deck is None or args.cards is None:
        raise _Usage("--deck and --cards go together")
    key = ("deck", str(args.deck))
    if key not in analyzers:
        raise _Usage(f"no analysis for a {args.deck}-card deck")
    options["cards"] = str(args.cards)
    return analyzers[key]


def _check_game(game: str, analyzers: dict[Any, Any]) -> None:
    from controller.core.suggest import did_you_mean

    games = sorted({g for g, _w in analyzers if g != "deck"})
    if game not in games:
        raise _Usage(f"no game {game!r}{did_you_mean(game, games)}; games: {', '.join(games)}")


def _no_analysis(game: str, wager: str, paytable: str | None, analyzers: dict[Any, Any], defaults: Any) -> str:
    from controller.core.suggest import did_you_mean

    key = (game, wager)
    wagers = [w for g, w in sorted(analyzers) if g == game]
    if paytable is None:
        return (
            f"no analysis for game {game!r} wager {wager!r}{did_you_mean(wager, wagers)} "
            f"(wagers of {game}: {', '.join(wagers)})"
        )
    whole = f"; --wager {wager} analyses the whole game without a paytable" if key in analyzers else ""
    with_pt = [w for g, w in sorted(analyzers) if g == game and (g, w) in defaults]
    return (
        f"no analysis for game {game!r} paytable {paytable!r} ({wager} wager{whole}) "
        f"(wagers of {game} with one: {', '.join(with_pt) or 'none'})"
    )


def _paytable_and_wager(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(the paytable --paytable names, or None; the wager: --wager, or the paytable's)."""
    if not args.paytable:
        return None, args.wager
    try:
        return resolve_paytable(args.game, args.wager, args.paytable)
    except ValueError as e:
        raise _Usage(str(e)) from None


def _game_wager(args: argparse.Namespace, analyzers: dict[Any, Any]) -> tuple[Any, str | None]:
    """(the analysis, its paytable) for --game and --wager/--paytable."""
    from controller.analysis import DEFAULT_PAYTABLE

    if not args.game or not (args.wager or args.paytable):
        raise _Usage("give --game and --wager (or --deck and --cards); --list shows them")
    _check_game(args.game, analyzers)
    paytable, wager = _paytable_and_wager(args)
    key = (args.game, str(wager))
    # a paytable has an analysis when its wager's analyzer takes paytables (the ante
    # analyses play the whole game and take none: "DJ Wild Ante" has no analysis of its own)
    if key not in analyzers or (paytable is not None and key not in DEFAULT_PAYTABLE):
        raise _Usage(_no_analysis(args.game, str(wager), paytable, analyzers, DEFAULT_PAYTABLE))
    _check_meter_options(args, key[1])
    return analyzers[key], paytable or DEFAULT_PAYTABLE.get(key)


def _check_meter_options(args: argparse.Namespace, wager: str) -> None:
    """--rate, --seed and --meter go with a progressive wager only."""
    given = [f for f in ("rate", "seed", "meter") if getattr(args, f, None) is not None]
    if given and wager != "progressive":
        raise _Usage(f"--{given[0]} applies to a progressive wager, not {wager!r}")


def _what(args: argparse.Namespace) -> str:
    if args.deck is not None:
        return f"analyze --deck {args.deck} --cards {args.cards}: enumerating"
    return f"analyze {args.game} {args.wager or ''}".rstrip() + ": enumerating"


def run(args: argparse.Namespace) -> int:
    from controller.analysis import DEFAULT_PAYTABLE, format_result, load_all
    from controller.core.progress import Progress

    analyzers = load_all()
    if args.list:
        for g, w in sorted(analyzers):
            pt = DEFAULT_PAYTABLE.get((g, w), "")
            print(f"{g:18} {w:24} {pt}")
        return 0
    try:
        options = _options(args)
        if args.deck is not None or args.cards is not None:
            fn, paytable = _deck(args, analyzers, options), None
        else:
            fn, paytable = _game_wager(args, analyzers)
        with Progress(_what(args)):  # an exact enumeration can take half a minute: stderr, a terminal only
            res = fn(paytable, options)
    except (_Usage, ValueError) as e:
        print(f"tablectl analyze: {e}", file=sys.stderr)
        return 2
    print(format_result(res))
    return 0


def resolve_paytable(game: str, wager: str | None, text: str) -> tuple[str, str]:
    """``(name, wager)`` of the paytable ``text`` names within ``game`` (and ``wager`` if
    given): its full name or an unambiguous short form (controller/rules/paytables.py)."""
    from controller.rules.paytables import resolve_paytable as resolve

    pt = resolve(game, wager, text)
    return pt.name, pt.wager
