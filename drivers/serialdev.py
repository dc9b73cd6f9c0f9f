"""Base for the serial devices (shoe, shaker, sign): a :class:`drivers.link.Link`
to the device, messages encoded with drivers/protocol.py, and everything the
device says handed to the reactor as events.

Events posted (all from the link's reader thread, which only posts):

* ``Event(kind=<device>, source=<device>, data={"msg": NAME, **fields})`` for a
  device message (e.g. ``shoe``/``STACK`` with ``stack``, ``count``, ``remaining``, ``cards``);
* ``Event(kind="link", source=<device>, data={"event": KIND, "detail": TEXT})`` for
  link events (``up``, ``fault``, ``lost``, ``restored``, ``protocol-error``,
  ``disconnected``, ``gave-up``).
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from drivers.base import LogContext, Post
from drivers.link import Link, LinkTiming, Port
from drivers.protocol import ProtocolError, decode, encode

BAUD_RATES = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600)


@dataclass(frozen=True)
class SerialSettings:
    """One serial device's port and link timing (``[serial.<device>]``, docs/protocols.md
    section 3).  controller/settings/hardware.py reads and range-checks them from the TOML."""

    device: str
    port: str  # a device path (``/dev/serial/by-id/...``) or a pty
    baud: int
    ack_timeout_ms: int  # an unacknowledged frame is sent again after this long
    retries: int  # retransmissions before the link reports ``fault``
    heartbeat_ms: int  # PING when nothing was sent for this long
    lost_after_ms: int  # the peer is ``lost`` when nothing was received for this long


def open_serial(cfg: SerialSettings) -> Port:
    """Open a real serial port (or a pty path) with pyserial.

    ``timeout`` is short so the reader loop can apply its own per-frame deadline; writes are
    bounded by :class:`BoundedWrites`; ``exclusive`` stops a second process (or a second
    tablectl) from opening the same device.
    """
    import serial  # pyserial: imported here so config checks never touch it

    port = serial.Serial(cfg.port, baudrate=cfg.baud, timeout=0.02, write_timeout=WRITE_TIMEOUT_S, exclusive=True)
    return BoundedWrites(port, WRITE_TIMEOUT_S)


#: a write the device does not take within this is a stuck port (the link reopens it)
WRITE_TIMEOUT_S = 0.5


class BoundedWrites:
    """A pyserial port whose write fails only when bytes are still unsent at its deadline.

    pyserial's own write (3.5, POSIX) looks at the clock after each ``os.write``, even one that
    wrote everything: a writing thread descheduled for longer than ``write_timeout`` (a loaded
    machine; the table's other threads holding the GIL) got "Write timeout" for a frame that had
    gone out, and the link reported a device fault for nothing (simulated tables tilted under
    load in the link's chaos runs).  pyserial opens the port non-blocking, so this writes to its
    descriptor directly and waits for room only while something is left."""

    def __init__(self, port: Any, write_timeout_s: float, clock: Callable[[], float] = time.monotonic):
        self.port = port
        self.write_timeout_s = write_timeout_s
        self.clock = clock

    def read(self, size: int = 1) -> bytes:
        return cast(bytes, self.port.read(size))

    @property
    def in_waiting(self) -> int:
        """Bytes received and not yet read (the link reads what is there, not a fixed count)."""
        return int(self.port.in_waiting)

    def write(self, data: bytes) -> int:
        view, fd = memoryview(data), self.port.fileno()
        deadline = self.clock() + self.write_timeout_s
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                pass  # the device's buffer is full: wait for room below
            # past the deadline: one last look for room (a thread that was descheduled)
            left = max(0.0, deadline - self.clock())
            if view and not select.select([], [fd], [], left)[1]:
                import serial

                raise serial.SerialTimeoutException(
                    f"write timeout: {len(view)} of {len(data)} bytes unsent after {self.write_timeout_s:g} s"
                )
        return len(data)

    def close(self) -> None:
        self.port.close()

    def fileno(self) -> int:
        return int(self.port.fileno())


class SerialDevice:
    device = "?"

    def __init__(
        self, cfg: SerialSettings, post: Post, logctx: LogContext, open_port: Callable[[], Port] | None = None
    ):
        self.cfg = cfg
        self._post = post
        self.logctx = logctx
        self.log = logctx.logger(f"device.{self.device}", port=cfg.port)
        self.link = Link(
            self.device,
            open_port or (lambda: open_serial(cfg)),
            self,
            LinkTiming(
                ack_timeout=cfg.ack_timeout_ms / 1000,
                retries=cfg.retries,
                heartbeat=cfg.heartbeat_ms / 1000,
                lost_after=cfg.lost_after_ms / 1000,
            ),
        )

    def start(self) -> None:
        self.link.start()
        self.log.info("link.open")

    def stop(self) -> None:
        self.link.stop()

    def restart(self) -> bool:
        """Reopen a link that gave up (see :meth:`drivers.link.Link.restart`)."""
        return self.link.restart()

    def send(self, name: str, **fields: Any) -> None:
        mtype, payload = encode(self.device, name, **fields)
        self.link.send(mtype, payload)

    # ---- LinkListener (reader thread: post only) -------------------------
    def on_message(self, mtype: int, payload: bytes) -> None:
        ctx = self.logctx.snapshot()
        try:
            name, fields = decode(self.device, mtype, payload)
        except ProtocolError as e:
            self._post("link", self.device, {"event": "protocol-error", "detail": str(e)}, ctx)
            return
        self._post(self.device, self.device, {"msg": name, **fields}, ctx)

    def on_link_event(self, kind: str, detail: str) -> None:
        self._post("link", self.device, {"event": kind, "detail": detail}, self.logctx.snapshot())
