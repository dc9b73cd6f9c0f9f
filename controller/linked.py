"""A linked progressive at the table (docs/linked.md; § 688a.2(d) -> § 605a.8, read with
N.J.A.C. 13:69E-1.39B and 9 NYCRR 5321.18): what the table knows of its LAP controller, and
when its linked wager may be played.

:class:`Linkage` is a component of :class:`controller.table.Table` (reactor thread only).  The
uplink (controller/link/uplink.py, a separate process) hands it the LAP's messages through the
table service's link socket (:class:`LinkPort`, whose thread only posts them to the reactor):

- ``hb`` (the LAP's heartbeat, with every meter), ``meter`` (a push after each commit),
  ``state`` (``running``/``stopped``), ``link`` (the uplink's own connection up or down),
  ``hit`` (the LAP's answer to a hit claim: order and amount), ``won`` (a hit on the link, at
  whichever table: its table id, asset number and amount, for the sign), ``reconciled`` (the LAP
  holds this table's records up to a sequence number, totals checked), ``mismatch`` (a batch's
  totals differ from what the LAP holds), ``diverged`` / ``agrees`` (the ledger here does not /
  does again reach the chain head the LAP recorded for this table) and ``rejected``.

The linked wager is **open** only while the LAP's heartbeat is fresh (within
``[progressive] link_timeout``, default 3 s), the link runs, and the LAP has reconciled every
link record this table has written.  Otherwise it is **closed**: the spot's sensors reject,
its lights stay off, the sign says so, and the change is recorded (``link.state``).  Wagers
accepted before a loss stay valid: their records are in the ledger (the outbox) and reach the
LAP when the link returns; the wager reopens by itself once the LAP has reconciled the table.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.jsonlines import json_lines
from controller.meters import format_cents
from controller.records import Kind

DEFAULT_TIMEOUT_S = 3.0

Post = Callable[[str, str, dict[str, Any]], None]


class Linkage:
    def __init__(
        self,
        group: str,
        timeout_s: float,
        now: Callable[[], float],
        last_outbox: int = 0,
        *,
        send: Callable[[dict[str, Any]], None] | None = None,
        status_source: Callable[[], dict[str, Any]] | None = None,
    ):
        self.group = group
        self.timeout_s = timeout_s
        self.now = now
        self.last_hb: float | None = None
        self.lap_state = "unknown"
        self.uplink_up = False
        self.meters: dict[str, int] = {}
        self.answers: dict[int, tuple[int, int]] = {}  # hit seq -> (order, amount)
        self.won: dict[str, Any] | None = None  # the last hit on the link (table, asset number, amount)
        self.reconciled = 0
        self.last_outbox = last_outbox  # the last link.* record this table wrote
        self.rejected: str | None = None
        #: the LAP's records of this table disagree with its ledger (docs/linked.md), each closing
        #: the linked wager: a batch's totals (until a later batch reconciles) and the chain head
        #: the LAP recorded (until the uplink finds the ledger reaches it again)
        self.mismatch: str | None = None
        self.diverged: str | None = None
        #: None until first judged (then the closed state at start-up is recorded and shown too)
        self.open: bool | None = None
        self.reason = "waiting for the link"
        #: the uplink (the service's link socket, controller/linked.py ``LinkPort.send``); nothing without one
        self.send: Callable[[dict[str, Any]], None] = send if send is not None else (lambda msg: None)
        #: the table's status for the floor view (state, round, tilts; given by the table)
        self.status_source = status_source
        self.status: dict[str, Any] | None = None  # the last status reported to the LAP
        self.status_at = 0.0

    STATUS_REFRESH_S = 5.0

    def report(self, force: bool = False) -> None:
        """Tell the LAP the table's status and whether its linked wager is open (and why), for
        the floor view: when it changed, or (``force``) again after :attr:`STATUS_REFRESH_S`
        (an uplink that restarted meanwhile learns it again)."""
        if self.status_source is None:
            return
        status = {**self.status_source(), "open": bool(self.open), "reason": self.reason}
        if status == self.status and not (force and self.now() - self.status_at >= self.STATUS_REFRESH_S):
            return
        self.status, self.status_at = status, self.now()
        self.send({"t": "status", **status})

    # ---- from the uplink ------------------------------------------------------------
    def on_message(self, msg: dict[str, Any]) -> str | None:
        """Apply one message; returns what changed that the table must act on:
        ``"meter"``, ``"answer"``, ``"won"`` or None."""
        t = msg.get("t")
        if t == "hb":
            self.last_hb = self.now()
            self.lap_state = str(msg.get("state", "unknown"))
            self.uplink_up = True
            for lv, cents in dict(msg.get("meters", {})).items():
                self.meters[str(lv)] = int(cents)
            self.report(force=True)
            return "meter"
        if t == "meter":
            self.meters[str(msg["level"])] = int(msg["cents"])
            return "meter"
        if t == "won":
            asset = msg.get("asset")
            self.won = {
                "level": str(msg["level"]),
                "table": str(msg["table"]),
                "asset": None if asset is None else str(asset),
                "amount": int(msg["amount"]),
            }
            return "won"
        if t == "state":
            self.lap_state = str(msg["state"])
        elif t == "link":
            self.uplink_up = bool(msg.get("up"))
        elif t == "hit":
            self.answers[int(msg["seq"])] = (int(msg["order"]), int(msg["amount"]))
            return "answer"
        elif t == "reconciled":
            self.reconciled = max(self.reconciled, int(msg["seq"]))
            self.mismatch = None
        elif t == "mismatch":
            self.mismatch = str(msg.get("problem", "the LAP's totals differ"))[:300]
        elif t == "diverged":
            self.diverged = str(msg.get("problem", "the ledger differs from the LAP's record of it"))[:300]
        elif t == "agrees":
            self.diverged = None
        elif t == "rejected":
            self.rejected = str(msg.get("reason", "refused"))
        return None

    def committed(self, seq: int) -> None:
        """A link record is durable in the ledger (the outbox): wake the uplink."""
        self.last_outbox = max(self.last_outbox, seq)
        self.send({"t": "outbox", "seq": seq})

    # ---- open or closed -------------------------------------------------------------
    def should_be(self) -> tuple[bool, str]:
        now = self.now()
        if self.rejected:
            return False, f"the LAP refused a record: {self.rejected}"
        if self.diverged:
            return False, f"the ledger differs from the LAP's record of it: {self.diverged}"
        if self.mismatch:
            return False, f"the LAP's records of this table differ from its ledger: {self.mismatch}"
        if self.last_hb is None:
            return False, "no heartbeat from the LAP yet"
        if now - self.last_hb > self.timeout_s:
            return False, f"no heartbeat from the LAP for {now - self.last_hb:.1f} s"
        if not self.uplink_up:
            return False, "the uplink lost the database"
        if self.lap_state != "running":
            return False, f"the link is {self.lap_state}"
        if self.open is not True and self.reconciled < self.last_outbox:
            # reopening: only once the LAP holds every record written meanwhile (while open,
            # records on their way are normal traffic and close nothing)
            return False, f"waiting for the LAP to reconcile records up to {self.last_outbox}"
        return True, "link reconciled"

    def change(self) -> tuple[bool, str] | None:
        """The new (open, reason) when the wager must open or close now, else None."""
        want, why = self.should_be()
        if want == self.open:
            return None
        self.open, self.reason = want, why
        self.report()
        return want, why

    def won_text(self) -> str | None:
        """The sign's line for the last hit on the link: the winning table's id and asset number
        and the amount (docs/linked.md; every table on the link shows it, the winner's too)."""
        w = self.won
        if w is None:
            return None
        asset = f" ASSET {w['asset']}" if w["asset"] else ""
        return f"LINKED HIT TABLE {w['table']}{asset} {format_cents(w['amount'])}"

    def snapshot(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "open": bool(self.open),
            "reason": self.reason,
            "meters": dict(self.meters),
            "reconciled": self.reconciled,
            "outbox": self.last_outbox,
        }


def last_outbox_seq(events: Any) -> int:
    """The last link record in a ledger's events (start-up)."""
    last = 0
    for e in events:
        if e.kind in (Kind.LINK_CONTRIBUTION, Kind.LINK_VOID, Kind.LINK_HIT, Kind.LINK_PAID):
            last = max(last, e.seq)
    return last


class LinkPort:
    """The table service's end of the link socket: the uplink connects, and every JSON line it
    sends is posted to the reactor as a ``lap`` event (this thread touches no table state).
    :meth:`send` writes a line to the uplink (the outbox wake-up), dropped when none is there."""

    def __init__(self, path: str | Path, post: Post):
        self.path = Path(path)
        self.post = post
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.path.exists() or self.path.is_symlink():
            self.path.unlink()
        self.srv.bind(str(self.path))
        self.path.chmod(0o660)
        self.srv.listen(1)
        self.srv.settimeout(0.2)
        self._conn: socket.socket | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="linkport", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def send(self, msg: dict[str, Any]) -> None:
        with self._lock:
            if self._conn is None:
                return
            try:
                self._conn.sendall(json.dumps(msg).encode() + b"\n")
            except OSError:
                self._conn = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.srv.accept()
            except (TimeoutError, OSError):
                continue
            conn.settimeout(0.2)
            with self._lock:
                self._conn = conn
            for line in json_lines(conn, self._stop, bufsize=65536):
                if isinstance(line.value, dict):  # a garbled line or another JSON value is skipped
                    self.post("lap", "uplink", line.value)
            with self._lock:
                self._conn = None
            conn.close()
            self.post("lap", "uplink", {"t": "link", "up": False, "reason": "the uplink disconnected"})

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.srv.close()
        if self.path.exists():
            self.path.unlink()
