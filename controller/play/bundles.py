"""What the table hands its components (controller/play/assembly.py): :class:`Shared`, the
roles most of them use, and :class:`Wiring`, what only one or two are given.  A component
takes the shared roles as one bundle and its own devices and partners beside it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from controller.core.reactor import Reactor
from controller.play.context import (
    Books,
    Deadline,
    Emit,
    Game,
    Journal,
    Link,
    Log,
    Machine,
    RaiseTilt,
    Rounds,
    ShowMeters,
)
from controller.play.devices import DeviceRegistry
from controller.play.floor import OutOfOrder
from controller.play.linked import Linkage


@dataclass(frozen=True, slots=True)
class Shared:
    """The roles most components use (controller/play/context.py)."""

    books: Books
    machine: Machine
    game: Game
    rounds: Rounds
    timer: Deadline
    raise_tilt: RaiseTilt
    emit: Emit
    show_meters: ShowMeters
    log: Log


@dataclass(frozen=True, slots=True)
class Wiring:
    """What only one or two components are given."""

    reactor: Reactor
    marks: OutOfOrder
    registry: DeviceRegistry
    link: Link
    lap: Linkage | None
    journal: Journal | None
    drop_round: Callable[[], None]
    publish: Callable[[], None]
