"""The whole-ledger audit: ``tablectl audit``, the start-up check, the
periodic audit, and the refusal of ``history``, ``verify`` and ``run --check`` to work
on a ledger that fails it.

From the first event to the last (``full``): every sealed segment by its digest, the seals'
chain, every checkpoint against its seal, then every event after the last seal (chain, MAC
or, below a migration, SHA-256, meters), the stored meters, and the witness of the chain's
head (controller/books/witness.py).  Without ``full``, what the start-up checks: the last seal on,
and the witness (controller/books/ledgercheck.py).  Problems are listed in the order met, so the
first names the first bad event.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.books.ledger import Ledger, LedgerError
from controller.books.witness import Witness, check, default_witness_dir, read_for_check

LEDGER_FILE = "ledger.sqlite3"


@dataclass(frozen=True)
class Where:
    """Where a table's ledger, key and witness are."""

    state_dir: Path
    key: bytes | None
    witness_dir: Path
    table_id: str | None = None  # None: the ledger's own (its last event's)

    @property
    def ledger_path(self) -> Path:
        return self.state_dir / LEDGER_FILE


def where_of(hw: Any, key: bytes | None) -> Where:
    """From a controller.settings.hardware.HardwareConfig."""
    return where_in(Path(hw.state_dir), hw.table_id, hw.ledger.witness_dir, key)


def where_in(state_dir: Path, table_id: str, witness_dir: Path | None, key: bytes | None) -> Where:
    """A table's ledger in ``state_dir``, its witness in ``witness_dir`` (None: beside the state directory)."""
    return Where(state_dir, key, Path(witness_dir or default_witness_dir(state_dir)), table_id)


def audit(where: Where, *, full: bool = True) -> list[str]:
    """Every problem found, first bad event first; [] when the ledger is sound."""
    path = where.ledger_path
    try:
        led = Ledger.open_readonly(path, where.table_id or "audit", key=where.key)
    except LedgerError:
        led = None
    except Exception as e:  # noqa: BLE001 - an unreadable ledger is itself the finding
        return [f"cannot read the ledger {path}: {e}"]
    table_id = where.table_id
    try:
        if led is None:
            try:
                head = Witness(where.witness_dir, table_id or "", where.key).read()
            except Exception as e:  # noqa: BLE001
                return [f"no ledger at {path}", str(e)]
            if head is not None and head.count > 0:
                return [f"the ledger {path} is missing, but the witness says {head.count} events were recorded"]
            return [f"no ledger at {path}"]
        if table_id is None:
            row = led.db.execute("SELECT table_id FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            table_id = str(row[0]) if row else ""
        witnessed = read_for_check(Witness(where.witness_dir, table_id, where.key))
        try:
            led.db.execute("BEGIN")
            problems = led.verify(full=full)
            if where.table_id is not None:  # the configured table: the ledger and the witness must be its own
                problems += table_problems(led, where.table_id, Witness(where.witness_dir, table_id))
            problems += check(led, witnessed)
        finally:
            if led.db.in_transaction:
                led.db.execute("ROLLBACK")
    except Exception as e:  # noqa: BLE001 - a ledger SQLite cannot read is the finding
        return [f"cannot read the ledger {path}: {e}"]
    finally:
        if led is not None:
            led.close()
    return problems


def table_problems(led: Ledger, table_id: str, witness: Witness) -> list[str]:
    """The ledger's first or last event, or the witness, names another table than ``table_id``."""
    from controller.books import ledgercheck
    from controller.books.witness import table_problems as witness_table

    return ledgercheck.table_problems(led, table_id) + witness_table(witness, table_id)


def audit_read(where: Where, ranges: list[tuple[int, int]]) -> list[str]:
    """The sealed segments holding the events a command read (``(lo, hi)`` ranges), checked by
    their digests (controller/books/ledgercheck.py ``read_problems``): what it shows was not edited."""
    from controller.books import ledgercheck

    try:
        led = Ledger.open_readonly(where.ledger_path, where.table_id or "audit", key=where.key)
    except LedgerError as e:
        return [str(e)]
    try:
        led.db.execute("BEGIN")
        return ledgercheck.read_problems(led, ranges)
    except Exception as e:  # noqa: BLE001 - a ledger SQLite cannot read is the finding
        return [f"cannot read the ledger {where.ledger_path}: {e}"]
    finally:
        led.close()


def recorded_findings(where: Where) -> list[str]:
    """Damage the service's own audit found and recorded (an active ``ledger-audit`` tilt): a
    command refuses the ledger for it too, though its own check reads only part of it."""
    from controller.books.standing import active_tilts

    try:
        ro = Ledger.open_readonly(where.ledger_path, where.table_id or "audit")
    except Exception:  # noqa: BLE001 - the audit itself reports an unreadable ledger
        return []
    try:
        reason = active_tilts(ro).get("ledger-audit")
    except Exception:  # noqa: BLE001
        return []
    finally:
        ro.close()
    return [f"the service's audit found: {reason}"] if reason else []


def acknowledged(where: Where) -> set[str]:
    """Problems a technician already acknowledged (``ledger.acknowledged``, by a clear),
    without the ``ledger: `` prefix the start-up check gives them."""
    from controller.books.standing import acknowledged_problems

    try:
        ro = Ledger.open_readonly(where.ledger_path, where.table_id or "audit")
    except Exception:  # noqa: BLE001 - nothing acknowledged can be read: every problem counts
        return set()
    try:
        return {p.removeprefix("ledger: ") for p in acknowledged_problems(ro)}
    except Exception:  # noqa: BLE001
        return set()
    finally:
        ro.close()


def split_acknowledged(where: Where, problems: list[str]) -> tuple[list[str], list[str]]:
    """(new, acknowledged): damage a technician acknowledged does not fail an audit again."""
    if not problems:
        return [], []
    ack = acknowledged(where)
    return [p for p in problems if p not in ack], [p for p in problems if p in ack]


# ---------------------------------------------------------------------- the CLI's side


def add_where_arguments(p: Any) -> None:
    """``--config`` / ``--state-dir`` / ``--key-file`` / ``--witness-dir`` (argparse)."""
    p.add_argument(
        "--config",
        type=Path,
        default=Path("/etc/tablectl/table.toml"),
        help="hardware configuration (state directory, [ledger] key and witness; default /etc/tablectl/table.toml)",
    )
    p.add_argument("--state-dir", type=Path, help="state directory holding ledger.sqlite3 (instead of --config)")
    p.add_argument(
        "--key-file", type=Path, help="the ledger key file (default: [ledger] key_file, or $CREDENTIALS_DIRECTORY)"
    )
    p.add_argument("--witness-dir", type=Path, help="the witness directory (default: beside the state directory)")


#: what a command that needs a configuration says when there is none (a checkout, a build machine)
CONFIG_HINT = (
    "no configuration there: name the table's with --config FILE, or a ledger's directory with "
    "--state-dir D (a simulator's: `tablectl sim --state-dir D`; its key and witness are found beside it)"
)


def hardware_of(args: Any) -> Any:
    """The configuration ``--config`` names (a controller.settings.hardware.HardwareConfig); a missing
    file is a ConfigError that says how to point the command at one."""
    from controller.settings.config import ConfigError
    from controller.settings.hardware import load_hardware

    path = Path(args.config)
    if not path.exists() and not path.is_symlink():
        raise ConfigError(str(path), "", None, CONFIG_HINT)
    return load_hardware(path)


def _key(args: Any, lc: Any, state_dir: Path | None) -> bytes:
    """``--key-file``; else, for ``--state-dir D``, the key beside it (``D-key/ledger.key``, a
    simulator's) when there is one; else the configuration's (``[ledger]``, or the default)."""
    from controller.books.ledgerkey import LedgerKeyError, beside_key_file, load_key, read_key

    if getattr(args, "key_file", None):
        return read_key(args.key_file)
    beside = beside_key_file(state_dir) if state_dir is not None else None
    if beside is not None and (beside.exists() or beside.is_symlink()):
        return read_key(beside)
    try:
        return load_key(lc)
    except LedgerKeyError as e:
        if beside is None:
            raise
        raise LedgerKeyError(f"{e}; nor is there one beside the state directory ({beside}): --key-file K") from None


def where_from_args(args: Any, *, with_key: bool = True) -> Where:
    """Raises controller.settings.config.ConfigError or controller.books.ledgerkey.LedgerKeyError."""
    from controller.settings.hardware import LedgerConfig

    if getattr(args, "state_dir", None) is not None:
        state_dir = Path(args.state_dir)
        table_id = None
        lc = LedgerConfig()
    else:
        hw = hardware_of(args)
        state_dir, table_id, lc = Path(hw.state_dir), hw.table_id, hw.ledger
    given = state_dir if getattr(args, "state_dir", None) is not None else None
    key = _key(args, lc, given) if with_key else None
    wd = getattr(args, "witness_dir", None) or lc.witness_dir or default_witness_dir(state_dir)
    return Where(state_dir, key, Path(wd), table_id)


def refuse_damaged(args: Any, prog: str, err: Any) -> int | None:
    """For ``history``, ``report``, ``verify`` and ``run --check``: None when the ledger passes
    the start-up check and the witness (or there is none yet and nothing witnessed one), and the
    service's audit has recorded no damage; else the exit status, having said why (the first
    bad event first) on ``err``.  Bounded whatever the ledger's age: what a command
    goes on to read in older segments it checks with :func:`refuse_read`."""
    from controller.books.ledgerkey import LedgerKeyError
    from controller.settings.config import ConfigError

    try:
        where = where_from_args(args, with_key=False)
        if not where.ledger_path.exists() and not (where.witness_dir / "witness.json").exists():
            return None  # a new table: nothing recorded, nothing witnessed
        where = where_from_args(args)
    except ConfigError as e:
        print(f"{prog}: configuration error: {e}", file=err)
        return 2
    except LedgerKeyError as e:
        print(f"{prog}: {e}", file=err)
        return 2
    return _refuse(where, audit(where, full=False) + recorded_findings(where), prog, err)


def refuse_read(args: Any, ranges: list[tuple[int, int]], prog: str, err: Any) -> int | None:
    """After :func:`refuse_damaged`: None when the sealed segments holding the events read
    (``(lo, hi)`` ranges) give their seals' digests, else the exit status, having said why."""
    if not ranges:
        return None
    try:
        where = where_from_args(args)
    except Exception as e:  # noqa: BLE001 - refuse_damaged has read the same configuration and key
        print(f"{prog}: {e}", file=err)
        return 2
    return _refuse(where, audit_read(where, ranges), prog, err)


def _refuse(where: Where, problems: list[str], prog: str, err: Any) -> int | None:
    new, _ack = split_acknowledged(where, problems)
    if not new:
        return None
    print(f"{prog}: the ledger fails its audit (`tablectl audit`): {new[0]}", file=err)
    for p in new[1:5]:
        print(f"  {p}", file=err)
    return 1
