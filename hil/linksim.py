"""``tablectl sim --tables N --link [DSN]``: N tables on one linked progressive meter.

Each table is the real service against its own HIL simulators (hil/rig.py) with its own
simulated players; each has its uplink (controller/uplink/uplink.py, here a thread per table
logging in as that table's own role); one LAP controller (controller/lap/lap.py) holds the
meter in PostgreSQL.  Without a DSN a throwaway cluster is started (controller/lap/pgtemp.py)
and removed after; with one, the run uses a fresh schema there and drops it after (only the schema
its own LAP created, and its roles; the verdict reads through a fresh connection, so a run
survives a failover of a multi-host DSN).

The summary ends with one ``balance:`` line per table and the link's line
``link: OK (N tables, C contributions, H meter hits, meters reconciled)`` when every level reconciles
exactly in the LAP and every table's link records are in the LAP exactly once (its ledger's
``link.*`` records against the LAP's rows, seq by seq, and the amounts paid against the LAP's
answers).
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from controller.daemon.service import LEDGER_FILE

#: the casino the sim's tables say they are in (hil/rig.py's hardware file), on the LAP's slips too
SIM_CASINO = "Simulated Casino (tablectl sim)"
#: the sim's floor view logins (person, role, PIN): sim only, printed when the page is up
SIM_STAFF = (("floor", "floorperson", "2468"), ("tech", "technician", "1357"), ("dealer", "dealer", "9753"))


@dataclass
class LinkedTable:
    table_id: str
    rig: Any
    uplink: Any
    people: Any = None
    error: str | None = None
    rounds: int = 0
    lines: list[str] = field(default_factory=list)


@contextlib.contextmanager
def database(dsn: str | None) -> Iterator[str]:
    if dsn:
        yield dsn
        return
    from controller.lap.pgtemp import temp_cluster

    with temp_cluster(prefix="tablectl-sim-pg-") as d:
        yield d


def lap_doc(schema: str, tables: list[str], games: list[str]) -> dict[str, Any]:
    return {
        "link": {
            "group": "sim",
            "schema": schema,
            "heartbeat": "500ms",
            "allow_async_replication": True,
            "casino": SIM_CASINO,
        },
        "levels": {
            "primary": {
                "seed": "$5,000",
                "reset": "$5,000",
                "increment_rate": "21%",
                "max_wager": "$5",  # the largest progressive wager of the profiles in config/tables
                "meter_pays": ["100%", "20%", "10%"],  # their paytables' percentage pays
            }
        },
        "tables": {t: {"asset": f"A-{10000 + i + 1}", "game": games[i % len(games)]} for i, t in enumerate(tables)},
    }


def drop_schema(dsn: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        for (role,) in c.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE %s", (schema + "\\_%",)).fetchall():
            c.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@dataclass(frozen=True)
class LinkSimSettings:
    """What a linked simulation plays (``tablectl sim --tables N``): ``tables`` tables of ``game``
    (comma-separated games are dealt round the tables) sharing one meter on the LAP at ``dsn``
    (None: a throwaway cluster), ``rounds`` each from ``seed``, at ``speed`` times real time.
    ``keep_schema``: leave the LAP's schema behind.  ``floor``: serve the LAP's floor view at
    (host, port) while the tables play, with the sim-only logins of :data:`SIM_STAFF`; it stays up
    after the rounds until the run is stopped.  ``hit_rate``: the share of rounds dealt five aces
    first (hil/luck.py); with the floor view up, the simulated floorperson validates a hit once it
    is acknowledged there (or after :data:`ACK_WAIT_S`), so that the pending-hit alert can be seen
    and acknowledged.  ``sign_hold_s``: how long the sign celebrates a hit."""

    tables: int
    rounds: int
    seed: int
    dsn: str | None
    game: str = "six-card-fortune-progressive"
    speed: float = 50.0
    keep_schema: bool = False
    floor: tuple[str, int] | None = None
    hit_rate: float = 0.0
    sign_hold_s: float = 30.0


def run_link_sim(
    settings: LinkSimSettings,
    *,
    out: TextIO = sys.stdout,
    stop: threading.Event | None = None,
    on_floor: Callable[[Any, Any, str], None] | None = None,
) -> int:
    """Play ``settings``, report to ``out``; 0 when every table balanced and the link agreed.
    ``stop`` ends the rounds early (each table finishes the round it is in) and a floor view kept
    up; ``on_floor(server, lap_config, dsn)`` is called once the floor view is up (tests)."""
    from controller.lap.config import parse_lap
    from controller.lap.lap import LapStore, connect, wait_until
    from controller.lap.service import LapService
    from hil.balance import check as check_balance

    tables, rounds, seed, game = settings.tables, settings.rounds, settings.seed, settings.game
    games = _linked_games(game)
    if games is None:
        return 2
    ids = [f"T{i + 1:02d}" for i in range(tables)]
    print(f"tablectl sim: {tables} linked tables, game {game}, {rounds} rounds each, seed {seed}", file=out, flush=True)
    with database(settings.dsn) as pg, tempfile.TemporaryDirectory(prefix="tablectl-linksim-") as tmp:
        schema = f"sim_{uuid.uuid4().hex[:10]}"
        cfg = parse_lap(lap_doc(schema, ids, [p.game for _g, p in games]), "<sim lap.toml>")
        created: list[str] = []  # the schema this run's LAP created: the only one it drops
        lap = LapService(
            cfg, pg, log=lambda m: created.append(schema) if m == f"lap: schema {schema} created" else None
        )
        lap_thread = threading.Thread(target=lap.run, name="lap", daemon=True)
        lap_thread.start()
        store = LapStore(connect(pg), schema)
        server = None
        stop = stop or threading.Event()
        try:
            if not wait_until(lambda: store.installed() is not None and store.state() == "running", 30, 0.05):
                print("link: FAILED (the LAP did not start)", file=out)
                return 1
            run = _Run(Path(tmp), pg, cfg, seed, out, stop)
            server = _floor_up(run, settings.floor, on_floor, settings.sign_hold_s)
            linked = _start_tables(run, ids, games, settings.speed)
            luck = _luck(settings.hit_rate, server, pg, schema, stop, out)
            _play_and_drain(run, linked, rounds, keep_up=server is not None, luck=luck)
            ok = _balances(linked, Path(tmp), check_balance, out)
            # a fresh connection for the verdict: the one above may be to a primary that has
            # since failed over (a multi-host DSN reaches the new one)
            store.conn.close()
            store = LapStore(_connect_again(pg, connect), schema)
            line, link_ok = link_line(store, [(t.table_id, Path(tmp) / t.table_id / LEDGER_FILE) for t in linked])
            print(line, file=out, flush=True)
            return 0 if ok and link_ok else 1
        finally:
            if server is not None:
                server.stop()
            lap.stop_event.set()
            lap_thread.join(10)
            store.conn.close()
            if created and not settings.keep_schema:
                _drop_quietly(pg, schema, out)


def _linked_games(game: str) -> list[tuple[str, Any]] | None:
    """One game, or several (comma-separated, dealt round the tables): one meter for all of them.
    Each with its profile; None (said on stderr) when one of them has no progressive to link."""
    from controller.settings import config as C

    names = [g.strip() for g in game.split(",") if g.strip()]
    profs = [C.load_profile(g) for g in names]
    for g, prof in zip(names, profs):
        if prof.progressive is None:
            print(f"tablectl sim: game {g} has no progressive to link", file=sys.stderr)
            return None
    return list(zip(names, profs))


@dataclass(frozen=True)
class _Run:
    """What the parts of one linked sim run share: its state directory (a table's state under
    ``tmp/<id>``), the database, the LAP's configuration (its schema), the seed, where it reports,
    and the stop flag that ends the rounds early."""

    tmp: Path
    pg: str
    cfg: Any
    seed: int
    out: TextIO
    stop: threading.Event


@dataclass(frozen=True)
class Luck:
    """``--hit-rate`` (hil/luck.py) and, with the floor view up, what the floorperson waits for
    before validating a hit (``gate(table_id)``)."""

    hit_rate: float = 0.0
    gate: Callable[[str, int], None] | None = None


def _luck(hit_rate: float, server: Any, pg: str, schema: str, stop: threading.Event, out: TextIO) -> Luck:
    """The hit rate, and with the floor view up (``server``) the floorperson's wait for it."""
    return Luck(hit_rate, None if server is None else _floor_gate(pg, schema, stop, out))


#: with the floor view up, the simulated floorperson validates a pending hit once it is acknowledged
#: on the floor view, or after this many real seconds (nobody is looking)
ACK_WAIT_S = 60.0
#: and walks to the table first: validated a quarter second after the acknowledgement, the hit was
#: paid before the floor view's next push, which never showed it acknowledged
WALK_S = 2.0


def _floor_gate(pg: str, schema: str, stop: threading.Event, out: TextIO) -> Callable[[str, int], None]:
    """Wait (real time) until the table's pending hit in its round is acknowledged on the floor view,
    ``stop`` is set, or :data:`ACK_WAIT_S` passes; say what the floor is waiting for."""
    import time

    import psycopg
    from psycopg import sql

    q = sql.SQL(
        "SELECT h.order_no, h.seat, h.amount_cents, EXISTS (SELECT 1 FROM {s}.floor_acks a WHERE a.level = h.level"
        " AND a.order_no = h.order_no) FROM {s}.hits h LEFT JOIN {s}.payouts p ON p.table_id = h.table_id"
        " AND p.hit_seq = h.seq WHERE h.table_id = %s AND h.round_no = %s AND p.seq IS NULL"
        " ORDER BY h.decided_at LIMIT 1"
    ).format(s=sql.Identifier(schema))

    def gate(tid: str, round_no: int) -> None:
        from controller.core.money import format_cents

        end, told = time.monotonic() + ACK_WAIT_S, False
        with psycopg.connect(pg, autocommit=True) as c:
            while not stop.is_set() and time.monotonic() < end:
                row = c.execute(q, (tid, round_no)).fetchone()
                if row is not None and row[3]:
                    print(
                        f"{tid}: hit #{row[0]} acknowledged on the floor view; the floorperson validates it", file=out
                    )
                    stop.wait(WALK_S)
                    return
                if row is not None and not told:
                    told = True
                    print(
                        f"{tid}: progressive hit #{row[0]}, seat {row[1]}, {format_cents(row[2])}: pending; "
                        "acknowledge it on the floor view (the floorperson validates it at the table then, "
                        f"or in {ACK_WAIT_S:.0f} s)",
                        file=out,
                        flush=True,
                    )
                time.sleep(0.25)
        if told and not stop.is_set():
            print(f"{tid}: not acknowledged within {ACK_WAIT_S:.0f} s; the floorperson validates it anyway", file=out)

    return gate


def _play_and_drain(run: _Run, linked: list[Any], rounds: int, *, keep_up: bool, luck: Luck | None = None) -> None:
    """The rounds played; every outbox reaches the LAP before the tables stop."""
    from controller.lap.lap import wait_until
    from hil.people import People

    try:
        _play_all(run, linked, rounds, People, keep_up=keep_up, luck=luck or Luck())
        for t in linked:
            _drain(t, wait_until)
    finally:
        for t in linked:
            t.rig.stop()
            t.uplink.stop()


def _play_all(run: _Run, linked: list[Any], rounds: int, people: Any, *, keep_up: bool, luck: Luck) -> None:
    """Every table open on its link, then ``rounds`` rounds each on threads of their own; with the
    floor view up (``keep_up``) the tables wait for ``stop`` after their rounds."""
    for t in linked:
        t.rig.table.wait_for(lambda s: bool((s.get("link") or {}).get("open")), 30.0)
    from controller.core.progress import Progress

    stop, out = run.stop, run.out
    threads = [threading.Thread(target=_play, args=(t, rounds, run.seed, people, stop, luck)) for t in linked]
    for th in threads:
        th.start()
    # rounds played so far: a status line on a terminal, a line every 10 s otherwise
    with Progress(
        "rounds played",
        count=lambda: sum(t.rounds for t in linked),
        total=rounds * len(linked),
        stream=out,
        line_every_s=10.0,
    ):
        for th in threads:
            th.join()
    if keep_up and not stop.is_set():
        print("tablectl sim: rounds done; the floor view stays up until Ctrl-C", file=out, flush=True)
        stop.wait()


def _balances(linked: list[Any], tmp: Path, check_balance: Any, out: TextIO) -> bool:
    """Each table's balance line (and its error, if it had one); True when every table balanced."""
    ok = True
    for t in linked:
        if t.error:
            print(f"{t.table_id} error: {t.error}", file=out)
            ok = False
        bal = check_balance(tmp / t.table_id / LEDGER_FILE, t.people.placed if t.people else {})
        print(f"{t.table_id} {bal.line()}", file=out, flush=True)
        ok = ok and bal.ok
    return ok


def _connect_again(pg: str, connect: Any, timeout: float = 30.0) -> Any:
    """A connection to the database, retried for ``timeout`` (a failover, a restart under way)."""
    import time

    import psycopg

    end = time.monotonic() + timeout
    while True:
        try:
            return connect(pg)
        except psycopg.OperationalError:
            if time.monotonic() >= end:
                raise
            time.sleep(0.5)


def _drop_quietly(pg: str, schema: str, out: TextIO) -> None:
    """Drop the run's schema; a database that cannot be reached leaves it, said so."""
    import psycopg

    try:
        drop_schema(pg, schema)
    except psycopg.Error as e:
        print(f"tablectl sim: schema {schema} left in the database ({str(e).strip().splitlines()[0]})", file=out)


def _drain(t: LinkedTable, wait_until: Any) -> None:
    """Wait until the LAP holds every link record the table wrote."""
    last = int(t.rig.table.lap.last_outbox)
    wait_until(lambda: int(t.uplink.sender.acked) >= last, 30, 0.05)


def _start_tables(run: _Run, ids: list[str], games: list[tuple[str, Any]], speed: float) -> list[LinkedTable]:
    import psycopg

    from controller.lap.lap import connect
    from controller.lap.linkkeys import enrol
    from controller.uplink.uplink import Uplink, UplinkConfig
    from hil.rig import Rig, TableSetup

    tmp, pg, cfg, seed = run.tmp, run.pg, run.cfg, run.seed

    with connect(pg) as c:  # each table's link key, as `tablectl lap --enrol-table` makes it
        keys = {tid: enrol(c, cfg.schema, tid) for tid in ids}
    linked = []
    for i, tid in enumerate(ids):
        game, prof = games[i % len(games)]
        state = tmp / tid
        state.mkdir()
        sock = tmp / f"{tid}.sock"
        rig = Rig(
            state,
            profile=game,
            seed=seed * 1000 + i,
            speed=speed,
            setup=TableSetup(
                table_id=tid,
                profile_overrides={"progressive": dataclasses.replace(prof.progressive, linked=cfg.group)},
                link_socket=sock,
            ),
        )
        rig.start()
        dsn = psycopg.conninfo.make_conninfo(pg, user=cfg.role_for(tid))
        ucfg = UplinkConfig(
            dsn, cfg.schema, tid, state / LEDGER_FILE, sock, poll_s=0.5, key=rig.ledger_key, link_key=keys[tid]
        )
        up = Uplink(ucfg, log=lambda m: None)
        up.start()
        linked.append(LinkedTable(tid, rig, up))
    return linked


def _floor_up(
    run: _Run, at: tuple[str, int] | None, on_floor: Callable[[Any, Any, str], None] | None, sign_hold_s: float
) -> Any:
    """The floor view served at ``at`` (None: not asked for), ``on_floor`` told once it is up."""
    if at is None:
        return None
    server = _floor(run.tmp, at, run.pg, run.cfg.schema, run.out, sign_hold_s)
    if on_floor is not None:
        on_floor(server, run.cfg, run.pg)
    return server


def _floor(tmp: Path, at: tuple[str, int], pg: str, schema: str, out: TextIO, sign_hold_s: float = 30.0) -> Any:
    from controller.lap.floor_auth import StaffStore
    from controller.lap.floor_server import FloorServer, FloorSettings

    staff = tmp / "floor-staff.toml"
    for person, role, pin in SIM_STAFF:
        StaffStore(staff).set(person, role, pin)
    settings = FloorSettings(at[0], at[1], staff, casino=SIM_CASINO, sign_hold_s=sign_hold_s)
    server = FloorServer(pg, schema, settings, log=lambda m: None)
    server.start()
    host, port = server.address
    logins = ", ".join(f"{p} / PIN {pin} ({r})" for p, r, pin in SIM_STAFF)
    print(f"floor view: http://{host}:{port}/  sim logins: {logins}", file=out, flush=True)
    print(f"progressive sign: http://{host}:{port}/sign", file=out, flush=True)
    return server


def _play(
    t: LinkedTable, rounds: int, seed: int, People: Any, stop: threading.Event | None = None, luck: Luck | None = None
) -> None:
    from hil.luck import maybe_stack

    luck = luck or Luck()
    t.people = People(t.rig, random.Random(f"{seed}/{t.table_id}/people"))
    gate = luck.gate
    if gate is not None:
        t.people.before_validation = lambda st: gate(t.table_id, int(st.get("round") or 0))
    hits = random.Random(f"{seed}/{t.table_id}/hits")
    try:
        for _ in range(rounds):
            if stop is not None and stop.is_set():
                break
            maybe_stack(t.rig, hits, luck.hit_rate)
            t.people.play_round()
            t.rounds += 1
        t.rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 30.0)
    except Exception as e:  # noqa: BLE001 - reported in the summary, the run fails
        t.error = f"{type(e).__name__}: {e}"


#: a ledger's link record kinds, as the LAP names them
_LINK_KINDS = {"link.contribution": "contribution", "link.void": "void", "link.hit": "hit", "link.paid": "paid"}


def _ledger_link_records(path: Path) -> dict[int, tuple[str, Any]]:
    """A table's link records, by seq: (the LAP's kind, the data)."""
    import json
    import sqlite3

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    mine = {
        seq: (_LINK_KINDS[k], json.loads(d))
        for seq, k, d in db.execute(
            "SELECT seq, kind, data FROM events WHERE kind IN (?, ?, ?, ?)", tuple(_LINK_KINDS)
        ).fetchall()
    }
    db.close()
    return mine


def _table_link_problems(store: Any, tid: str, path: Path) -> list[str]:
    """One table's link records against the LAP's: the same seqs, kinds and wagers, paid as answered."""
    mine = _ledger_link_records(path)
    theirs = {
        r["seq"]: (r["kind"], r["data"])
        for r in store._rows("SELECT seq, kind, data FROM {s}.events WHERE table_id = %s", (tid,))
    }
    problems = []
    if set(mine) != set(theirs):
        problems.append(
            f"{tid}: ledger has {len(mine)} link records, the LAP {len(theirs)} "
            f"(missing {sorted(set(mine) - set(theirs))[:5]}, extra {sorted(set(theirs) - set(mine))[:5]})"
        )
    for seq, (kind, d) in mine.items():
        got = theirs.get(seq)
        if got is None:
            continue
        if got[0] != kind or (kind == "contribution" and got[1].get("wager") != d["wager"]):
            problems.append(f"{tid}: record {seq} differs in the LAP ({got} vs {kind} {d})")
    return problems + _payment_problems(store, tid, mine)


def _payment_problems(store: Any, tid: str, mine: dict[int, tuple[str, Any]]) -> list[str]:
    """Each payment the table recorded is the amount the LAP answered for its hit."""
    answers = {
        r["seq"]: r["amount_cents"]
        for r in store._rows("SELECT seq, amount_cents FROM {s}.hits WHERE table_id = %s", (tid,))
    }
    return [
        f"{tid}: paid {d['cents']} for hit {d['hit_seq']}, the LAP answered {answers.get(d['hit_seq'])}"
        for kind, d in mine.values()
        if kind == "paid" and answers.get(d["hit_seq"]) != d["cents"]
    ]


def link_line(store: Any, ledgers: list[tuple[str, Path]]) -> tuple[str, bool]:
    """The link's verdict: the LAP's levels reconcile exactly, and every table's link records
    are in the LAP exactly once (same seqs, same kinds, same wagers, paid as answered)."""
    rec = store.reconcile()
    problems = list(rec.problems)
    for tid, path in ledgers:
        problems += _table_link_problems(store, tid, path)
    n = len(ledgers)
    if problems:
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        return "link: MISMATCH " + "; ".join(problems[:3]) + more, False
    from controller.core.money import plural

    return f"link: OK ({plural(n, 'table')}, {plural(rec.contributions, 'contribution')}, " + (
        f"{plural(rec.hits, 'meter hit')}, meters reconciled)"
    ), True
