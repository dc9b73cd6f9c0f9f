"""The uplink's configuration (``uplink.toml``, controller/commands/uplink.py), and what every part of
the uplink shares: its log and the first line of a database error."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from psycopg import sql

from controller.lap.linkauth import LinkKey

Log = Callable[[str], None]


@dataclass(frozen=True)
class UplinkConfig:
    dsn: str  # logs in as the table's own role (user=...)
    schema: str
    table_id: str
    ledger: Path
    socket: Path
    poll_s: float = 0.5  # fallback re-read of the ledger when the table's wake-up is missed
    #: a batch's transaction holds the rows of the levels its contributions touch until it
    #: commits, and every other table's batch waits for them: batches are small (the first
    #: one-connection uplink's 500-event batches queued behind each other past every deadline and livelocked)
    batch_max: int = 50
    #: the time a batch should take: after a slower one the next is smaller (in proportion),
    #: after a quicker one larger again (doubling, up to ``batch_max``)
    batch_target_s: float = 0.5
    #: a turn sends batches for at most this long before it reads the LAP's rows again
    send_turn_s: float = 0.25
    #: the pause before a new connection: exponential with jitter, from the first to the second
    reconnect_s: tuple[float, float] = (0.2, 5.0)
    #: the table's ledger key (LoadCredential=, like the table service's): every record forwarded
    #: is verified with it
    key: bytes = field(default=b"", repr=False)
    #: doorbells (the LAP's notifications, and the uplink's own batches): at most one read of the
    #: LAP's rows per this many seconds, however many ring
    min_gap_s: float = 0.2
    #: the LAP's rows read this often without a doorbell: liveness (the heartbeat row) and meters.
    #: None: a third of ``link_timeout_s`` (a fresh heartbeat is seen well within the link timeout)
    refresh_s: float | None = None
    #: the read interval while a flood of notifications keeps the uplink from listening
    flood_refresh_s: float = 0.25
    #: the table's ``[progressive] link_timeout``: no fresh LAP heartbeat for this long (and a
    #: second more: the table closes its linked wager first) ends the connection, another is opened
    link_timeout_s: float = 3.0
    #: how often the LAP's memory of this table is compared with the ledger (and at every connection)
    memory_s: float = 10.0
    #: the same while nothing was sent since the last comparison: an idle table's records at the LAP
    #: change only by a restore or a failover (a failover changes the database's identity, which every
    #: new connection checks; its next batch checks the rest), and at 1,000 tables the comparison's
    #: statements were a third of an idle pit's cost to the database
    memory_idle_s: float = 60.0
    #: the table's link key (``tablectl lap --enrol-table``; LoadCredential=, like the ledger key):
    #: every record sent carries its MAC, which the LAP checks before the record moves money
    link_key: LinkKey | None = field(default=None, repr=False)

    def q(self, text: str) -> sql.Composed:
        """A statement on the LAP's schema (``{s}``)."""
        return sql.SQL(text).format(s=sql.Identifier(self.schema))


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
