"""``tablectl analyze``: exact analysis of a wager's paytable, or of the
best-five-card categories of the 53-card deck."""

from __future__ import annotations

import argparse
import sys

NAME = "analyze"
HELP = "exact (enumerated) outcome frequencies and payback of a wager or of N cards from 53"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", help="six-card-fortune, fortune-asia, face-up, dj-wild, over-under, pai-gow-tiles")
    p.add_argument("--wager", help="wager id within the game (see --list)")
    p.add_argument("--paytable", help="paytable name from config/paytables (default: the game's usual one)")
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


def run(args: argparse.Namespace) -> int:
    from controller.analysis import DEFAULT_PAYTABLE, format_result, load_all

    analyzers = load_all()
    if args.list:
        for g, w in sorted(analyzers):
            pt = DEFAULT_PAYTABLE.get((g, w), "")
            print(f"{g:18} {w:24} {pt}")
        return 0
    options: dict[str, str] = {}
    for o in args.option:
        if "=" not in o:
            print(f"tablectl analyze: --option {o!r} must be KEY=VALUE", file=sys.stderr)
            return 2
        k, v = o.split("=", 1)
        options[k.strip()] = v.strip()
    if args.deck is not None or args.cards is not None:
        if args.deck is None or args.cards is None:
            print("tablectl analyze: --deck and --cards go together", file=sys.stderr)
            return 2
        key = ("deck", str(args.deck))
        if key not in analyzers:
            print(f"tablectl analyze: no analysis for a {args.deck}-card deck", file=sys.stderr)
            return 2
        options["cards"] = str(args.cards)
        fn = analyzers[key]
        paytable = None
    else:
        if not args.game or not args.wager:
            print(
                "tablectl analyze: give --game and --wager (or --deck and --cards); --list shows them", file=sys.stderr
            )
            return 2
        key = (args.game, args.wager)
        if key not in analyzers:
            known = ", ".join(f"{g}/{w}" for g, w in sorted(analyzers) if g == args.game) or "none"
            print(
                f"tablectl analyze: no analysis for game {args.game!r} wager {args.wager!r} "
                f"(known for this game: {known})",
                file=sys.stderr,
            )
            return 2
        fn = analyzers[key]
        paytable = args.paytable or DEFAULT_PAYTABLE.get(key)
    try:
        res = fn(paytable, options)
    except ValueError as e:
        print(f"tablectl analyze: {e}", file=sys.stderr)
        return 2
    print(format_result(res))
    return 0
