"""The LAP controller's side of PostgreSQL: install the schema, apply ``lap.toml`` (only with
the link stopped), start and stop the link, beat the heartbeat, reconcile every level exactly.

The money rules themselves are in the database (controller/link/schema.py); this module never
computes a meter it then writes — it reads the database's accounts back as exact
:class:`~fractions.Fraction` values to check the reconciliation identity.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from math import lcm
from typing import Any

import psycopg
from psycopg import sql

from controller.link.config import LapConfig, LevelParams
from controller.link.schema import SCHEMA_VERSION, ddl, floor_ddl, floor_grants, grants
from controller.meters import format_exact, plural


class LapError(RuntimeError):
    """The LAP refuses: a parameter change with the link running, a schema it does not know."""


@dataclass(frozen=True)
class LevelState:
    level: str
    value: Fraction  # exact cents
    reserve: Fraction
    overflow: Fraction
    hits: int
    version: int

    @property
    def cents(self) -> int:
        return self.value.numerator // self.value.denominator


@dataclass
class Reconciliation:
    ok: bool
    tables: int
    contributions: int
    hits: int  # meter hits (the LAP pays only those: a fixed pay is the table's own)
    problems: list[str] = field(default_factory=list)
    levels: dict[str, LevelState] = field(default_factory=dict)

    def counts(self) -> str:
        """``2 tables, 460 contributions, 1 meter hit``: counts that read right, in every output's words."""
        return f"{plural(self.tables, 'table')}, {plural(self.contributions, 'contribution')}, " + plural(
            self.hits, "meter hit"
        )


def level_line(st: LevelState) -> str:
    """A level in dollars, exactly (the fraction of a cent carried shown as such)."""
    return (
        f"level {st.level}: meter {format_exact(st.value)}, hidden reserve {format_exact(st.reserve)}, "
        f"overflow {format_exact(st.overflow)}, {plural(st.hits, 'meter hit')}"
    )


def connect(dsn: str, *, user: str | None = None, autocommit: bool = True, timeout: float = 5) -> psycopg.Connection:
    kw: dict[str, Any] = {"autocommit": autocommit, "connect_timeout": max(1, int(timeout))}
    if user is not None:
        kw["user"] = user
    return psycopg.connect(dsn, **kw)


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
    }


class LapStore:
    """One linked group's schema, through one connection (autocommit; transactions explicit)."""

    def __init__(self, conn: psycopg.Connection, schema: str):
        self.conn = conn
        self.schema = schema
        self.s = sql.Identifier(schema)

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
            if v != SCHEMA_VERSION:
                raise LapError(f"schema {self.schema} is version {v}; this LAP knows version {SCHEMA_VERSION}")
            return False
        with self.conn.transaction():
            self.conn.execute(ddl(self.schema).encode())
            self.conn.execute(self.q("INSERT INTO {s}.link (group_name) VALUES (%s)"), (group,))
        return True

    def install_floor(self) -> None:
        """The floor view's tables and the tables' right to report their status (idempotent)."""
        with self.conn.transaction():
            self.conn.execute(floor_ddl(self.schema).encode())
            for r in self._rows("SELECT role FROM {s}.members"):
                self.conn.execute(floor_grants(self.schema, r["role"]).encode())

    # ---------------------------------------------------------------- link state
    def state(self) -> str:
        row = self.conn.execute(self.q("SELECT state FROM {s}.link")).fetchone()
        assert row is not None
        return str(row[0])

    def set_state(self, state: str) -> None:
        self.conn.execute(self.q("UPDATE {s}.link SET state = %s"), (state,))

    def heartbeat(self) -> None:
        self.conn.execute(self.q("SELECT {s}.heartbeat()"))

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
        return out

    def configure(self, cfg: LapConfig) -> list[str]:
        """Apply ``cfg``: refused unless the link is stopped (every change is recorded by the
        database in ``param_changes``).  A level is never removed (its money stays accounted)."""
        with self.conn.transaction():
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
            have = {r["level"]: r for r in self._rows("SELECT level, den FROM {s}.levels")}
            for p in cfg.levels:
                r = _level_row(p)
                if p.level not in have:
                    den = p.den
                    self.conn.execute(
                        self.q(
                            "INSERT INTO {s}.levels (level, seed_cents, reset_cents, rate_num, rate_den, reserve_num,"
                            " reserve_den, limit_cents, at_limit, den, value_num) VALUES (%(level)s, %(seed_cents)s,"
                            " %(reset_cents)s, %(rate_num)s, %(rate_den)s, %(reserve_num)s, %(reserve_den)s,"
                            " %(limit_cents)s, %(at_limit)s, %(den)s, %(seed_cents)s::numeric * %(den)s)"
                        ),
                        {**r, "den": den},
                    )
                else:
                    old_den = int(have[p.level]["den"])
                    den = lcm(old_den, p.den)
                    k = den // old_den  # the accounts are rescaled exactly
                    self.conn.execute(
                        self.q(
                            "UPDATE {s}.levels SET reset_cents = %(reset_cents)s, rate_num = %(rate_num)s,"
                            " rate_den = %(rate_den)s, reserve_num = %(reserve_num)s, reserve_den = %(reserve_den)s,"
                            " limit_cents = %(limit_cents)s, at_limit = %(at_limit)s, den = %(den)s,"
                            " value_num = value_num * %(k)s, reserve_acc = reserve_acc * %(k)s,"
                            " overflow_acc = overflow_acc * %(k)s WHERE level = %(level)s"
                        ),
                        {**r, "den": den, "k": k},
                    )
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
        return changes

    def param_changes(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM {s}.param_changes ORDER BY id")

    # ---------------------------------------------------------------- reading
    def _rows(self, text: str, params: Any = None) -> list[dict[str, Any]]:
        cur = self.conn.cursor(row_factory=psycopg.rows.dict_row)
        return list(cur.execute(self.q(text), params).fetchall())

    def levels(self) -> dict[str, LevelState]:
        out = {}
        for r in self._rows("SELECT * FROM {s}.levels"):
            d = int(r["den"])
            out[r["level"]] = LevelState(
                r["level"],
                Fraction(int(r["value_num"]), d),
                Fraction(int(r["reserve_acc"]), d),
                Fraction(int(r["overflow_acc"]), d),
                int(r["hits"]),
                int(r["version"]),
            )
        return out

    def reconcile(self) -> Reconciliation:
        """Check, exactly, for every level: value + reserve + overflow + Σ hits paid ==
        seed + Σ resets + Σ contributions − Σ voids, and that every contribution is its
        wager × (rate + reserve rate) at the parameters it was taken under."""
        with self.conn.transaction():
            self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            levels = self.levels()
            params = {r["level"]: r for r in self._rows("SELECT level, seed_cents FROM {s}.levels")}
            contrib = self._rows(
                "SELECT level, den, sum(to_meter + to_reserve + to_overflow) AS amt,"
                " sum(wager_cents * (rate_num * (den / rate_den) + reserve_num * (den / reserve_den))) AS want,"
                " count(*) AS n FROM {s}.contributions GROUP BY level, den"
            )
            voids = self._rows("SELECT level, den, sum(amount) AS amt FROM {s}.voids GROUP BY level, den")
            hits = self._rows("SELECT level, sum(amount_cents) AS amt, count(*) AS n FROM {s}.hits GROUP BY level")
            resets = self._rows("SELECT level, sum(reset_cents) AS amt FROM {s}.reseeds GROUP BY level")
            n_tables = self.conn.execute(self.q("SELECT count(*) FROM {s}.members")).fetchone()
            unmatched = self._rows(
                "SELECT e.table_id, e.seq, e.kind FROM {s}.events e WHERE NOT EXISTS ("
                " SELECT 1 FROM {s}.contributions c WHERE c.table_id = e.table_id AND c.seq = e.seq"
                " UNION ALL SELECT 1 FROM {s}.voids v WHERE v.table_id = e.table_id AND v.seq = e.seq"
                " UNION ALL SELECT 1 FROM {s}.hits h WHERE h.table_id = e.table_id AND h.seq = e.seq"
                " UNION ALL SELECT 1 FROM {s}.payouts p WHERE p.table_id = e.table_id AND p.seq = e.seq)"
            )
            mismatches = self._rows("SELECT table_id, mismatch FROM {s}.members WHERE mismatch IS NOT NULL")
        problems = [f"event {u['table_id']}/{u['seq']} ({u['kind']}) was not applied" for u in unmatched]
        problems += [f"table {m['table_id']}: {m['mismatch']}" for m in mismatches]
        n_contrib = 0
        n_hits = 0
        for lv, st in levels.items():
            inflow = Fraction(int(params[lv]["seed_cents"]))
            for c in contrib:
                if c["level"] == lv:
                    amt, want = int(c["amt"]), int(c["want"])
                    if amt != want:
                        problems.append(f"level {lv}: contributions hold {amt}/{c['den']}, wagers × rates {want}")
                    inflow += Fraction(amt, int(c["den"]))
                    n_contrib += int(c["n"])
            for v in voids:
                if v["level"] == lv:
                    inflow -= Fraction(int(v["amt"]), int(v["den"]))
            paid = 0
            for h in hits:
                if h["level"] == lv:
                    paid = int(h["amt"])
                    n_hits += int(h["n"])
            for r in resets:
                if r["level"] == lv:
                    inflow += int(r["amt"])
            held = st.value + st.reserve + st.overflow + paid
            if held != inflow:
                problems.append(
                    f"level {lv}: meter+reserve+overflow+paid = {held}, seed+resets+contributions = {inflow}"
                )
        assert n_tables is not None
        return Reconciliation(not problems, int(n_tables[0]), n_contrib, n_hits, problems, levels)


@dataclass
class LapService:
    """``tablectl lap``: applies the configuration with the link stopped, self-checks, starts
    the link and beats its heartbeat until told to stop; reconnects when PostgreSQL goes away
    (the tables close their linked wagers meanwhile: no heartbeat reaches them)."""

    cfg: LapConfig
    dsn: str
    log: Callable[[str], None] = print
    stop_event: threading.Event = field(default_factory=threading.Event)
    #: called each time the link is (re)started, schema installed (the floor view starts then)
    on_running: Callable[[], None] = lambda: None

    def start_link(self) -> LapStore:
        conn = connect(self.dsn)
        store = LapStore(conn, self.cfg.schema)
        if store.install(self.cfg.group):
            self.log(f"lap: schema {self.cfg.schema} created")
        changes = store.differences(self.cfg)
        if changes:
            store.set_state("stopped")
            store.configure(self.cfg)
            for c in changes:
                self.log(f"lap: parameter change recorded: {c}")
        store.install_floor()
        rec = store.reconcile()
        if not rec.ok:
            store.set_state("stopped")
            raise LapError("self-check failed: " + "; ".join(rec.problems))
        store.set_state("running")
        self.log(f"lap: link {self.cfg.group} running ({rec.counts()}, meters reconciled)")
        return store

    def kill(self) -> None:
        """Stop as a crash would (tests, the chaos bench): no clean ``stopped`` state, the
        heartbeat simply ends."""
        self._killed = True
        self.stop_event.set()

    def run(self) -> None:
        self._killed = False
        store: LapStore | None = None
        backoff = 0.2
        while not self.stop_event.is_set():
            try:
                if store is None:
                    store = self.start_link()
                    backoff = 0.2
                    self.on_running()
                store.heartbeat()
                self.stop_event.wait(self.cfg.heartbeat_s)
            except psycopg.OperationalError as e:
                self.log(f"lap: database unreachable ({str(e).strip().splitlines()[0]}); retrying")
                if store is not None:
                    store.conn.close()
                store = None
                self.stop_event.wait(backoff)
                backoff = min(backoff * 2, 2.0)
        if store is not None:
            try:
                if not self._killed:
                    store.set_state("stopped")
            finally:
                store.conn.close()


def wait_until(pred: Callable[[], bool], timeout: float, step: float = 0.01) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()
