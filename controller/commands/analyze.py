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
    for flag in ("rate", "seed", "meter"):  # issue 12: the casino's figures, never invented
        v = getattr(args, flag, None)
        if v is None:
            continue
        if flag in options and options[flag] != v:
            print(f"tablectl analyze: --{flag} {v} and -o {flag}={options[flag]} disagree", file=sys.stderr)
            return 2
        options[flag] = v
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
        if not args.game or not (args.wager or args.paytable):
            print(
                "tablectl analyze: give --game and --wager (or --deck and --cards); --list shows them", file=sys.stderr
            )
            return 2
        wager = args.wager
        paytable = None
        if args.paytable:
            try:
                paytable, wager = resolve_paytable(args.game, args.wager, args.paytable)
            except ValueError as e:
                print(f"tablectl analyze: {e}", file=sys.stderr)
                return 2
        key = (args.game, str(wager))
        # a paytable has an analysis when its wager's analyzer takes paytables (the ante
        # analyses play the whole game and take none: "DJ Wild Ante" has no analysis of its own)
        if key not in analyzers or (paytable is not None and key not in DEFAULT_PAYTABLE):
            with_pt = [w for g, w in sorted(analyzers) if g == args.game and (g, w) in DEFAULT_PAYTABLE]
            known = ", ".join(w for g, w in sorted(analyzers) if g == args.game) or "none"
            if paytable is not None:
                whole = f"; --wager {wager} analyses the whole game without a paytable" if key in analyzers else ""
                what = f"paytable {paytable!r} ({wager} wager{whole})"
                known = ", ".join(with_pt) or "none"
            else:
                what = f"wager {wager!r}"
            print(
                f"tablectl analyze: no analysis for game {args.game!r} {what} "
                f"(wagers of {args.game} with one: {known})",
                file=sys.stderr,
            )
            return 2
        fn = analyzers[key]
        paytable = paytable or DEFAULT_PAYTABLE.get(key)
        progressive = key[1] == "progressive"
        given = [f for f in ("rate", "seed", "meter") if getattr(args, f, None) is not None]
        if given and not progressive:
            print(f"tablectl analyze: --{given[0]} applies to a progressive wager, not {key[1]!r}", file=sys.stderr)
            return 2
    try:
        res = fn(paytable, options)
    except ValueError as e:
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
