"""The shape of every message the uplink sends the table over the link socket (docs/linked.md).

The table service's :class:`controller.play.linked.LinkPort` checks each line with :func:`problem`
before anything of it reaches the table: a line that is not one of these messages, with each
field of its type (whole numbers are JSON integers, never booleans; text is bounded), is
counted, logged and dropped — never an error inside the table (which would be an internal-error
tilt of the whole table) and never a change of the linked wager.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

MAX_TEXT = 2000


def _text(v: Any) -> bool:
    return isinstance(v, str) and len(v) <= MAX_TEXT


def _opt_text(v: Any) -> bool:
    return v is None or _text(v)


def _whole(lo: int) -> Check:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v < 1 << 63


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _opt_number(v: Any) -> bool:
    return v is None or _number(v)


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _meters(v: Any) -> bool:
    return isinstance(v, dict) and len(v) <= 100 and all(_text(k) and _whole(0)(c) for k, c in v.items())


#: message type -> field -> (check, required)
SPEC: Mapping[str, Mapping[str, tuple[Check, bool]]] = {
    "hb": {"state": (_text, True), "meters": (_meters, False), "at": (_opt_number, False)},
    "meter": {
        "level": (_text, True),
        "cents": (_whole(0), True),
        "version": (_whole(0), False),
        "rate_version": (_whole(1), False),
        "at": (_opt_number, False),
        "rx": (_opt_number, False),
    },
    "won": {
        "level": (_text, True),
        "table": (_text, True),
        "asset": (_opt_text, False),
        "amount": (_whole(0), True),
        "order": (_whole(1), False),
    },
    "state": {"state": (_text, True), "reason": (_opt_text, False)},
    "link": {"up": (_bool, True), "reason": (_opt_text, False)},
    "hit": {
        "seq": (_whole(1), True),
        "order": (_whole(1), True),
        "amount": (_whole(0), True),
        "level": (_text, False),
        "proof": (_opt_text, False),  # the LAP's proof of the amount, kept with the payment
    },
    "reconciled": {"seq": (_whole(0), True)},
    "mismatch": {"problem": (_text, True)},
    "diverged": {"problem": (_text, True)},
    "agrees": {},
    "rejected": {"reason": (_text, True)},
    "refused": {"reason": (_opt_text, True)},
    "unverified": {"seq": (_whole(0), True), "problem": (_text, True)},
    "verified": {},
}


def problem(msg: Any) -> str | None:
    """What is wrong with a message from the uplink, or None when it is one the table knows."""
    if not isinstance(msg, dict):
        return "not a JSON object"
    t = msg.get("t")
    spec = SPEC.get(t) if isinstance(t, str) else None
    if spec is None:
        return f"unknown message type {str(t)[:40]!r}"
    for key, (check, required) in spec.items():
        if key not in msg:
            if required:
                return f"{t}: {key} is missing"
        elif not check(msg[key]):
            return f"{t}: {key} is not valid ({str(msg[key])[:40]!r})"
    return None
