"""What stands, as the ledger says: tilts raised and not cleared, ledger problems a technician
acknowledged, devices out of order.  Read from the ledger's events only, by the table's
start-up recovery (controller/play/recovery.py), the audit and ``tablectl status``; it knows no
component of the table."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from controller.books.ledger import StoredEvent
from controller.core.records import Kind


class EventSource(Protocol):
    """Reading the ledger (controller/books/ledger.py ``Ledger.events``)."""

    def events(
        self,
        since: int = 0,
        kinds: Iterable[str] | None = None,
        round_no: int | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> Iterator[StoredEvent]: ...


def active_tilts(events: EventSource) -> dict[str, str]:
    """Tilts raised and not cleared survive restarts (SPEC § 5); a clear clears them all, so
    only the tilts raised after the last clear are read (not every tilt of a year)."""
    last_clear = next(events.events(kinds=(Kind.TILT_CLEARED,), newest_first=True, limit=1), None)
    active: dict[str, str] = {}
    for ev in events.events(since=last_clear.seq if last_clear else 0, kinds=(Kind.TILT_RAISED,)):
        active[ev.data["source"]] = ev.data["reason"]
    return active


def acknowledged_problems(events: EventSource) -> set[str]:
    """Ledger problems a technician has already acknowledged (tilt cleared): they do not re-tilt."""
    ack: set[str] = set()
    for ev in events.events(kinds=(Kind.LEDGER_ACKNOWLEDGED,)):
        ack.update(ev.data.get("problems", []))
    return ack


def out_of_order(events: EventSource) -> dict[str, str]:
    """Devices marked out of order and not back in service (§ 670a.13(n))."""
    ooo: dict[str, str] = {}
    for ev in events.events(kinds=(Kind.DEVICE_OUT_OF_ORDER, Kind.DEVICE_IN_SERVICE)):
        if ev.kind == Kind.DEVICE_OUT_OF_ORDER:
            ooo[ev.data["device"]] = ev.data["alternative"]
        else:
            ooo.pop(ev.data["device"], None)
    return ooo
