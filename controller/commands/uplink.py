"""``tablectl uplink --config /etc/tablectl/uplink.toml``: the table's link to its LAP
controller (controller/uplink/uplink.py), a process of its own so that the table service keeps
``PrivateNetwork=yes``.  It reads the table's ledger read-only, sends the link's records to
PostgreSQL idempotently, and hands meter values and link status to the table service over the
Unix socket the service listens on.

It verifies every record it forwards with the table's ledger key (the same key the table
service gets, handed to the uplink's unit by systemd's ``LoadCredential=``), and runs the same
software digest check as the table service before it operates (exit 3 when it fails: a
restart would not fix it).

``uplink.toml``::

    [uplink]
    db = "postgresql://lap_pit1_t01@lap.pit/casino"   # logs in as the table's own role
    schema = "lap_pit1"
    table = "T01"
    ledger = "/var/lib/tablectl/ledger.sqlite3"
    socket = "/run/tablectl/link.sock"
    key_credential = "tablectl-ledger-key"   # under $CREDENTIALS_DIRECTORY (LoadCredential=)
    key_file = "/etc/tablectl/ledger.key"    # read when there is no credentials directory
    link_key_credential = "tablectl-link-key"  # the table's link key (tablectl lap --enrol-table)
    link_key_file = "/etc/tablectl/link.key"   # read when there is no credentials directory
    software_record = "/etc/tablectl/software.json"
    link_timeout = 3       # the table's [progressive] link_timeout (s): no fresh LAP heartbeat for
                           # this long ends the database connection and opens another
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.uplink.uplink import UplinkConfig

NAME = "uplink"
HELP = "run the table's uplink to its linked progressive (LAP) controller"

EXIT_CONFIG = 2
EXIT_SOFTWARE = 3  # the software digest does not match the release's record (systemd: no restart)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, default=Path("/etc/tablectl/uplink.toml"))
    p.add_argument("--check", action="store_true", help="only check the configuration, then exit")
    p.add_argument(
        "--sim",
        action="store_true",
        help="the simulator's, benches' and tests' software check: a missing or user-writable record skips or "
        "relaxes it (a digest that differs from a record still refuses)",
    )


#: the longest path a Unix socket can have on Linux (``sun_path`` is 108 bytes with its NUL)
SUN_PATH_MAX = 107


def _absolute(s: Any, key: str, default: str) -> Path:
    """A path option that must be absolute (systemd runs the uplink from ``/``; a relative
    path would name another file there than the one the technician meant)."""
    p = Path(s.get_str(key, default))
    if not p.is_absolute():
        raise s.error(key, f"{str(p)!r} must be an absolute path")
    return p


def load(path: Path, *, read_key: bool = True) -> tuple[UplinkConfig, Path]:
    """The configuration and the software record's path (``read_key``: the ledger key too)."""
    import dataclasses

    from controller.books.ledgerkey import LedgerKeyError
    from controller.lap.schema import check_name
    from controller.settings.config import Section, read_toml
    from controller.uplink.uplink import UplinkConfig  # noqa: F811

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
        link_timeout_s=float(s.get_int("link_timeout", 3, minval=1, maxval=60)),
    )
    if len(os.fsencode(cfg.socket)) > SUN_PATH_MAX:
        raise s.error(
            "socket",
            f"{str(cfg.socket)!r} is {len(os.fsencode(cfg.socket))} bytes; a Unix socket's path holds at most "
            f"{SUN_PATH_MAX} (AF_UNIX)",
        )
    where = key_path(s)
    link_where = key_path(s, "link_key_credential", "tablectl-link-key", "link_key_file", "/etc/tablectl/link.key")
    software = Path(s.get_str("software_record", "/etc/tablectl/software.json"))
    s.check_unused()
    root.check_unused()
    if read_key:
        from controller.books.ledgerkey import read_key as read

        try:
            cfg = dataclasses.replace(cfg, key=read(where))
        except LedgerKeyError as e:
            raise s.error("key_file", str(e)) from None
        cfg = dataclasses.replace(cfg, link_key=_link_key(s, link_where, cfg))
    return cfg, software


def _link_key(s: Any, where: Path, cfg: UplinkConfig) -> Any:
    """The table's link key, for this table of this group (another table's is refused here)."""
    from controller.lap.linkauth import LinkKeyError, read_key

    try:
        k = read_key(where)
    except LinkKeyError as e:
        raise s.error("link_key_file", str(e)) from None
    if (k.schema, k.table_id) != (cfg.schema, cfg.table_id):
        raise s.error(
            "link_key_file", f"{where}: the link key of table {k.table_id} of {k.schema}, not of {cfg.table_id}"
        )
    return k


def key_path(
    s: object,
    cred_key: str = "key_credential",
    cred_default: str = "tablectl-ledger-key",
    file_key: str = "key_file",
    file_default: str = "/etc/tablectl/ledger.key",
) -> Path:
    """The ledger key (or the link key, by the other names): the systemd credential
    (``$CREDENTIALS_DIRECTORY/<key_credential>``) when the unit hands one over, else ``key_file``
    (as the table service finds it, controller/books/ledgerkey.py)."""
    import os

    from controller.settings.config import Section

    assert isinstance(s, Section)
    cred = s.get_str(cred_key, cred_default)
    if "/" in cred:
        raise s.error(cred_key, f"{cred!r} is a credential name (LoadCredential=), not a path")
    key_file = Path(s.get_str(file_key, file_default))
    cred_dir = os.environ.get("CREDENTIALS_DIRECTORY")
    return Path(cred_dir) / cred if cred_dir else key_file


def run(args: argparse.Namespace) -> int:
    from controller.settings.config import ConfigError

    try:
        cfg, software = load(args.config)
    except ConfigError as e:
        print(f"tablectl: configuration error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    from controller.boot.selfcheck import check_software

    sw = check_software(software, require=not args.sim)
    if sw.problems:
        for p in sw.problems:
            print(f"tablectl uplink: {p}", file=sys.stderr)
        return EXIT_SOFTWARE
    if args.check:
        what = f"table {cfg.table_id}, schema {cfg.schema}, ledger {cfg.ledger}, software {sw.digest[:16]}"
        print(f"{args.config}: OK ({what})")
        return 0
    from controller.uplink.uplink import Uplink

    up = Uplink(cfg, log=lambda m: print(m, flush=True))
    signal.signal(signal.SIGTERM, lambda *_: up.stop_event.set())
    try:
        up.run()
    except KeyboardInterrupt:
        up.stop()
    return 0
