"""What the table hears of its LAP: read from the LAP's rows, never from a notification.

Any role may ``NOTIFY`` any channel (a table's role included), so a notification carries no
authority at all: it is a doorbell that may make the uplink read the LAP's rows **sooner**, and
nothing else.  Its payload is never believed; only its kind is looked at, to let the LAP's
heartbeat doorbell ring nothing (liveness is read on the timer below): a forged kind can at most
cost one more coalesced read.  The uplink reads the LAP's rows

- on a slow timer (``refresh``: a third of the link timeout, so that a table sees a fresh
  heartbeat row well within it): liveness and meters come from these rows;
- early, when a doorbell rang or after its own batches, at most once per ``min_gap`` seconds
  however many rang (:class:`Coalescer`);

so an idle pit costs the database one small read per table every second or so, and a
meter's change reaches the tables within the LAP's push interval and ``min_gap``.

A flood of doorbells (any table's role may ``pg_notify`` the LAP's channel, thousands a second
with 8 kB payloads) is bounded twice: the reads by the coalescer, and the notifications
themselves by :class:`FloodGuard`, which stops listening (``UNLISTEN``) for a while when more
arrive than the LAP could ring, and reads on the fast ``flood_refresh`` timer meanwhile, so
that on the uplink's one connection a flood neither delays its reads for long nor makes
meters late.

Each read (:data:`VIEW_SQL`, one statement, one round trip) returns the link's state and why,
the LAP's heartbeat **row** (``link.heartbeat_at``: written by the LAP's own heartbeat, which no
table role may execute), every level's meter, version, rate version and count of hits, and this
table's reconciliation, mismatch and refusal; when a count of hits moved, a second statement
(:data:`HITS_SQL`) reads this table's new hit answers and the hits its sign has not been told of
(``take_announcements``: each hit order once per table, remembered in the database across
restarts; hits before the table first asked are no news).  :class:`LapView` turns it into
the messages the table acts on, sending only what changed; a heartbeat is told to the table
only when the LAP's row has moved on, and was written after the connection was made.
"""

from __future__ import annotations

import math
import random
import select
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

Send = Callable[..., None]  # (msg, key=None)
Log = Callable[[str], None]

VIEW_SQL = """
SELECT json_build_object(
  'state', l.state, 'reason', l.reason, 'hb', extract(epoch FROM l.heartbeat_at),
  'levels', (SELECT coalesce(json_agg(json_build_object('level', v.level, 'cents', div(v.value_num, v.den),
      'version', v.version, 'rate_version', v.rate_version, 'hits', v.hits, 'at', extract(epoch FROM v.changed_at))
      ORDER BY v.level), '[]') FROM {s}.levels v),
  'me', (SELECT json_build_object('reconciled', m.reconciled_seq, 'mismatch', m.mismatch, 'closed', m.closed)
      FROM {s}.members m WHERE m.table_id = %(t)s))
FROM {s}.link l
"""

#: read only when a level's count of hits moved (or after a reconnection): this table's new
#: answers, and the hits its sign has not been told of
HITS_SQL = """
SELECT json_build_object(
  'answers', (SELECT coalesce(json_agg(json_build_object('seq', h.seq, 'level', h.level, 'order', h.order_no,
      'amount', h.amount_cents, 'proof', h.proof) ORDER BY h.seq), '[]')
      FROM {s}.hits h WHERE h.table_id = %(t)s AND h.seq > %(known)s),
  'won', {s}.take_announcements())
"""


#: the slow timer's read when no doorbell rang: one small row, the LAP's heartbeat and state, and
#: the levels' count and the sum of their versions (about a third of :data:`VIEW_SQL`'s cost on
#: the server: that one's reconciliation row goes through the table's row-level policy);
#: :data:`VIEW_SQL` follows only when the state or the levels moved.  A level's version only
#: grows, so the sum moves whenever one does (as the LAP's own doorbell finds it moved,
#: controller/lap/lap.py ``push_meters``); the count catches a level added or removed.  The
#: sum, not each version in order: the sort was a fifth of the probe's cost on the server.
PROBE_SQL = """
SELECT l.state, l.reason, extract(epoch FROM l.heartbeat_at)::float8,
  (SELECT ARRAY[count(*), coalesce(sum(v.version), 0)]::bigint[] FROM {s}.levels v)
FROM {s}.link l
"""


class Coalescer:
    """Doorbells at any rate cost at most one read per ``min_gap`` s; without any, a read every
    ``refresh`` s.  The only place reads are rationed (the listener asks it when to read)."""

    def __init__(self, min_gap: float, refresh: float, now: Callable[[], float] = time.monotonic):
        self.min_gap, self.refresh, self.now = min_gap, refresh, now
        self.pending = False
        self.last = -math.inf
        self.rung = 0  # doorbells counted (the flood test reads it)

    def ring(self, n: int = 1) -> None:
        self.pending = True
        self.rung += n

    def due(self) -> bool:
        gap = self.now() - self.last
        return gap >= self.refresh or (self.pending and gap >= self.min_gap)

    def wait_s(self) -> float:
        """How long the listener may wait for a doorbell before a read is due anyway."""
        until = self.last + (self.min_gap if self.pending else self.refresh)
        return max(0.0, until - self.now())

    def done(self) -> None:
        self.last = self.now()
        self.pending = False


#: the LAP's heartbeat doorbell (controller/lap/schema_rules.py ``heartbeat``): it rings nothing,
#: the heartbeat row is read on the slow timer
HB_DOORBELL = b'{"t": "hb"}'


class FloodGuard:
    """More than ``limit`` doorbells within ``window`` s is more than the LAP rings (a heartbeat
    a second, the meters at most every push interval, a hit or a refusal now and then): someone
    floods the channel.  The uplink then stops listening for ``quiet_s`` (doubling while the
    flood goes on, up to ``quiet_cap_s``) and reads on its fast timer meanwhile."""

    def __init__(
        self,
        limit: int = 200,
        window: float = 1.0,
        quiet_s: float = 10.0,
        quiet_cap_s: float = 120.0,
        now: Callable[[], float] = time.monotonic,
    ):
        self.limit, self.window, self.now = limit, window, now
        self.quiet_s, self.quiet_cap_s = quiet_s, quiet_cap_s
        self.count, self.since = 0, -math.inf
        self.deaf_until = -math.inf  # not listening until then
        self.floods = 0  # floods seen in a row (the quiet doubles)
        self.heard = 0  # doorbells heard in all (the floor view's and the tests' count)

    def heard_one(self) -> bool:
        """Count a doorbell; whether a flood is on now (stop listening)."""
        t = self.now()
        self.heard += 1
        if self.floods and t - self.deaf_until > self.quiet_cap_s:
            self.floods = 0  # listened through a long calm: the next quiet starts short
        if t - self.since > self.window:
            self.count, self.since = 0, t
        self.count += 1
        if self.count <= self.limit:
            return False
        self.floods += 1
        self.deaf_until = t + min(self.quiet_cap_s, self.quiet_s * 2 ** min(self.floods - 1, 20))
        self.count, self.since = 0, -math.inf
        return True

    def deaf(self) -> bool:
        return self.now() < self.deaf_until


class LapView:
    """The LAP's rows as the table's messages: only what changed is sent (``send(msg, key)``;
    keyed messages are replayed to a table that reconnects)."""

    def __init__(self, table_id: str, send: Send):
        self.table_id, self.send = table_id, send
        self.reset()

    def reset(self) -> None:
        """After a reconnection everything is told again (answers included: keyed, idempotent)."""
        self.known = 0  # the highest hit seq of this table answered
        self._state: tuple[Any, Any] | None = None
        self._versions: dict[str, Any] = {}
        self._hits: dict[str, Any] | None = None  # each level's count of hits when the hits were last read
        self._me: dict[str, Any] | None = None
        self._hb: float | None = None
        #: a heartbeat counts only when the LAP wrote it after this connection was made (the
        #: database's clock): a row from before a failover or a restore opens nothing
        self.fresh_after = math.inf
        self.fresh = 0  # fresh heartbeats seen on this connection (the uplink's deadline)

    #: the LAP is behind this table's ledger (the uplink resends): the table hears this instead
    #: of the LAP's (restored, older) reconciliation until the resend is reconciled
    behind: str | None = None

    def closed(self) -> bool:
        """Whether the LAP's rows say this table is closed (a refusal) or its records differ."""
        return self._me is not None and bool(self._me.get("closed") or self._me.get("mismatch"))

    def retell(self) -> None:
        """The reconciliation told again at the next read (the uplink's resend is reconciled)."""
        self._me = None

    def params(self) -> dict[str, Any]:
        return {"t": self.table_id, "known": self.known}

    def hits_moved(self, doc: dict[str, Any]) -> bool:
        """Whether the hits must be read (:data:`HITS_SQL`): a level's count moved, or first read."""
        hits = {lv["level"]: lv.get("hits") for lv in doc.get("levels") or []}
        moved, self._hits = hits != self._hits, hits
        return moved

    def apply(self, doc: dict[str, Any]) -> None:
        state = (doc.get("state"), doc.get("reason"))
        if state != self._state:
            self._state = state
            self.send({"t": "state", "state": state[0], "reason": state[1]}, key="state")
        levels = doc.get("levels") or []
        for lv in levels:
            if self._versions.get(lv["level"]) != lv["version"]:
                self._versions[lv["level"]] = lv["version"]
                msg = {"t": "meter", "level": lv["level"], "cents": int(lv["cents"]), "version": lv["version"]}
                msg.update(rate_version=lv["rate_version"], at=lv["at"], rx=time.time())
                self.send(msg, key=f"meter:{lv['level']}")
        for a in doc.get("answers") or []:
            self.known = max(self.known, int(a["seq"]))
            self.send({"t": "hit", **a}, key=f"hit:{a['seq']}")
        self._apply_me(doc.get("me"))
        for w in doc.get("won") or []:
            # the hit told to every linked table's sign once (no key: never replayed)
            self.send({"t": "won", **w})
        hb = doc.get("hb")
        if hb is not None and hb != self._hb and hb > self.fresh_after:
            self._hb = hb
            self.fresh += 1
            meters = {lv["level"]: int(lv["cents"]) for lv in levels}
            self.send({"t": "hb", "state": state[0], "meters": meters, "at": hb})

    def _apply_me(self, me: dict[str, Any] | None) -> None:
        if me is None or me == self._me:
            return
        was, self._me = self._me or {}, me
        if (me["reconciled"], me["mismatch"]) != (was.get("reconciled"), was.get("mismatch")):
            if self.behind is not None:
                self.send({"t": "mismatch", "problem": self.behind}, key="reconciled")
            elif me["mismatch"]:
                self.send({"t": "mismatch", "problem": me["mismatch"]}, key="reconciled")
            else:
                self.send({"t": "reconciled", "seq": int(me["reconciled"])}, key="reconciled")
        if not was or me["closed"] != was.get("closed"):
            self.send({"t": "refused", "reason": me["closed"]}, key="refused")


class LinkDeadline(psycopg.OperationalError):
    """No fresh LAP heartbeat within the link timeout: the connection is taken for dead (a
    network that drops packets without a reset never says so) and another one opened."""


@dataclass(frozen=True)
class ListenerTiming:
    """The :class:`Listener`'s timing: the least gap between two reads of the view (``min_gap``),
    the read timer while the doorbells are heard (``refresh``) and while a flood made it deaf to
    them (``flood_refresh``), the heartbeat deadline and its cap, all in seconds; ``now`` and
    ``rand`` the clock they are measured by and the draw of each deadline's jitter."""

    min_gap: float = 0.2
    refresh: float = 1.0
    flood_refresh: float = 0.25
    deadline_s: float = 3.0
    deadline_cap_s: float = 30.0
    now: Callable[[], float] = time.monotonic
    rand: Callable[[], float] = random.random


class Listener:
    """The uplink's listening side, on the uplink's one connection: the connection's
    notifications ring the :class:`Coalescer`, :data:`VIEW_SQL` is read when it says so,
    :class:`LapView` tells the table; no fresh heartbeat within ``deadline_s`` raises
    :class:`LinkDeadline`.

    The deadline is for a connection that went to the wrong place or died, not for a LAP that
    is alive but slow (its tables close on their own link timeout; reconnecting does not make
    it quicker): each deadline is drawn up to a quarter longer at random (uplinks do not
    reconnect in lockstep), and it doubles with each deadline passed in a row, connection after
    connection (up to ``deadline_cap_s``), back to ``deadline_s`` at the next
    fresh heartbeat (with the first one-connection uplink, 200 uplinks reconnecting
    every 4 s on a busy LAP)."""

    def __init__(
        self,
        schema: str,
        view: LapView,
        send: Send,
        log: Log,
        timing: ListenerTiming = ListenerTiming(),
    ):
        self.schema, self.view, self.send, self.log = schema, view, send, log
        t = timing
        self.bell = Coalescer(t.min_gap, t.refresh)
        self.refresh, self.flood_refresh = t.refresh, t.flood_refresh
        self.guard = FloodGuard(now=t.now)
        self.listening = False
        self.floods = 0  # times the uplink stopped listening (a flood)
        self.deadline_s, self.now, self.rand = t.deadline_s, t.now, t.rand
        self.deadline_cap_s = max(t.deadline_cap_s, t.deadline_s)
        self.missed = 0  # deadlines passed in a row without a fresh heartbeat
        self.current_s = t.deadline_s  # this connection's deadline
        self.reconnects = 0  # connections ended by the deadline
        self.rows = RowReader(schema, view)
        self._seen = (0, 0.0)  # (fresh heartbeats, when that count was last seen to move)

    def attach(self, conn: psycopg.Connection) -> None:
        """A new connection: everything told again, the deadline from now; listening for the
        LAP's doorbells unless a flood made the uplink deaf for a while."""
        # psycopg's own handler would keep every notification (a flood, in memory): counted here, never kept
        conn.pgconn.notify_handler = self._heard
        self.listening = False
        self._listen(conn)
        row = conn.execute("SELECT extract(epoch FROM clock_timestamp())").fetchone()
        self.view.reset()
        self.rows.forget()
        self.view.fresh_after = float(row[0]) if row else math.inf
        self._seen = (0, self.now())
        top = min(self.deadline_cap_s, self.deadline_s * 2 ** min(self.missed, 20))
        self.current_s = min(self.deadline_cap_s, top * (1 + self.rand() / 4))
        self.bell.last = -math.inf  # a read at once: the snapshot after a (re)connection
        self.send({"t": "link", "up": True}, key="link")

    def _listen(self, conn: psycopg.Connection) -> None:
        """Listen (or not) as the flood guard says; the read timer follows: slow while the
        doorbells are heard, fast while the uplink is deaf to them."""
        want = not self.guard.deaf()
        if want != self.listening:
            verb = "LISTEN" if want else "UNLISTEN"
            # deaf before the UNLISTEN's answer: the flood still queued ahead of it rings nothing
            self.listening = want
            conn.execute(sql.SQL(verb + " {}").format(sql.Identifier(self.schema)))
            if want and self.floods:
                self.log(f"uplink: listening for the LAP's doorbells again (read every {self.refresh:.2f} s)")
        self.bell.refresh = self.refresh if want else self.flood_refresh

    def _heard(self, n: Any) -> None:
        """A notification (received during a read or drained while waiting): a doorbell, the
        LAP's heartbeat's excepted."""
        if not self.listening:
            return  # sent before the UNLISTEN took effect
        if self.guard.heard_one():
            self._flooded = True
        if n.extra != HB_DOORBELL:
            self.bell.ring()

    _flooded = False

    def _drain(self, conn: psycopg.Connection) -> None:
        """The notifications received meanwhile, without waiting; a flood stops the listening."""
        pg = conn.pgconn
        pg.consume_input()
        while (n := pg.notifies()) is not None:
            self._heard(n)
        if self._flooded:
            self._flooded = False
            self.floods += 1
            self.log(
                f"uplink: a flood of notifications on the LAP's channel; not listening for "
                f"{self.guard.deaf_until - self.now():.0f} s (reading every {self.flood_refresh:.2f} s)"
            )
        self._listen(conn)

    def detached(self, reason: str) -> None:
        self.send({"t": "link", "up": False, "reason": reason}, key="link")

    def step(self, conn: psycopg.Connection, timeout: float, wake_fd: int | None = None) -> None:
        """Wait up to ``timeout`` for the wake-up or a doorbell, read when due, check the deadline."""
        bell = self.bell
        wait = max(0.0, min(bell.wait_s(), timeout, 0.25))
        p = select.poll()  # not select(): no limit on the descriptor's number
        p.register(conn.pgconn.socket, select.POLLIN)
        if wake_fd is not None:
            p.register(wake_fd, select.POLLIN)
        p.poll(wait * 1000)
        self.service(conn)

    def service(self, conn: psycopg.Connection) -> None:
        """Without waiting: the doorbells received, a read when due, the deadline."""
        self._drain(conn)
        if self.bell.due():
            self.rows.read(conn, rung=self.bell.pending)
            self.bell.done()
        self._deadline()

    def _deadline(self) -> None:
        fresh, since = self._seen
        if self.view.fresh != fresh:
            self._seen = (self.view.fresh, self.now())
            self.missed = 0
        elif self.now() - since > self.current_s:
            self.reconnects += 1
            self.missed += 1
            raise LinkDeadline(f"no fresh heartbeat from the LAP within {self.current_s:.1f} s; reconnecting")

    @property
    def reads(self) -> int:
        """Reads of the LAP's rows on this uplink (small and whole)."""
        return self.rows.reads

    @property
    def full_reads(self) -> int:
        return self.rows.full_reads


class RowReader:
    """How the uplink reads the LAP's rows: one small prepared row (:data:`PROBE_SQL`) on the
    slow timer, all of them (:data:`VIEW_SQL`, then :data:`HITS_SQL` when a hit count moved)
    only when that row moved, after a doorbell or this table's own batch, at a new connection
    and every :attr:`full_every` reads; :class:`LapView` is told either way."""

    __slots__ = (
        "_sql",
        "_probe_sql",
        "_hits_sql",
        "view",
        "reads",
        "full_reads",
        "full_every",
        "_sig",
        "_levels",
        "_since_full",
    )

    def __init__(self, schema: str, view: LapView):
        ident = sql.Identifier(schema)
        self._sql = sql.SQL(VIEW_SQL).format(s=ident)
        self._probe_sql = sql.SQL(PROBE_SQL).format(s=ident)
        self._hits_sql = sql.SQL(HITS_SQL).format(s=ident)
        self.view = view
        self.reads = 0
        self.full_reads = 0
        #: every this many reads without a doorbell, the whole read all the same: this table's own
        #: row (reconciliation, a refusal) changes with a doorbell or after its own batches, both of
        #: which read it all; this bounds how long a change could go unseen without either
        self.full_every = 10
        #: what the last whole read said of the link and the levels (None: read it all next)
        self._sig: tuple[Any, ...] | None = None
        self._levels: list[Any] = []
        self._since_full = 0

    def forget(self) -> None:
        """A new connection: the next read reads it all."""
        self._sig = None

    def read(self, conn: psycopg.Connection, rung: bool = True) -> None:
        """The LAP's rows: all of them after a doorbell (or a batch of this table's), at a new
        connection and every :attr:`full_every` reads; else :data:`PROBE_SQL`, and all of them
        when it shows the state or a level's version moved."""
        self._since_full += 1
        if not rung and self._sig is not None and self._since_full < self.full_every:
            probe = conn.execute(self._probe_sql, prepare=True).fetchone()
            self.reads += 1
            if probe is None:
                return
            state, reason, hb, versions = probe
            if (state, reason, versions) == self._sig:
                self.view.apply({"state": state, "reason": reason, "hb": hb, "levels": self._levels})
                return
        self._read_all(conn)

    def _read_all(self, conn: psycopg.Connection) -> None:
        row = conn.execute(self._sql, self.view.params(), prepare=True).fetchone()
        self.reads += 1
        self.full_reads += 1
        self._since_full = 0
        if row is None:
            return
        doc = dict(row[0])
        levels = doc.get("levels") or []
        self._levels = levels
        self._sig = (doc.get("state"), doc.get("reason"), [len(levels), sum(int(lv["version"]) for lv in levels)])
        if self.view.hits_moved(doc):
            hits = conn.execute(self._hits_sql, self.view.params()).fetchone()
            if hits is not None:
                doc.update(hits[0])
        self.view.apply(doc)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
