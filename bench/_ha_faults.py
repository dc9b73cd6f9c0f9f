"""The chaos bench's high-availability faults (bench/link_chaos.py): the LAP's database run by
Patroni (hil/patroni.py: three members, etcd, synchronous mode) and a standby LAP.

- ``kill-primary``: SIGKILL the primary's postmaster; Patroni promotes the synchronous standby,
  the LAP and the uplinks find it through their multi-host DSN (``target_session_attrs=read-write``).
- ``node-loss``: the primary's host dies: its postmaster and the active LAP SIGKILLed together;
  Patroni promotes the synchronous standby and the standby LAP takes the lease
  (controller/lap/lease.py).  The dead host's LAP is started again afterwards, as its unit would
  be when the host is back: it becomes the standby.

Each line says the new primary, how long Patroni took, and how long after the kill every table
was open again (``pit open again``).  With Patroni, ``restart-pg`` and ``power-loss`` terminate
every connection of the run (as with ``--db``) and ``failover`` (hil/pgpair.py's hand-made
promote) is not played: Patroni does the promoting.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

from bench import _faults

KINDS = ("kill-primary", "node-loss")
#: the standby LAP's name in the lease (the bench's main LAP is named by the host's name)
STANDBY_NAME = "bench-standby-lap"
#: how long a fault may leave a table closed before the bench says so and goes on
REOPEN_S = 60.0
#: open this long without a closure (the tables' link timeout) counts as open again
STEADY_S = 3.0


def wants_patroni(kinds: str) -> bool:
    return any(k.strip() in KINDS for k in kinds.split(","))


@contextlib.contextmanager
def database() -> Iterator[tuple[str, Any]]:
    """(DSN, the Patroni cluster)."""
    from hil.patroni import temp_patroni

    with temp_patroni(prefix="tablectl-chaos-patroni-") as cluster:
        yield cluster.dsn, cluster


def is_patroni(pair: Any) -> bool:
    from hil.patroni import PatroniCluster

    return isinstance(pair, PatroniCluster)


def usable(kinds: list[str], pair: Any) -> list[str]:
    """The kinds this database can play: the HA kinds on Patroni only, the hand-made failover never
    on Patroni."""
    if is_patroni(pair):
        return [k for k in kinds if k != "failover"]
    return [k for k in kinds if k not in KINDS]


def start_standby(pit: Any) -> None:
    """A second LAP process, named apart (a second host's), on a Patroni run."""
    from bench._linkrig import TABLECTL

    pit.standby_lap = subprocess.Popen(
        [*TABLECTL, "lap", "--sim", "--db", pit.dsn, "--config", str(pit.lap_toml)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TABLECTL_LAP_NAME": STANDBY_NAME},
    )


def stop_standby(pit: Any) -> None:
    proc = getattr(pit, "standby_lap", None)
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            pit.kill(proc)


def _active_lap(pit: Any) -> str:
    from controller.lap import lease
    from controller.lap.lap import connect

    with connect(pit.dsn) as c:
        st = lease.status(c, pit.schema)
    return st.holder if st is not None else "?"


def play(fault: str, pit: Any, tables: dict[str, Any], pair: Any) -> str:
    """Play one HA fault; its line for the figures."""
    if fault in ("restart-pg", "power-loss"):
        _faults.terminate_all(pit.dsn, pit.schema)
        return f"{fault} (on Patroni: every connection of the run terminated)"
    t0 = time.monotonic()
    lap_note = ""
    if fault == "node-loss":
        standby = getattr(pit, "standby_lap", None)
        active = _active_lap(pit)
        victim = standby if active == STANDBY_NAME else pit.lap
        pit.kill(victim)  # the host's LAP; its postmaster below, within a millisecond
        lap_note = f", its LAP ({active}) with it"
    old, new, took = pair.kill_primary()
    reopened = _wait_open(pit, tables, t0)
    if fault == "node-loss":
        lap_note += f"; {_active_lap(pit)} active now"
        _restart_dead_lap(pit)
    # no synchronous standby ready (one still catching up after the last failover): Patroni
    # restarts the crashed primary in place rather than promote a standby that may lack commits
    what = f"made {new} the primary" if new != old else f"restarted {old} in place (no standby ready)"
    return f"{fault} ({old} killed{lap_note}; Patroni {what} in {took:.1f} s; pit open again {reopened}"


def _wait_open(pit: Any, tables: dict[str, Any], t0: float) -> str:
    """How long after the kill every table was open again, with the LAP beating on the new
    primary, and stayed open for the tables' link timeout (a table that closes late, its
    heartbeat's absence noticed after the promotion, restarts the count)."""
    wall0 = time.time() - (time.monotonic() - t0)
    since: float | None = None
    while time.monotonic() - t0 < REOPEN_S:
        if not (all(t.is_open() for t in tables.values()) and _beat_after(pit, wall0)):
            since = None
        else:
            since = since or time.monotonic()
            if time.monotonic() - since >= STEADY_S:
                return f"{since - t0:.1f} s after the kill)"
        time.sleep(0.1)
    shut = [tid for tid, t in tables.items() if not t.is_open()]
    return f"NOT within {REOPEN_S:.0f} s (still closed: {', '.join(shut) or 'none; no LAP heartbeat'}))"


def _beat_after(pit: Any, wall: float) -> bool:
    """Whether the LAP's heartbeat on the database now is later than ``wall`` (a time.time())."""
    import psycopg

    from controller.lap.lap import connect

    try:
        with connect(pit.dsn) as c:
            q = psycopg.sql.SQL("SELECT extract(epoch FROM heartbeat_at) FROM {}.link").format(
                psycopg.sql.Identifier(pit.schema)
            )
            row = c.execute(q).fetchone()
    except psycopg.Error:
        return False
    return row is not None and row[0] is not None and float(row[0]) > wall


def _restart_dead_lap(pit: Any) -> None:
    """The dead host is back: its LAP's unit starts it again (it becomes the standby)."""
    if pit.lap is None or pit.lap.poll() is not None:
        pit.start_lap()
    standby = getattr(pit, "standby_lap", None)
    if standby is not None and standby.poll() is not None:
        start_standby(pit)


# ---------------------------------------------------------------------------- the registry's kinds
@_faults.kind("kill-primary", needs_pair=True, resource="db")
def _kill_primary(ctx: _faults.Ctx, f: _faults.Fault) -> str:
    """SIGKILL the primary's postmaster: Patroni promotes the synchronous standby."""
    return play(f.kind, ctx.pit, ctx.tables, ctx.pair)


@_faults.kind("node-loss", needs_pair=True, resource="db")
def _node_loss(ctx: _faults.Ctx, f: _faults.Fault) -> str:
    """The primary's host dies: its postmaster and the active LAP killed together."""
    with ctx.lock("lap"):
        return play(f.kind, ctx.pit, ctx.tables, ctx.pair)
