"""``tablectl bench link-chaos --tables 4 --faults N``: play linked tables while faults hit the
link, then check that nothing was lost or doubled.

The tables are the real table service against the HIL simulators (hil/rig.py, as ``tablectl
sim``) with simulated players; each table's uplink is a ``tablectl uplink`` process reaching
PostgreSQL through a TCP proxy of its own that this bench controls; the LAP is a ``tablectl lap``
process.  The fault kinds are a registry (bench/_faults.py); by default one fault every
``--interval`` seconds, the kinds in turn.  With ``--random``, ``--faults`` faults are drawn from
the run's seed (printed first: the same arguments replay the same plan): each its kind, its
target (one table's link or every one), its start within ``faults x interval`` seconds and its
duration; they overlap (a restart while a connection hangs, a cut during a stall).  The kinds:

- ``kill-uplink``: SIGKILL a table's uplink, start it again a moment later (random: up to 3 s);
- ``kill-lap``: SIGKILL the LAP, start it again (random: up to 3 s later);
- ``restart-table``: stop a table's service between two rounds and start a new one on the same
  ledger (its start-up recovery; not a kill at an arbitrary instant — bench crash does that);
- ``restart-pg``: restart PostgreSQL as a crash would (``pg_ctl restart -m immediate``; random:
  down for up to 3 s; with ``--db`` given, every connection of the run is terminated instead);
- ``cut``: the proxy drops every uplink connection (random: one table's or every one);
- ``stall``: the proxy carries nothing for 5 s (random: 0.5 to 8 s), then delivers what it held
  (a cable pulled and put back: nobody is told);
- ``blackhole``: every uplink connection open now goes silent for good (a NAT or firewall state
  that expired: bytes vanish, nothing is closed; only the uplink's own deadlines find it);
- ``power-loss``: the primary's machine loses power: ``pg_ctl stop -m immediate`` and start
  (``fsync=on``: what it acknowledged is in its WAL on disk);
- ``failover``: the primary crashes and its synchronous standby is promoted; the LAP and the
  uplinks reach it through their multi-host DSN (``target_session_attrs=read-write``); a new
  standby is then made of it (``pg_basebackup``) for the next one;
- ``kill-primary``, ``node-loss`` (only when named in ``--kinds``): the database is a Patroni
  cluster with a standby LAP, the primary's postmaster killed (with the active LAP: node-loss) and
  Patroni promoting (bench/_ha_faults.py).

Without ``--db`` the database is a throwaway primary with a synchronous standby
(hil/pgpair.py, ``fsync=on``); with ``--db`` the faults that need the bench's own cluster
(``failover``) are left out and ``power-loss`` terminates every connection of the run.

Then every process is brought back, every outbox drained, and it prints ``faults``, ``lost``
(link records in a table's ledger that the LAP does not hold), ``doubled`` (records the LAP
holds that no ledger wrote, or a hit paid twice), ``meters_reconcile`` (the LAP's exact
identity) and ``paid_while_closed`` (linked wagers a table accepted while its own ledger says
the linked wager was closed), ``refusals`` (records the LAP refused: a payment of a hit it decided
otherwise after a failover, say).  Exits non-zero unless lost 0, doubled 0, reconciled, 0 while
closed, every hit claim answered (``hits_unanswered``) and every table balanced.  No run ends in
a traceback: what went wrong is a ``problem`` line.
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

from bench import _faults, _ha_faults

NAME = "link-chaos"
HELP = (
    "faults on the link (uplinks, LAP, tables, PostgreSQL crash/power loss/failover, cut/stalled/silent connections):"
    " lost 0, doubled 0, reconciled"
)

FAULTS = tuple(_faults.KINDS)  # the registry (bench/_faults.py, bench/_ha_faults.py), in its order


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
        default=",".join(k for k in FAULTS if k not in _ha_faults.KINDS),
        help="the faults to play in turn (or draw from, with --random), comma-separated (default: all but "
        + ", ".join(_ha_faults.KINDS)
        + ", which run the database on Patroni with a standby LAP when named: "
        + ", ".join(FAULTS)
        + ")",
    )
    p.add_argument("--seed", type=int, default=1, help="the run's seed (players, targets, the random plan)")
    p.add_argument(
        "--random",
        action="store_true",
        help="draw the faults at random (kind, target, start, duration) over faults x interval seconds, "
        "overlapping; the seed is printed: the same seed plays the same plan",
    )
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

        from hil.rig import Rig, TableSetup

        self.rig = Rig(
            self.state,
            profile="six-card-fortune-progressive",
            seed=self.seed + self.restarts,
            speed=self.speed,
            setup=TableSetup(
                table_id=self.tid,
                profile_overrides={"progressive": dataclasses.replace(self.prog, linked=self.group)},
                link_socket=self.sock,
            ),
        )
        self.rig.start()
        if self.people is not None:
            self.people.rig = self.rig

    def is_open(self) -> bool:
        rig = self.rig  # a restart replaces it: read once
        if rig is None or rig.service.table is None:  # between a restart's stop and its service's start
            return False
        link = rig.table.status.get("link") or {}
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


def unanswered_hits(ledger: Path) -> int:
    """Hit claims in a table's ledger that no payment answers (the table still waits for the
    LAP's answer, or gave up on it)."""
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    hits = {int(s) for (s,) in db.execute("SELECT seq FROM events WHERE kind = 'link.hit'")}
    paid = {json.loads(d)["hit_seq"] for (d,) in db.execute("SELECT data FROM events WHERE kind = 'link.paid'")}
    db.close()
    return len(hits - paid)


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
def _database(db: str | None, sync: bool = True, kinds: str = "") -> Iterator[tuple[str, Any]]:
    """(DSN, the pair or None): ``--db``, or a throwaway primary with its standby (a Patroni
    cluster for the high-availability kinds: bench/_ha_faults.py)."""
    if db:
        yield db, None
        return
    if _ha_faults.wants_patroni(kinds):
        with _ha_faults.database() as (dsn, cluster):
            yield dsn, cluster
        return
    from hil.pgpair import temp_pair

    with temp_pair(sync=sync, max_connections=300, prefix="tablectl-chaos-pg-") as pair:
        yield pair.dsn, pair


def _kinds(args: argparse.Namespace, pair: Any) -> list[str]:
    try:
        kinds = _faults.known([k.strip() for k in args.kinds.split(",") if k.strip()], pair is not None)
    except ValueError as e:
        raise SystemExit(f"tablectl bench link-chaos: --kinds: {e}") from None
    return _ha_faults.usable(kinds, pair) or ["cut"]


def _plan(args: argparse.Namespace, kinds: list[str], ids: list[str]) -> list[_faults.Fault]:
    """The faults of the run: drawn from its own generator (the same seed, the same plan)."""
    rng = random.Random(f"{args.seed}/faults")
    if args.random:
        return _faults.random_plan(kinds, args.faults, args.faults * args.interval, ids, rng)
    return _faults.round_robin(kinds, args.faults, args.interval, ids, rng)


@dataclass
class _Tally:
    """What the run left behind: the LAP's records against the tables' ledgers."""

    line: str
    link_ok: bool
    pending: int
    lost: int
    doubled: int
    rec: Any
    recoveries: str
    closed: int
    closures: int
    balances: list[Any]
    errors: list[str]
    open_again_s: float | None = None
    longest_closed_s: float | None = None

    def good(self) -> bool:
        clean = self.lost == 0 and self.doubled == 0 and self.closed == 0 and self.pending == 0
        return clean and self.rec.ok and self.link_ok and all(b.ok for b in self.balances) and not self.errors


def _run(args: argparse.Namespace, emit: Any) -> int:
    import sys

    from controller.core.log import configure

    configure(stream=sys.stderr, level="warning")
    emit("seed", f"{args.seed} (replay: the same arguments with --seed {args.seed})")
    with (
        _database(args.db, args.standby == "sync", args.kinds) as (dsn, pair),
        tempfile.TemporaryDirectory(prefix="tablectl-chaos-") as tmp_s,
    ):
        kinds = _kinds(args, pair)
        pit, tables = _make_pit(args, dsn, Path(tmp_s), pair)
        plan = _plan(args, kinds, pit.ids)
        for i, f in enumerate(plan):
            emit(f"plan_{i + 1}", f.line())
        stop = threading.Event()
        run_problems: list[str] = []
        counts = dict.fromkeys(kinds, 0)
        for f in plan:
            counts[f.kind] += 1
        watch: Closures | None = None
        try:
            pit.start()
            emit("link_tls", pit.tls_note)
            if _ha_faults.is_patroni(pair):
                _ha_faults.start_standby(pit)
            ctx = _faults.Ctx(pit, tables, pair, args.lag)
            watch = Closures(tables)
            run_problems += _play_under_faults(ctx, plan, stop, emit)
            run_problems += _bring_back(pit, tables, ctx.faults_ended)
            pit.longest_closed_s = watch.longest_after(ctx.ends)
        except Exception as e:  # noqa: BLE001 - reported with the figures (a problem line, no traceback); the run fails
            run_problems.append(f"{type(e).__name__}: {_first_line(e)}")
        finally:
            stop.set()
            if watch is not None:
                watch.close()
            for t in tables.values():
                t.close()
        try:
            tally = _tally(pit, tables, run_problems)
        except Exception as e:  # noqa: BLE001 - the database unreachable at the end: said, the run fails
            emit("problem", f"the LAP's records could not be read: {type(e).__name__}: {_first_line(e)}")
            for problem in run_problems:
                emit("problem", problem)
            emit("logs_kept", _keep_logs(Path(tmp_s)))
            return 1
        finally:
            _ha_faults.stop_standby(pit)
            pit.close()  # the LAP and uplink processes, whatever happened above
        _emit_tally(args, counts, tables, tally, emit)
        if not tally.good():
            emit("logs_kept", _keep_logs(Path(tmp_s)))
            return 1
        return 0


def _keep_logs(tmp: Path) -> str:
    """The LAP's and the uplinks' logs of a failed run copied out of the run's directory (which
    goes at its end): where they are."""
    import shutil

    kept = Path(tempfile.mkdtemp(prefix="tablectl-chaos-logs-"))
    for log in sorted(tmp.glob("*.log")):
        shutil.copy2(log, kept / log.name)
    return str(kept)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _make_pit(args: argparse.Namespace, dsn: str, tmp: Path, pair: Any = None) -> tuple[Any, dict[str, ChaosTable]]:
    """The pit (LAP, uplinks, proxies) and its tables, nothing started yet; the throwaway pair's
    link over TLS with a client certificate per table role (controller/lap/pgtls.py)."""
    from bench._linkrig import LinkSetup, Pit

    tls = None
    # a pair of hil/pgpair.py (its data directories and pg_ctl are ours to write and reload; a pair
    # a manager runs keeps its own configuration: no TLS set up here)
    if pair is not None and all(hasattr(pair, a) for a in ("nodes", "run_as", "pg_ctl", "node_dsn")):
        from controller.lap.pgtls import enable_tls_pair, make_pki

        tls = make_pki(tmp / "pki")
        enable_tls_pair(pair, tls)
    pit = Pit(dsn, args.tables, tmp, links=LinkSetup(proxy=True, proxy_each=True, tls=tls), make_table=False)
    tables = {t: ChaosTable(t, tmp, args.seed * 100 + i, args.speed, "bench") for i, t in enumerate(pit.ids)}
    for t in tables.values():
        t.hit_rate = args.hit_rate
    pit.tables = tables
    return pit, tables


class Closures:
    """Each table's linked wager watched every 0.1 s from the start: its closed spells (monotonic)."""

    def __init__(self, tables: dict[str, ChaosTable], step: float = 0.1):
        self.tables, self.step = tables, step
        self.spells: list[tuple[float, float]] = []
        self._since: dict[str, float] = {}
        self._stop = threading.Event()
        threading.Thread(target=self._run, name="chaos-closures", daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(self.step):
            now = time.monotonic()
            for tid, t in self.tables.items():
                if not _open(t):
                    self._since.setdefault(tid, now)
                elif tid in self._since:
                    self.spells.append((self._since.pop(tid), now))

    def close(self) -> None:
        self._stop.set()

    def longest_after(self, ends: list[float]) -> float:
        """Stop watching; the longest a table stayed closed after a fault had ended (a spell still
        running counts to now)."""
        self.close()
        now = time.monotonic()
        longest = 0.0
        for a, b in self.spells + [(a, now) for a in self._since.values()]:
            before = [e for e in ends if e <= b]
            if before:
                longest = max(longest, b - max(a, max(before)))
        return longest


def _open(t: ChaosTable) -> bool:
    try:
        return t.is_open()
    except Exception:  # noqa: BLE001 - a table between two services (restart-table) is closed
        return False


def _play_under_faults(ctx: _faults.Ctx, plan: list[_faults.Fault], stop: threading.Event, emit: Any) -> list[str]:
    """The tables play while the plan's faults hit the link, each at its start (overlapping
    when the plan says so); once every fault has ended, the players stop.  The faults that
    could not be played (said, the run fails)."""
    players = [threading.Thread(target=t.play, args=(stop,), daemon=True) for t in ctx.tables.values()]
    for th in players:
        th.start()
    lines: dict[int, str] = {}
    t0 = time.monotonic()

    def one(i: int, f: _faults.Fault) -> None:
        time.sleep(max(0.0, t0 + f.start - time.monotonic()))
        try:
            lines[i] = _faults.play(ctx, f)
        except Exception as e:  # noqa: BLE001 - a fault the bench could not play is a failed run, said
            lines[i] = f"FAILED {f.kind} {f.target}: {type(e).__name__}: {_first_line(e)}"
        ctx.ends.append(max(time.monotonic(), t0 + f.start + f.duration))

    threads = [threading.Thread(target=one, args=(i, f), daemon=True) for i, f in enumerate(plan)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(300)
    for i in range(len(plan)):
        emit(f"fault_{i + 1}", lines.get(i, f"FAILED {plan[i].kind}: still running after 300 s"))
    # the last fault's end (a stall lasts its duration after its play returned)
    time.sleep(max(0.0, t0 + max((f.start + f.duration for f in plan), default=0.0) - time.monotonic()))
    ctx.faults_ended = time.monotonic()
    stop.set()
    for th in players:
        th.join(120)
    return [f"fault_{i + 1}: {line}" for i, line in sorted(lines.items()) if line.startswith("FAILED")]


def _bring_back(pit: Any, tables: dict[str, ChaosTable], since: float) -> list[str]:
    """Everything back, every outbox drained; the tables that ended in tilt."""
    from controller.lap.lap import wait_until

    if pit.lap is None or pit.lap.poll() is not None:
        pit.start_lap()
    for tid, p in pit.uplinks.items():
        if p.poll() is not None:
            pit.start_uplink(tid)
    problems = []
    if wait_until(lambda: all(t.is_open() for t in tables.values()), 60, 0.1):
        pit.open_again_s = time.monotonic() - since
    else:
        problems.append(
            f"tables still closed 60 s after the last fault: {[t.tid for t in tables.values() if not t.is_open()]}"
        )
        problems.extend(f"lap said: {line}" for line in _tail(pit.tmp / "lap.log", 12))
    for t in tables.values():
        state = t.rig.table.wait_for(lambda s: s.get("state") in ("open_for_wagers", "tilt"), 30.0)
        if state.get("state") == "tilt":  # e.g. a device link lost under load: reported, not hidden
            problems.append(f"{t.tid}: ended in tilt {state.get('tilts')}")
    pit.reconnect_store()
    _drain(pit, tables, wait_until)
    return problems


def _tail(path: Path, n: int) -> list[str]:
    """The last ``n`` lines of a log (none when it was never written)."""
    try:
        return path.read_text(errors="replace").strip().splitlines()[-n:]
    except FileNotFoundError:
        return []


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
        pending=sum(unanswered_hits(p) for _t, p in ledgers),
        lost=lost,
        doubled=doubled,
        rec=rec,
        recoveries=_recoveries(pit.store),
        closed=sum(paid_while_closed(p) for _t, p in ledgers),
        closures=sum(_closures(p) for _t, p in ledgers),
        balances=[check_balance(t.ledger_path, t.people.placed if t.people else {}) for t in tables.values()],
        errors=run_problems + [f"{t.tid}: {t.error}" for t in tables.values() if t.error],
        open_again_s=getattr(pit, "open_again_s", None),
        longest_closed_s=getattr(pit, "longest_closed_s", None),
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
    emit("hits_unanswered", tally.pending)  # hit claims no payment answers
    emit("refusals", rec.refusals)  # records the LAP refused (e.g. a payment of a hit it decided otherwise)
    emit("recoveries", tally.recoveries)  # what the uplinks found and the LAP restored (a LAP gone back in time)
    emit("link_closures", tally.closures)
    # the longest any table stayed closed after a fault ended (from the later of its closing and the
    # last fault's end before it reopened)
    emit("longest_closed_after_fault_s", "n/a" if tally.longest_closed_s is None else f"{tally.longest_closed_s:.1f}")
    # from the end of the last fault until every table's linked wager is open again
    emit(
        "open_again_s", "n/a" if tally.open_again_s is None else f"{tally.open_again_s:.1f}"
    )  # the times a table closed its linked wager during the run
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
