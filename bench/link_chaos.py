"""``tablectl bench link-chaos --tables 4 --faults N``: play linked tables while faults hit the
link, then check that nothing was lost or doubled (issue 14).

The tables are the real table service against the HIL simulators (hil/rig.py, as ``tablectl
sim``) with simulated players; each table's uplink is a ``tablectl uplink`` process reaching
PostgreSQL through a TCP proxy this bench controls; the LAP is a ``tablectl lap`` process.
One fault every ``--interval`` seconds, in turn:

- ``kill-uplink``: SIGKILL a table's uplink, start it again a moment later;
- ``kill-lap``: SIGKILL the LAP, start it again;
- ``restart-table``: stop a table's service between two rounds and start a new one on the same
  ledger (its start-up recovery; not a kill at an arbitrary instant — bench crash does that);
- ``restart-pg``: restart PostgreSQL as a crash would (``pg_ctl restart -m immediate``; with
  ``--db`` given, every connection of the run is terminated instead);
- ``cut``: the proxy drops every uplink connection;
- ``stall``: the proxy carries nothing for 5 s, then delivers what it held (a cable pulled and
  put back: nobody is told);
- ``blackhole``: every uplink connection open now goes silent for good (a NAT or firewall state
  that expired: bytes vanish, nothing is closed; only the uplink's own deadlines find it);
- ``power-loss``: the primary's machine loses power: ``pg_ctl stop -m immediate`` and start
  (``fsync=on``: what it acknowledged is in its WAL on disk);
- ``failover``: the primary crashes and its synchronous standby is promoted; the LAP and the
  uplinks reach it through their multi-host DSN (``target_session_attrs=read-write``); a new
  standby is then made of it (``pg_basebackup``) for the next one.

Without ``--db`` the database is a throwaway primary with a synchronous standby
(hil/pgpair.py, ``fsync=on``); with ``--db`` the faults that need the bench's own cluster
(``failover``) are left out and ``power-loss`` terminates every connection of the run.

Then every process is brought back, every outbox drained, and it prints ``faults``, ``lost``
(link records in a table's ledger that the LAP does not hold), ``doubled`` (records the LAP
holds that no ledger wrote, or a hit paid twice), ``meters_reconcile`` (the LAP's exact
identity) and ``paid_while_closed`` (linked wagers a table accepted while its own ledger says
the linked wager was closed), ``refusals`` (records the LAP refused: a payment of a hit it decided
otherwise after a failover, say).  Exits non-zero unless lost 0, doubled 0, reconciled, 0 while
closed and every table balanced.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAME = "link-chaos"
HELP = (
    "faults on the link (uplinks, LAP, tables, PostgreSQL crash/power loss/failover, cut/stalled/silent connections):"
    " lost 0, doubled 0, reconciled"
)

FAULTS = (
    "kill-uplink",
    "kill-lap",
    "restart-table",
    "restart-pg",
    "cut",
    "stall",
    "blackhole",
    "power-loss",
    "failover",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--faults", type=int, default=10)
    p.add_argument("--interval", type=float, default=1.5, help="seconds between faults (default 1.5)")
    p.add_argument(
        "--db", help="PostgreSQL DSN (default: a throwaway primary and synchronous standby, which the faults crash)"
    )
    p.add_argument(
        "--standby",
        choices=("sync", "async"),
        default="sync",
        help="the throwaway primary's standby: sync (default: a commit waits for it) or async (at each failover "
        "its stream is held for --lag seconds first, so it lags and the promoted one lacks the last commits)",
    )
    p.add_argument("--lag", type=float, default=2.0, help="with --standby async: seconds of lag (default 2)")
    p.add_argument(
        "--kinds",
        default=",".join(FAULTS),
        help="the faults to play in turn, comma-separated (default: all: " + ", ".join(FAULTS) + ")",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--speed", type=float, default=50.0)
    p.add_argument(
        "--hit-rate",
        type=float,
        default=0.2,
        help="share of rounds dealt from a deck whose first stack is five aces (default 0.2)",
    )


class ChaosTable:
    """One table: the real service (a rig) on its ledger, with its players."""

    def __init__(self, tid: str, tmp: Path, seed: int, speed: float, group: str):
        from controller.settings import config as C

        self.tid, self.tmp, self.seed, self.speed, self.group = tid, tmp, seed, speed, group
        self.state = tmp / tid
        self.state.mkdir()
        self.sock = tmp / f"{tid}.sock"
        from controller.daemon.service import LEDGER_FILE

        self.ledger_path = self.state / LEDGER_FILE
        self.prof = C.load_profile("six-card-fortune-progressive")
        if self.prof.progressive is None:
            raise ValueError(f"{self.prof.file}: the bench needs its [progressive] section")
        self.prog = self.prof.progressive
        self.restart_wanted = threading.Event()
        self.hit_rate = 0.0
        self.rig: Any = None
        self.people: Any = None
        self.error: str | None = None
        self.rounds = 0
        self.restarts = 0
        self.start_rig()
        from hil.rig import rig_key_file

        self.key_file = rig_key_file(self.state)  # the uplink verifies every record with the table's key

    def start_rig(self) -> None:
        import dataclasses

        from hil.rig import Rig

        self.rig = Rig(
            self.state,
            profile="six-card-fortune-progressive",
            seed=self.seed + self.restarts,
            speed=self.speed,
            table_id=self.tid,
            profile_overrides={"progressive": dataclasses.replace(self.prog, linked=self.group)},
            link_socket=self.sock,
        )
        self.rig.start()
        if self.people is not None:
            self.people.rig = self.rig

    def is_open(self) -> bool:
        if self.rig is None:
            return False
        link = self.rig.table.status.get("link") or {}
        return bool(link.get("open"))

    def play(self, stop: threading.Event) -> None:
        from hil.people import People

        self.people = People(self.rig, random.Random(f"{self.seed}/{self.tid}/people"))
        luck = random.Random(f"{self.seed}/{self.tid}/hits")
        try:
            while not stop.is_set():
                if luck.random() < self.hit_rate:
                    self.rig.shoe.stacked_decks.append(five_aces_first(luck))
                if self.restart_wanted.is_set():
                    self.restart_wanted.clear()
                    self.rig.stop()
                    self.restarts += 1
                    self.start_rig()
                self.people.play_round()
                self.rounds += 1
        except Exception as e:  # noqa: BLE001 - reported, the run fails
            self.error = f"{type(e).__name__}: {e}"

    def close(self) -> None:
        if self.rig is not None:
            self.rig.stop()
            self.rig = None


def paid_while_closed(ledger: Path) -> int:
    """Linked wagers accepted while this table's own ledger says the linked wager was closed."""
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    is_open = False
    bad = 0
    for kind, data in db.execute(
        "SELECT kind, data FROM events WHERE kind IN ('link.state', 'wager.accepted') ORDER BY seq"
    ):
        d = json.loads(data)
        if kind == "link.state":
            is_open = bool(d["open"])
        elif d.get("spot") == "progressive" and not is_open:
            bad += 1
    db.close()
    return bad


def five_aces_first(rng: random.Random) -> list[int]:
    """A deck whose first stack is five aces (100 % of the meter, § 670a.12(d)(1)): the hand goes to
    the position the dice start at, a hit when a linked wager sits there."""
    from controller.rules.cards import parse_cards

    top = list(parse_cards("Ac Ad Ah As Jk 2c"))
    rest = [c for c in range(53) if c not in top]
    rng.shuffle(rest)
    return top + rest


def _closures(ledger: Path) -> int:
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    rows = db.execute("SELECT data FROM events WHERE kind = 'link.state'").fetchall()
    db.close()
    return sum(1 for (d,) in rows if not json.loads(d)["open"])


def doubled_pays(ledger: Path) -> int:
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    seqs = [json.loads(d)["hit_seq"] for (d,) in db.execute("SELECT data FROM events WHERE kind = 'link.paid'")]
    db.close()
    return len(seqs) - len(set(seqs))


def run(args: argparse.Namespace, emit: Any) -> int:
    import structlog

    # the tables' logs: warnings only, on stderr — and the caller's logging as it was afterwards
    # (this runs in-process under the test suite too)
    saved = structlog.get_config()
    try:
        return _run(args, emit)
    finally:
        structlog.configure(**saved)


@contextlib.contextmanager
def _database(db: str | None, sync: bool = True) -> Iterator[tuple[str, Any]]:
    """(DSN, the pair or None): ``--db``, or a throwaway primary with its standby."""
    if db:
        yield db, None
        return
    from hil.pgpair import temp_pair

    with temp_pair(sync=sync, max_connections=300, prefix="tablectl-chaos-pg-") as pair:
        yield pair.dsn, pair


def _kinds(args: argparse.Namespace, pair: Any) -> list[str]:
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in FAULTS]
    if bad or not kinds:
        raise SystemExit(
            f"tablectl bench link-chaos: --kinds: unknown fault {bad[0] if bad else '(none)'}; "
            f"known: {', '.join(FAULTS)}"
        )
    if pair is None:
        kinds = [k for k in kinds if k != "failover"] or ["cut"]
    return kinds


def _failover(pair: Any, lag: float) -> str:
    """The primary crashes, the standby is promoted (an async one first left behind for ``lag``
    seconds: its stream held while the tables play on), a new standby made."""
    behind = ""
    if not pair.sync:
        pair.proxy.hold()
        time.sleep(lag)
        behind = f", the standby {pair.lag_bytes()} bytes of WAL behind"
    took = pair.failover()
    pair.rebuild_standby()
    return f"failover (promoted in {took:.1f} s{behind}, new standby made)"


def _fault(fault: str, pit: Any, tables: dict[str, ChaosTable], tid: str, pair: Any, lag: float = 2.0) -> str:
    """Play one fault; what it did (the figure's line)."""
    if fault == "kill-uplink":
        pit.kill(pit.uplinks[tid])
        time.sleep(0.3)
        pit.start_uplink(tid)
        return f"{fault} {tid}"
    if fault == "kill-lap":
        pit.kill(pit.lap)
        time.sleep(0.3)
        pit.start_lap()
    elif fault == "restart-table":
        tables[tid].restart_wanted.set()
        return f"{fault} {tid}"
    elif fault in ("restart-pg", "power-loss") and pair is None:
        _terminate_all(pit.dsn, pit.schema)
    elif fault == "restart-pg":
        pair.pg_ctl(pair.primary, "-m", "immediate", "restart")
    elif fault == "power-loss":
        pair.pg_ctl(pair.primary, "-m", "immediate", "stop")
        pair.pg_ctl(pair.primary, "start")
    elif fault == "failover":
        return _failover(pair, lag)
    elif fault == "stall":
        return f"{fault} ({pit.proxy.hold(5.0)} connections held 5 s)"
    elif fault == "blackhole":
        return f"{fault} ({sum(p.blackhole() for p in pit.proxy.each)} connections silent for good)"
    else:
        pit.proxy.cut()
    return fault


@dataclass
class _Tally:
    """What the run left behind: the LAP's records against the tables' ledgers."""

    line: str
    link_ok: bool
    lost: int
    doubled: int
    rec: Any
    recoveries: str
    closed: int
    closures: int
    balances: list[Any]
    errors: list[str]

    def good(self) -> bool:
        clean = self.lost == 0 and self.doubled == 0 and self.closed == 0
        return clean and self.rec.ok and self.link_ok and all(b.ok for b in self.balances) and not self.errors


def _run(args: argparse.Namespace, emit: Any) -> int:
    import sys

    from controller.core.log import configure

    configure(stream=sys.stderr, level="warning")
    rng = random.Random(args.seed)
    with (
        _database(args.db, args.standby == "sync") as (dsn, pair),
        tempfile.TemporaryDirectory(prefix="tablectl-chaos-") as tmp_s,
    ):
        kinds = _kinds(args, pair)
        pit, tables = _make_pit(args, dsn, Path(tmp_s), pair)
        stop = threading.Event()
        run_problems: list[str] = []
        counts = dict.fromkeys(kinds, 0)
        try:
            pit.start()
            emit("link_tls", pit.tls_note)
            _play_under_faults(args, pit, tables, kinds, counts, rng, pair, stop, emit)
            run_problems += _bring_back(pit, tables)
        except Exception as e:  # noqa: BLE001 - reported with the figures; the run fails
            import traceback

            traceback.print_exc()
            run_problems.append(f"{type(e).__name__}: {e}")
        finally:
            stop.set()
            for t in tables.values():
                t.close()
        try:
            tally = _tally(pit, tables, run_problems)
        finally:
            pit.close()  # the LAP and uplink processes, whatever happened above
        _emit_tally(args, counts, tables, tally, emit)
        return 0 if tally.good() else 1


def _make_pit(args: argparse.Namespace, dsn: str, tmp: Path, pair: Any = None) -> tuple[Any, dict[str, ChaosTable]]:
    """The pit (LAP, uplinks, proxy) and its tables, nothing started yet; the throwaway pair's
    link over TLS with a client certificate per table role (controller/lap/pgtls.py)."""
    from bench._linkrig import Pit

    tls = None
    # a pair of hil/pgpair.py (its data directories and pg_ctl are ours to write and reload; a pair
    # a manager runs keeps its own configuration: no TLS set up here)
    if pair is not None and all(hasattr(pair, a) for a in ("nodes", "run_as", "pg_ctl", "node_dsn")):
        from controller.lap.pgtls import enable_tls_pair, make_pki

        tls = make_pki(tmp / "pki")
        enable_tls_pair(pair, tls)
    pit = Pit(dsn, args.tables, tmp, heartbeat="200ms", proxy=True, make_table=False, tls=tls)
    tables = {t: ChaosTable(t, tmp, args.seed * 100 + i, args.speed, "bench") for i, t in enumerate(pit.ids)}
    for t in tables.values():
        t.hit_rate = args.hit_rate
    pit.tables = tables
    return pit, tables


def _play_under_faults(
    args: argparse.Namespace,
    pit: Any,
    tables: dict[str, ChaosTable],
    kinds: list[str],
    counts: dict[str, int],
    rng: random.Random,
    pair: Any,
    stop: threading.Event,
    emit: Any,
) -> None:
    """The tables play while one fault after another hits the link; then the players stop."""
    players = [threading.Thread(target=t.play, args=(stop,), daemon=True) for t in tables.values()]
    for th in players:
        th.start()
    for i in range(args.faults):
        time.sleep(args.interval)
        fault = kinds[i % len(kinds)]
        counts[fault] += 1
        emit(f"fault_{i + 1}", _fault(fault, pit, tables, rng.choice(pit.ids), pair, args.lag))
    stop.set()
    for th in players:
        th.join(120)


def _bring_back(pit: Any, tables: dict[str, ChaosTable]) -> list[str]:
    """Everything back, every outbox drained; the tables that ended in tilt."""
    from controller.lap.lap import wait_until

    if pit.lap is None or pit.lap.poll() is not None:
        pit.start_lap()
    for tid, p in pit.uplinks.items():
        if p.poll() is not None:
            pit.start_uplink(tid)
    wait_until(lambda: all(t.is_open() for t in tables.values()), 60, 0.1)
    problems = []
    for t in tables.values():
        state = t.rig.table.wait_for(lambda s: s.get("state") in ("open_for_wagers", "tilt"), 30.0)
        if state.get("state") == "tilt":  # e.g. a device link lost under load: reported, not hidden
            problems.append(f"{t.tid}: ended in tilt {state.get('tilts')}")
    pit.reconnect_store()
    _drain(pit, tables, wait_until)
    return problems


def _lost_and_doubled(pit: Any, ledgers: list[tuple[str, Path]]) -> tuple[int, int]:
    """Link records a ledger holds that the LAP does not; records the LAP holds that no ledger wrote
    (plus hits paid twice)."""
    lost = doubled = 0
    for tid, path in ledgers:
        mine = _link_seqs(path)
        theirs = {r["seq"] for r in pit.store._rows("SELECT seq FROM {s}.events WHERE table_id = %s", (tid,))}
        lost += len(mine - theirs)
        doubled += len(theirs - mine) + doubled_pays(path)
    return lost, doubled


def _tally(pit: Any, tables: dict[str, ChaosTable], run_problems: list[str]) -> _Tally:
    from hil.balance import check as check_balance
    from hil.linksim import link_line

    ledgers = [(t.tid, t.ledger_path) for t in tables.values()]
    pit.reconnect_store()
    line, ok = link_line(pit.store, ledgers)
    lost, doubled = _lost_and_doubled(pit, ledgers)
    rec = pit.store.reconcile()
    return _Tally(
        line=line,
        link_ok=ok,
        lost=lost,
        doubled=doubled,
        rec=rec,
        recoveries=_recoveries(pit.store),
        closed=sum(paid_while_closed(p) for _t, p in ledgers),
        closures=sum(_closures(p) for _t, p in ledgers),
        balances=[check_balance(t.ledger_path, t.people.placed if t.people else {}) for t in tables.values()],
        errors=run_problems + [f"{t.tid}: {t.error}" for t in tables.values() if t.error],
    )


def _emit_tally(
    args: argparse.Namespace, counts: dict[str, int], tables: dict[str, ChaosTable], tally: _Tally, emit: Any
) -> None:
    rec = tally.rec
    emit("faults", args.faults)
    emit("faults_by_kind", ", ".join(f"{k} {v}" for k, v in counts.items()))
    emit("rounds", sum(t.rounds for t in tables.values()))
    emit("contributions", rec.contributions)
    emit("hits", rec.hits)
    emit("lost", tally.lost)
    emit("doubled", tally.doubled)
    emit("meters_reconcile", "yes" if rec.ok else "no: " + "; ".join(rec.problems[:3]))
    emit("paid_while_closed", tally.closed)
    emit("refusals", rec.refusals)  # records the LAP refused (e.g. a payment of a hit it decided otherwise)
    emit("recoveries", tally.recoveries)  # what the uplinks found and the LAP restored (a LAP gone back in time)
    emit("link_closures", tally.closures)  # the times a table closed its linked wager during the run
    emit("tables_balanced", f"{sum(b.ok for b in tally.balances)}/{len(tally.balances)}")
    for problem in tally.errors + [b.line() for b in tally.balances if not b.ok]:
        emit("problem", problem)
    emit("link", tally.line.removeprefix("link: "))


def _recoveries(store: Any) -> str:
    """The LAP's recoveries by kind (``hit-restored`` with how many the meter was short of)."""
    rows = store._rows(
        "SELECT kind, count(*) AS n, count(*) FILTER (WHERE position(' short' IN detail) > 0) AS short"
        " FROM {s}.recoveries GROUP BY kind ORDER BY kind"
    )
    parts = [f"{r['kind']} {r['n']}" + (f" ({r['short']} short)" if r["short"] else "") for r in rows]
    return ", ".join(parts) or "none"


def _link_seqs(path: Path) -> set[int]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT seq FROM events WHERE kind IN ('link.contribution', 'link.void', 'link.hit', 'link.paid')"
    ).fetchall()
    db.close()
    return {int(r[0]) for r in rows}


def _drain(pit: Any, tables: dict[str, ChaosTable], wait_until: Any) -> None:
    for t in tables.values():
        want = _link_seqs(t.ledger_path)
        wait_until(
            lambda t=t, want=want: (
                want <= {r["seq"] for r in pit.store._rows("SELECT seq FROM {s}.events WHERE table_id = %s", (t.tid,))}
            ),
            60,
            0.1,
        )


def _terminate_all(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename LIKE %s AND pid <> pg_backend_pid()",
            (schema + "\\_%",),
        )
