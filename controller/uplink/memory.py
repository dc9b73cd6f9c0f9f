"""The LAP's memory of this table and the ledger's divergence from it.

On every connection and every ``memory_s`` the uplink checks what the LAP holds of its table against
the ledger: a LAP behind it (restored from a backup, failed over to a standby that lagged) or whose
database is another one (its system identifier or timeline changed) keeps the linked wager closed (the
table hears ``mismatch``), gets every missing record again, a hit the ledger shows paid at the amount
paid (with the LAP's proof of it), and the table reopens once the LAP has reconciled the resend.  Each
is recorded (``recoveries``, the floor view).  The LAP's record of the ledger's chain head is compared
with the ledger at each connection: a ledger that is another one (diverged) sends nothing."""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg

from controller.uplink.batching import Batcher
from controller.uplink.config import Log, UplinkConfig, first_line
from controller.uplink.foreign import ForeignCheck
from controller.uplink.lapview import LapView
from controller.uplink.ledgerseam import LedgerSource, head_problem

Send = Callable[..., None]


class LapMemory:
    """What the LAP was seen to hold of this table, and whether the ledger here is the one it knows."""

    __slots__ = (
        "acked_seen",
        "agreed",
        "behind",
        "cfg",
        "diverged",
        "foreign",
        "foreign_found",
        "identity",
        "lap_high",
        "log",
        "next_check",
        "recoveries",
        "send",
        "view",
    )

    def __init__(self, cfg: UplinkConfig, log: Log, send: Send, view: LapView) -> None:
        self.cfg = cfg
        self.log = log
        self.send = send  # to the table (its channel)
        self.view = view
        #: the LAP's records of this table compared with the ledger, the other way (controller/uplink/foreign.py)
        self.foreign = ForeignCheck()
        self.foreign_found = 0
        #: the ledger here disagrees with the LAP's record of its chain head: nothing is sent
        #: (events of another ledger would be taken for this table's); checked again whenever
        #: the ledger file or the database connection is new
        self.diverged: str | None = None
        #: the LAP's memory of this table: the highest seq it was seen to hold (never goes back
        #: here), its database's identity, and why it is behind the ledger now (None: it is not)
        self.lap_high = 0
        self.identity: tuple[str, int | None] | None = None
        self.behind: str | None = None
        self.recoveries = 0
        self.next_check = 0.0
        self.agreed: tuple[int, int] = (0, 0)  # the LAP's (last seq, records) last found to agree with the ledger
        self.acked_seen = -1  # what the LAP had acknowledged at the last comparison

    def sent(self, seq: int) -> None:
        """A batch up to ``seq`` went to the LAP: it holds that much."""
        self.lap_high = max(self.lap_high, seq)

    def check(self, conn: psycopg.Connection, source: LedgerSource, sender: Batcher) -> None:
        """Compare what the LAP holds of this table with the ledger (a LAP that goes
        back in time, restored from a backup or failed over to a standby that lagged, used to
        go unnoticed).  Behind: the table hears ``mismatch`` (its linked wager stays closed),
        every missing record is sent again from where the LAP's records agree with the ledger
        (a hit the ledger shows paid at the amount paid), and the table reopens once the LAP has
        reconciled it.  Each finding is recorded (``report_recovery``)."""
        idle = sender.acked == self.acked_seen and self.behind is None and self.diverged is None
        self.acked_seen = sender.acked
        self.next_check = time.monotonic() + (self.cfg.memory_idle_s if idle else self.cfg.memory_s)
        sender.verify(conn, source)  # the paid hits are read from the verified part only
        problem, kind, resend_from = self._problem(conn, source, sender.acked)
        if self.diverged is None:
            self._check_foreign(conn, source)
        if problem is not None and self.behind is None:
            self.behind = problem
            self.view.behind = f"the LAP is behind this table: {problem}"
            self.send({"t": "mismatch", "problem": self.view.behind}, key="reconciled")
            self.log(f"uplink: {self.view.behind}; resending from event {resend_from + 1}")
            self._record(conn, kind, problem)
        if problem is not None:
            if resend_from < sender.acked:
                sender.acked = resend_from
                source.rewind()  # verified again from there: nothing unverified is resent
            return
        if self.behind is not None and self._caught_up(conn, sender.acked):
            self.log(f"uplink: the LAP holds this table's records again (was: {self.behind})")
            self._record(conn, "caught-up", f"resent to event {sender.acked}, reconciled (was: {self.behind})")
            self.behind = None
            self.view.behind = None
            self.view.retell()

    def _problem(self, conn: psycopg.Connection, source: LedgerSource, acked: int) -> tuple[str | None, str, int]:
        """(what is wrong, the recovery's kind, the seq to resend after) of the LAP's memory."""
        row = conn.execute(
            self.cfg.q(
                "SELECT coalesce(h.events, 0), coalesce(h.max_seq, 0), s.system_identifier::text,"
                " CASE WHEN pg_is_in_recovery() THEN NULL ELSE"
                " ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END"
                " FROM pg_control_system() s LEFT JOIN {s}.held h ON h.table_id = %s"
            ),
            (self.cfg.table_id,),
        ).fetchone()
        assert row is not None
        events, high = int(row[0]), int(row[1])
        identity = (str(row[2]), None if row[3] is None else int(row[3]))
        was, self.identity = self.identity, identity
        if was is not None and was != identity:
            self.foreign = ForeignCheck()  # another database: its records are read again
            self.lap_high = max(self.lap_high, acked)
            return (
                f"its database is another one now (system {was[0]} timeline {was[1]} -> "
                f"system {identity[0]} timeline {identity[1]}: a failover or a restore)",
                "identity-changed",
                high if self._agrees_to(source, high, events) else 0,
            )
        if not self._agrees_to(source, high, events):
            return f"it holds {events} records of this table up to event {high}, the ledger others", "lap-behind", 0
        if high < self.lap_high:
            return (
                f"it holds this table's records up to event {high}, it held them up to {self.lap_high}",
                ("lap-behind"),
                high,
            )
        lost = self._paid_hits_lost(conn, source, high)
        if lost:
            return f"it does not hold hit {lost[0]}, which the table paid", "lap-behind", min(high, lost[0] - 1)
        self.lap_high = max(self.lap_high, high)
        return None, "", high

    def _agrees_to(self, source: LedgerSource, high: int, events: int) -> bool:
        """Whether the LAP holds as many records of this table up to ``high`` as the ledger has.
        Records beyond the ledger's end are not the LAP being behind (another ledger, records
        no genuine uplink sent: the head check and the LAP's refusals deal with those)."""
        if high == 0 or (high, events) == self.agreed:
            return True  # the ledger's past does not change (another file is another source)
        if high > source.last_seq() or source.totals(high).events == events:
            self.agreed = (high, events)
            return True
        return False

    def _paid_hits_lost(self, conn: psycopg.Connection, source: LedgerSource, high: int) -> list[int]:
        """The hits the ledger shows paid that the LAP does not hold (held: a hit after ``high``
        has not been sent, and the table cannot have been answered for it by this LAP)."""
        paid = source.paid()
        if not paid:
            return []
        rows = conn.execute(
            self.cfg.q("SELECT seq FROM {s}.hits WHERE table_id = %s AND seq = ANY(%s)"),
            (self.cfg.table_id, list(paid)),
        ).fetchall()
        held = {int(r[0]) for r in rows}
        return sorted(h for h in paid if h not in held)

    def _check_foreign(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """Report every record the LAP holds of this table that the ledger does not (once each):
        the LAP closes the table's linked wager with it and never counts such a hit as paid."""
        for seq, what in self.foreign.find(conn, self.cfg.q, self.cfg.table_id, source):
            self.foreign_found += 1
            self.log(f"uplink: the LAP holds a record of this table that its ledger does not: {what}")
            try:
                conn.execute(self.cfg.q("SELECT {s}.report_foreign(%s, %s)"), (seq, what))
            except psycopg.OperationalError:
                self.foreign.reported.discard(seq)  # reported again once the database is back
                raise
            except psycopg.Error as e:
                self.log(f"uplink: the LAP did not record it: {first_line(e)}")
        if self.foreign.more:
            self.next_check = 0.0  # a long history: the next part at the next turn

    def _caught_up(self, conn: psycopg.Connection, acked: int) -> bool:
        row = conn.execute(
            self.cfg.q("SELECT reconciled_seq, mismatch FROM {s}.members WHERE table_id = %s"), (self.cfg.table_id,)
        ).fetchone()
        return row is not None and int(row[0]) >= acked and row[1] is None

    def _record(self, conn: psycopg.Connection, kind: str, detail: str) -> None:
        self.recoveries += 1
        try:
            conn.execute(self.cfg.q("SELECT {s}.report_recovery(%s, %s)"), (kind, detail))
        except psycopg.OperationalError:
            raise
        except psycopg.Error as e:
            self.log(f"uplink: the LAP did not record the recovery: {first_line(e)}")

    def check_head(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """Compare the ledger with the LAP's record of its chain head (``members.chain_head``,
        written with each reconciled batch).  A difference is told to the table, which closes its
        linked wager with the reason, and nothing is sent until a check passes (a technician puts
        the right ledger back, or settles it with the LAP's operator; docs/linked.md)."""
        row = conn.execute(
            self.cfg.q("SELECT chain_head FROM {s}.members WHERE table_id = %s"), (self.cfg.table_id,)
        ).fetchone()
        problem = head_problem(None if row is None else row[0], source)
        if problem != self.diverged:
            if problem is not None:
                self.log(f"uplink: {problem}; sending stopped")
                self.send({"t": "diverged", "problem": problem}, key="diverged")
            else:
                self.log("uplink: the ledger agrees with the LAP's record of its head again")
                self.send({"t": "agrees"}, key="diverged")
        self.diverged = problem
