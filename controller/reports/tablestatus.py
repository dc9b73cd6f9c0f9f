"""``tablectl status`` and ``tablectl meters`` for a technician at a shell, without the
console: what the ledger says, read-only (safe while the service runs: WAL readers never
block the writer), plus the service's own status line when systemd can be asked.

From the ledger alone:

* the table and its last event (number and local time);
* the round: its number and the last step recorded (open for wagers, no more bets,
  start position, dealt, settled, awaiting floor validation...), or "between rounds";
* open or closed: closed while a tilt is active (a tilt blocks new rounds until a
  technician clears it, and survives restarts: controller/books/standing.py ``active_tilts``)
  or when systemd says the service is not running;
* devices out of order (§ 670a.13(n)), pending hits awaiting validation;
* the meters, replayed from the last checkpoint through the events after it (the same
  computation the service makes at start-up) and compared with the ledger's own meter
  snapshot;
* what the sign shows: each level's meter in whole cents and the message the recorded
  state puts on it (the table writes the sign only after the state behind it is durable,
  so the last state recorded is what the sign was told last).

The service's status comes from ``systemctl show`` (``ActiveState``, ``SubState`` and the
``STATUS=`` line the service sends, controller/daemon/readiness.py ``Readiness.status_line``); where
systemd cannot be asked (a development machine, a container) it says so.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from controller.books.ledger import StoredEvent, read_events
from controller.books.ledgerfile import bound
from controller.books.meters import Meter
from controller.books.meters import apply as apply_meter
from controller.books.standing import active_tilts, out_of_order
from controller.core.money import format_cents
from controller.core.records import Kind

UNIT = "tablectl.service"


def local_time(ts: str) -> str:
    """A ledger timestamp (UTC, ISO 8601 with microseconds) in the machine's time zone,
    to the second, with the zone's name: ``2026-11-23 17:04:05 EST``."""
    try:
        t = datetime.fromisoformat(ts)
    except ValueError:
        return ts
    return t.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


class ReadOnlyLedger:
    """The ledger opened read-only (``mode=ro``): the queries ``tablectl status``,
    ``meters`` and ``history`` need, never a write."""

    def __init__(self, path: str | Path):
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"no ledger at {p}")
        self.path = p
        self.db = bound(sqlite3.connect(f"file:{p}?mode=ro", uri=True, check_same_thread=False))

    def close(self) -> None:
        self.db.close()

    def events(
        self,
        since: int = 0,
        kinds: Iterable[str] | None = None,
        round_no: int | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> Iterator[StoredEvent]:
        return read_events(self.db, since, kinds, round_no, limit, newest_first)

    def last_event(self) -> StoredEvent | None:
        return next(self.events(newest_first=True, limit=1), None)

    def last_round(self) -> int:
        # the newest round.open, from the end of the ledger (``+kind``: not every round.open of a
        # year through the kind index)
        row = self.db.execute(
            "SELECT round FROM events WHERE +kind = ? ORDER BY seq DESC LIMIT 1", (Kind.ROUND_OPEN,)
        ).fetchone()
        return int(row[0]) if row else 0

    def meters(self) -> dict[str, Meter]:
        """Every meter: the last checkpoint, then every meter event after it."""
        since, meters = 0, dict[str, Meter]()
        row = self.db.execute("SELECT seq, meters FROM checkpoints ORDER BY seq DESC LIMIT 1").fetchone()
        if row is not None:
            since = row[0]
            meters = {lv: Meter.from_row(r) for lv, r in json.loads(row[1]).items()}
        for ev in self.events(since=since):
            if ev.kind.startswith("meter."):
                meters = apply_meter(meters, ev.kind, ev.data, round_no=ev.round, seq=ev.seq)
        return meters

    def stored_meters(self) -> dict[str, Meter]:
        """The ledger's meter snapshot (rewritten in the same transaction as each meter event)."""
        return {lv: Meter.from_row(json.loads(r)) for lv, r in self.db.execute("SELECT level, row FROM meters")}


# --------------------------------------------------------------------------- the round

AWAITING_LAP = "hit validated, waiting for the LAP"  # a linked hit (controller/play/settling.py)

#: the last step of a round that its events record, newest first: (kind, what it means)
_STEPS: tuple[tuple[str, str], ...] = (
    (Kind.ROUND_COMPLETE, "complete"),
    (Kind.ROUND_VOID, "void"),
    (Kind.HIT_VALIDATED, "hit validated, paying"),
    (Kind.HIT_AWAITING_LAP, AWAITING_LAP),
    (Kind.ROUND_SETTLED, "settled"),
    (Kind.WAGER_RESULT, "settling"),
    (Kind.DECISION, "players deciding"),
    (Kind.HANDS_ENTERED, "hands entered"),
    (Kind.DEAL, "dealt"),
    (Kind.DEAL_MANUAL, "dealt by hand"),
    (Kind.RNG_DRAW, "start position drawn"),
    (Kind.DICE, "dice rolled"),
    (Kind.COUNT_CONFIRMED, "count confirmed"),
    (Kind.LOCKOUT, "no more bets"),
    (Kind.ROUND_OPEN, "open for wagers"),
)


@dataclass
class RoundView:
    number: int = 0
    step: str = "no round yet"
    finished: bool = True
    accepted: int = 0
    pending_hits: list[dict[str, Any]] = field(default_factory=list)
    start: int | None = None
    rng_value: int | None = None
    kinds: set[str] = field(default_factory=set)


def round_view(ledger: ReadOnlyLedger) -> RoundView:
    n = ledger.last_round()
    if n == 0:
        return RoundView()
    evs = list(ledger.events(round_no=n))
    kinds = {e.kind for e in evs}
    step = next((what for kind, what in _STEPS if kind in kinds), "open for wagers")
    v = RoundView(n, step, bool(kinds & {Kind.ROUND_COMPLETE, Kind.ROUND_VOID}), kinds=kinds)
    v.accepted = sum(1 for e in evs if e.kind == Kind.WAGER_ACCEPTED)
    v.pending_hits = _pending_hits(evs)
    if v.pending_hits and not v.finished:
        v.step = _hit_step(evs, v.pending_hits[0])
    _set_start(v, evs)
    return v


def _hit_step(evs: list[StoredEvent], first: Mapping[str, Any]) -> str:
    """The round waits for the LAP (the first pending hit validated, sent on) or for the floor."""
    waiting = _hit_keys(evs, Kind.HIT_AWAITING_LAP)
    return AWAITING_LAP if (first.get("seat"), first.get("hand")) in waiting else "awaiting floor validation"


def _set_start(v: RoundView, evs: list[StoredEvent]) -> None:
    """The round's start position (the last dice or RNG draw) and the RNG's value, if drawn."""
    for e in evs:
        if e.kind in (Kind.DICE, Kind.RNG_DRAW):
            v.start = e.data.get("start", v.start)
        if e.kind == Kind.RNG_DRAW:
            v.rng_value = e.data.get("value")


def _hit_keys(evs: list[StoredEvent], kind: str) -> set[tuple[Any, Any]]:
    """(seat, hand) of every event of ``kind``."""
    return {(e.data.get("seat"), e.data.get("hand")) for e in evs if e.kind == kind}


def _pending_hits(evs: list[StoredEvent]) -> list[dict[str, Any]]:
    """The hits recorded pending and not validated since."""
    validated = _hit_keys(evs, Kind.HIT_VALIDATED)
    return [
        e.data for e in evs if e.kind == Kind.HIT_PENDING and (e.data.get("seat"), e.data.get("hand")) not in validated
    ]


def sign_message(tilts: Mapping[str, str], ooo: Mapping[str, str], rnd: RoundView) -> str:
    """The message the recorded state puts on the sign (controller/play/table.py, wagering.py,
    dealing.py, settling.py write the same texts once that state is durable)."""
    if tilts:
        return "TILT - CALL TECHNICIAN"
    return _hit_message(rnd) or _round_message(rnd) or _out_of_order_message(ooo) or "PLACE YOUR BETS"


def _hit_message(rnd: RoundView) -> str | None:
    """A meter hit of the round in progress, waiting for the floor or the link."""
    if not rnd.pending_hits or rnd.finished:
        return None
    h = rnd.pending_hits[0]
    if rnd.step == AWAITING_LAP:
        return f"HIT SEAT {h.get('seat')} VALIDATED - WAITING FOR LINK"
    return f"HIT SEAT {h.get('seat')} {str(h.get('hand', '')).upper()} - CALL FLOOR"


def _round_message(rnd: RoundView) -> str | None:
    """The round in progress (its start position, or wagers closed), or the last round voided."""
    if not rnd.number:
        return None
    if not rnd.finished:
        if rnd.start is not None and rnd.kinds & {Kind.DICE, Kind.RNG_DRAW}:
            shown = f"RNG {rnd.rng_value} - " if rnd.rng_value is not None else ""
            return f"{shown}START POSITION {rnd.start}"
        if Kind.LOCKOUT in rnd.kinds:
            return f"NO MORE BETS - COUNT {rnd.accepted}"
    if Kind.ROUND_VOID in rnd.kinds:
        return "ROUND VOID - WAGERS RETURNED"
    return None


def _out_of_order_message(ooo: Mapping[str, str]) -> str | None:
    if not ooo:
        return None
    device, alt = sorted(ooo.items())[0]
    return f"{device.upper()} OUT OF ORDER - {alt.upper()}"


# --------------------------------------------------------------------------- systemd


def service_status(unit: str = UNIT) -> dict[str, str] | None:
    """``systemctl show UNIT``'s state and the service's STATUS= line, or None when systemd
    cannot be asked (no systemctl, no system bus)."""
    exe = shutil.which("systemctl")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "show", unit, "--property=ActiveState,SubState,StatusText,ExecMainStartTimestamp"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    props = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    return props if props.get("ActiveState") else None


# --------------------------------------------------------------------------- text


def witness_line(ledger: ReadOnlyLedger, witness_dir: Path) -> str:
    """Whether the ledger reaches the witness of its head kept outside the state directory
    (controller/books/witness.py), with the MAC the witness recorded: a ledger cut, rolled back,
    replaced or rewritten before that event does not.  No key is needed; the MACs of every
    event are checked by the service at start-up and by ``tablectl audit``, which hold it."""
    from controller.books.witness import Witness, check, read_for_check

    witnessed = read_for_check(Witness(witness_dir, ""))
    problems = check(ledger, witnessed)
    if problems:
        return "ledger check: PROBLEM: " + "; ".join(problems) + " (run tablectl audit)"
    if witnessed is None:
        return f"ledger check: no witness in {witness_dir} (a table that has recorded nothing yet)"
    assert not isinstance(witnessed, Exception)
    return (
        f"ledger check: reaches the witness (event #{witnessed.count}, its MAC as recorded);"
        " every MAC is checked by tablectl audit"
    )


def pending_line(h: Mapping[str, Any]) -> str:
    """A meter hit waiting for a floorperson: its share of the meter (the amount is fixed only when
    it is paid, from the meter as it then stands, § 670a.12(d)(3)) and the wager that won it
    (``hit.pending``'s ``cents`` is the wager, not the pay)."""
    from fractions import Fraction

    from controller.core.money import format_rate

    try:
        share = f"{format_rate(Fraction(str(h.get('fraction'))))} of the meter"
    except (ValueError, ZeroDivisionError):
        share = "a share of the meter"
    return (
        f"meter hit awaiting a floorperson's validation: seat {h.get('seat')} {h.get('hand')}, {share} "
        f"(wager {format_cents(int(h.get('cents') or 0))})"
    )


def disk_line(path: Path) -> str:
    """The state directory's free space, in days of play at the ledger's growth so far."""
    from controller.books.auditrun import LOW_SPACE_DAYS, space

    room = space(path)
    if room is None:
        return "disk: free space unknown"
    days = "many" if room.days_left > 99_999 else f"about {room.days_left:,.0f}"
    low = " (LOW: move the ledger to a larger card, docs/operations.md)" if room.days_left < LOW_SPACE_DAYS else ""
    size = f"ledger {room.ledger_bytes / 1e6:.0f} MB"
    return f"disk: {room.free_bytes / 1e9:.1f} GB free, {size}: {days} days of play{low}"


@dataclass(frozen=True)
class Checked:
    """What ``status`` checked of the ledger beyond reading it: the problems its own check found
    (None: not checked, ``why`` says why) and the service's audit's last result (a line)."""

    problems: list[str] | None
    why: str
    service_audit: str


#: what ``format_status`` shows when it was given no check to report
NOT_CHECKED = Checked(None, "no check was asked for", "service's audit: not asked")


def check_lines(checked: Checked) -> list[str]:
    if checked.problems is None:
        own = f"MAC check: the events' MACs not checked here ({checked.why}); `tablectl audit` checks them"
    elif checked.problems:
        more = f" (and {len(checked.problems) - 1} more)" if len(checked.problems) > 1 else ""
        own = f"MAC check: FAILED: {checked.problems[0]}{more}; `tablectl audit` names them all"
    else:
        own = f"MAC check: OK ({checked.why})"
    return [own, checked.service_audit]


def format_status(
    ledger: ReadOnlyLedger,
    service: dict[str, str] | None,
    witness_dir: Path | None = None,
    checked: Checked = NOT_CHECKED,
) -> str:
    last = ledger.last_event()
    if last is None:
        return _empty_status(ledger, witness_dir)
    tilts = active_tilts(ledger)
    ooo = out_of_order(ledger)
    rnd = round_view(ledger)
    meters = ledger.meters()
    damaged = bool(checked.problems)
    lines = [
        f"table {last.table}  ledger {ledger.path}",
        f"last event: #{last.seq} {last.kind} at {local_time(last.ts)}",
        f"table: {_damaged(tilts) if damaged else _openness(tilts, service)}",
    ]
    if witness_dir is not None:
        lines.append(witness_line(ledger, witness_dir))
    lines += check_lines(checked)
    lines.append(_round_line(rnd))
    lines.append("tilts: " + ("none" if not tilts else "; ".join(f"{k}: {v}" for k, v in sorted(tilts.items()))))
    if ooo:
        lines.append("out of order: " + ", ".join(f"{d} (using {alt})" for d, alt in sorted(ooo.items())))
    if not rnd.finished:
        lines += [pending_line(h) for h in rnd.pending_hits]
    lines += _meter_lines(meters, tilts, ooo, rnd)
    lines.append(disk_line(ledger.path))
    lines.append(_service_line(service))
    return "\n".join(lines)


def _empty_status(ledger: ReadOnlyLedger, witness_dir: Path | None) -> str:
    """A ledger with no event (and whether it reaches the witness, which then should hold none)."""
    return "ledger: empty (the table has never started)" + (
        "\n" + witness_line(ledger, witness_dir) if witness_dir is not None else ""
    )


def _round_line(rnd: RoundView) -> str:
    if not rnd.number:
        return "round: none played yet"
    return f"round {rnd.number}: {rnd.step}" + ("" if rnd.finished else " (in progress)")


def _damaged(tilts: Mapping[str, str]) -> str:
    """A ledger failing the check: never "open", whatever the service shows."""
    if "ledger-audit" in tilts:
        return "closed (the ledger fails its audit; tilt latched)"
    return "LEDGER FAILS ITS CHECK (below): not to be trusted; the service has not latched it yet"


def _openness(tilts: Mapping[str, str], service: Mapping[str, str] | None) -> str:
    if tilts:
        return "closed (tilt: a technician must clear it)"
    if service is not None and service.get("ActiveState") != "active":
        return f"closed (service {service.get('ActiveState')})"
    return "open"


def _meter_lines(
    meters: Mapping[str, Meter], tilts: Mapping[str, str], ooo: Mapping[str, str], rnd: RoundView
) -> list[str]:
    """The meters, and what the sign shows."""
    if meters:
        lines = ["meters: " + ", ".join(f"{lv} {format_cents(m.value)}" for lv, m in sorted(meters.items()))]
    else:
        lines = ["meters: none (no progressive on this table)"]
    shown = ", ".join(format_cents(m.cents) for _lv, m in sorted(meters.items()))
    lines.append(f"sign: {shown + '  ' if shown else ''}{sign_message(tilts, ooo, rnd)!r}")
    return lines


def _service_line(service: Mapping[str, str] | None) -> str:
    if service is None:
        return f"service: unknown (systemd not reachable here; {UNIT})"
    return f"service: {service.get('ActiveState')} ({service.get('SubState')})" + (
        f"  status: {service['StatusText']}" if service.get("StatusText") else ""
    )


def format_meters(ledger: ReadOnlyLedger) -> str:
    """Each meter in full, exactly (the console's ``meters``), and whether it agrees with the
    ledger's snapshot."""
    from controller.books.meters import meter_lines

    meters = ledger.meters()
    if not meters:
        return "no progressive meters on this table"
    stored = ledger.stored_meters()
    out = []
    for level, m in sorted(meters.items()):
        out += meter_lines(level, m)
        if stored.get(level) != m:
            out.append(
                f"  WARNING: the ledger's meter snapshot for {level} differs from its events (run tablectl verify)"
            )
    return "\n".join(out)
