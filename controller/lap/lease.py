"""The LAP's leadership lease: which of the LAP processes (one per host, two hosts) is active.

The lease is a row in the group's schema with a fencing epoch (controller/lap/schema_lease.py).
The active LAP renews it with its heartbeat; a standby polls and takes it once it has lapsed by
the database's clock.  Every write of the active LAP begins its transaction with the epoch's
check (:func:`fenced`), so a LAP that lost the lease — paused (SIGSTOP, a VM frozen), cut off
from the database longer than the lease — has each write refused when it wakes, and steps down
(:class:`LeaseLost`).

A lease is renewed at every heartbeat and lasts :func:`lease_s` (three heartbeats, at least the
tables' default link timeout of 3 s): the tables close their linked wagers after their link
timeout without a heartbeat anyway, so a shorter lease gains nothing and a longer one keeps the
pit closed longer after the active host dies.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from controller.lap.schema import check_name
from controller.lap.schema_lease import LEASE_LOST

__all__ = [
    "LEASE_LOST",
    "LeaseLost",
    "LeaseState",
    "StandbyStopped",
    "acquire",
    "default_name",
    "fenced",
    "refused_as_lost",
    "release",
    "status",
]


class LeaseLost(RuntimeError):
    """This LAP's epoch is no longer the lease's: another LAP is active (it steps down)."""


class StandbyStopped(LeaseLost):
    """The standby was told to stop while it waited for the lease."""


def default_name() -> str:
    """This LAP's name in the lease: ``TABLECTL_LAP_NAME`` (two LAPs on one host, the tests),
    else the host's name."""
    return (os.environ.get("TABLECTL_LAP_NAME") or socket.gethostname() or "lap")[:120]


def lease_s(heartbeat_s: float) -> float:
    """How long a renewal keeps the lease (see the module's note)."""
    return max(3.0, 3 * heartbeat_s)


@dataclass(frozen=True)
class LeaseState:
    holder: str
    epoch: int
    pid: int | None
    left_s: float  # until the lease lapses (negative: lapsed that long ago)

    @property
    def live(self) -> bool:
        return self.epoch > 0 and self.left_s > 0

    def line(self) -> str:
        """Which LAP is active, in a technician's words."""
        if self.epoch == 0:
            return "active LAP: none yet (no LAP has held the lease)"
        who = f"{self.holder} (lease epoch {self.epoch}, pid {self.pid if self.pid is not None else '?'})"
        if self.live:
            return f"active LAP: {who}, lease renewed, {self.left_s:.1f} s left"
        return f"active LAP: NONE: the lease of {who} lapsed {-self.left_s:.1f} s ago"


def _q(schema: str, text: str) -> sql.Composed:
    return sql.SQL(text).format(s=sql.Identifier(schema))


def status(conn: psycopg.Connection, schema: str) -> LeaseState | None:
    """The lease as the database has it (None: a schema of a release before the lease)."""
    try:
        row = conn.execute(
            _q(
                schema,
                "SELECT holder, epoch, pid, extract(epoch FROM expires_at - clock_timestamp())::float8"
                " FROM {s}.lap_lease",
            )
        ).fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    if row is None:
        return None
    return LeaseState(str(row[0]), int(row[1]), row[2], float(row[3]))


def acquire(conn: psycopg.Connection, schema: str, holder: str, ttl_s: float) -> int | None:
    """A new epoch when the lease lapsed or is ``holder``'s already; None while another LAP's
    runs (or a write of the active LAP holds its row this instant)."""
    try:
        with conn.transaction():
            conn.execute("SET LOCAL lock_timeout = '200ms'")
            row = conn.execute(
                _q(schema, "SELECT {s}.lease_acquire(%s, %s, pg_backend_pid())"), (holder, ttl_s)
            ).fetchone()
    except psycopg.errors.LockNotAvailable:
        end_swallowed_holders(conn, schema, holder, ttl_s)
        return None
    return None if row is None or row[0] is None else int(row[0])


#: sessions idle inside a transaction that holds the lease's row for longer than a lease lasts,
#: when the lease is the caller's or has lapsed: a LAP connection the network swallowed mid-write
_SWALLOWED = """
SELECT count(pg_terminate_backend(a.pid)) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'relation' AND l.granted AND l.relation = to_regclass(%(table)s)
  AND a.pid <> pg_backend_pid() AND a.state LIKE 'idle in transaction%%'
  AND a.state_change < clock_timestamp() - make_interval(secs => %(ttl)s)
  AND EXISTS (SELECT 1 FROM {s}.lap_lease WHERE holder = %(holder)s OR expires_at < clock_timestamp())
"""


def end_swallowed_holders(conn: psycopg.Connection, schema: str, holder: str, ttl_s: float) -> int:
    """End the sessions that keep the lease's row locked from a connection nobody will use again.

    A LAP whose connection the network swallowed in the middle of a write (nothing closed,
    nobody told) leaves its session idle in a transaction that holds the lease's row; the server
    learns of it only at ``idle_in_transaction_session_timeout`` (a minute), and until then no
    LAP, not even the same host's on a fresh connection, can take the lease: the pit stays
    closed.  Such a session is ended once it has been idle for longer than a lease lasts, and
    only while the lease is this holder's or has lapsed, so a live LAP's write is never cut.
    How many were ended."""
    row = conn.execute(
        _q(schema, _SWALLOWED), {"table": f"{check_name(schema)}.lap_lease", "ttl": ttl_s, "holder": holder}
    ).fetchone()
    return int(row[0]) if row else 0


def release(conn: psycopg.Connection, schema: str, epoch: int) -> None:
    """Let the lease lapse now (a clean stop: the standby need not wait for it)."""
    conn.execute(
        _q(schema, "UPDATE {s}.lap_lease SET expires_at = clock_timestamp() WHERE epoch = %s"),
        (epoch,),
    )


@contextmanager
def fenced(conn: psycopg.Connection, schema: str, epoch: int | None, *, renew: bool = False) -> Iterator[None]:
    """A transaction that writes only while ``epoch`` is the lease's (``renew``: and extends the
    lease); :class:`LeaseLost` when it is not.  ``epoch`` None: no lease (the operator's one-shot
    commands), no fence."""
    if epoch is None:
        yield
        return
    with refused_as_lost(), conn.transaction():
        fn = "lease_renew" if renew else "lease_hold"
        conn.execute(_q(schema, "SELECT {s}." + fn + "(%s)"), (epoch,))
        yield


@contextmanager
def refused_as_lost() -> Iterator[None]:
    """The database's refusal of a lapsed epoch as :class:`LeaseLost` (for a statement that checks
    the epoch itself: one round trip on the heartbeat's and the meters' hot path)."""
    try:
        yield
    except psycopg.Error as e:
        if e.sqlstate == LEASE_LOST:
            raise LeaseLost(_first_line(e)) from None
        raise


def _first_line(e: Any) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
