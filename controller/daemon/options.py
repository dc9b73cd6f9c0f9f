"""What the service is given beside its hardware configuration (controller/daemon/service.py),
one bundle for each concern: what a rig or a test stands in for the machine's own
(:class:`StandIns`), a linked table's uplink socket (:class:`Uplink`) and what the start-up's
trust rests on (:class:`Trust`).  The defaults are a real table's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.core.clock import Clock
from controller.daemon.sdnotify import Notifier
from drivers.link import Port
from drivers.rng import Rng
from drivers.serialdev import SerialSettings


@dataclass(frozen=True, slots=True)
class StandIns:
    """What a HIL rig, the simulator or a test gives in place of the machine's own (None: the real one)."""

    clock: Clock | None = None  # None: the monotonic clock
    pin_factory: object = None  # the HIL rig's mock chips; None: the configured factories
    open_port: Callable[[SerialSettings], Port] | None = None  # None: the configured serial ports
    rng: Rng | None = None  # None: drivers.rng.SecretsRng, made on first use
    #: the RNG's start-up self-test; None: the self-test of the RNG in use
    rng_test: Callable[[int], list[str]] | None = None
    notifier: Notifier | None = None  # None: systemd's (controller/daemon/sdnotify.py)


@dataclass(frozen=True, slots=True)
class Uplink:
    """A linked table's socket for its uplink (controller/play/linked.py ``LinkPort``; docs/linked.md)."""

    socket: str | Path | None = None  # None: a linked table stays closed
    peer: int | None = None  # the uplink's user id (SO_PEERCRED); None: the service's own


@dataclass(frozen=True, slots=True)
class Trust:
    """What the start-up's trust rests on."""

    ledger_key: bytes | None = None  # the ledger's HMAC key; None: read from the credential / key file
    require_digest: bool = False  # a missing software record is a problem (a real table: `tablectl run`)
