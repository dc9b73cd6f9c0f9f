"""``tablectl eval --rules bug|dj-wild``: rank poker hands read from stdin, one JSON object per line.

Input: one hand per line, 5 to 7 cards separated by spaces (``As Kd Qh Jc Ts 9d Jk``).
Output, per hand: ``{"rank": "<category>", "best": "<five cards>", "natural": true|false,
"score": <int>, "cards": "<the hand>"}`` — the best five-card hand under § 670a.6
(``bug``: joker is an ace or completes a straight/flush) or § 687a.6 (``dj-wild``:
deuces and joker wild; ``natural`` false when a wild card was needed).  A bad line
yields ``{"error": "...", "line": N, "token": ...}`` and processing continues;
blank lines are skipped.  Exit status 0 when every hand was ranked; 1 when a line was bad (said
on stderr, with how many, after every line was answered) or stdin itself cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

NAME = "eval"
HELP = "rank poker hands from stdin (one per line) as JSON lines: best five-card hand, category"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rules",
        choices=("bug", "dj-wild", "natural"),
        default="bug",
        help="bug: joker as a bug (§ 670a.6, default); dj-wild: deuces and joker wild "
        "(§ 687a.6); natural: plain 52-card poker",
    )


def evaluate_line(line: str, rules: str) -> dict[str, Any]:
    """The JSON-ready result (or error) for one input line."""
    from controller.rules.cards import CardError, cards_str, parse_cards
    from controller.rules.poker import best_five

    try:
        cards = parse_cards(line, count=(5, 6, 7), allow_joker=rules != "natural")
    except CardError as e:
        out: dict[str, Any] = {"error": str(e)}
        if e.token is not None:
            out["token"] = e.token
        return out
    hr = best_five(cards, rules)
    return {
        "rank": hr.category.text,
        "best": cards_str(hr.best),
        "natural": hr.natural,
        "score": hr.score,
        "cards": cards_str(cards),
    }


def _answer(raw: bytes | str, lineno: int, rules: str) -> dict[str, Any] | None:
    """The answer to one line of input (an error names the line); None for a blank line."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return {"error": "line is not valid UTF-8 text", "line": lineno}
    if not raw.strip():
        return None
    res = evaluate_line(raw, rules)
    if "error" in res:
        res["line"] = lineno
    return res


def run(args: argparse.Namespace) -> int:
    out = sys.stdout
    try:
        stream = sys.stdin.buffer
    except AttributeError:  # a text-only stdin (tests, embedding)
        stream = None
    lineno = bad = 0
    try:
        for raw in stream if stream is not None else sys.stdin:
            lineno += 1
            res = _answer(raw, lineno, args.rules)
            if res is not None:
                bad += "error" in res
                out.write(json.dumps(res) + "\n")
                out.flush()
    except OSError as e:
        print(f"tablectl eval: cannot read stdin: {e}", file=sys.stderr)
        return 1
    if bad:
        print(
            f"tablectl eval: {bad} of {lineno} lines could not be ranked (their error lines say why)", file=sys.stderr
        )
        return 1
    return 0
