"""The link-chaos bench's fault kinds: a registry (a kind is a name, what it aims at, what it
shares with others, and how it is played), and a random plan of them.

Each kind is registered with :func:`kind`; ``bench link-chaos --kinds`` names them, the
round-robin mode plays them in turn and ``--random`` draws them (kind, target, start, duration),
overlapping.  A kind that acts on something only one actor can act on at a time (the database
server's ``pg_ctl``, a table's uplink process, the LAP process) names it as its ``resource``:
faults on the same resource wait for each other, every other fault overlaps freely (a cut during
a stall, a restart while a connection hangs: the sequences a real network produces).

To add a kind: a function ``(ctx, fault) -> str`` (what it did, one line) decorated with
``@kind("name", ...)``; nothing else changes.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: the whole pit (a fault aimed at every table's link, or at no table)
ALL = "all"
#: the LAP's own link (its connection to the database), a target of the network's faults
LAP = "lap"


@dataclass
class Ctx:
    """What a fault acts on: the pit (LAP, uplinks, proxies), the tables, the database pair
    (None with ``--db``)."""

    pit: Any
    tables: dict[str, Any]
    pair: Any
    lag: float = 2.0
    locks: dict[str, threading.Lock] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)
    faults_ended: float = 0.0  # (monotonic) when the last fault ended
    ends: list[float] = field(default_factory=list)  # (monotonic) when each fault ended

    def lock(self, resource: str) -> threading.Lock:
        with self._guard:
            return self.locks.setdefault(resource, threading.Lock())


@dataclass(frozen=True)
class Fault:
    """One fault of a plan: ``start`` seconds into the run, ``target`` a table id or :data:`ALL`,
    ``duration`` seconds (how long the fault lasts, for a kind that lasts)."""

    kind: str
    target: str
    start: float
    duration: float

    def line(self) -> str:
        return f"at {self.start:.2f} s {self.kind} {self.target} for {self.duration:.2f} s"


Play = Callable[[Ctx, Fault], str]


@dataclass(frozen=True)
class Kind:
    name: str
    play: Play
    #: "table": aimed at one table (or every one); "link": at one table's link, every table's or
    #: the LAP's; "pit": at the pit as a whole
    aim: str = "pit"
    #: (shortest, longest) duration drawn; the round-robin mode uses ``default_s``
    durations: tuple[float, float] = (0.0, 0.0)
    default_s: float = 0.0
    #: needs the bench's own database pair (left out with ``--db``)
    needs_pair: bool = False
    #: what only one fault at a time may act on (None: overlaps with anything); ``{t}``: the target
    resource: str | None = None

    def resource_of(self, target: str) -> str | None:
        return None if self.resource is None else self.resource.format(t=target)


KINDS: dict[str, Kind] = {}


def kind(name: str, **kw: Any) -> Callable[[Play], Play]:
    def register(fn: Play) -> Play:
        if name in KINDS:
            raise ValueError(f"fault kind {name} registered twice")
        KINDS[name] = Kind(name, fn, **kw)
        return fn

    return register


def _targets(ctx: Ctx, target: str) -> list[str]:
    return list(ctx.pit.ids) if target == ALL else [target]


def _proxies(ctx: Ctx, target: str) -> Any:
    """The proxies a network fault acts on: the LAP's, one table's, or every table's."""
    if target == LAP and ctx.pit.lap_proxy is not None:
        return ctx.pit.lap_proxy
    return ctx.pit.proxy if target in (ALL, LAP) or not ctx.pit.proxy_of else ctx.pit.proxy_of[target]


# ---------------------------------------------------------------------------- the kinds
@kind("kill-uplink", aim="table", durations=(0.1, 3.0), default_s=0.3, resource="uplink:{t}")
def _kill_uplink(ctx: Ctx, f: Fault) -> str:
    """SIGKILL a table's uplink, start it again after the fault's duration."""
    for t in _targets(ctx, f.target):
        ctx.pit.kill(ctx.pit.uplinks[t])
    time.sleep(f.duration)
    for t in _targets(ctx, f.target):
        ctx.pit.start_uplink(t)
    return f"kill-uplink {f.target} (down {f.duration:.1f} s)"


@kind("kill-lap", durations=(0.1, 3.0), default_s=0.3, resource="lap")
def _kill_lap(ctx: Ctx, f: Fault) -> str:
    ctx.pit.kill(ctx.pit.lap)
    time.sleep(f.duration)
    ctx.pit.start_lap()
    return f"kill-lap (down {f.duration:.1f} s)"


@kind("restart-table", aim="table", resource="table:{t}")
def _restart_table(ctx: Ctx, f: Fault) -> str:
    """Stop a table's service between two rounds and start a new one on the same ledger."""
    for t in _targets(ctx, f.target):
        ctx.tables[t].restart_wanted.set()
    return f"restart-table {f.target}"


@kind("restart-pg", durations=(0.0, 3.0), default_s=0.0, resource="db")
def _restart_pg(ctx: Ctx, f: Fault) -> str:
    """PostgreSQL crashes (``-m immediate``) and is started again after the fault's duration;
    with ``--db``: every connection of the run is terminated."""
    if ctx.pair is None or _on_patroni(ctx):
        terminate_all(ctx.pit.dsn, ctx.pit.schema)
        return "restart-pg (every connection terminated)"
    if f.duration <= 0:
        ctx.pair.pg_ctl(ctx.pair.primary, "-m", "immediate", "restart")
        return "restart-pg"
    ctx.pair.pg_ctl(ctx.pair.primary, "-m", "immediate", "stop")
    time.sleep(f.duration)
    ctx.pair.pg_ctl(ctx.pair.primary, "start")
    return f"restart-pg (down {f.duration:.1f} s)"


@kind("power-loss", resource="db")
def _power_loss(ctx: Ctx, f: Fault) -> str:
    if ctx.pair is None or _on_patroni(ctx):
        terminate_all(ctx.pit.dsn, ctx.pit.schema)
        return "power-loss (every connection terminated)"
    ctx.pair.pg_ctl(ctx.pair.primary, "-m", "immediate", "stop")
    ctx.pair.pg_ctl(ctx.pair.primary, "start")
    return "power-loss"


@kind("failover", needs_pair=True, resource="db")
def _failover(ctx: Ctx, f: Fault) -> str:
    """The primary crashes, the standby is promoted (an async one first left behind for ``lag``
    seconds: its stream held while the tables play on), a new standby made."""
    pair = ctx.pair
    behind = ""
    if not pair.sync:
        pair.proxy.hold()
        time.sleep(ctx.lag)
        behind = f", the standby {pair.lag_bytes()} bytes of WAL behind"
    took = pair.failover()
    pair.rebuild_standby()
    return f"failover (promoted in {took:.1f} s{behind}, new standby made)"


@kind("cut", aim="link")
def _cut(ctx: Ctx, f: Fault) -> str:
    """The network closes the uplinks' connections (a reset both ends see)."""
    return f"cut {f.target} ({_proxies(ctx, f.target).cut()} connections)"


@kind("stall", aim="link", durations=(0.5, 8.0), default_s=5.0)
def _stall(ctx: Ctx, f: Fault) -> str:
    """The network carries nothing for the duration, then delivers what it held."""
    return f"stall {f.target} ({_proxies(ctx, f.target).hold(f.duration)} connections held {f.duration:.1f} s)"


@kind("blackhole", aim="link")
def _blackhole(ctx: Ctx, f: Fault) -> str:
    """Every connection open now goes silent for good (nothing closed, nobody told)."""
    return f"blackhole {f.target} ({_proxies(ctx, f.target).blackhole()} connections silent for good)"


def _on_patroni(ctx: Ctx) -> bool:
    """The database run by Patroni (hil/patroni.py): a restart of its primary is Patroni's to
    handle (kill-primary plays it); here every connection of the run is terminated instead."""
    from bench._ha_faults import is_patroni

    return is_patroni(ctx.pair)


def terminate_all(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as c:
        c.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename LIKE %s AND pid <> pg_backend_pid()",
            (schema + "\\_%",),
        )


# ---------------------------------------------------------------------------- plans
def known(names: list[str], have_pair: bool) -> list[str]:
    """The kinds named, those needing the bench's own pair left out without one; a name not
    registered raises ValueError naming it."""
    bad = [n for n in names if n not in KINDS]
    if bad or not names:
        raise ValueError(f"unknown fault {bad[0] if bad else '(none)'}; known: {', '.join(KINDS)}")
    return [n for n in names if have_pair or not KINDS[n].needs_pair] or ["cut"]


def round_robin(names: list[str], n: int, interval: float, ids: list[str], rng: random.Random) -> list[Fault]:
    """One fault every ``interval`` s, the kinds in turn: a table drawn for a kind acting on one
    table's process, the network's faults on every table's link (as this mode always played them)."""
    out = []
    for i in range(n):
        k = KINDS[names[i % len(names)]]
        target = rng.choice(ids) if k.resource is not None and "{t}" in k.resource else ALL
        out.append(Fault(k.name, target, (i + 1) * interval, k.default_s))
    return out


def random_plan(names: list[str], n: int, span_s: float, ids: list[str], rng: random.Random) -> list[Fault]:
    """``n`` faults drawn at random over ``span_s`` seconds: each its kind, its target (a table,
    or every table one time in four; a network fault the LAP's link as often as a table's), its
    start and its duration; they may overlap."""
    out = []
    for _ in range(n):
        k = KINDS[rng.choice(names)]
        aims = {"pit": [ALL], "table": ids, "link": [*ids, LAP]}[k.aim]
        target = ALL if k.aim == "pit" or rng.random() < 0.25 else rng.choice(aims)
        lo, hi = k.durations
        out.append(Fault(k.name, target, round(rng.uniform(0.5, span_s), 2), round(rng.uniform(lo, hi), 2)))
    return sorted(out, key=lambda f: f.start)


def play(ctx: Ctx, f: Fault) -> str:
    """Play one fault, once no other fault acts on its resources (a kind aimed at every table
    holds each table's)."""
    k = KINDS[f.kind]
    held = sorted({r for t in _targets(ctx, f.target) if (r := k.resource_of(t)) is not None})
    with contextlib.ExitStack() as stack:
        for r in held:
            stack.enter_context(ctx.lock(r))
        return k.play(ctx, f)
