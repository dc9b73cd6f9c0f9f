""" "Did you mean" for a mistyped name (a game, a wager, a paytable, a console command): the
closest of the names that exist, by difflib's ratio; nothing when none is close."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` names of ``choices`` close to ``word`` (case ignored), closest first."""
    names = list(dict.fromkeys(choices))
    by_fold = {c.casefold(): c for c in names}
    hits = difflib.get_close_matches(word.casefold(), list(by_fold), n=n, cutoff=0.6)
    # a prefix ("six" for "six-card-fortune") is a good guess too
    pre = [c for c in names if c.casefold().startswith(word.casefold()) and word]
    out = [by_fold[h] for h in hits] + [p for p in pre if p.casefold() not in hits]
    return out[:n]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"``, ``" (did you mean 'x' or 'y'?)"``, or ``""``."""
    hits = closest(word, choices)
    if not hits:
        return ""
    quoted = [repr(h) for h in hits]
    text = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" (did you mean {text}?)"
