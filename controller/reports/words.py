"""Names as the people at a table read them: a hand (``five-aces`` -> ``Five Aces``), a game as
its chapter of 58 Pa. Code names it (``six-card-fortune`` -> ``Six-Card Fortune Pai Gow Poker``,
the ``[game] name`` of its table profile in ``config/tables/``), a time zone with its offset.

Shared by the reports, the payout slip, the floor view and the common progressive sign, so that a
hand or a game reads the same on paper and on a screen.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime, tzinfo
from pathlib import Path

#: a game's id or a profile's name (``config/tables/<name>.toml``): anything else is never looked up as a file
_PROFILE = re.compile(r"^[a-z0-9][a-z0-9-]{0,40}$")
#: words kept lower-case inside a hand's name ("Four of a Kind")
_SMALL = frozenset({"of", "a", "an", "the", "and", "or", "to", "in", "on", "with"})


def hand_name(hand: object) -> str:
    """``five-aces`` / ``four_of_a_kind`` -> ``Five Aces`` / ``Four of a Kind``; other text is
    returned as it is (a keyed hand that names no code, an empty one)."""
    text = str(hand or "").strip()
    if " " in text:
        return text
    return " ".join(_word(w, i) for i, w in enumerate(w for w in text.replace("_", "-").split("-") if w))


def _word(w: str, i: int) -> str:
    return w if i and w.lower() in _SMALL else w[:1].upper() + w[1:]


@functools.lru_cache(maxsize=64)
def game_title(game: str) -> str:
    """A game's name as its chapter names it: the ``[game] name`` of the game's own table profile
    (``config/tables/<game id>.toml``); a profile named instead of a game (the progressive-system
    profile) resolves to its game.  An unknown game is shown as written."""
    from controller.settings.config import ConfigError, load_profile

    if not _PROFILE.match(game):
        return game
    try:
        prof = load_profile(game)
        if prof.game != game:
            prof = load_profile(prof.game)
    except (OSError, ConfigError, ValueError):
        return game
    return prof.name


@functools.lru_cache(maxsize=64)
def progressive_of(game: str) -> tuple[str, int] | None:
    """(the progressive paytable's name, the progressive wager in cents) of a game's own table
    profile, or None (no such game, no progressive)."""
    from controller.settings.config import ConfigError, load_profile

    if not _PROFILE.match(game):
        return None
    try:
        prof = load_profile(game)
    except (OSError, ConfigError, ValueError):
        return None
    if prof.progressive is None:
        return None
    return prof.progressive.paytable, prof.progressive.wager_cents


def zone_name(tz: tzinfo | None = None, at: datetime | None = None) -> str:
    """The time zone the times are in, as a clerk checks it: ``America/New_York (EDT, UTC-04:00)``
    at ``at`` (default now: the offset of a day in July is July's); the machine's own zone when
    none is given (its IANA name from ``/etc/localtime`` when it links to one)."""
    when = at or datetime.now().astimezone()
    now = when.astimezone(tz) if tz is not None else when.astimezone()
    key = getattr(tz, "key", None) if tz is not None else _local_key()
    utc = _utc_offset(now)
    abbr = now.tzname() or ""
    inner = ", ".join(x for x in (abbr if abbr not in (key, utc) else "", utc) if x)
    return f"{key} ({inner})" if key else inner


def _utc_offset(t: datetime) -> str:
    offset = t.strftime("%z")
    return f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"


def _local_key() -> str | None:
    """The IANA name of the machine's zone (``/etc/localtime`` -> ``.../zoneinfo/Europe/Berlin``)."""
    import os

    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and "/" in tz and not tz.startswith("/"):
        return tz
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        return None
    _, sep, key = target.partition("zoneinfo/")
    return key if sep and key else None
