"""The LAP controller's side of PostgreSQL: install the schema, apply ``lap.toml`` (only with
the link stopped), start and stop the link, beat the heartbeat, reconcile every level exactly.

The money rules themselves are in the database (controller/lap/schema.py); this module never
computes a meter it then writes — it reads the database's accounts back as exact
:class:`~fractions.Fraction` values to check the reconciliation identity.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from math import lcm
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from controller.lap import catalog, guard, lease, pgconn
from controller.lap.config import LapConfig, LevelParams
from controller.lap.reconcile import LevelState, Reconciliation, level_line, level_state, reconcile
from controller.lap.reconnect import Reconnect
from controller.lap.replication import Replication, replication
from controller.lap.schema import (
    FLOOR_CONNECTIONS,
    SCHEMA_VERSION,
    TABLE_CONNECTIONS,
    ddl,
    floor_grants,
    floor_role,
    grants,
    role_limits,
    role_settings,
)

__all__ = [
    "LapError",
    "LapService",
    "LapStore",
    "LevelState",
    "Reconciliation",
    "Replication",
    "connect",
    "level_line",
    "replication",
    "wait_until",
]


#: the LAP's heartbeat statement returns within this, or its connection is taken for dead
HEARTBEAT_DEADLINE_S = 5.0
#: each step of a start-up (the schema installed or configured, the self-check, the reconciliation)
#: answers within this, or its connection is taken for dead (a fresh install under load takes seconds)
START_STEP_S = 15.0


class LapError(RuntimeError):
    """The LAP refuses: a parameter change with the link running, a schema it does not know, a
    self-check that fails."""


def connect(dsn: str, *, user: str | None = None, autocommit: bool = True, timeout: float = 5) -> psycopg.Connection:
    """A connection with the LAP's deadlines (controller/lap/pgconn.py: keepalives,
    ``tcp_user_timeout``, statement and idle-in-transaction timeouts)."""
    d = dataclasses.replace(pgconn.LAP, connect_s=max(2, int(timeout)))
    return pgconn.connect(dsn, d, user=user, autocommit=autocommit)


def _level_row(p: LevelParams) -> dict[str, Any]:
    return {
        "level": p.level,
        "seed_cents": p.seed_cents,
        "reset_cents": p.reset_cents,
        "rate_num": p.rate.numerator,
        "rate_den": p.rate.denominator,
        "reserve_num": p.reserve_rate.numerator,
        "reserve_den": p.reserve_rate.denominator,
        "limit_cents": p.limit_cents,
        "at_limit": p.at_limit,
        "max_wager_cents": p.max_wager_cents,
        "meter_pays": p.pays_text,
    }


_INSERT_LEVEL = (
    "INSERT INTO {s}.levels (level, seed_cents, reset_cents, rate_num, rate_den, reserve_num, reserve_den,"
    " limit_cents, at_limit, max_wager_cents, meter_pays, den, value_num, inflow_num) VALUES (%(level)s,"
    " %(seed_cents)s, %(reset_cents)s, %(rate_num)s, %(rate_den)s, %(reserve_num)s, %(reserve_den)s,"
    " %(limit_cents)s, %(at_limit)s, %(max_wager_cents)s, %(meter_pays)s, %(den)s,"
    " %(seed_cents)s::numeric * %(den)s, %(seed_cents)s::numeric * %(den)s)"
)
_UPDATE_LEVEL = (
    "UPDATE {s}.levels SET reset_cents = %(reset_cents)s, rate_num = %(rate_num)s, rate_den = %(rate_den)s,"
    " reserve_num = %(reserve_num)s, reserve_den = %(reserve_den)s, limit_cents = %(limit_cents)s,"
    " at_limit = %(at_limit)s, max_wager_cents = %(max_wager_cents)s, meter_pays = %(meter_pays)s,"
    " den = %(den)s, value_num = value_num * %(k)s, reserve_acc = reserve_acc * %(k)s,"
    " overflow_acc = overflow_acc * %(k)s, inflow_num = inflow_num * %(k)s WHERE level = %(level)s"
)


class LapStore:
    """One linked group's schema, through one connection (autocommit; transactions explicit)."""

    def __init__(self, conn: psycopg.Connection, schema: str, epoch: int | None = None):
        self.conn = conn
        self.schema = schema
        self.s = sql.Identifier(schema)
        #: the LAP service's lease epoch: each write below is refused unless it is the lease's
        #: (controller/lap/lease.py); None for the operator's one-shot commands
        self.epoch = epoch

    def write(self, *, renew: bool = False) -> Any:
        """A transaction that writes only while this store's epoch holds the lease."""
        return lease.fenced(self.conn, self.schema, self.epoch, renew=renew)

    def q(self, text: str) -> sql.Composed:
        return sql.SQL(text).format(s=self.s)

    # ---------------------------------------------------------------- schema
    def installed(self) -> int | None:
        row = self.conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = 'schema_info'",
            (self.schema,),
        ).fetchone()
        if row is None:
            return None
        v = self.conn.execute(self.q("SELECT version FROM {s}.schema_info")).fetchone()
        return int(v[0]) if v else None

    def install(self, group: str) -> bool:
        """Create the schema if it is not there; False when it already was."""
        v = self.installed()
        if v is not None:
            if v < SCHEMA_VERSION:
                from controller.lap.migrate import migrate

                v = migrate(self.conn, self.schema, v)
            if v != SCHEMA_VERSION:
                raise LapError(
                    f"schema {self.schema} is version {v}; this LAP knows version {SCHEMA_VERSION} only "
                    "(no upgrade path from it: settle the group with `tablectl lap --reconcile` of its release, then "
                    "start this release on a new schema)"
                )
            return False
        try:
            with self.conn.transaction():
                self.conn.execute(ddl(self.schema).encode())
                self.conn.execute(self.q("INSERT INTO {s}.link (group_name) VALUES (%s)"), (group,))
        except (psycopg.errors.DuplicateSchema, psycopg.errors.UniqueViolation):
            return False  # the other host's LAP created it this instant
        return True

    def schema_differences(self) -> list[str]:
        """The schema's functions, triggers, rules and policies against this release's (the LAP's
        role needs CREATE on the database: it reads a throwaway install, rolled back)."""
        try:
            return catalog.differences(self.conn, self.schema)
        except psycopg.errors.InsufficientPrivilege as e:
            return [f"its code cannot be checked against this release's: {str(e).strip().splitlines()[0]}"]

    # ---------------------------------------------------------------- link state
    def state(self) -> str:
        row = self.conn.execute(self.q("SELECT state FROM {s}.link")).fetchone()
        assert row is not None
        return str(row[0])

    def inoperable_reason(self) -> str | None:
        row = self.conn.execute(self.q("SELECT reason FROM {s}.link WHERE state = 'inoperable'")).fetchone()
        return None if row is None else str(row[0])

    def set_state(self, state: str) -> None:
        """``stopped`` or ``running`` (an inoperable link's reason is cleared with it: recorded)."""
        with self.write():
            self.conn.execute(self.q("UPDATE {s}.link SET state = %s, reason = NULL"), (state,))

    def set_inoperable(self, reason: str) -> None:
        """Every table closed, the reason recorded (``param_changes``) and shown on the floor view."""
        with self.write():
            self.conn.execute(self.q("SELECT {s}.set_inoperable(%s)"), (reason,))

    def record_replication(self, text: str) -> None:
        """The replication check's finding, for the floor view and the tables."""
        with self.write():
            self.conn.execute(
                self.q("UPDATE {s}.link SET replication = %s WHERE replication IS DISTINCT FROM %s"), (text, text)
            )

    def heartbeat(self) -> None:
        """The heartbeat, which renews the lease (one statement: the renewal refused, nothing beats)."""
        if self.epoch is None:
            self.conn.execute(self.q("SELECT {s}.heartbeat()"))
            return
        with lease.refused_as_lost():
            self.conn.execute(self.q("SELECT {s}.lease_renew(%s), {s}.heartbeat()"), (self.epoch,))

    def push_meters(self, seen: int | None) -> int:
        """Ring the meters' doorbell when a level moved since ``seen`` (the sum of the levels'
        versions); the sum now."""
        row = self.conn.execute(self.q("SELECT coalesce(sum(version), 0)::bigint FROM {s}.levels")).fetchone()
        now = int(row[0]) if row else 0
        if seen is not None and now != seen:
            if self.epoch is None:
                self.conn.execute("SELECT pg_notify(%s, %s)", (self.schema, '{"t": "meter"}'))
                return now
            with lease.refused_as_lost():  # one statement: the epoch refused, no doorbell rings
                self.conn.execute(
                    self.q("SELECT {s}.lease_hold(%s), pg_notify(%s, %s)"), (self.epoch, self.schema, '{"t": "meter"}')
                )
        return now

    # ---------------------------------------------------------------- parameters
    def differences(self, cfg: LapConfig) -> list[str]:
        """What applying ``cfg`` would change (empty: the database already has it)."""
        out = []
        have = {r["level"]: r for r in self._rows("SELECT * FROM {s}.levels")}
        for p in cfg.levels:
            want = _level_row(p)
            row = have.pop(p.level, None)
            if row is None:
                out.append(f"level {p.level}: new")
                continue
            for k, v in want.items():
                if k != "seed_cents" and row[k] != v:
                    out.append(f"level {p.level}: {k} {row[k]} -> {v}")
        out += [f"level {lv}: not in the configuration" for lv in have]
        members = {r["table_id"]: r for r in self._rows("SELECT * FROM {s}.members")}
        for t in cfg.tables:
            row = members.pop(t.table_id, None)
            want = {"role": cfg.role_for(t.table_id), "asset": t.asset, "game": t.game}
            if row is None:
                out.append(f"table {t.table_id}: new")
            else:
                out += [f"table {t.table_id}: {k} {row[k]} -> {v}" for k, v in want.items() if row[k] != v]
        out += [f"table {tid}: leaves the link" for tid in members]
        return out + self.role_differences(cfg)

    def _roles_wanted(self, cfg: LapConfig) -> dict[str, int]:
        """Each role the link's sessions log in as, and its connection limit."""
        want = {cfg.role_for(t.table_id): TABLE_CONNECTIONS for t in cfg.tables}
        if cfg.floor is not None:
            want[floor_role(cfg.schema)] = FLOOR_CONNECTIONS
        return want

    def _role_rows(self, cfg: LapConfig) -> dict[str, dict[str, Any]]:
        cur = self.conn.cursor(row_factory=psycopg.rows.dict_row)
        rows = cur.execute(
            "SELECT r.rolname, r.rolconnlimit, coalesce(r.rolconfig, '{}') AS config,"
            " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"
            " OR pg_has_role(current_user, r.oid, 'MEMBER')"
            " OR (pg_has_role(current_user, 'pg_signal_backend', 'MEMBER')"
            " AND pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER')) AS can_end"
            " FROM pg_roles r WHERE r.rolname = ANY(%s)",
            (list(self._roles_wanted(cfg)),),
        ).fetchall()
        return {str(r["rolname"]): r for r in rows}

    def role_differences(self, cfg: LapConfig) -> list[str]:
        """The roles' connection limits, session defaults, the LAP's right to end a table's
        session and the floor view's role, against what this release sets."""
        have = self._role_rows(cfg)
        out = []
        for role, conns in self._roles_wanted(cfg).items():
            row = have.get(role)
            if row is None:
                if role == floor_role(cfg.schema):
                    out.append(f"floor view: role {role}: new")
                continue  # a new table's role: made with the table
            if row["rolconnlimit"] != conns:
                out.append(f"role {role}: connection limit {row['rolconnlimit']} -> {conns}")
            want = sorted(_role_config(cfg.table_run_s))
            if sorted(row["config"]) != want:
                out.append(f"role {role}: session defaults {sorted(row['config'])} -> {want}")
            if role != floor_role(cfg.schema) and not row["can_end"]:
                out.append(f"role {role}: the LAP cannot end its sessions (it is no member of the role)")
        return out

    def configure(self, cfg: LapConfig) -> list[str]:
        """Apply ``cfg``: refused unless the link is stopped (every change is recorded by the
        database in ``param_changes``; a rate change is a new rate version).  A level is never
        removed (its money stays accounted)."""
        with self.write(), self.conn.transaction():
            # a table's session may hold a level's row (the LAP's guard ends it, but does not run
            # while this waits): a wait past this is an error, the LAP tries again
            self.conn.execute("SET LOCAL lock_timeout = '2s'")
            row = self.conn.execute(self.q("SELECT state FROM {s}.link FOR UPDATE")).fetchone()
            assert row is not None
            changes = self.differences(cfg)
            if not changes:
                return []
            if row[0] != "stopped":
                raise LapError("parameters change only with the link stopped: " + "; ".join(changes))
            removed = [c for c in changes if c.endswith("not in the configuration")]
            if removed:
                raise LapError(f"{cfg.file}: {removed[0]}: a level that holds money is never removed")
            self._configure_levels(cfg)
            self._configure_members(cfg)
            self._configure_roles(cfg)
        return changes

    def _configure_roles(self, cfg: LapConfig) -> None:
        """Every role's connection limit and session defaults; the LAP made a member of each
        table's role (so that it sees and may end its sessions: controller/lap/guard.py) unless
        it may already; the floor view's role and its grants.  Each change recorded."""
        have = self._role_rows(cfg)
        for role, conns in self._roles_wanted(cfg).items():
            row = have.get(role)
            ident = sql.Identifier(role)
            if row is None:
                self.conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(ident))
            self.conn.execute(role_limits(role, cfg.table_run_s, conns).encode())
            if role == floor_role(cfg.schema):
                self.conn.execute(floor_grants(cfg.schema).encode())
            elif row is None or not row["can_end"]:
                self.conn.execute(sql.SQL("GRANT {} TO CURRENT_USER").format(ident))
            old = None if row is None else {"connections": row["rolconnlimit"], "defaults": sorted(row["config"])}
            new = {"connections": conns, "defaults": sorted(_role_config(cfg.table_run_s))}
            if old != new:
                self.conn.execute(
                    self.q("INSERT INTO {s}.param_changes (what, key, old, new) VALUES ('role', %s, %s, %s)"),
                    (role, Jsonb(old), Jsonb(new)),
                )

    def _configure_levels(self, cfg: LapConfig) -> None:
        have = {r["level"]: r for r in self._rows("SELECT level, den FROM {s}.levels")}
        for p in cfg.levels:
            r = _level_row(p)
            if p.level not in have:
                self.conn.execute(self.q(_INSERT_LEVEL), {**r, "den": p.den})
            else:
                old_den = int(have[p.level]["den"])
                den = lcm(old_den, p.den)
                # the accounts are rescaled exactly; the den only grows, so every older rate
                # version stays exact in it
                self.conn.execute(self.q(_UPDATE_LEVEL), {**r, "den": den, "k": den // old_den})

    def _configure_members(self, cfg: LapConfig) -> None:
        members = {r["table_id"] for r in self._rows("SELECT table_id FROM {s}.members")}
        for t in cfg.tables:
            role = cfg.role_for(t.table_id)
            if not self.conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                self.conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
            self.conn.execute(grants(self.schema, role).encode())
            self.conn.execute(
                self.q(
                    "INSERT INTO {s}.members (table_id, role, asset, game) VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT (table_id) DO UPDATE SET role = excluded.role, asset = excluded.asset,"
                    " game = excluded.game"
                ),
                (t.table_id, role, t.asset, t.game),
            )
            members.discard(t.table_id)
        for tid in members:
            self.conn.execute(self.q("DELETE FROM {s}.members WHERE table_id = %s"), (tid,))

    def param_changes(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM {s}.param_changes ORDER BY id")

    # ---------------------------------------------------------------- refusals
    def refusals(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM {s}.refusals ORDER BY id")

    def unauthenticated(self) -> list[dict[str, Any]]:
        """The events held whose authenticator does not verify under their table's link key (written
        behind the rules: the database's owner, triggers skipped), and those that carry none (a
        record of before the link keys): every held event's MAC recomputed (``tablectl lap --reconcile``)."""
        return self._rows(
            "SELECT e.table_id, e.seq, e.kind, e.auth IS NULL AS unsigned FROM {s}.events e"
            " LEFT JOIN {s}.link_keys k ON k.table_id = e.table_id AND k.key_no = e.key_no"
            " WHERE e.auth IS NULL OR k.table_id IS NULL OR e.auth <> {s}.link_mac(k.ki, k.ko, {s}.event_message(e))"
            " ORDER BY e.table_id, e.seq"
        )

    def terminations(self, last: int = 20) -> list[dict[str, Any]]:
        """The last table sessions the LAP ended or whose statement it cancelled (controller/lap/guard.py)."""
        return self._rows(
            "SELECT * FROM (SELECT * FROM {s}.terminations ORDER BY id DESC LIMIT %s) t ORDER BY id", (last,)
        )

    def reopen(self, table_id: str, note: str) -> str | None:
        """Reopen a table a refusal closed (recorded with ``note``); what had closed it, or None."""
        row = self.conn.execute(self.q("SELECT {s}.reopen_table(%s, %s)"), (table_id, note)).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    # ---------------------------------------------------------------- reading
    def _rows(self, text: str, params: Any = None) -> list[dict[str, Any]]:
        cur = self.conn.cursor(row_factory=psycopg.rows.dict_row)
        return list(cur.execute(self.q(text), params).fetchall())

    def levels(self) -> dict[str, LevelState]:
        return {r["level"]: level_state(r) for r in self._rows("SELECT * FROM {s}.levels")}

    def reconcile(self) -> Reconciliation:
        """Every level's identity, exactly, from the records (controller/lap/reconcile.py)."""
        return reconcile(self)


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


def floor_dsn(dsn: str, schema: str) -> str:
    """The floor view's DSN: the LAP's, logging in as the floor view's own role (a reader, never
    the schema's owner).  The LAP's password is not the floor role's: it is dropped, and libpq
    finds the role's own (``~/.pgpass``, ``PGPASSFILE``) or the server needs none (peer, cert)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    args = conninfo_to_dict(dsn)
    args.pop("password", None)
    args["user"] = floor_role(schema)
    args["application_name"] = "tablectl floor"
    return make_conninfo("", **args)


def _role_config(run_s: float) -> list[str]:
    """A link role's session defaults as ``pg_roles.rolconfig`` lists them."""
    return [f"{k}={v}" for k, v in role_settings(run_s).items()]


def wait_until(pred: Callable[[], bool], timeout: float, step: float = 0.01) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()
