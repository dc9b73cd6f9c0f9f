"""What the console may see and do of the table and of the service, as Protocols.

A console command reaches the table only through :class:`ConsoleTable` (its state, its tilts,
its records, the floor's actions and :class:`DiagnosticsPort`, the devices a technician tests)
and the service only through :class:`ConsoleService`; the table and the service satisfy them
structurally, and a test fake that lacks a member (or misspells one) is a type error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from controller.books.ledger import Ledger, Record
    from controller.books.ledgerwriter import LedgerWriter
    from controller.books.meters import Meter
    from controller.boot.selfcheck import SelfCheckReport
    from controller.core.log import LogContext
    from controller.core.reactor import Event
    from controller.core.records import Kind
    from controller.games.round import Round
    from controller.play.context import Then
    from controller.settings.config import TableProfile
    from controller.settings.hardware import HardwareConfig
    from drivers.gpio import Inputs, Lights
    from drivers.rng import Rng
    from drivers.serialdev import SerialDevice
    from drivers.shaker import Shaker
    from drivers.shoe import Shoe

T = TypeVar("T")


class DiagnosticsPort(Protocol):
    """The devices a technician's ``diag`` drives (the table's ``Devices``)."""

    @property
    def lights(self) -> Lights: ...
    @property
    def inputs(self) -> Inputs: ...
    @property
    def shoe(self) -> Shoe | None: ...
    @property
    def shaker(self) -> Shaker | None: ...


class ConsoleTable(Protocol):
    """The table as a console command sees it, on the reactor thread (controller/play/table.py)."""

    @property
    def state(self) -> str: ...  # a TableState's value, or a game's own phase
    @property
    def round_no(self) -> int: ...
    @property
    def round(self) -> Round | None: ...
    @property
    def tilts(self) -> Mapping[str, str]: ...
    @property
    def out_of_order(self) -> Mapping[str, str]: ...
    @property
    def meters(self) -> Mapping[str, Meter]: ...
    @property
    def dev(self) -> DiagnosticsPort: ...

    # ---- records
    def rec(self, kind: Kind, **data: object) -> Record: ...
    def commit(self, records: list[Record], then: Then | None = None) -> None: ...

    # ---- the floor's and the technician's actions (each refuses with ValueError, changing nothing)
    def raise_tilt(self, source: str, reason: str, *, durable: bool = True) -> None: ...
    def clear_tilt(self, reason: str, by: str) -> bool: ...
    def validate_hit(self, by: str) -> bool: ...
    def mark_out_of_order(self, device: str, by: str, alternative: str, reason: str = "") -> None: ...
    def mark_in_service(self, device: str, by: str) -> None: ...
    def floor_reshuffle(self, by: str) -> None: ...
    def new_dealer(self, by: str) -> str | None: ...
    def same_player(self, a: int, b: int, by: str) -> str: ...
    def apply_profile(self, profile: TableProfile) -> Mapping[str, tuple[object, object]]: ...


class ConsoleService(Protocol):
    """The service as the console sees it (controller/daemon/service.py)."""

    #: the configuration in effect (``config show``; ``config apply`` sets it)
    config_values: dict[str, str]
    #: reactor-thread observers of device events (``diag`` waits for a device's reply)
    taps: list[Callable[[Event], None]]

    @property
    def table(self) -> ConsoleTable | None: ...
    @property
    def hw(self) -> HardwareConfig: ...
    @property
    def logctx(self) -> LogContext: ...
    @property
    def ledger(self) -> Ledger | None: ...
    @property
    def writer(self) -> LedgerWriter | None: ...
    @property
    def serial_devices(self) -> Sequence[SerialDevice]: ...
    @property
    def input_names(self) -> Sequence[str]: ...
    @property
    def light_names(self) -> Sequence[str]: ...
    @property
    def rng(self) -> Rng: ...
    @property
    def self_check(self) -> SelfCheckReport | None: ...
    @property
    def started_monotonic(self) -> float | None: ...

    def call(self, fn: Callable[..., T], *args: object, timeout: float = 10.0) -> T: ...
