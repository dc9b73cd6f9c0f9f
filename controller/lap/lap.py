"""The LAP controller's side of PostgreSQL: install the schema, apply ``lap.toml`` (only with
the link stopped), start and stop the link, beat the heartbeat, reconcile every level exactly.

The money rules themselves are in the database (controller/lap/schema.py); this module never
computes a meter it then writes — it reads the database's accounts back as exact
:class:`~fractions.Fraction` values to check the reconciliation identity.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from math import lcm
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from controller.lap import catalog, lease, pgconn
from controller.lap.config import LapConfig, LevelParams
from controller.lap.reconcile import LevelState, Reconciliation, level_line, level_state, reconcile
from controller.lap.replication import Replication, replication
from controller.lap.schema import (
    FLOOR_CONNECTIONS,
    SCHEMA_VERSION,
    TABLE_CONNECTIONS,
    ddl,
    floor_grants,
    floor_role,
    make_tables_role,
    role_limits,
    role_settings,
    tables_role,
)

__all__ = [
    "LapError",
    "LapStore",
    "LevelState",
    "Reconciliation",
    "Replication",
    "connect",
    "level_line",
    "replication",
    "wait_until",
]


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
                self.conn.execute(make_tables_role(self.schema).encode())
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
        """Each table's row and login role, a member of the tables' group (its grants); a table
        that leaves the link leaves the group.  What is already so is left alone: configuring a
        pit of 1,000 tables touches only what changed."""
        members = {r["table_id"]: r for r in self._rows("SELECT table_id, role, asset, game FROM {s}.members")}
        wanted = {t.table_id: cfg.role_for(t.table_id) for t in cfg.tables}
        roles, in_group = self._table_roles(list(wanted.values()) + [r["role"] for r in members.values()])
        group = sql.Identifier(tables_role(self.schema))
        for t in cfg.tables:
            role = wanted[t.table_id]
            ident = sql.Identifier(role)
            if role not in roles:
                self.conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(ident))
            if role not in in_group:
                self.conn.execute(sql.SQL("GRANT {} TO {}").format(group, ident))
            row = members.pop(t.table_id, None)
            if row is None or (row["role"], row["asset"], row["game"]) != (role, t.asset, t.game):
                self.conn.execute(
                    self.q(
                        "INSERT INTO {s}.members (table_id, role, asset, game) VALUES (%s, %s, %s, %s)"
                        " ON CONFLICT (table_id) DO UPDATE SET role = excluded.role, asset = excluded.asset,"
                        " game = excluded.game"
                    ),
                    (t.table_id, role, t.asset, t.game),
                )
        for tid, row in members.items():
            self.conn.execute(self.q("DELETE FROM {s}.members WHERE table_id = %s"), (tid,))
            if row["role"] in in_group and row["role"] not in wanted.values():
                self.conn.execute(sql.SQL("REVOKE {} FROM {}").format(group, sql.Identifier(row["role"])))

    def _table_roles(self, names: list[str]) -> tuple[set[str], set[str]]:
        """Which of ``names`` exist as roles, and which of those are members of the tables' group."""
        rows = self.conn.execute(
            "SELECT r.rolname, pg_has_role(r.oid, g.oid, 'MEMBER') AND r.oid <> g.oid FROM pg_roles r"
            " LEFT JOIN pg_roles g ON g.rolname = %s WHERE r.rolname = ANY(%s)",
            (tables_role(self.schema), names),
        ).fetchall()
        return {str(n) for n, _ in rows}, {str(n) for n, member in rows if member}

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
