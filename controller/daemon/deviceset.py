"""The service's device set (controller/daemon/service.py): the pins (inputs and lights), the serial
devices, the starting-position RNG and a linked table's link port — made from the
configuration once the self-checks are through, started after the ledger writer, stopped after
the reactor (docs/architecture.md "The service in parts").

Nothing here touches a pin or a port before :meth:`DeviceSet.claim`; a serial port that does
not open at :meth:`DeviceSet.start` is that device's latched tilt (posted like a link that gave
up), not a failed start-up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from controller.core.clock import Clock
from controller.core.log import LogContext
from controller.daemon.options import StandIns, Uplink
from controller.play.table import Devices
from controller.settings.hardware import GpioConfig
from drivers.base import Post
from drivers.devicedefs import devices, resolve
from drivers.gpio import GpioInputs, GpioLights, open_gpio
from drivers.keypad import SerialKeypad
from drivers.link import Port
from drivers.rng import Rng, SelfTestingRng
from drivers.serialdev import SerialDevice, SerialSettings
from drivers.shaker import SerialShaker
from drivers.shoe import SerialShoe
from drivers.sign import SerialSign

if TYPE_CHECKING:
    from controller.play.linked import LinkPort


def serial_class(name: str) -> type[SerialDevice]:
    """The driver a serial device's declaration names (drivers/devicedefs/)."""
    cls = resolve(devices()[name].driver)
    if not (isinstance(cls, type) and issubclass(cls, SerialDevice)):
        raise TypeError(f"the {name}'s driver {devices()[name].driver} is not a SerialDevice")
    return cls


class DeviceSet:
    """The table's hardware as the service claims, starts and releases it."""

    def __init__(
        self,
        gpio: GpioConfig,
        serial: Mapping[str, SerialSettings],
        clock: Clock,
        logctx: LogContext,
        stand_ins: StandIns | None = None,
        uplink: Uplink | None = None,
    ):
        """``stand_ins``: its pin factory, serial ports and RNG (the rest is the service's); None: a real table's."""
        stand_ins, uplink = stand_ins or StandIns(), uplink or Uplink()
        self._gpio = gpio  # the hardware file's [gpio]
        self._serial = serial  # its [serial.<device>] sections
        self._clock = clock
        self._logctx = logctx
        self._pin_factory = stand_ins.pin_factory  # the HIL rig's mock chips; None: the configured factories
        self._open_port = stand_ins.open_port
        self._rng = stand_ins.rng
        #: a linked table's socket for its uplink (controller/play/linked.py LinkPort; docs/linked.md)
        self._link_socket = uplink.socket
        self._link_peer = uplink.peer  # the uplink's user id (SO_PEERCRED); None: the service's own
        self.link_port: LinkPort | None = None
        self.serial: list[SerialDevice] = []
        self._pins: list[GpioInputs | GpioLights] = []  # released if the start-up halts
        self.input_names: list[str] = []
        self.light_names: list[str] = []
        self._unopened: list[tuple[SerialDevice, BaseException]] = []

    @property
    def rng(self) -> Rng:
        """The starting-position RNG (default drivers.rng.SecretsRng, made on first use)."""
        if self._rng is None:
            from drivers.rng import SecretsRng

            self._rng = SecretsRng()
        return self._rng

    def rng_test(self) -> Callable[[int], list[str]] | None:
        """The self-test of the RNG in use, if it has one."""
        rng = self.rng
        if not isinstance(rng, SelfTestingRng):
            return None
        return lambda samples: list(rng.self_test(samples=samples))

    # ------------------------------------------------------------------ claimed
    def claim(self, post: Post) -> Devices:
        """Claim the pins and make the serial drivers from the drivers' own settings
        (controller/settings/hardware.py reads them from the TOML); nothing is opened yet."""
        settings = self._gpio.driver_settings()
        self.input_names, self.light_names = list(settings.inputs), list(settings.lights)
        gin, gout = open_gpio(settings, post, self._clock, self._logctx, factory=self._pin_factory)
        self._pins = [gin, gout]
        made: dict[str, SerialDevice] = {}
        for name, sc in self._serial.items():
            opener: Callable[[], Port] | None = None
            if self._open_port is not None:
                opener = partial(self._open_port, sc)
            dev = serial_class(name)(sc, post, self._logctx, open_port=opener)
            made[name] = dev
            self.serial.append(dev)
        shoe, shaker, sign, keypad = (made.pop(n, None) for n in ("shoe", "shaker", "sign", "keypad"))
        if not isinstance(shoe, SerialShoe) or not isinstance(sign, SerialSign):
            # the configuration parser requires both (TableProfile.required_devices)
            raise ValueError("the table needs its shoe ([serial.shoe]) and its sign ([serial.sign])")
        return Devices(
            shoe=shoe,
            shaker=shaker if isinstance(shaker, SerialShaker) else None,
            sign=sign,
            lights=gout,
            inputs=gin,
            rng=self.rng,
            keypad=keypad if isinstance(keypad, SerialKeypad) else None,
            others=made,
        )

    def open_link(self, post: Post, linked: bool) -> Callable[[dict[str, object]], None] | None:
        """A linked table's link port (not started: :meth:`start_link`); its ``send``, or None."""
        if not linked:
            return None
        if self._link_socket is None:
            self._logctx.logger("service").warning(
                "link.no_socket", detail="a linked table without a link socket stays closed"
            )
            return None
        from controller.play.linked import LinkPort

        peers = None if self._link_peer is None else {self._link_peer}
        self.link_port = LinkPort(self._link_socket, post, peers, log=self._logctx.logger("linkport"))
        return self.link_port.send

    def start_link(self) -> None:
        if self.link_port is not None:
            self.link_port.start()

    def start(self) -> None:
        """Open the serial devices.  A missing port is the device's latched tilt, like a link
        that gave up (controller/play/table.py): posted once every device has been tried."""
        unopened: list[tuple[SerialDevice, BaseException]] = []
        for d in self.serial:
            try:
                d.start()
            except Exception as e:  # noqa: BLE001 - a port that does not open is that device's fault
                d.stop()  # so that a technician's clear retries it once (SerialDevice.restart)
                unopened.append((d, e))
        self._unopened = unopened

    def post_unopened(self, post: Post) -> None:
        """The ports :meth:`start` could not open, each posted as its device's gave-up."""
        for d, err in self._unopened:
            detail = f"port {d.cfg.port} did not open: {err}"
            post("link", d.device, {"event": "gave-up", "detail": detail}, self._logctx.snapshot())
        self._unopened = []

    # ------------------------------------------------------------------ released
    def stop(self) -> None:
        """After the reactor: the link port (the uplink's going is no news to record), the
        serial devices, the pins."""
        if self.link_port is not None:
            self.link_port.close()
        for d in self.serial:
            d.stop()
        self.close_pins()

    def release(self) -> None:
        """Let go of what a failed start-up had opened (errors ignored)."""
        for d in self.serial:
            with contextlib.suppress(Exception):
                d.stop()
        self.serial = []
        self.close_pins()

    def close_pins(self) -> None:
        for part in self._pins:
            with contextlib.suppress(Exception):
                part.close()
        self._pins = []
