"""``tablectl lap`` as a service: the lease taken (or waited for, as the standby), the link
started after its self-check, the heartbeat beaten, the self-check repeated, the connection's
life kept by one reconnect state machine and a watchdog on every statement — start-up and
standby included (controller/lap/lap.py holds the schema's side: :class:`LapStore`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from controller.lap import guard, lease, pgconn
from controller.lap.config import LapConfig
from controller.lap.lap import LapError, LapStore, connect
from controller.lap.reconnect import Reconnect
from controller.lap.replication import replication

#: the LAP's heartbeat statement returns within this, or its connection is taken for dead
HEARTBEAT_DEADLINE_S = 5.0
#: each step of a start-up (the schema installed or configured, the self-check, the reconciliation)
#: answers within this, or its connection is taken for dead: a start-up the network swallowed is
#: begun again on a fresh connection this long after (a fresh install takes 0.2 s on a quiet
#: machine; at 15 s the pit of chaos seed 3 opened again 15.3 s after the last fault)
START_STEP_S = 8.0
#: and the configuration's step this much longer per parameter change it records
CONFIGURE_STEP_S = 1.0


@dataclass
class LapService:
    """``tablectl lap``: applies the configuration with the link stopped, self-checks (the
    schema's code against this release's, every level reconciled, the parameters as configured),
    starts the link and beats its heartbeat until told to stop; repeats the self-check every
    ``[link] reconcile`` and makes the link **inoperable** (every table closed, the reason
    recorded and shown) at the first problem; reconnects when PostgreSQL goes away (the tables
    close their linked wagers meanwhile: no heartbeat reaches them)."""

    cfg: LapConfig
    dsn: str
    log: Callable[[str], None] = print
    stop_event: threading.Event = field(default_factory=threading.Event)
    #: called each time the link is (re)started, schema installed (the floor view starts then)
    on_running: Callable[[], None] = lambda: None
    _killed: bool = field(default=False, init=False)
    _said_inoperable: bool = field(default=False, init=False)
    _replication: str | None = field(default=None, init=False)
    #: the meters' doorbell: at most this often (a bounded rate of reads per table)
    push_s: float = 0.25
    _pushed: int | None = field(default=None, init=False)
    #: the LAP's deadlines on the tables' sessions (controller/lap/guard.py)
    _guard: guard.SessionGuard | None = field(default=None, init=False)
    #: this LAP's name in the leadership lease (controller/lap/lease.py): the host's by default
    name: str = field(default_factory=lease.default_name)
    #: while another LAP is active: this one's connection, polling the lease
    _standby: LapStore | None = field(default=None, init=False)
    _said_active: tuple[str, int] | None = field(default=None, init=False)
    #: the client-side deadline on the statement in flight, start-up and standby included
    _dog: pgconn.Watchdog | None = field(default=None, init=False)

    def _step(self, conn: psycopg.Connection | None, limit_s: float = 0.0) -> None:
        """The next statements on ``conn`` answer within ``limit_s`` (default: a heartbeat's
        deadline), or their connection is taken for dead; None: no statement out."""
        if self._dog is not None:
            self._dog.tick(conn, limit_s or HEARTBEAT_DEADLINE_S)

    def self_check(self, store: LapStore) -> list[str]:
        """What makes the LAP inoperable: its schema's code is not this release's, a level does
        not reconcile, a parameter differs from ``lap.toml`` (changed outside the stopped state)."""
        problems = [f"schema: {d}" for d in store.schema_differences()]
        # a table whose own batch totals disagree is closed by it, not the link (its fault is its own)
        problems += store.reconcile().link_problems
        problems += [f"parameter changed while the link ran: {c}" for c in store.differences(self.cfg)]
        return problems

    def start_link(self) -> LapStore:
        """The link started by this LAP once it holds the lease.  While another LAP is active this
        one is the standby: it waits here, polling the lease on one connection (its floor view
        serves meanwhile), until the lease lapses, or until it is told to stop
        (:class:`~controller.lap.lease.StandbyStopped`)."""
        while True:
            store = self._try_start_link()
            if store is not None:
                return store
            self.on_running()
            if self.stop_event.wait(min(self.cfg.heartbeat_s, 0.5)):
                assert self._standby is not None
                self._standby.conn.close()
                self._standby = None
                raise lease.StandbyStopped(f"{self.name} stopped as the standby")

    def _try_start_link(self) -> LapStore | None:
        """The link started by this LAP once it holds the lease; None while another LAP is
        active (this one is the standby: it polls the lease on the same connection)."""
        polling = self._standby is not None
        store, self._standby = self._standby or LapStore(connect(self.dsn), self.cfg.schema), None
        # a start-up or a standby's poll on a connection the network swallowed waited for good
        # (the pit closed until someone restarted the LAP): each step has its deadline too (a
        # poll's a heartbeat's; a fresh connection's may install the schema first)
        self._step(store.conn, HEARTBEAT_DEADLINE_S if polling else START_STEP_S)
        try:
            if not self._take_lease(store):
                self._step(None)
                self._standby = store
                return None
            return self._start(store)
        except BaseException:
            self._step(None)
            store.conn.close()
            raise

    def _take_lease(self, store: LapStore) -> bool:
        """Whether this LAP is now the active one (the schema created first if missing)."""
        if store.install(self.cfg.group):
            self.log(f"lap: schema {self.cfg.schema} created")
        ttl = lease.lease_s(self.cfg.heartbeat_s)
        try:
            store.epoch = lease.acquire(store.conn, self.cfg.schema, self.name, ttl)
        except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedFunction, psycopg.errors.UndefinedObject):
            raise LapError(
                f"schema {self.cfg.schema} was made by a release without the LAP's lease (lap_lease): settle the"
                " group with `tablectl lap --reconcile` of its release, then start this release on a new schema"
            ) from None
        if store.epoch is not None:
            self._said_active = None
            self.log(f"lap: {self.name} is the active LAP (lease epoch {store.epoch}, {ttl:g} s, renewed each beat)")
            return True
        self._say_standby(store)
        return False

    def _say_standby(self, store: LapStore) -> None:
        """Log that this LAP is the standby, and which is active, once per active LAP's epoch."""
        st = lease.status(store.conn, self.cfg.schema)
        if st is not None and (st.holder, st.epoch) != self._said_active:
            self._said_active = (st.holder, st.epoch)
            self.log(f"lap: {self.name} is the standby; {st.line()}")

    def _start(self, store: LapStore) -> LapStore:
        self._step(store.conn, START_STEP_S)
        if store.install(self.cfg.group):
            self.log(f"lap: schema {self.cfg.schema} created")
        # a table's session holding a level's row would keep the configuration waiting (for good,
        # were its deadlines its own): ended here once past table_run, the configuration's wait for
        # a lock bounded (controller/lap/guard.py; LapStore.configure)
        self._keep_deadlines(store)
        changes = store.differences(self.cfg)
        if changes:
            # a pit's first start configures every table (a role, its grants, a recorded change
            # each): 1,000 tables took over 4 minutes on a loaded 2-core machine, far past one
            # step's deadline, which ended the connection and started the same configuration
            # again, for good
            self._step(store.conn, START_STEP_S + CONFIGURE_STEP_S * len(changes))
            if store.state() == "running":
                store.set_state("stopped")
            store.configure(self.cfg)
            for c in changes:
                self.log(f"lap: parameter change recorded: {c}")
        self._step(store.conn, START_STEP_S)
        problems = self.self_check(store)
        self._step(store.conn, START_STEP_S)
        if problems:
            store.set_inoperable("self-check at start-up: " + "; ".join(problems))
            raise LapError("self-check failed: " + "; ".join(problems))
        unsafe = self.check_replication(store)
        if unsafe:
            raise LapError(unsafe)
        store.set_state("running")
        rec = store.reconcile()
        self.log(f"lap: link {self.cfg.group} running ({rec.counts()}, meters reconciled, schema is this release's)")
        return store

    def check_replication(self, store: LapStore) -> str | None:
        """Whether an acknowledged hit survives the primary's loss: said (log when it changes,
        the floor view), and why the LAP must not run, unless ``lap.toml`` allows it
        (``[link] allow_async_replication = true``)."""
        rep = replication(store.conn)
        note = rep.text if rep.safe or not self.cfg.allow_async_replication else f"{rep.text} (allowed by lap.toml)"
        if note != self._replication:
            self._replication = note
            self.log(f"lap: replication: {note}")
        store.record_replication(note)
        if rep.safe or self.cfg.allow_async_replication:
            return None
        return (
            f"replication: {rep.text}; an acknowledged hit can be lost with this server (set [link] "
            "allow_async_replication = true in lap.toml to run so knowingly)"
        )

    def watch(self, store: LapStore) -> None:
        """The timer's self-check while the link runs (and the database's own at every batch,
        which may have made it inoperable already: logged once)."""
        state = store.state()
        if state == "running":
            problems = self.self_check(store)
            unsafe = self.check_replication(store)
            if unsafe:
                problems.append(unsafe)
            if problems:
                store.set_inoperable("; ".join(problems))
                state = "inoperable"
        if state == "inoperable" and not self._said_inoperable:
            self._said_inoperable = True
            self.log(f"lap: the link is INOPERABLE, every table closed: {store.inoperable_reason()}")

    def kill(self) -> None:
        """Stop as a crash would (tests, the chaos bench): no clean ``stopped`` state, the
        heartbeat simply ends."""
        self._killed = True
        self.stop_event.set()

    def run(self) -> None:
        self._killed = False
        self._said_inoperable = False
        store: LapStore | None = None
        next_check = 0.0
        # the connection's life (controller/lap/reconnect.py): a heartbeat owed and none written
        # within HEARTBEAT_DEADLINE_S ends the connection, whatever it was doing
        relink = Reconnect(
            "the LAP", HEARTBEAT_DEADLINE_S, pgconn.Backoff(0.2, 2.0), shutter=lambda st: pgconn.shut(st.conn)
        )
        # a statement that does not return ends the connection (a network that swallows bytes)
        dog = pgconn.Watchdog(HEARTBEAT_DEADLINE_S, self.stop_event, "lap-watchdog", also=relink.enforce)
        self._dog = dog
        while not self.stop_event.is_set():
            try:
                if store is None:
                    dog.tick(None)
                    store = relink.connect(self.start_link)
                    next_check = time.monotonic() + self.cfg.reconcile_s
                    self.on_running()
                relink.waiting()  # a heartbeat is owed
                dog.tick(store.conn)
                store.heartbeat()
                relink.progressed(more=True)  # and the next one after it
                self._keep_deadlines(store)
                if time.monotonic() >= next_check:
                    # the self-check may take long on a live connection: its own statement limit holds
                    relink.settled()
                    dog.tick(store.conn, pgconn.LAP.statement_timeout_ms / 1000)
                    self.watch(store)
                    next_check = time.monotonic() + self.cfg.reconcile_s
                dog.tick(None)
                self._until_next_beat(store, dog)
            except lease.LeaseLost as e:  # another LAP is active: this one is the standby again
                dog.tick(None)
                if store is not None:
                    self.log(f"lap: {self.name} lost the lease, stepping down to standby: {e}")
                    store.conn.close()
                store = None
            except psycopg.OperationalError as e:
                dog.tick(None)
                pause = relink.pause if store is None else relink.fail(str(e).strip().splitlines()[0])
                self.log(f"lap: database unreachable ({relink.reason}); retrying in {pause:.1f} s")
                if store is not None:
                    store.conn.close()
                store = None
                self.stop_event.wait(pause)
        if self._standby is not None:
            self._standby.conn.close()
            self._standby = None
        if store is not None:
            self._stop_clean(store)

    def _until_next_beat(self, store: LapStore, dog: pgconn.Watchdog) -> None:
        """Wait for the next heartbeat, ringing the meters' doorbell meanwhile at most every
        :attr:`push_s` when a level moved (the rules do not ring it per contribution: every
        table would read the meters for every contribution)."""
        end = time.monotonic() + self.cfg.heartbeat_s
        while not self.stop_event.wait(max(0.0, min(self.push_s, end - time.monotonic()))):
            # rung before the beat too: a heartbeat at least as frequent as ``push_s`` left the
            # meters' doorbell unrung, and the tables heard a meter only at their slow read
            dog.tick(store.conn)
            self._pushed = store.push_meters(self._pushed)
            self._keep_deadlines(store)
            dog.tick(None)
            if time.monotonic() >= end:
                return

    def _keep_deadlines(self, store: LapStore) -> None:
        """End the table sessions past the LAP's deadlines (at most every 0.25 s), and say so."""
        if self._guard is None:
            self._guard = guard.SessionGuard(self.cfg.schema, self.cfg.table_hold_s, self.cfg.table_run_s)
        if not self._guard.due():
            return
        with store.write():
            done, problem = self._guard.check(store.conn)
        for r in done:
            self.log(guard.line(r))
        if problem is not None:
            self.log(f"lap: cannot end the tables' sessions past its deadlines: {problem}")

    def _stop_clean(self, store: LapStore) -> None:
        """The link stopped (unless killed), the lease let go so a standby need not wait for it."""
        try:
            if not self._killed and store.state() == "running":  # an inoperable link stays so
                store.set_state("stopped")
            if not self._killed and store.epoch is not None:
                lease.release(store.conn, self.cfg.schema, store.epoch)
        except lease.LeaseLost:
            pass  # another LAP is active: nothing of this one's to stop
        finally:
            store.conn.close()
