"""The uplink's sending side: the ledger verified through its one seam (controller/uplink/ledgerseam.py:
every record's MAC under the table's key and its place in the chain), the new ``link.*`` records of the
verified part inserted in one transaction per batch, ``ON CONFLICT (table_id, seq) DO NOTHING`` (a
resend is a no-op), with a ``batches`` row naming the chain head at the batch's last seq and the
table's own totals, which the LAP checks; each record signed with the table's link key.  Batches are
small and sized by the time the last one took (the level's lock is held for a batch's transaction).
A record that does not verify stops forwarding there: the table is told, the LAP records it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

from controller.lap import pgconn
from controller.lap.linkauth import LinkKey, aware_time, sign_batch, sign_event
from controller.uplink.config import Log, UplinkConfig, first_line
from controller.uplink.connection import Connection
from controller.uplink.lapview import Listener
from controller.uplink.ledgerseam import LedgerSource, LinkEvent, Unverified

Send = Callable[..., None]


class Batcher:
    """What the LAP holds of this table (``acked``), the next batch's size, the first record that
    does not verify."""

    __slots__ = (
        "busy",
        "batch_n",
        "cancelled",
        "acked",
        "sent_batches",
        "force",
        "unverified",
        "cfg",
        "log",
        "send",
        "link_key",
        "connection",
        "listener",
        "stop_event",
        "on_sent",
    )

    def __init__(
        self,
        cfg: UplinkConfig,
        log: Log,
        send: Send,
        connection: Connection,
        listener: Listener,
    ) -> None:
        if cfg.link_key is None:
            raise ValueError("the uplink needs the table's link key (tablectl lap --enrol-table): it signs each record")
        self.cfg = cfg
        self.log = log
        self.send = send  # to the table (its channel)
        self.link_key: LinkKey = cfg.link_key
        self.connection = connection
        self.listener = listener
        self.stop_event: threading.Event = connection.stop_event
        self.busy = pgconn.Backoff(*cfg.reconnect_s)  # statements the server cancelled (busy)
        self.batch_n = cfg.batch_max  # the next batch's size (adapted to the time one takes)
        self.cancelled = 0  # batches the server cancelled (statement_timeout), sent again smaller
        self.acked = 0  # the highest seq the LAP holds from this table
        self.sent_batches = 0
        #: a batch even with nothing new (the LAP holds events it has not reconciled; kept until
        #: one is sent: the server may cancel it)
        self.force = False
        #: the first ledger record that does not verify (nothing from it on is sent)
        self.unverified: Unverified | None = None
        #: told the last seq of each batch sent (the LAP's memory: the highest seq it was seen to hold)
        self.on_sent: Callable[[int], None] = lambda seq: None

    def turn(self, conn: psycopg.Connection, source: LedgerSource, wake: Callable[[], None]) -> None:
        """Batches for at most ``send_turn_s``; what remains is sent next turn, after a read of
        the LAP's rows (a backlog does not keep the table from hearing its heartbeats)."""
        until = time.monotonic() + self.cfg.send_turn_s
        while self.batch(conn, source):
            if time.monotonic() >= until:
                wake()  # more to send: the next turn does not wait
                return

    def cancelled_by_server(self, e: psycopg.Error) -> None:
        """The server cancelled a batch's statement (its ``statement_timeout``: it waited behind
        other tables' batches for a level's lock, or the server is busy).  The connection is
        sound (the server answered): the batch was rolled back whole and is sent again, smaller,
        after a pause; no reconnection."""
        self.cancelled += 1
        self.connection.relink.progressed(more=True)  # the server answered: the connection is alive, the batch waits
        self.batch_n = max(1, self.batch_n // 4)
        pause = self.busy.next()
        self.log(f"uplink: the LAP cancelled a batch ({first_line(e)}); sending {self.batch_n} in {pause:.1f} s")
        self.stop_event.wait(pause)

    def reverified(self) -> None:
        """The ledger is opened afresh: verified again from the LAP's position."""
        if self.unverified is not None:
            self.unverified = None
            self.send({"t": "verified"}, key="unverified")

    def verify(self, conn: psycopg.Connection, source: LedgerSource) -> None:
        """Verify the ledger up to its end; the first record that fails is reported once."""
        bad = source.verify(self.acked)
        if bad is None or bad == self.unverified:
            return
        self.unverified = bad
        self.log(f"uplink: ledger record {bad.seq} does not verify ({bad.problem}); nothing from it on is sent")
        self.send({"t": "unverified", "seq": bad.seq, "problem": bad.problem}, key="unverified")
        try:
            conn.execute(self.cfg.q("SELECT {s}.report_unverified(%s, %s)"), (bad.seq, bad.problem))
        except psycopg.OperationalError:
            self.unverified = None  # reported again once the database is back
            raise
        except psycopg.Error as e:
            self.log(f"uplink: the LAP did not record it: {first_line(e)}")

    def batch(self, conn: psycopg.Connection, source: LedgerSource) -> bool:
        """Send the next batch of verified link events; True when there may be more.  ``force``:
        a batch even when there is nothing new (the LAP holds events it has not reconciled)."""
        self.verify(conn, source)
        n = self.batch_n
        evs = source.link_events(self.acked, n)
        relink = self.connection.relink
        if not evs and not self.force:
            relink.settled()
            return False
        relink.waiting()
        started = time.monotonic()
        self.connection.tick(conn, self.connection.send_limit_s)
        last = evs[-1].seq if evs else self.acked
        tot = source.totals(last)
        paid = source.paid() if any(e.kind == "hit" for e in evs) else {}
        with conn.transaction():
            if evs:
                with conn.cursor() as cur:
                    cur.executemany(
                        self.cfg.q(
                            "INSERT INTO {s}.events (table_id, seq, kind, level, data, table_time, key_no, auth)"
                            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (table_id, seq) DO NOTHING"
                        ),
                        [_signed(self.link_key, e, _with_paid(e, paid)) for e in evs],
                    )
            conn.execute(
                self.cfg.q(
                    "INSERT INTO {s}.batches (table_id, last_seq, events_total, wagers_total, chain_head, key_no, auth)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s)"
                ),
                (
                    self.cfg.table_id,
                    tot.last_seq,
                    tot.events,
                    tot.wagers,
                    tot.head,
                    self.link_key.key_no,
                    sign_batch(self.link_key, tot.last_seq, tot.events, tot.wagers, tot.head),
                ),
            )
        self.connection.tick(conn, self.connection.read_limit_s)
        relink.progressed(more=len(evs) == n)
        for e in evs:
            if e.kind == "hit":  # its answer is read next: a claim until it is
                relink.claim(e.seq, self.connection.claim_s)
        self.force = False
        self.took(time.monotonic() - started)
        self.acked = last
        self.on_sent(last)
        self.sent_batches += 1
        self.listener.bell.ring()  # the LAP's answer to this batch (reconciled, refused) is read next
        return len(evs) == n

    def took(self, took: float) -> None:
        """The next batch's size after one that took ``took`` seconds: in proportion when it took
        longer than ``batch_target_s`` (the level's lock is held about that long), doubled
        (up to ``batch_max``) when quicker."""
        target = self.cfg.batch_target_s
        if took > target:
            self.batch_n = max(1, int(self.batch_n * target / took))
        else:
            self.batch_n = min(self.cfg.batch_max, self.batch_n * 2)
        self.busy.reset()


def _with_paid(e: LinkEvent, paid: dict[int, tuple[int, str | None]]) -> dict[str, Any]:
    """A hit the ledger shows paid carries the amount paid and the LAP's proof that it decided it:
    a LAP that does not hold it (behind the table) re-establishes it at that amount instead of
    pricing it again, with the proof only (a LAP that holds it ignores the resend)."""
    if e.kind == "hit" and e.seq in paid:
        cents, proof = paid[e.seq]
        return {**e.data, "paid_cents": cents, **({} if proof is None else {"paid_proof": proof})}
    return e.data


def _signed(k: LinkKey, e: LinkEvent, data: dict[str, Any]) -> tuple[Any, ...]:
    """An event's row, with its MAC under the table's link key (the LAP checks it before it applies it)."""
    tt = aware_time(e.table_time)
    auth = sign_event(k, e.seq, e.kind, e.level, tt, data)
    return (k.table_id, e.seq, e.kind, e.level, json.dumps(data), tt, k.key_no, auth)
