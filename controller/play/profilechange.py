"""A changed table profile between rounds (SPEC § 5; ``Table.apply_profile``): what may
change without a restart, what changed, and the meter's adjustment it records."""

from __future__ import annotations

from typing import Any

from controller.books.ledger import Record
from controller.core.records import Kind
from controller.play.context import Books
from controller.play.progressive import LEVEL
from controller.settings.config import ProgressiveConfig, TableProfile

#: the profile's progressive settings whose change between rounds is recorded (``meter.adjust`` for some)
PROGRESSIVE_SETTINGS = (
    "paytable",
    "wager_cents",
    "seed_cents",
    "increment_rate",
    "envy_paytable",
    "envy_min_wager_cents",
    "reserve_rate",
)


def profile_change(
    old: TableProfile, new: TableProfile, books: Books
) -> tuple[dict[str, tuple[Any, Any]], list[Record]]:
    """What changed (old and new) and the records to write; a ValueError names a change that
    needs a restart (other pins or another deal: game, seats, positions, sensed spots)."""
    for attr in ("game", "seats", "positions", "sensed"):
        if getattr(new, attr) != getattr(old, attr):
            raise ValueError(f"a change of {attr} ({getattr(old, attr)} -> {getattr(new, attr)}) needs a restart")
    if (old.progressive is None) != (new.progressive is None):
        raise ValueError("adding or removing the progressive needs a restart")
    changed: dict[str, tuple[Any, Any]] = {}
    for attr in ("name", "start_method", "options"):
        if getattr(old, attr) != getattr(new, attr):
            changed[attr] = (getattr(old, attr), getattr(new, attr))
    return changed, _progressive_changes(old.progressive, new.progressive, changed, books)


def _progressive_changes(
    o: ProgressiveConfig | None, n: ProgressiveConfig | None, changed: dict[str, tuple[Any, Any]], books: Books
) -> list[Record]:
    """The progressive settings that changed (noted in ``changed``), and the meter's
    adjustment if its seed or rates did (a new rate applies to later increments, a new
    seed to later reseeds)."""
    if o is None or n is None or o == n:
        return []
    for attr in PROGRESSIVE_SETTINGS:
        if getattr(o, attr) != getattr(n, attr):
            changed[f"progressive.{attr}"] = (getattr(o, attr), getattr(n, attr))
    if (o.seed_cents, o.increment_rate, o.reserve_rate) == (n.seed_cents, n.increment_rate, n.reserve_rate):
        return []
    rate, reserve = str(n.increment_rate), str(n.reserve_rate)
    return [books.rec(Kind.METER_ADJUST, level=LEVEL, seed=n.seed_cents, rate=rate, reserve_rate=reserve)]
