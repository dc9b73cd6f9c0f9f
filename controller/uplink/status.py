"""The table's status line for the floor view: the last one the table sent, written to the LAP at the
uplink's next turn (never money: a refusal is logged, not latched)."""

from __future__ import annotations

import json
import threading
from typing import Any

import psycopg

from controller.uplink.config import Log, UplinkConfig, first_line

#: what the floor view shows of the table's ``status`` message
FIELDS = ("state", "round", "open", "reason", "tilts", "sign")


class StatusRelay:
    """The table's last status, not yet written (set on the channel's thread, written on the link's)."""

    __slots__ = ("_lock", "_status", "cfg", "log")

    def __init__(self, cfg: UplinkConfig, log: Log) -> None:
        self.cfg = cfg
        self.log = log
        self._status: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def heard(self, msg: dict[str, Any]) -> None:
        """(the channel's thread) the table's ``status`` message: kept until written."""
        with self._lock:
            self._status = {k: msg.get(k) for k in FIELDS}

    def pending(self) -> dict[str, Any] | None:
        with self._lock:
            return self._status

    def send(self, conn: psycopg.Connection) -> None:
        """The table's status for the floor view (never money: a refusal is logged, not latched)."""
        with self._lock:
            st, self._status = self._status, None
        if st is None:
            return
        try:
            conn.execute(self.cfg.q("SELECT {s}.report_status(%s::jsonb)"), (json.dumps(st),))
        except psycopg.OperationalError:
            with self._lock:
                self._status = self._status or st
            raise
        except psycopg.Error as e:
            self.log(f"uplink: the LAP refused the table's status: {first_line(e)}")
