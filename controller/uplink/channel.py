"""The uplink's end of the table service's link socket (controller/play/linked.py ``LinkPort``):
JSON lines both ways, reconnecting; the last message of each kind the table must know
(``key``: the link's state, each meter, each answer, the reconciliation, a refusal) is kept and
replayed to the table whenever it (re)connects."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.core.jsonlines import json_lines

Log = Callable[[str], None]


class TableChannel:
    """The Unix socket to the table service: JSON lines both ways, reconnecting."""

    def __init__(self, path: Path, on_message: Callable[[dict[str, Any]], None], stop: threading.Event, log: Log):
        self.path, self.on_message, self.stop, self.log = path, on_message, stop, log
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self.snapshot: dict[str, dict[str, Any]] = {}  # key -> last message, replayed on connect

    def send(self, msg: dict[str, Any], key: str | None = None) -> None:
        line = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        with self._lock:
            if key is not None:
                self.snapshot[key] = msg
            if self._sock is None:
                return
            try:
                self._sock.sendall(line)
            except OSError:
                self._close_locked()

    def _close_locked(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def run(self) -> None:
        while not self.stop.is_set():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(str(self.path))
            except OSError:
                s.close()
                self.stop.wait(0.1)
                continue
            with self._lock:
                self._sock = s
                for msg in list(self.snapshot.values()):
                    try:
                        s.sendall((json.dumps(msg, separators=(",", ":")) + "\n").encode())
                    except OSError:
                        break
            self.log(f"uplink: connected to the table at {self.path}")
            s.settimeout(0.2)
            for line in json_lines(s, self.stop, bufsize=4096):
                if isinstance(line.value, dict):  # another JSON value is as garbled as no JSON
                    try:
                        self.on_message(line.value)
                        continue
                    except (ValueError, TypeError):
                        pass
                what = "over-long line" if line.too_long else "garbled line"
                self.log(f"uplink: {what} from the table ignored: {line.raw[:80]!r}")
            with self._lock:
                if self._sock is s:
                    self._close_locked()

    def close(self) -> None:
        with self._lock:
            self._close_locked()
