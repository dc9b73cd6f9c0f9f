"""Paytables as data: every paytable printed in the regulations lives in
``config/paytables/<chapter>.toml`` and is looked up here *by name* (``"DJWT-05"``,
``"Ace High 3"``, ``"Fortune Asia Insurance B"``).  Logic never hard-codes a pay.

Pure: parses documents handed to it (``parse_paytables``) and looks names up in the
paytables passed in (``use_paytables``: the tables, or what loads them); reading the
files is done outside the rules engine (``controller/settings/paytablefiles.py``).  No I/O, no
hardware imports.

File format (one file per chapter)::

    [paytables."Six-Card Fortune Bonus"]
    game = "six-card-fortune"          # game id (declared in controller/gamedefs/)
    wager = "fortune"                  # wager id within the game
    section = "§ 670a.12(b)(1)"        # where the regulation prints it
    pays = [                           # ordered, best hand first
      ["five-aces", "1000 to 1"],
      ["royal-flush", "250 to 1"],
    ]
    # optional:
    per_wager = "$5"                   # fixed ($) amounts are for a wager of this size
    notes = "free text"
    [paytables."Six-Card Fortune Bonus".options]   # game-specific flags, free-form
    reserve_rate = "2%"

Payout grammar (as the regulations print it):

* ``"N to 1"`` / ``"N to M"`` — odds: the wager wins N/M times itself and is returned.
* ``"N for 1"`` — the total handed back is N times the wager, the wager included
  (net win N-1 times the wager).
* ``"P% of meter"`` — a percentage of the progressive meter when the seat is paid
  (§ 670a.12(d)(3)).
* ``"$N"`` / ``"$N.NN"`` — a fixed amount (envy bonuses, progressive fixed pays).
* ``"push"`` — the wager is returned; ``"lose"`` — the wager is collected.

Every error names the file, the paytable and the row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from controller.gamedefs import game_ids

PayKind = Literal["odds", "for", "meter", "fixed", "push", "lose"]


class PaytableError(ValueError):
    """A paytable file or entry that is malformed; the message names where."""


@dataclass(frozen=True)
class Payout:
    kind: PayKind
    #: odds: net win per unit wagered; for: total returned per unit; meter: fraction of meter
    ratio: Fraction = Fraction(0)
    #: fixed amount in cents
    cents: int = 0
    text: str = ""

    def net_win(self, wager_cents: int, meter_cents: int | None = None, per_wager_cents: int | None = None) -> Fraction:
        """What the player wins on top of the returned wager, exact (in cents).

        For ``for`` payouts the wager is *not* returned separately, so the net
        win is ``(N-1) * wager``.  Rounding to pay in chips is the settlement's
        job and must be explicit there.
        """
        if self.kind == "odds":
            return self.ratio * wager_cents
        if self.kind == "for":
            return self.ratio * wager_cents - wager_cents
        if self.kind == "meter":
            if meter_cents is None:
                raise ValueError(f"{self.text!r} needs the meter amount")
            return self.ratio * meter_cents
        if self.kind == "fixed":
            if per_wager_cents:
                return Fraction(self.cents * wager_cents, per_wager_cents)
            return Fraction(self.cents)
        if self.kind == "push":
            return Fraction(0)
        return Fraction(-wager_cents)  # lose

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.text


_ODDS = re.compile(r"^\s*([\d,]+(?:\.\d+)?)\s+(to|for)\s+([\d,]+)\s*$", re.I)
_METER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s+of\s+(?:the\s+)?meter\s*$", re.I)
_FIXED = re.compile(r"^\s*\$\s*([\d,]+)(?:\.(\d{2}))?\s*$")


def parse_money(text: str) -> int:
    """``"$1,000"`` / ``"$2.50"`` -> cents (int). Raises ValueError naming the text."""
    m = _FIXED.match(text)
    if not m:
        raise ValueError(f"{text!r} is not an amount like '$5' or '$2.50'")
    return int(m.group(1).replace(",", "")) * 100 + int(m.group(2) or 0)


def parse_percent(text: str) -> Fraction:
    """``"21%"`` -> Fraction(21, 100), exact."""
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$", str(text))
    if not m:
        raise ValueError(f"{text!r} is not a percentage like '21%'")
    return Fraction(m.group(1)) / 100


def parse_payout(text: str) -> Payout:
    t = str(text)
    if t.strip().lower() == "push":
        return Payout("push", text=t)
    if t.strip().lower() == "lose":
        return Payout("lose", text=t)
    m = _ODDS.match(t)
    if m:
        a = Fraction(m.group(1).replace(",", ""))
        b = Fraction(m.group(3).replace(",", ""))
        if b == 0:
            raise ValueError(f"{t!r}: odds against zero")
        kind: PayKind = "odds" if m.group(2).lower() == "to" else "for"
        return Payout(kind, ratio=a / b, text=t)
    m = _METER.match(t)
    if m:
        pct = Fraction(m.group(1)) / 100
        if not 0 < pct <= 1:
            raise ValueError(f"{t!r}: a meter percentage must be in (0, 100]")
        return Payout("meter", ratio=pct, text=t)
    try:
        return Payout("fixed", cents=parse_money(t), text=t)
    except ValueError:
        pass
    raise ValueError(f"{t!r} is not a payout ('N to 1', 'N for 1', 'P% of meter', '$N', 'push', 'lose')")


@dataclass(frozen=True)
class Paytable:
    name: str
    game: str
    wager: str
    section: str
    pays: tuple[tuple[str, Payout], ...]
    per_wager_cents: int | None = None
    notes: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {h: p for h, p in self.pays})

    @property
    def hands(self) -> tuple[str, ...]:
        return tuple(h for h, _ in self.pays)

    def _by_hand(self) -> dict[str, Payout]:
        index: dict[str, Payout] = self.__dict__["_index"]  # set once by __post_init__
        return index

    def payout(self, hand: str) -> Payout | None:
        """The payout for ``hand``, or None when the hand does not pay (wager loses)."""
        return self._by_hand().get(hand)

    def __contains__(self, hand: str) -> bool:
        return hand in self._by_hand()


_ALLOWED = {"game", "wager", "section", "pays", "per_wager", "notes", "options"}
_REQUIRED = {"game", "wager", "section", "pays"}


def parse_paytables(doc: Mapping[str, Any], source: str) -> dict[str, Paytable]:
    if set(doc) - {"paytables"}:
        extra = ", ".join(sorted(set(doc) - {"paytables"}))
        raise PaytableError(f'{source}: unknown top-level key(s) {extra} (only [paytables."NAME"] tables)')
    out: dict[str, Paytable] = {}
    for name, body in doc.get("paytables", {}).items():
        where = f"{source}: paytable {name!r}"
        _check_body(where, body)
        rows = _rows(where, body["pays"])
        per_wager = None
        if "per_wager" in body:
            try:
                per_wager = parse_money(str(body["per_wager"]))
            except ValueError as e:
                raise PaytableError(f"{where}: per_wager: {e}") from None
        opts = body.get("options", {})
        if not isinstance(opts, Mapping):
            raise PaytableError(f"{where}: options must be a table")
        if name in out:
            raise PaytableError(f"{where}: defined twice")
        out[name] = Paytable(
            name=name,
            game=body["game"],
            wager=body["wager"],
            section=str(body["section"]),
            pays=tuple(rows),
            per_wager_cents=per_wager,
            notes=str(body.get("notes", "")),
            options=dict(opts),
            source=source,
        )
    return out


def _check_body(where: str, body: Any) -> None:
    """A paytable's keys, game and section."""
    if not isinstance(body, Mapping):
        raise PaytableError(f"{where}: must be a table")
    unknown = set(body) - _ALLOWED
    if unknown:
        raise PaytableError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    missing = _REQUIRED - set(body)
    if missing:
        raise PaytableError(f"{where}: missing key(s) {', '.join(sorted(missing))}")
    games = game_ids()
    if body["game"] not in games:
        raise PaytableError(f"{where}: game {body['game']!r} is not one of {', '.join(games)}")
    if not str(body["section"]).startswith("§"):
        raise PaytableError(f"{where}: section must cite the regulation, e.g. '§ 670a.12(b)(1)'")


def _rows(where: str, pays: Any) -> list[tuple[str, Payout]]:
    """The ``pays`` list: [hand, payout] pairs, each hand once."""
    if not isinstance(pays, list) or not pays:
        raise PaytableError(f"{where}: pays must be a non-empty list of [hand, payout] pairs")
    rows: list[tuple[str, Payout]] = []
    seen: set[str] = set()
    for i, row in enumerate(pays):
        hand, text = _row(where, i, row)
        if hand in seen:
            raise PaytableError(f"{where}: hand {hand!r} listed twice")
        seen.add(hand)
        rows.append((hand, _payout(where, hand, text)))
    return rows


def _row(where: str, i: int, row: Any) -> tuple[str, str]:
    """Row ``i`` of ``pays``: ["hand", "payout"]."""
    if not (isinstance(row, list) and len(row) == 2 and all(isinstance(x, str) for x in row)):
        raise PaytableError(f'{where}: row {i + 1} must be ["hand", "payout"], got {row!r}')
    return row[0], row[1]


def _payout(where: str, hand: str, text: str) -> Payout:
    try:
        return parse_payout(text)
    except ValueError as e:
        raise PaytableError(f"{where}: row {hand!r}: {e}") from None


Source = Callable[[], Mapping[str, Paytable]]
_SOURCE: Source | None = None
_TABLES: Mapping[str, Paytable] | None = None


def use_paytables(tables: Mapping[str, Paytable] | Source) -> None:
    """The paytables every lookup by name reads: the tables, or what loads them (called once,
    at the first lookup).  The rules engine reads no file: whoever starts it passes them in
    (``controller/__init__.py`` passes the loader of the shipped files)."""
    global _SOURCE, _TABLES
    if callable(tables):
        _SOURCE, _TABLES = tables, None
    else:
        _SOURCE, _TABLES = None, dict(tables)


def all_paytables() -> Mapping[str, Paytable]:
    """Every paytable passed in (``use_paytables``)."""
    global _TABLES
    if _TABLES is None:
        if _SOURCE is None:
            raise PaytableError("no paytables were passed in (use_paytables)")
        _TABLES = _SOURCE()
    return _TABLES


def get_paytable(name: str, tables: Mapping[str, Paytable] | None = None) -> Paytable:
    """The paytable named ``name`` in ``tables`` (default: those passed in)."""
    tables = all_paytables() if tables is None else tables
    try:
        return tables[name]
    except KeyError:
        raise PaytableError(f"no paytable named {name!r}; known: {', '.join(sorted(tables))}") from None


# --------------------------------------------------------------------------- short names


def name_words(text: str) -> tuple[str, ...]:
    """The words of a paytable name as a short form is matched against them: case-folded,
    split at spaces, hyphens and slashes, a number without its leading zeros
    (``"DJWBB-02"`` -> ``("djwbb", "2")``)."""
    words = [w for w in re.split(r"[\s\-/]+", text.strip().casefold()) if w]
    return tuple(str(int(w)) if w.isdigit() else w for w in words)


def is_short_form(text: str, name: str) -> bool:
    """Whether ``text`` is the name or a short form of it: the name's last word or words
    (``"2"``, ``"02"``, ``"DJWBB-2"`` for ``"DJWBB-02"``; ``"Fortune 3"`` for
    ``"Face Up Fortune 3"``)."""
    want, words = name_words(text), name_words(name)
    return bool(want) and words[len(words) - len(want) :] == want


def resolve_paytable(game: str, wager: str | None, text: str) -> Paytable:
    """The paytable ``text`` names within ``game`` (and ``wager`` if given): its full name,
    or a short form (:func:`is_short_form`) that exactly one paytable of the game and wager
    has.  A :class:`PaytableError` otherwise: an ambiguous short form lists the paytables it
    fits; an unknown one says which wager's paytable it is, or the closest names."""
    tables = {n: p for n, p in all_paytables().items() if p.game == game}
    if not tables:
        raise PaytableError(f"no paytables for game {game!r}")
    exact = _by_full_name(tables, text, wager)
    if exact is not None:
        return exact
    pool = {n: p for n, p in tables.items() if wager is None or p.wager == wager}
    hits = sorted(n for n in pool if is_short_form(text, n))
    if len(hits) == 1:
        return pool[hits[0]]
    scope = f"{game} {wager}" if wager else game
    if hits:
        raise PaytableError(f"paytable {text!r} is ambiguous within {scope}: {', '.join(hits)} (give more of the name)")
    raise PaytableError(_unknown(text, scope, pool, tables))


def _by_full_name(tables: Mapping[str, Paytable], text: str, wager: str | None) -> Paytable | None:
    """The paytable whose full name ``text`` is (any case), or None; one of another wager is an error."""
    want = text.strip().casefold()
    exact = next((p for n, p in tables.items() if n.casefold() == want), None)
    if exact is not None and wager is not None and exact.wager != wager:
        raise PaytableError(f"{exact.name!r} is a paytable of the {exact.wager} wager, not of {wager!r}")
    return exact


def _unknown(text: str, scope: str, pool: Mapping[str, Paytable], tables: Mapping[str, Paytable]) -> str:
    """Why ``text`` names no paytable of ``pool``: another wager's paytable, or the closest names."""

    listed = f"(paytables: {', '.join(sorted(pool)) or 'none'})"
    other = sorted(n for n in tables if n not in pool and is_short_form(text, n))
    if other:
        which = ", ".join(f"{n} ({tables[n].wager})" for n in other)
        return f"no paytable {text!r} within {scope}; other wagers' paytables: {which} {listed}"
    return f"no paytable {text!r} within {scope}{_did_you_mean(text, pool)} {listed}"


def _did_you_mean(text: str, pool: Mapping[str, Paytable]) -> str:
    """``"; did you mean 'A', 'B' or 'C'?"`` with the closest names of ``pool`` (any case), or ""."""
    import difflib

    folded = {n.casefold(): n for n in pool}
    close = difflib.get_close_matches(text.strip().casefold(), list(folded), n=3, cutoff=0.6)
    if not close:
        return ""
    names = [repr(folded[c]) for c in close]
    return f"; did you mean {' or '.join([', '.join(names[:-1]), names[-1]] if len(names) > 1 else names)}?"
