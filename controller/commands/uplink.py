"""``tablectl uplink --config /etc/tablectl/uplink.toml``: the table's link to its LAP
controller (controller/link/uplink.py), a process of its own so that the table service keeps
``PrivateNetwork=yes``.  It reads the table's ledger read-only, sends the link's records to
PostgreSQL idempotently, and hands meter values and link status to the table service over the
Unix socket the service listens on.

``uplink.toml``::

    [uplink]
    db = "postgresql://lap_pit1_t01@lap.pit/casino"   # logs in as the table's own role
    schema = "lap_pit1"
    table = "T01"
    ledger = "/var/lib/tablectl/ledger.sqlite3"
    socket = "/run/tablectl/link.sock"
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.link.uplink import UplinkConfig

NAME = "uplink"
HELP = "run the table's uplink to its linked progressive (LAP) controller"

EXIT_CONFIG = 2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, default=Path("/etc/tablectl/uplink.toml"))
    p.add_argument("--check", action="store_true", help="only check the configuration, then exit")


#: the longest path a Unix socket can have on Linux (``sun_path`` is 108 bytes with its NUL)
SUN_PATH_MAX = 107


def _absolute(s: Any, key: str, default: str) -> Path:
    """A path option that must be absolute (systemd runs the uplink from ``/``; a relative
    path would name another file there than the one the technician meant)."""
    p = Path(s.get_str(key, default))
    if not p.is_absolute():
        raise s.error(key, f"{str(p)!r} must be an absolute path")
    return p


def load(path: Path) -> UplinkConfig:
    from controller.config import Section, read_toml
    from controller.link.schema import check_name
    from controller.link.uplink import UplinkConfig  # noqa: F811

    root = Section(str(path), "", read_toml(Path(path)))  # bounded; not UTF-8 or not TOML: exit 2
    s = root.sub("uplink")
    assert s is not None
    schema = s.get_str("schema")
    try:
        check_name(schema)
    except ValueError as e:
        raise s.error("schema", str(e)) from None
    cfg = UplinkConfig(
        dsn=s.get_str("db"),
        schema=schema,
        table_id=s.get_str("table"),
        ledger=_absolute(s, "ledger", "/var/lib/tablectl/ledger.sqlite3"),
        socket=_absolute(s, "socket", "/run/tablectl/link.sock"),
    )
    if len(os.fsencode(cfg.socket)) > SUN_PATH_MAX:
        raise s.error(
            "socket",
            f"{str(cfg.socket)!r} is {len(os.fsencode(cfg.socket))} bytes; a Unix socket's path holds at most "
            f"{SUN_PATH_MAX} (AF_UNIX)",
        )
    s.check_unused()
    root.check_unused()
    return cfg


def run(args: argparse.Namespace) -> int:
    from controller.config import ConfigError

    try:
        cfg = load(args.config)
    except ConfigError as e:
        print(f"tablectl: configuration error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    if args.check:
        print(f"{args.config}: OK (table {cfg.table_id}, schema {cfg.schema}, ledger {cfg.ledger})")
        return 0
    from controller.link.uplink import Uplink

    up = Uplink(cfg, log=lambda m: print(m, flush=True))
    signal.signal(signal.SIGTERM, lambda *_: up.stop_event.set())
    try:
        up.run()
    except KeyboardInterrupt:
        up.stop()
    return 0
