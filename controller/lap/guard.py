"""The LAP's deadlines on the tables' database sessions, kept by the LAP process itself.

A table's role may ``SET statement_timeout = 0`` (and every other session deadline) in its own
session: a deadline the role could lower is no deadline.  So the LAP does not depend on them.
Every ``[link] heartbeat`` (at most every 0.25 s) it reads ``pg_stat_activity`` and ``pg_locks``
in one statement (every session only when a lock is waited for, or for the run deadline at most
every second: at 200 idle tables, reading every session took 2.2 ms, four times a second) and,
for each session of a member table's role:

- **a lock others wait for** (a level's row, taken by an event it inserted), held longer than
  ``[link] table_hold`` (1 s): a session idle in its transaction that long is **ended**
  (``pg_terminate_backend``: its transaction rolls back and the lock is released), a statement
  running that long is **cancelled** (``pg_cancel_backend``: an uplink sends a batch the server
  cancelled again, smaller, on the same connection; a genuine batch's statements take
  milliseconds).  How long the others have waited is not the measure: behind a queue of genuine
  batches each held briefly a waiter can wait long, and no one of them is at fault;
- **past the deadline**: a statement or a transaction that has run longer than ``[link]
  table_run`` (10 s; an uplink's statements are ended by the server after its link timeout + 1 s)
  is **ended**.

Each is recorded in ``terminations`` (when, table, session, what, why, its statement) in the same
statement that signals it, and logged.  The other tables, waiting behind the lock, are answered
within about ``table_hold`` + 0.25 s: under their link timeout, so they stay open.

The LAP's role must be allowed to see and signal the table roles' sessions: a superuser, a member
of each table role (the LAP makes itself one when it creates the role: controller/lap/lap.py), or
of ``pg_signal_backend`` and ``pg_read_all_stats``.  When it is not, the guard says so once in
the log and the self-check reports it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

#: the sessions to act on now (one statement: the signal and its record together)
_ACT = """
WITH me AS (SELECT table_id, role FROM {s}.members),
ses AS (
    SELECT a.pid, me.table_id, a.state, a.wait_event_type, left(a.query, 300) AS query,
        extract(epoch FROM clock_timestamp() - a.xact_start) AS xact_s,
        extract(epoch FROM clock_timestamp() - a.query_start) AS query_s,
        extract(epoch FROM clock_timestamp() - a.state_change) AS state_s
    FROM pg_stat_activity a JOIN me ON me.role = a.usename
    WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
        -- every session is looked at only for the run deadline (%(full)s, every second or so)
        -- or when a lock is waited for: a pit of idle tables' sessions is not read 4 times a second
        AND (%(full)s OR EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted))),
-- a session idle in its transaction, or running one statement, for table_hold: only if there is
-- one are the waiters' blockers looked up (pg_blocking_pids takes the lock manager's locks; most
-- checks find no such session and never call it)
held AS (
    SELECT pid FROM ses WHERE (state LIKE 'idle in transaction%%' AND state_s > %(hold)s)
        OR (state = 'active' AND wait_event_type IS DISTINCT FROM 'Lock' AND query_s > %(hold)s)),
blocking AS (
    SELECT DISTINCT b AS pid FROM (SELECT DISTINCT pid FROM pg_locks WHERE NOT granted) w,
        unnest(pg_blocking_pids(w.pid)) b WHERE EXISTS (SELECT 1 FROM held)),
verdict AS (
    SELECT ses.*, CASE
        WHEN ses.state = 'active' AND ses.query_s > %(run)s THEN 'ended'
        WHEN ses.xact_s > %(run)s THEN 'ended'
        WHEN b.pid IS NOT NULL AND ses.state LIKE 'idle in transaction%%' AND ses.state_s > %(hold)s THEN 'ended'
        WHEN b.pid IS NOT NULL AND ses.state = 'active' AND ses.wait_event_type IS DISTINCT FROM 'Lock'
            AND ses.query_s > %(hold)s THEN 'cancelled' END AS action,
        CASE
        WHEN ses.state = 'active' AND ses.query_s > %(run)s
            THEN format('its statement ran %%s s, past the LAP''s %%s s', round(ses.query_s::numeric, 1), %(run)s)
        WHEN ses.xact_s > %(run)s
            THEN format('its transaction ran %%s s, past the LAP''s %%s s', round(ses.xact_s::numeric, 1), %(run)s)
        WHEN ses.state = 'active'
            THEN format('it held a lock (a level''s row) others waited for, its statement running %%s s',
                round(ses.query_s::numeric, 1))
        ELSE format('it held a lock (a level''s row) others waited for, idle in its transaction for %%s s',
            round(ses.state_s::numeric, 1)) END AS why
    FROM ses LEFT JOIN blocking b USING (pid))
INSERT INTO {s}.terminations (table_id, pid, action, why, query, signalled)
SELECT v.table_id, v.pid, v.action, v.why, v.query,
    CASE v.action WHEN 'ended' THEN pg_terminate_backend(v.pid) ELSE pg_cancel_backend(v.pid) END
FROM verdict v WHERE v.action IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM {s}.terminations t WHERE t.pid = v.pid AND t.action = v.action
        AND t.at > clock_timestamp() - interval '2 seconds')
RETURNING table_id, pid, action, why, signalled
"""

#: whether the LAP may see and signal a table role's sessions
CAN_END = """
SELECT r.rolsuper OR pg_has_role(current_user, %(role)s, 'MEMBER')
    OR (pg_has_role(current_user, 'pg_signal_backend', 'MEMBER')
        AND pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER'))
FROM pg_roles r WHERE r.rolname = current_user
"""


@dataclass
class SessionGuard:
    """The LAP's deadlines on its tables' sessions (one check at most every ``every_s``; the
    run deadline, which needs every session read, at most every :attr:`full_every_s`)."""

    schema: str
    hold_s: float = 1.0
    run_s: float = 10.0
    every_s: float = 0.25
    _next: float = field(default=0.0, init=False)
    _next_full: float = field(default=0.0, init=False)
    _failed: str | None = field(default=None, init=False)

    @property
    def full_every_s(self) -> float:
        """How often every session is read for the run deadline: a tenth of it, at most 1 s."""
        return min(1.0, self.run_s / 10)

    def due(self) -> bool:
        return time.monotonic() >= self._next

    def _full(self) -> bool:
        now = time.monotonic()
        if now < self._next_full:
            return False
        self._next_full = now + self.full_every_s
        return True

    def check(self, conn: psycopg.Connection) -> tuple[list[dict[str, Any]], str | None]:
        """Act on the sessions past a deadline: (what was done, each a row of ``terminations``;
        a new problem that kept the guard from acting, said once).  A lost connection raises."""
        self._next = time.monotonic() + self.every_s
        q = sql.SQL(_ACT).format(s=sql.Identifier(self.schema))
        try:
            cur = conn.cursor(row_factory=psycopg.rows.dict_row)
            done = list(cur.execute(q, {"hold": self.hold_s, "run": self.run_s, "full": self._full()}).fetchall())
        except psycopg.OperationalError:
            raise
        except psycopg.Error as e:
            text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            new = text if text != self._failed else None
            self._failed = text
            return [], new
        self._failed = None
        return done, None


def line(r: dict[str, Any]) -> str:
    """A log line for one session the guard acted on."""
    what = "ended" if r["action"] == "ended" else "cancelled the statement of"
    sent = "" if r["signalled"] else " (the session was gone already)"
    return f"lap: {what} table {r['table_id']}'s session {r['pid']}: {r['why']}{sent}"
