"""``tablectl lap --db DSN --config lap.toml``: the LAP controller of one linked group.

Before it operates it runs the same software digest check as the table service (``[link]
software_record``; exit 3 when it fails).  It creates its PostgreSQL schema when missing,
applies ``lap.toml`` with the link stopped (every change recorded), self-checks (the schema's
functions and triggers are this release's, every level reconciled exactly), then runs the link
and beats its heartbeat until SIGTERM/Ctrl-C, when it stops the link (the tables close their
linked wagers); every ``[link] reconcile`` it self-checks again and makes the link inoperable at
the first problem.  A configuration error exits 2 naming file, section and key.
``--reopen TABLE`` reopens a table a refusal closed (recorded, with ``--note``).
``--enrol-table TABLE --key-out FILE`` makes the table's next link key (a rotation when it has one:
its records in flight under the old key are still taken) and writes it for the table's uplink
(``LoadCredential=``); ``--revoke-key TABLE:N`` revokes one (controller/lap/linkkeys.py).
``--report [--day YYYY-MM-DD] [--format csv|pdf] [--out FILE]`` prints (or writes) every level's
meters and the last 25 hits (controller/lap/lapreport.py).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.lap.config import LapConfig
    from controller.lap.floor_server import FloorServer
    from controller.lap.lap import LapStore

NAME = "lap"
HELP = "run the linked progressive (LAP) controller of one group on PostgreSQL"

EXIT_CONFIG = 2
EXIT_SOFTWARE = 3  # the software digest does not match the release's record (systemd: no restart)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.commands._argtypes import dsn

    p.add_argument("--db", type=dsn, required=True, help="PostgreSQL DSN, e.g. postgresql://lap@db.pit/lap")
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
    p.add_argument("--enrol-table", metavar="TABLE", help="make the table's next link key (needs --key-out), then exit")
    p.add_argument("--key-out", type=Path, help="with --enrol-table: the new key file for the table (mode 0600)")
    p.add_argument("--revoke-key", metavar="TABLE:N", help="revoke a table's link key number N, then exit")
    p.add_argument(
        "--report",
        action="store_true",
        help="every level's meters over a gaming day and the last 25 hits (CSV on stdout, or --out), then exit",
    )
    p.add_argument("--day", help="with --report: the gaming day, YYYY-MM-DD or today (default: today's, from 06:00)")
    p.add_argument("--format", choices=("csv", "pdf"), default="csv", help="with --report: csv (default) or pdf")
    p.add_argument("--out", type=Path, help="with --report: write to this file (required for --format pdf)")
    p.add_argument(
        "--staff-pin",
        metavar="PERSON:ROLE",
        help="set a floor staff member's PIN for the floor view (read from stdin), then exit",
    )


def run(args: argparse.Namespace) -> int:
    from controller.lap.config import load_lap
    from controller.settings.config import ConfigError

    try:
        cfg = load_lap(args.config)
    except ConfigError as e:
        print(f"tablectl: configuration error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if args.staff_pin:
        return _staff_pin(cfg, args.staff_pin)
    if args.check:
        return _check(args, cfg)
    refused = _refusal(args, cfg)
    if refused is not None:
        return refused
    if args.enrol_table or args.revoke_key:
        return _keys_or_unreachable(args, cfg)
    if args.check or args.reconcile or args.reopen or args.report:
        return _offline_or_unreachable(args, cfg)
    return _serve(args, cfg)


def _refusal(args: argparse.Namespace, cfg: LapConfig) -> int | None:
    """The exit status when ``--report``'s arguments or the installed software forbid going on."""
    from controller.boot.selfcheck import check_software

    problem = _report_args(args) if args.report else _astray(args)
    if problem:
        print(f"tablectl lap: {problem}", file=sys.stderr)
        return EXIT_CONFIG
    sw = check_software(cfg.software_record, require=not args.sim)
    for p in sw.problems:
        print(f"tablectl lap: {p}", file=sys.stderr)
    return EXIT_SOFTWARE if sw.problems else None


def _check(args: argparse.Namespace, cfg: LapConfig) -> int:
    """``--check``: what ``lap`` needs, in the order it needs it — the database (an unreachable one
    said first, never hidden behind the software's record), then the software digest, then the
    extras lap.toml's sections need (the floor view's web stack) — every problem said; the exit
    status of the gravest (the software, then the configuration, then the database)."""
    from controller.boot.selfcheck import check_software

    statuses = [_offline_or_unreachable(args, cfg)]
    sw = check_software(cfg.software_record, require=not args.sim)
    for p in sw.problems:
        print(f"tablectl lap: {p}", file=sys.stderr)
    statuses.append(EXIT_SOFTWARE if sw.problems else 0)
    if cfg.floor is not None and not _have_aiohttp():
        print(
            f"tablectl lap: {cfg.file}: [floor]: the floor view needs the LAP's web stack (aiohttp), not installed: "
            "the release's `install.sh --lap` installs it (docs/install.md); or remove the [floor] section",
            file=sys.stderr,
        )
        statuses.append(EXIT_CONFIG)
    return max(statuses)  # the gravest: the software (3), the configuration (2), the database (1)


def _astray(args: argparse.Namespace) -> str | None:
    from controller.commands._argtypes import astray

    return astray(
        [
            ("--note", args.note, "--reopen", args.reopen),
            ("--day", args.day, "--report", args.report),
            ("--out", args.out, "--report", args.report),
            ("--format pdf", args.format != "csv", "--report", args.report),
        ]
    )


def _offline_or_unreachable(args: argparse.Namespace, cfg: LapConfig) -> int:
    import psycopg

    try:
        return _offline(args, cfg)
    except psycopg.OperationalError as e:
        print(f"tablectl lap: database unreachable: {str(e).strip()}", file=sys.stderr)
        return 1


def _keys_or_unreachable(args: argparse.Namespace, cfg: LapConfig) -> int:
    import psycopg

    try:
        return _keys(args, cfg)
    except psycopg.OperationalError as e:
        print(f"tablectl lap: database unreachable: {str(e).strip()}", file=sys.stderr)
        return 1


def _keys(args: argparse.Namespace, cfg: LapConfig) -> int:
    """``--enrol-table`` / ``--revoke-key``: a link key made (written for the table) or revoked."""
    from controller.lap import linkkeys
    from controller.lap.lap import LapStore, connect
    from controller.lap.linkauth import write_key

    table, key_no = args.enrol_table, None
    if args.revoke_key:
        table, _, no = str(args.revoke_key).rpartition(":")
        if not table or not no.isdigit():
            print(f"tablectl lap: --revoke-key {args.revoke_key!r}: give TABLE:N (N the key's number)", file=sys.stderr)
            return EXIT_CONFIG
        key_no = int(no)
    elif args.key_out is None or args.key_out.exists():
        what = "needs --key-out FILE" if args.key_out is None else f"--key-out {args.key_out}: exists (never replaced)"
        print(f"tablectl lap: --enrol-table {what}", file=sys.stderr)
        return EXIT_CONFIG
    with connect(args.db) as conn:
        if LapStore(conn, cfg.schema).installed() is None:
            print(f"tablectl lap: schema {cfg.schema} is not created yet: start the LAP once first", file=sys.stderr)
            return 1
        try:
            if key_no is not None:
                linkkeys.revoke(conn, cfg.schema, table, key_no)
                print(f"table {table}: link key {key_no} revoked (its records are refused from now on)")
                return 0
            k = linkkeys.enrol(conn, cfg.schema, table)
        except linkkeys.EnrolError as e:
            print(f"tablectl lap: {e}", file=sys.stderr)
            return 1
    try:
        write_key(args.key_out, k)
    except OSError as e:
        print(f"tablectl lap: {args.key_out}: {e.strerror or e} (key {k.key_no} made; revoke it)", file=sys.stderr)
        return 1
    print(f"table {table}: link key {k.key_no} written to {args.key_out} (hand it to the table's uplink)")
    return 0


def _serve(args: argparse.Namespace, cfg: LapConfig) -> int:
    """The LAP service (and its floor view, if configured) until SIGTERM or ^C."""
    from controller.lap.lap import LapError
    from controller.lap.service import LapService

    svc = LapService(cfg, args.db, log=lambda m: print(m, flush=True))
    signal.signal(signal.SIGTERM, lambda *_: svc.stop_event.set())
    floor = None
    if cfg.floor is not None:
        floor = _floor_server(cfg, args.db, svc.log)  # as the floor view's own role
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
            f"tablectl lap: {cfg.file}: [floor]: the floor view needs the LAP's extra (aiohttp): the release's "
            "`install.sh --lap` installs it (a checkout: pip install 'tablectl[lap]'); or remove the [floor] section",
            file=sys.stderr,
        )
        return None
    from controller.lap.floor_server import FloorServer, FloorSettings, tls_context
    from controller.lap.lap import floor_dsn

    sign_at = (f.sign_bind, f.sign_port) if f.sign_bind is not None and f.sign_port is not None else None
    try:
        tls = tls_context(f.tls_cert, f.tls_key) if f.tls_cert and f.tls_key else None
        settings = FloorSettings(
            f.bind,
            f.port,
            f.staff,
            f.session_s,
            sign_at=sign_at,
            sign_hold_s=f.sign_hold_s,
            stale_s=max(3.0, 3 * cfg.heartbeat_s),
            casino=cfg.casino,
        )
        return FloorServer(floor_dsn(dsn, cfg.schema), cfg.schema, settings, log, tls=tls)
    except OSError as e:
        where = f"{f.bind}:{f.port}" + (f" or [sign] {sign_at[0]}:{sign_at[1]}" if sign_at else "")
        print(f"tablectl lap: {cfg.file}: [floor]: cannot listen on {where}: {e}", file=sys.stderr)
        return None


def _offline(args: argparse.Namespace, cfg: object) -> int:
    """``--check``, ``--reconcile`` and ``--reopen``: one look at the database, then exit."""
    from controller.lap.config import LapConfig
    from controller.lap.lap import LapStore, connect

    assert isinstance(cfg, LapConfig)
    with connect(args.db) as conn:
        store = LapStore(conn, cfg.schema)
        installed = store.installed() is not None
        if args.report and not installed:
            print(f"tablectl lap: schema {cfg.schema} is not in the database: nothing to report", file=sys.stderr)
            return 1
        if args.report:
            return _lap_report(store, cfg, args)
        if not installed:
            return _check_before_install(store, cfg, args)
        if args.reopen:
            was = store.reopen(args.reopen, args.note)
            print(f"table {args.reopen}: " + (f"reopened (it was closed: {was})" if was else "was not closed"))
            return 0
        return _report(store, cfg, check=bool(args.check))


def _check_before_install(store: LapStore, cfg: LapConfig, args: argparse.Namespace) -> int:
    """A LAP whose schema is not created yet: its configuration and (``--check``) the replication."""
    refused = _replication_line(store, cfg) and bool(args.check)
    state = "REFUSED (replication)" if refused else "OK"
    print(f"{args.config}: {state} ({len(cfg.tables)} tables, {len(cfg.levels)} levels; schema not yet created)")
    return 1 if refused else 0


def _report(store: object, cfg: object, check: bool = False) -> int:
    """The reconciliation, pending changes, the schema's code, refusals and the replication
    (``check``: a replication that can lose an acknowledged hit, not allowed by lap.toml, fails)."""
    from controller.core.money import plural
    from controller.lap.config import LapConfig
    from controller.lap.lap import LapStore, level_line

    assert isinstance(store, LapStore) and isinstance(cfg, LapConfig)
    rec = store.reconcile()
    for _lv, st in sorted(rec.levels.items()):
        print(level_line(st))
    schema = _print_pending(store, cfg)
    unsafe = _replication_line(store, cfg)
    _active_line(store)
    why = store.inoperable_reason()
    if why:
        print(f"the link is INOPERABLE: {why}")
    refused = check and unsafe
    # a table whose own batch totals disagree is that table's problem (it stays closed), not the link's
    link_ok = not rec.link_problems and not schema and not refused
    if refused:
        print(
            "replication: REFUSED: an acknowledged hit can be lost with this server "
            "(set [link] allow_async_replication = true in lap.toml to run so knowingly)"
        )
    tables = f"; {plural(len(rec.table_problems), 'table')} NOT reconciled" if rec.table_problems else ""
    print(
        f"link: {'OK' if link_ok else 'FAILED'} ({rec.counts()}, {plural(rec.refusals, 'record')} refused, "
        f"meters {'NOT reconciled' if rec.link_problems else 'reconciled'}{tables})"
    )
    for p in rec.problems:
        print(f"problem: {p}", file=sys.stderr)
    return 0 if link_ok and rec.ok else 1


def _print_pending(store: LapStore, cfg: LapConfig) -> list[str]:
    """Print the pending changes, the schema's differences from the code, the refusals and the
    records held that are not authentic; return the schema's differences and those records (each
    fails the link's check)."""
    for c in store.differences(cfg):
        print(f"pending change (applied at the next start, link stopped): {c}")
    schema = store.schema_differences()
    for d in schema:
        print(f"schema: {d}")
    for r in store.refusals():
        print(f"refused: table {r['table_id']} record {r['seq']} ({r['kind']}): {r['reason']}")
    bad = store.unauthenticated()
    for r in (r for r in bad if not r["unsigned"]):
        print(
            f"NOT AUTHENTIC: table {r['table_id']} record {r['seq']} ({r['kind']}): held, its authenticator does not "
            "verify under the table's link key (written behind the rules)"
        )
    unsigned = [r for r in bad if r["unsigned"]]
    if unsigned:
        print(f"held without an authenticator (records of before the link keys): {len(unsigned)}")
    schema = schema + [f"record {r['seq']} of {r['table_id']} not authentic" for r in bad if not r["unsigned"]]
    for t in store.terminations():
        print(f"{t['action']}: table {t['table_id']}'s session {t['pid']} at {t['at']:%Y-%m-%d %H:%M:%S}: {t['why']}")
    return schema


def _report_args(args: argparse.Namespace) -> str | None:
    """What is wrong with --report's arguments (checked before the database is touched)."""
    for check in (_day_problem, _pdf_out_problem, _out_problem, _reportlab_problem):
        problem = check(args)
        if problem:
            return problem
    return None


def _day_problem(args: argparse.Namespace) -> str | None:
    """``--day`` made a date (in ``args``), or why it is not one."""
    from datetime import date

    if args.day is None or args.day.strip().lower() == "today":
        args.day = None  # the gaming day running now
        return None
    try:
        args.day = date.fromisoformat(args.day)
    except ValueError:
        return f"--day: {args.day!r} is not a date (YYYY-MM-DD, e.g. 2026-11-26)"
    return None


def _pdf_out_problem(args: argparse.Namespace) -> str | None:
    if args.format == "pdf" and args.out is None:
        return "--format pdf needs --out FILE (a PDF is not for the terminal)"
    return None


def _out_problem(args: argparse.Namespace) -> str | None:
    """``--out``: a file that can be written, in a directory that exists."""
    import os

    out = args.out
    if out is None:
        return None
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        return f"--out: {out} is a directory"
    if not parent.is_dir():
        return f"--out: directory {parent} does not exist"
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        return f"--out: {out} is not writable"
    return None


def _reportlab_problem(args: argparse.Namespace) -> str | None:
    if args.format != "pdf":
        return None
    try:
        import reportlab  # noqa: F401 - only whether it is there
    except ImportError:
        return "--format pdf needs the report extra: pip install 'tablectl[report]' (reportlab)"
    return None


def _lap_report(store: object, cfg: object, args: argparse.Namespace) -> int:
    from controller.core.money import plural
    from controller.lap import lapreport
    from controller.lap.config import LapConfig
    from controller.lap.floor import gaming_day_start

    assert isinstance(cfg, LapConfig)
    day = args.day or gaming_day_start().date()
    rep = lapreport.read(store, cfg.group, day, cfg.casino)
    if args.format == "pdf":
        from controller.lap.lapreportpdf import render

        data = render(rep)
    else:
        data = lapreport.to_csv(rep).encode()
    if args.out is None:
        sys.stdout.write(data.decode())
        return 0
    try:
        args.out.write_bytes(data)
    except OSError as e:
        print(f"tablectl lap: --out: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(
        f"{args.out}: {args.format} report of gaming day {day.isoformat()} ({plural(len(rep.levels), 'level')}, "
        f"{plural(len(rep.tables), 'table')}, {plural(len(rep.hits), 'hit')} listed)"
    )
    return 0


def _replication_line(store: object, cfg: object) -> bool:
    """Say the database's replication; True when it can lose an acknowledged hit and
    ``lap.toml`` does not allow that."""
    from controller.lap.config import LapConfig
    from controller.lap.lap import LapStore, replication

    assert isinstance(store, LapStore) and isinstance(cfg, LapConfig)
    rep = replication(store.conn)
    allowed = not rep.safe and cfg.allow_async_replication
    print(f"replication: {rep.text}" + (" (allowed by lap.toml)" if allowed else ""))
    return not rep.safe and not cfg.allow_async_replication


def _active_line(store: LapStore) -> None:
    """Which host's LAP is active (controller/lap/lease.py)."""
    from controller.lap import lease

    st = lease.status(store.conn, store.schema)
    print(st.line() if st is not None else "active LAP: unknown (a schema from before the LAP's lease)")


def _staff_pin(cfg: object, spec: str) -> int:
    from controller.console.auth import PinError
    from controller.lap.config import LapConfig
    from controller.lap.floor_auth import StaffStore

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
