"""``tablectl lap --db DSN --config lap.toml``: the LAP controller of one linked group.

Before it operates it runs the same software digest check as the table service (``[link]
software_record``; exit 3 when it fails).  It creates its PostgreSQL schema when missing,
applies ``lap.toml`` with the link stopped (every change recorded), self-checks (the schema's
functions and triggers are this release's, every level reconciled exactly), then runs the link
and beats its heartbeat until SIGTERM/Ctrl-C, when it stops the link (the tables close their
linked wagers); every ``[link] reconcile`` it self-checks again and makes the link inoperable at
the first problem.  A configuration error exits 2 naming file, section and key.
``--reopen TABLE`` reopens a table a refusal closed (recorded, with ``--note``).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.link.config import LapConfig
    from controller.link.floor_server import FloorServer

NAME = "lap"
HELP = "run the linked progressive (LAP) controller of one group on PostgreSQL"

EXIT_CONFIG = 2
EXIT_SOFTWARE = 3  # the software digest does not match the release's record (systemd: no restart)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, help="PostgreSQL DSN, e.g. postgresql://lap@db.pit/lap")
    p.add_argument("--config", type=Path, default=Path("/etc/tablectl/lap.toml"), help="the group's lap.toml")
    p.add_argument("--check", action="store_true", help="check lap.toml (and the database, if reachable), then exit")
    p.add_argument("--reconcile", action="store_true", help="print the reconciliation of every level, then exit")
    p.add_argument(
        "--sim",
        action="store_true",
        help="the simulator's, benches' and tests' software check: a missing or user-writable record skips or "
        "relaxes it (a digest that differs from a record still refuses)",
    )
    p.add_argument("--reopen", metavar="TABLE", help="reopen a table's linked wager a refusal closed, then exit")
    p.add_argument("--note", default="", help="with --reopen: why (recorded)")
    p.add_argument(
        "--staff-pin",
        metavar="PERSON:ROLE",
        help="set a floor staff member's PIN for the floor view (read from stdin), then exit",
    )


def run(args: argparse.Namespace) -> int:
    from controller.config import ConfigError
    from controller.link.config import load_lap

    try:
        cfg = load_lap(args.config)
    except ConfigError as e:
        print(f"tablectl: configuration error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if args.staff_pin:
        return _staff_pin(cfg, args.staff_pin)
    import psycopg

    from controller.link.lap import LapError, LapService
    from controller.selfcheck import check_software

    sw = check_software(cfg.software_record, require=not args.sim)
    if sw.problems:
        for p in sw.problems:
            print(f"tablectl lap: {p}", file=sys.stderr)
        return EXIT_SOFTWARE
    if args.check or args.reconcile or args.reopen:
        try:
            return _offline(args, cfg)
        except psycopg.OperationalError as e:
            print(f"tablectl lap: database unreachable: {str(e).strip()}", file=sys.stderr)
            return 1
    svc = LapService(cfg, args.db, log=lambda m: print(m, flush=True))
    signal.signal(signal.SIGTERM, lambda *_: svc.stop_event.set())
    floor = None
    if cfg.floor is not None:
        floor = _floor_server(cfg, args.db, svc.log)
        if floor is None:
            return EXIT_CONFIG if not _have_aiohttp() else 1
        svc.on_running = floor.start  # once the schema (and its floor_logins) is there
    try:
        svc.run()
    except LapError as e:
        print(f"tablectl lap: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        svc.stop_event.set()
    finally:
        if floor is not None:
            floor.stop()
    return 0


def _have_aiohttp() -> bool:
    try:
        import aiohttp  # noqa: F401 - only whether it is there
    except ImportError:
        return False
    return True


def _floor_server(cfg: LapConfig, dsn: str, log: Callable[[str], None]) -> FloorServer | None:
    """The floor view's server bound to its address(es), or None (said why on stderr)."""
    assert cfg.floor is not None
    f = cfg.floor
    if not _have_aiohttp():
        print(
            f"tablectl lap: {cfg.file}: [floor]: the floor view needs the LAP's extra: "
            "pip install 'tablectl[lap]' (aiohttp); or remove the [floor] section",
            file=sys.stderr,
        )
        return None
    from controller.link.floor_server import FloorServer, tls_context

    sign_at = (f.sign_bind, f.sign_port) if f.sign_bind is not None and f.sign_port is not None else None
    try:
        tls = tls_context(f.tls_cert, f.tls_key) if f.tls_cert and f.tls_key else None
        return FloorServer(
            dsn,
            cfg.schema,
            f.bind,
            f.port,
            f.staff,
            f.session_s,
            log,
            tls=tls,
            sign_at=sign_at,
            sign_hold_s=f.sign_hold_s,
            stale_s=max(3.0, 3 * cfg.heartbeat_s),
        )
    except OSError as e:
        where = f"{f.bind}:{f.port}" + (f" or [sign] {sign_at[0]}:{sign_at[1]}" if sign_at else "")
        print(f"tablectl lap: {cfg.file}: [floor]: cannot listen on {where}: {e}", file=sys.stderr)
        return None


def _offline(args: argparse.Namespace, cfg: object) -> int:
    """``--check``, ``--reconcile`` and ``--reopen``: one look at the database, then exit."""
    from controller.link.config import LapConfig
    from controller.link.lap import LapStore, connect

    assert isinstance(cfg, LapConfig)
    with connect(args.db) as conn:
        store = LapStore(conn, cfg.schema)
        if store.installed() is None:
            print(f"{args.config}: OK ({len(cfg.tables)} tables, {len(cfg.levels)} levels; schema not yet created)")
            return 0
        if args.reopen:
            was = store.reopen(args.reopen, args.note)
            print(f"table {args.reopen}: " + (f"reopened (it was closed: {was})" if was else "was not closed"))
            return 0
        return _report(store, cfg)


def _report(store: object, cfg: object) -> int:
    from controller.link.config import LapConfig
    from controller.link.lap import LapStore, level_line
    from controller.money import plural

    assert isinstance(store, LapStore) and isinstance(cfg, LapConfig)
    rec = store.reconcile()
    for _lv, st in sorted(rec.levels.items()):
        print(level_line(st))
    for c in store.differences(cfg):
        print(f"pending change (applied at the next start, link stopped): {c}")
    schema = store.schema_differences()
    for d in schema:
        print(f"schema: {d}")
    for r in store.refusals():
        print(f"refused: table {r['table_id']} record {r['seq']} ({r['kind']}): {r['reason']}")
    why = store.inoperable_reason()
    if why:
        print(f"the link is INOPERABLE: {why}")
    ok = rec.ok and not schema
    print(
        f"link: {'OK' if ok else 'FAILED'} ({rec.counts()}, {plural(rec.refusals, 'record')} refused, "
        f"meters {'reconciled' if rec.ok else 'NOT reconciled'})"
    )
    for p in rec.problems:
        print(f"problem: {p}", file=sys.stderr)
    return 0 if ok else 1


def _staff_pin(cfg: object, spec: str) -> int:
    from controller.console.auth import PinError
    from controller.link.config import LapConfig
    from controller.link.floor_auth import StaffStore

    assert isinstance(cfg, LapConfig)
    if cfg.floor is None:
        print(f"tablectl lap: {cfg.file}: no [floor] section: the floor view is off", file=sys.stderr)
        return EXIT_CONFIG
    person, _, role = spec.partition(":")
    pin = sys.stdin.readline().strip()
    try:
        StaffStore(cfg.floor.staff).set(person, role, pin)
    except PinError as e:
        print(f"tablectl lap: {e}", file=sys.stderr)
        return EXIT_CONFIG
    print(f"{cfg.floor.staff}: PIN set for {person} ({role})")
    return 0
