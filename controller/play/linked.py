"""A linked progressive at the table (docs/linked.md; § 688a.2(d) -> § 605a.8, read with
N.J.A.C. 13:69E-1.39B and 9 NYCRR 5321.18): what the table knows of its LAP controller, and
when its linked wager may be played.

:class:`Linkage` is a component of :class:`controller.play.table.Table` (reactor thread only).  The
uplink (controller/uplink/uplink.py, a separate process) hands it the LAP's messages through the
table service's link socket (:class:`LinkPort`, whose thread only posts them to the reactor):

- ``hb`` (the LAP's heartbeat, with every meter), ``meter`` (a push after each commit),
  ``state`` (``running``/``stopped``), ``link`` (the uplink's own connection up or down),
  ``hit`` (the LAP's answer to a hit claim: order and amount), ``won`` (a hit on the link, at
  whichever table: its table id, asset number and amount, for the sign), ``reconciled`` (the LAP
  holds this table's records up to a sequence number, totals checked), ``mismatch`` (a batch's
  totals differ from what the LAP holds), ``diverged`` / ``agrees`` (the ledger here does not /
  does again reach the chain head the LAP recorded for this table), ``refused`` (the LAP refused
  one of this table's records and closed its linked wager, or reopened it: ``reason`` None),
  ``unverified`` / ``verified`` (a record of this ledger failed the uplink's check of its MAC or
  place in the chain: nothing from it on is sent, the table latches a ledger tilt) and
  ``rejected``.  ``state`` carries the LAP's reason when the link is ``inoperable``.

Every line is checked against its shape first (controller/play/linkmsg.py) and only from the uplink's
user (``SO_PEERCRED``): anything else is counted, logged and dropped by :class:`LinkPort`.

The linked wager is **open** only while the LAP's heartbeat is fresh (within
``[progressive] link_timeout``, default 3 s), the link runs, and the LAP has reconciled every
link record this table has written.  Otherwise it is **closed**: the spot's sensors reject,
its lights stay off, the sign says so, and the change is recorded (``link.state``).  Wagers
accepted before a loss stay valid: their records are in the ledger (the outbox) and reach the
LAP when the link returns; the wager reopens by itself once the LAP has reconciled the table.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from controller.core.jsonlines import Line, json_lines
from controller.core.money import format_cents
from controller.core.records import Kind
from controller.play import linkmsg

DEFAULT_TIMEOUT_S = 3.0

Post = Callable[[str, str, dict[str, Any]], None]


@dataclass(slots=True)
class LapHeard:
    """What the table last heard of the LAP: its heartbeat, its state (and why, when it is
    inoperable), and whether the uplink holds its connection to the LAP's database."""

    last_hb: float | None = None
    state: str = "unknown"
    reason: str | None = None  # why the LAP is inoperable
    uplink_up: bool = False

    def beat(self, at: float, state: str) -> None:
        """A heartbeat heard (it came through the uplink, so the uplink holds its database)."""
        self.last_hb, self.state, self.uplink_up = at, state, True

    def told(self, state: str, reason: str | None) -> None:
        """The LAP's state (and why, when it is inoperable) as the uplink read it."""
        self.state, self.reason = state, reason

    def problem(self, now: float, timeout_s: float) -> str | None:
        """Why the LAP keeps the wager closed: no heartbeat (yet, or for too long), no database, not running."""
        if self.last_hb is None:
            return "no heartbeat from the LAP yet"
        if now - self.last_hb > timeout_s:
            return f"no heartbeat from the LAP for {now - self.last_hb:.1f} s"
        if not self.uplink_up:
            return "the uplink lost the database"
        if self.state != "running":
            why = f": {self.reason}" if self.reason else ""
            return f"the link is {self.state}{why}"
        return None


@dataclass(slots=True)
class Closures:
    """What about this table's records keeps its linked wager closed, each until its own message
    lifts it (docs/linked.md)."""

    #: the LAP refused one of this table's records (its linked wager closed until the operator reopens it)
    refused: str | None = None
    #: a record of this ledger the uplink could not verify (nothing from it on is sent)
    unverified: str | None = None
    rejected: str | None = None
    #: the LAP's records of this table disagree with its ledger (docs/linked.md), each closing
    #: the linked wager: a batch's totals (until a later batch reconciles) and the chain head
    #: the LAP recorded (until the uplink finds the ledger reaches it again)
    mismatch: str | None = None
    diverged: str | None = None

    def reject(self, reason: str) -> None:
        """The LAP refused one of this table's events and the uplink stopped sending (until restarted)."""
        self.rejected = reason

    def problem(self) -> str | None:
        """Why the records keep the wager closed: refused, unverified, or differing from the LAP's."""
        if self.rejected:
            return f"the LAP refused a record: {self.rejected}"
        if self.unverified:
            return f"the uplink cannot verify a ledger record: {self.unverified}"
        if self.refused:
            return self.refused
        if self.diverged:
            return f"the ledger differs from the LAP's record of it: {self.diverged}"
        if self.mismatch:
            return f"the LAP's records of this table differ from its ledger: {self.mismatch}"
        return None


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
        self.heard = LapHeard()
        #: the LAP's current rate version per level (a contribution carries the one it was taken under)
        self.rate_versions: dict[str, int] = {}
        #: what keeps the linked wager closed because of this table's records
        self.closures = Closures()
        self.meters: dict[str, int] = {}
        self.answers: dict[int, tuple[int, int]] = {}  # hit seq -> (order, amount)
        #: hit seq -> the LAP's proof of the amount it answered: recorded with the payment, so that a
        #: LAP that goes back in time takes the paid hit back at that amount, and only at it
        self.proofs: dict[int, str] = {}
        self.won: dict[str, Any] | None = None  # the last hit on the link (table, asset number, amount)
        self.reconciled = 0
        self.last_outbox = last_outbox  # the last link.* record this table wrote
        #: None until first judged (then the closed state at start-up is recorded and shown too)
        self.open: bool | None = None
        self._sign: str | None = None  # what the sign says while closed (a new line is recorded too)
        self.reason = "waiting for the link"
        #: the uplink (the service's link socket, controller/play/linked.py ``LinkPort.send``); nothing without one
        self.send: Callable[[dict[str, Any]], None] = send if send is not None else (lambda msg: None)
        #: the table's status for the floor view (state, round, tilts; given by the table)
        self.status_source = status_source
        self.status: dict[str, Any] | None = None  # the last status reported to the LAP
        self.status_at = 0.0

    STATUS_REFRESH_S = 5.0
    #: the LAP's answers kept (a year of hits is not kept): a hit is paid in its round
    #: (the table waits in floor validation for it), so the oldest of these is long paid
    ANSWERS_KEPT = 256

    def _answer(self, seq: int, order: int, amount: int, proof: str | None = None) -> None:
        self.answers.pop(seq, None)  # (a repeated answer is the newest)
        self.answers[seq] = (order, amount)
        self.proofs.pop(seq, None)
        if proof is not None:
            self.proofs[seq] = proof
        while len(self.answers) > self.ANSWERS_KEPT:
            old = next(iter(self.answers))
            del self.answers[old]
            self.proofs.pop(old, None)

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
        """Apply one message (of the shape controller/play/linkmsg.py checks); returns what changed
        that the table must act on: ``"meter"``, ``"answer"``, ``"won"``, ``"unverified"`` or None."""
        handler = _HANDLERS.get(str(msg.get("t")))
        return handler(self, msg) if handler is not None else None

    def _on_hb(self, msg: dict[str, Any]) -> str | None:
        self.heard.beat(self.now(), str(msg.get("state", "unknown")))
        for lv, cents in dict(msg.get("meters", {})).items():
            self.meters[str(lv)] = int(cents)
        self.report(force=True)
        return "meter"

    def _on_meter(self, msg: dict[str, Any]) -> str | None:
        self.meters[str(msg["level"])] = int(msg["cents"])
        if isinstance(msg.get("rate_version"), int):
            self.rate_versions[str(msg["level"])] = int(msg["rate_version"])
        return "meter"

    def _on_won(self, msg: dict[str, Any]) -> str | None:
        asset = msg.get("asset")
        self.won = {
            "level": str(msg["level"]),
            "table": str(msg["table"]),
            "asset": None if asset is None else str(asset),
            "amount": int(msg["amount"]),
        }
        return "won"

    def _on_state(self, msg: dict[str, Any]) -> str | None:
        self.heard.told(str(msg["state"]), None if msg.get("reason") is None else str(msg["reason"])[:300])
        return None

    def _on_link(self, msg: dict[str, Any]) -> str | None:
        self.heard.uplink_up = bool(msg.get("up"))
        return None

    def _on_hit(self, msg: dict[str, Any]) -> str | None:
        proof = msg.get("proof")
        self._answer(int(msg["seq"]), int(msg["order"]), int(msg["amount"]), proof if isinstance(proof, str) else None)
        return "answer"

    def _on_reconciled(self, msg: dict[str, Any]) -> str | None:
        self.reconciled = max(self.reconciled, int(msg["seq"]))
        self.closures.mismatch = None
        return None

    def _on_mismatch(self, msg: dict[str, Any]) -> str | None:
        self.closures.mismatch = str(msg.get("problem", "the LAP's totals differ"))[:300]
        return None

    def _on_diverged(self, msg: dict[str, Any]) -> str | None:
        self.closures.diverged = str(msg.get("problem", "the ledger differs from the LAP's record of it"))[:300]
        return None

    def _on_agrees(self, msg: dict[str, Any]) -> str | None:
        self.closures.diverged = None
        return None

    def _on_rejected(self, msg: dict[str, Any]) -> str | None:
        self.closures.reject(str(msg.get("reason", "refused")))
        return None

    def _closure(self, msg: dict[str, Any]) -> str | None:
        t = msg["t"]
        if t == "refused":
            self.closures.refused = None if msg.get("reason") is None else str(msg["reason"])[:300]
            return None
        if t == "verified":
            self.closures.unverified = None
            return None
        self.closures.unverified = f"record {msg['seq']}: {str(msg['problem'])[:300]}"
        return "unverified"

    def committed(self, seq: int) -> None:
        """A link record is durable in the ledger (the outbox): wake the uplink."""
        self.last_outbox = max(self.last_outbox, seq)
        self.send({"t": "outbox", "seq": seq})

    # ---- open or closed -------------------------------------------------------------
    def should_be(self) -> tuple[bool, str]:
        now = self.now()
        why = self.closures.problem() or self.heard.problem(now, self.timeout_s)
        if why:
            return False, why
        if self.open is not True and self.reconciled < self.last_outbox:
            # reopening: only once the LAP holds every record written meanwhile (while open,
            # records on their way are normal traffic and close nothing)
            return False, f"waiting for the LAP to reconcile records up to {self.last_outbox}"
        return True, "link reconciled"

    def change(self) -> tuple[bool, str] | None:
        """The new (open, reason) when the wager must open or close now — or, closed, when what
        the sign must say changes (a refusal, an unverified record, the LAP inoperable) — else None."""
        want, why = self.should_be()
        sign = None if want else self.closed_text()
        if want == self.open and sign == self._sign:
            return None
        self.open, self.reason, self._sign = want, why, sign
        self.report()
        return want, why

    def closed_text(self) -> str:
        """The sign's line while the linked wager is closed: why, when it is more than the link
        being away (a refusal, a record that does not verify, the LAP inoperable)."""
        if self.closures.unverified:
            return "LINKED PROGRESSIVE CLOSED - LEDGER RECORD UNVERIFIED"
        if self.closures.rejected or self.closures.refused:
            return "LINKED PROGRESSIVE CLOSED - REFUSED BY THE LAP"
        if self.heard.state == "inoperable":
            return "LINKED PROGRESSIVE CLOSED - LAP INOPERABLE"
        return "LINKED PROGRESSIVE CLOSED"

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


@dataclass
class PortStats:
    lines: int = 0  # lines posted to the table
    bad_lines: int = 0  # dropped: not JSON, too long, not a message of the link (controller/play/linkmsg.py)
    refused_peers: int = 0  # connections from a process of another user (SO_PEERCRED)


def peer_uid(conn: socket.socket) -> int:
    """The user id of the process at the other end of a Unix socket (``SO_PEERCRED``)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


class LinkPort:
    """The table service's end of the link socket: the uplink connects, and every JSON line it
    sends is posted to the reactor as a ``lap`` event (this thread touches no table state).
    :meth:`send` writes a line to the uplink (the outbox wake-up), dropped when none is there.

    Only a process of one of ``peer_uids`` (``SO_PEERCRED``; by default the service's own user,
    which the shipped units run the uplink as) is heard: any other connection is closed at once,
    counted and logged.  Only lines that are messages of the link (controller/play/linkmsg.py) reach
    the table: any other is counted, logged (at most once a second, with the count) and dropped."""

    LOG_EVERY_S = 1.0

    def __init__(self, path: str | Path, post: Post, peer_uids: Collection[int] | None = None, log: Any = None):
        self.path = Path(path)
        self.post = post
        self.peer_uids = frozenset(peer_uids) if peer_uids is not None else frozenset({os.geteuid()})
        self.log = log if log is not None else structlog.get_logger("linkport").bind(component="linkport")
        self.stats = PortStats()
        self._unlogged = 0
        self._logged_at = -1e9
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
            if not self._peer_ok(conn):
                conn.close()
                continue
            conn.settimeout(0.2)
            with self._lock:
                self._conn = conn
            for line in json_lines(conn, self._stop, bufsize=65536):
                self._line(line)
            with self._lock:
                self._conn = None
            conn.close()
            self.post("lap", "uplink", {"t": "link", "up": False, "reason": "the uplink disconnected"})

    def _peer_ok(self, conn: socket.socket) -> bool:
        try:
            uid = peer_uid(conn)
        except OSError as e:
            uid, why = -1, str(e)
        else:
            why = f"user id {uid}"
        if uid in self.peer_uids:
            return True
        self.stats.refused_peers += 1
        n = self.stats.refused_peers
        self.log.warning("link.peer_refused", peer=why, allowed=sorted(self.peer_uids), refused=n)
        return False

    def _line(self, line: Line) -> None:
        if line.garbled:
            why: str | None = "an over-long line" if line.too_long else "not JSON"
        else:
            why = linkmsg.problem(line.value)
        if why is None:
            self.stats.lines += 1
            self.post("lap", "uplink", line.value)
            return
        self.stats.bad_lines += 1
        self._unlogged += 1
        now = time.monotonic()
        if now - self._logged_at >= self.LOG_EVERY_S:
            self.log.warning(
                "link.bad_line",
                problem=why,
                line=line.raw[:80].decode("utf-8", "replace"),
                dropped=self._unlogged,
                bad_lines=self.stats.bad_lines,
            )
            self._unlogged = 0
            self._logged_at = now

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.srv.close()
        if self.path.exists():
            self.path.unlink()


#: what each message from the uplink does (``"t"``: its kind); a kind not here changes nothing
_HANDLERS: dict[str, Callable[[Linkage, dict[str, Any]], str | None]] = {
    "hb": Linkage._on_hb,
    "meter": Linkage._on_meter,
    "refused": Linkage._closure,
    "unverified": Linkage._closure,
    "verified": Linkage._closure,
    "won": Linkage._on_won,
    "state": Linkage._on_state,
    "link": Linkage._on_link,
    "hit": Linkage._on_hit,
    "reconciled": Linkage._on_reconciled,
    "mismatch": Linkage._on_mismatch,
    "diverged": Linkage._on_diverged,
    "agrees": Linkage._on_agrees,
    "rejected": Linkage._on_rejected,
}
