"""``tablectl sim``: the real controller service, in-process, against the HIL
simulators (shoe, shaker, sign on ptys; gpiozero mock pins) with a simulated
dealer, players and floorperson — the embedded default."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "sim"
HELP = "play rounds against the HIL simulators (no hardware needed)"

#: bounds of the command line's numbers (a week of play at a busy table; a large pit; a clock's speed-up)
MAX_ROUNDS, MAX_TABLES, MAX_SPEED = 10_000_000, 1000, 1e6


def add_arguments(p: argparse.ArgumentParser) -> None:
    from controller.commands._argtypes import dsn, log_level

    p.add_argument("--game", default="six-card-fortune", help="table profile / game (default six-card-fortune)")
    p.add_argument("--rounds", type=int, default=20, help="rounds to play (default 20)")
    p.add_argument("--seed", type=int, default=1, help="seed for players, shoe and shaker (default 1)")
    p.add_argument("--realtime", action="store_true", help="play at human pace (clock x1)")
    p.add_argument("--speed", type=float, default=50.0, help="game-clock speed-up when not --realtime (default 50)")
    p.add_argument(
        "--no-idle-skip",
        dest="idle_skip",
        action="store_false",
        help="let the game clock run at --speed throughout (by default it skips the time when every "
        "simulated party waits: hil/simclock.py)",
    )
    p.add_argument(
        "--tables",
        type=int,
        default=1,
        help="tables sharing one linked meter (more than one implies --link: a throwaway cluster unless a DSN)",
    )
    p.add_argument(
        "--link",
        type=dsn,
        nargs="?",
        const="",
        default=None,
        metavar="DSN",
        help="play the tables on one linked progressive (docs/linked.md): the LAP on PostgreSQL at DSN, or, "
        "without one, a throwaway cluster (initdb/pg_ctl) removed afterwards",
    )
    p.add_argument(
        "--floor",
        metavar="HOST:PORT",
        help="with --link: serve the LAP's floor view there (docs/linked.md); its sim-only logins are printed, "
        "and after the rounds the page stays up until Ctrl-C",
    )
    p.add_argument(
        "--state-dir",
        type=Path,
        help="keep the ledger here (default: a temporary directory); its key goes beside it in STATE_DIR-key/ "
        "and its witness in STATE_DIR-witness/, where `tablectl history|status|audit|backup|report "
        "--state-dir STATE_DIR` find them",
    )
    p.add_argument(
        "--log-level",
        type=log_level,
        help="log level for the service's log on stderr (default warning; error for linked tables, whose "
        "start waits for the LAP's first heartbeat, an expected warning per table)",
    )
    p.add_argument(
        "--hit-rate",
        type=float,
        default=0.0,
        metavar="R",
        help="deal five aces first in a share R (0 to 1) of the rounds, so that progressive hits come up "
        "(hil/luck.py; the Pai Gow poker games and DJ Wild); with --floor the floorperson validates a hit once "
        "it is acknowledged on the floor view (or after a minute)",
    )
    p.add_argument(
        "--console-pty",
        action="store_true",
        help="open the technician console on a pty and print its path and the PINs (attach with pyserial's "
        "miniterm, installed with tablectl); after the rounds the service keeps running until Ctrl-C",
    )


def _usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments before anything starts, or None."""
    if args.rounds < 1:
        return "--rounds must be at least 1"
    if args.rounds > MAX_ROUNDS:
        return f"--rounds: at most {MAX_ROUNDS:,}"
    if not 0 < args.speed <= MAX_SPEED:
        return f"--speed must be positive, at most {MAX_SPEED:g}"
    if args.tables < 1:
        return "--tables must be at least 1"
    if args.tables > MAX_TABLES:
        return f"--tables: at most {MAX_TABLES}"
    if not 0 <= args.hit_rate <= 1:
        return "--hit-rate must be from 0 to 1"
    return _linked_only(args) or _state_dir_problem(args.state_dir) or _unknown_game(args.game)


def _is_linked(args: argparse.Namespace) -> bool:
    """Tables on a linked meter (--link, or --tables N > 1), not one table on its own."""
    return args.link is not None or args.tables > 1


def _linked_only(args: argparse.Namespace) -> str | None:
    """An option the linked simulation (--tables N > 1, --link) cannot honour, named; or None."""
    if not _is_linked(args):
        return None
    ignored = [
        opt
        for opt, given in (
            ("--state-dir", args.state_dir is not None),
            ("--console-pty", args.console_pty),
            ("--realtime", args.realtime),
            ("--no-idle-skip", not args.idle_skip),
        )
        if given
    ]
    if not ignored:
        return None
    return (
        f"{', '.join(ignored)}: one table's options, not for the linked simulation (--tables N, --link): "
        "its tables' ledgers are throwaway; run one table (`tablectl sim --state-dir D --console-pty`) for those"
    )


def _state_dir_problem(state_dir: Path | None) -> str | None:
    """--state-dir, its key directory and its witness directory (beside it) made, or why they cannot be."""
    if state_dir is None:
        return None
    from controller.books.ledgerkey import beside_key_file
    from controller.books.witness import default_witness_dir

    for d in (state_dir, beside_key_file(state_dir).parent, default_witness_dir(state_dir)):
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            return f"--state-dir {state_dir}: cannot make {d}: {e.strerror or e}"
    return None


def _unknown_game(games: str) -> str | None:
    """--game's first name (of a comma-separated list) that is no table profile, said; or None."""
    from controller.core.suggest import did_you_mean
    from controller.settings.config import profile_names

    known = profile_names()
    for g in (g.strip() for g in games.split(",")):
        if g not in known:
            return f"--game: no game {g!r}{did_you_mean(g, known)}; games: {', '.join(known)}"
    return None


def _floor_at(args: argparse.Namespace) -> tuple[str, int] | str | None:
    """--floor's (host, port), checked free before a cluster is started; or what is wrong."""
    if not args.floor:
        return None
    host, _, port = args.floor.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return f"--floor wants HOST:PORT, got {args.floor!r}"
    if not _is_linked(args):
        return "--floor needs --link (or --tables N > 1)"
    import socket

    try:
        with socket.create_server((host, int(port))) as _s:
            pass
    except OSError as e:
        return f"--floor {args.floor}: cannot listen there: {e.strerror or e}"
    return host, int(port)


def _where_kept(state_dir: Path) -> str:
    from controller.books.ledgerkey import beside_key_file
    from controller.books.witness import default_witness_dir

    return (
        f"ledger: {state_dir}/ledger.sqlite3 (key {beside_key_file(state_dir)}, witness "
        f"{default_witness_dir(state_dir)}/); look at it with `tablectl history|status|meters|audit|"
        f"report --day YYYY-MM-DD|backup DEST --state-dir {state_dir}`"
    )


def run(args: argparse.Namespace) -> int:
    from controller.core.log import configure

    problem = _usage_error(args)
    floor = _floor_at(args)
    if problem is None and isinstance(floor, str):
        problem = floor
    if problem is not None:
        print(f"tablectl sim: {problem}", file=sys.stderr)
        return 2
    assert not isinstance(floor, str)
    from controller.commands._rigs import missing

    if (rc := missing(NAME)) is not None:
        return rc
    linked = _is_linked(args)
    configure(stream=sys.stderr, level=args.log_level or ("error" if linked else "warning"))
    if linked:
        return _linked(args, floor)
    return _one_table(args)


def _one_table(args: argparse.Namespace) -> int:
    """One table's simulation (its ledger kept in --state-dir, if given)."""
    import sqlite3

    from controller.books.ledger import LedgerError
    from hil.simrun import SimSettings, run_sim

    try:
        rc = run_sim(
            SimSettings(
                game=args.game,
                rounds=args.rounds,
                seed=args.seed,
                realtime=args.realtime,
                speed=args.speed,
                state_dir=args.state_dir,
                console_pty=args.console_pty,
                idle_skip=args.idle_skip,
                hit_rate=args.hit_rate,
            )
        )
    except (sqlite3.Error, LedgerError) as e:  # a --state-dir whose ledger is not one
        print(f"tablectl sim: the ledger in {args.state_dir} cannot be used: {e}", file=sys.stderr)
        if args.state_dir is not None:
            print(f"  `tablectl audit --state-dir {args.state_dir}` says more", file=sys.stderr)
        return 1
    if args.state_dir is not None:
        print(_where_kept(args.state_dir))
    return rc


def _linked(args: argparse.Namespace, floor: tuple[str, int] | None) -> int:
    # several tables always share one linked meter: --link DSN, or a throwaway cluster
    from hil.linksim import LinkSimSettings, run_link_sim

    # the Six-Card table in the sim is its progressive-system profile; games may be a comma-separated list
    game = ",".join(
        "six-card-fortune-progressive" if g.strip() == "six-card-fortune" else g.strip() for g in args.game.split(",")
    )
    import signal
    import threading

    stop = threading.Event()
    if floor is not None:  # Ctrl-C / SIGTERM end the rounds and the page, and the run cleans up
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    import psycopg

    settings = LinkSimSettings(
        tables=args.tables,
        rounds=args.rounds,
        seed=args.seed,
        dsn=args.link or None,
        game=game,
        speed=args.speed,
        floor=floor,
        hit_rate=args.hit_rate,
    )
    try:
        # this command's stdout (the function's default is the one at its import)
        return run_link_sim(settings, out=sys.stdout, stop=stop)
    except psycopg.OperationalError as e:  # --link DSN that does not answer (or a cluster that went away)
        print(f"tablectl sim: the database is unreachable: {str(e).strip()}", file=sys.stderr)
        return 1
