"""The floor view's event log in the pit's words: a recorded parameter change or link start/stop
(``param_changes``: what, key, the row before and after as JSON, the database user) as a sentence
("Level primary changed: increment rate 21% → 20%"), not the raw JSON of the rows.

The rows come from the LAP's own records (``guard_params`` and ``record_state`` write them, no table
can), but they are read as data all the same: anything unexpected is said plainly, never an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from controller.core.money import format_cents
from controller.reports.reportview import percent
from controller.reports.words import game_title

_LINK_STATE = {
    "running": "Link started: the tables take linked progressive wagers",
    "stopped": "Link stopped: the linked progressive wager is closed at every table",
    "inoperable": "Link INOPERABLE: the linked progressive wager is closed at every table",
}


def change_sentence(text: str) -> str:
    """One ``param_changes`` row (its JSON) as a sentence, with who recorded it."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError):
        return str(text)[:400]
    if not isinstance(doc, dict):
        return str(text)[:400]
    try:
        said = _said(doc)
    except (KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError):
        said = f"{doc.get('what')} {doc.get('key')} changed"
    by = doc.get("by")
    return (said + (f" (by {by})" if by else ""))[:400]


def _said(doc: Mapping[str, Any]) -> str:
    what, key, old, new = doc.get("what"), str(doc.get("key")), doc.get("old"), doc.get("new")
    if what == "link":
        return _link(key, old, new)
    if what == "levels":
        return _LEVEL_ROW.change(key, old, new)
    if what == "members":
        if isinstance(old, dict) and set(old) == {"closed"}:
            note = new.get("note") if isinstance(new, dict) else None
            return f"Table {key} reopened by the LAP's operator (it was closed: {old['closed']})" + (
                f"; note: {note}" if note else ""
            )
        return _MEMBER_ROW.change(key, old, new)
    return f"{what} {key} changed"


def _link(key: str, old: Any, new: Any) -> str:
    if key == "state":
        return _LINK_STATE.get(str(new), f"Link {new}") + (f" (it was {old})" if old else "")
    if key == "reason":
        return f"Why the link is inoperable: {new}" if new else "The link's inoperable reason was cleared"
    return f"Link {key}: {old} → {new}"


@dataclass(frozen=True)
class _RowWords:
    """How the pit speaks of one kind of parameter row: its noun, its fields in words, and the
    words for a row made and a row gone."""

    noun: str
    fields: Callable[[Mapping[str, Any]], dict[str, str]]
    made: str
    gone: str

    def change(self, key: str, old: Any, new: Any) -> str:
        if not isinstance(old, dict):
            return f"{self.noun} {key} {self.made}: " + ", ".join(f"{k} {v}" for k, v in self.fields(new).items())
        if not isinstance(new, dict):
            return f"{self.noun} {key} {self.gone}"
        a, b = self.fields(old), self.fields(new)
        changed = [f"{k} {a.get(k, '(none)')} → {b.get(k, '(none)')}" for k in b if a.get(k) != b.get(k)]
        return f"{self.noun} {key} changed: " + ("; ".join(changed) or "nothing a person sees")


def _rate(r: Mapping[str, Any], num: str, den: str) -> str:
    return percent(Fraction(int(r[num]), int(r[den])))


def _money_or_none(v: Any) -> str:
    return "none" if v is None else format_cents(int(v))


#: a level's parameters in words: (the row's key, the word, how its value reads)
_LEVEL_WORDS: list[tuple[str, str, Callable[[Mapping[str, Any]], str]]] = [
    ("seed_cents", "seed", lambda r: format_cents(int(r["seed_cents"]))),
    ("reset_cents", "reset", lambda r: format_cents(int(r["reset_cents"]))),
    ("rate_num", "increment rate", lambda r: _rate(r, "rate_num", "rate_den")),
    ("reserve_num", "reserve rate", lambda r: _rate(r, "reserve_num", "reserve_den")),
    ("limit_cents", "limit", lambda r: _money_or_none(r["limit_cents"])),
    ("at_limit", "above the limit", lambda r: "to the reserve" if r["at_limit"] == "reserve" else "held as overflow"),
    ("max_wager_cents", "largest wager", lambda r: format_cents(int(r["max_wager_cents"]))),
    ("meter_pays", "meter pays", lambda r: ", ".join(percent(Fraction(str(x))) for x in r["meter_pays"] or [])),
]


def _level_fields(r: Mapping[str, Any]) -> dict[str, str]:
    """A level's parameters in words (only those the row has)."""
    return {word: said(r) for key, word, said in _LEVEL_WORDS if key in r}


def _member_fields(r: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    if "asset" in r:
        out["asset"] = str(r["asset"])
    if "game" in r:
        out["game"] = game_title(str(r["game"]))
    return out


_LEVEL_ROW = _RowWords("Level", _level_fields, "created", "removed")
_MEMBER_ROW = _RowWords("Table", _member_fields, "joined the link", "left the link")
