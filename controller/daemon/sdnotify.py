"""systemd's notification protocol (``sd_notify``), without a dependency.

Under ``Type=notify`` systemd passes ``NOTIFY_SOCKET`` (a datagram socket path,
or ``@name`` for the abstract namespace) and, with ``WatchdogSec=``,
``WATCHDOG_USEC`` (and ``WATCHDOG_PID``).  A notification is one datagram of
``KEY=VALUE`` lines: ``READY=1`` once start-up (the self-checks) is done,
``STATUS=...`` for ``systemctl status``, ``WATCHDOG=1`` at least every
``WATCHDOG_USEC``, ``STOPPING=1`` on the way down.

The watchdog ping must come from the loop that owns the table's state (the
reactor, via :attr:`Reactor.idle_hooks`), never from a helper thread: a hung
reactor then stops pinging and systemd kills and restarts the service.
Outside systemd (no ``NOTIFY_SOCKET``) every call is a no-op.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping


def _socket_address(path: str) -> str | None:
    """``NOTIFY_SOCKET``: an abstract socket (``@name``) or a path; None for anything else."""
    if path.startswith("@"):
        return "\0" + path[1:]
    if path.startswith("/"):
        return path
    return None


def _watchdog_s(usec: str, pid: str) -> float | None:
    """The watchdog interval systemd asks of this process (``WATCHDOG_PID`` absent or ours), or None."""
    if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
        return int(usec) / 1e6
    return None


class Notifier:
    def __init__(self, env: Mapping[str, str] | None = None, *, clock: Callable[[], float] = time.monotonic):
        env = os.environ if env is None else env
        self._clock = clock
        self.address: str | None = _socket_address(env.get("NOTIFY_SOCKET", ""))
        self._sock: socket.socket | None = None
        if self.address is not None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self.watchdog_s: float | None = _watchdog_s(env.get("WATCHDOG_USEC", ""), env.get("WATCHDOG_PID", ""))
        self._last_ping = float("-inf")
        self.sent: list[str] = []  # what was sent (tests, and `status` on the console)
        self.errors = 0

    @property
    def enabled(self) -> bool:
        return self._sock is not None

    def notify(self, **fields: object) -> bool:
        """Send one notification, e.g. ``notify(READY=1, STATUS="open")``."""
        if self._sock is None or self.address is None:
            return False
        msg = "\n".join(f"{k}={str(v).replace(chr(10), ' ')}" for k, v in fields.items())
        try:
            self._sock.sendto(msg.encode("utf-8", "replace"), self.address)
        except OSError:
            self.errors += 1
            return False
        self.sent.append(msg)
        del self.sent[:-50]
        return True

    def ready(self, status: str) -> bool:
        return self.notify(READY=1, STATUS=status)

    def status(self, text: str) -> bool:
        return self.notify(STATUS=text)

    def stopping(self) -> bool:
        return self.notify(STOPPING=1)

    def watchdog(self) -> None:
        """Ping the watchdog if half its period has passed.  Call from the reactor loop."""
        if self.watchdog_s is None:
            return
        now = self._clock()
        if now - self._last_ping >= self.watchdog_s / 2:
            self._last_ping = now
            self.notify(WATCHDOG=1)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
