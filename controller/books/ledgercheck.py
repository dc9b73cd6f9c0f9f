"""Checking a ledger (split from controller/books/ledger.py): the chain walked event by
event, the sealed segments checked by their digests, the meters, the checkpoints.

* :func:`quick` — what a start-up must check, whatever the ledger's age: the last seal (its
  MAC, the event it names), every event after it (chain, MAC, meters from the seal's keyed
  snapshot), checkpoints and seals left past the last event, the stored meters;
* :func:`segments` — sealed segments, each by a few queries and one HMAC (controller/books/seals.py): the
  seals' own chain (number, first event, previous seal's MAC, MAC), the digest of the rows as
  stored, the checkpoint at the seal; a segment whose digest differs is walked event by event
  to name its first bad event;
* :func:`full` — every segment, then :func:`quick`: the whole ledger, first bad event first.

Each returns the problems found (at most about 20), [] for a sound ledger.  The caller holds
one read transaction around it (``Ledger.verify``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.books import meters as meters_mod
from controller.books import seals as S
from controller.books.meters import Meter

if TYPE_CHECKING:
    from controller.books.ledger import EventRow, Ledger

MAX_PROBLEMS = 20
GENESIS = "0" * 64


@dataclass
class Walk:
    """The state of an event-by-event walk, carried from one row to the next."""

    prev: str
    expect: int
    meters: dict[str, Meter]
    problems: list[str] = field(default_factory=list)
    good_checkpoints: list[int] = field(default_factory=list)  # checkpoints that matched (migration)
    bad_from: int | None = None  # the first event with a problem
    with_meters: bool = True  # False: the meters before the walk are not known (not replayed)

    @property
    def full(self) -> bool:
        return len(self.problems) > MAX_PROBLEMS


def header(led: Ledger) -> tuple[list[str], int]:
    """Problems with the ledger's schema and key, and the event the keyed chain starts at."""
    from controller.books.ledger import SCHEMA_VERSION
    from controller.books.ledgerfile import schema_problems

    problems: list[str] = schema_problems(led.db)
    schema, keyed_from = led.schema(), led.keyed_from()
    if schema is None or keyed_from is None:
        if led.last_seq:
            problems.append("the ledger is not keyed (schema 1: SHA-256 only); the service migrates it at start")
        keyed_from = led.last_seq + 1
    elif schema > SCHEMA_VERSION:
        return [*problems, f"ledger schema {schema} is newer than this software ({SCHEMA_VERSION})"], 0
    if not led.keyed:
        problems.append("no ledger key: the MACs were not checked")
    return problems, keyed_from


def walk(led: Ledger, w: Walk, after: int, upto: int | None, keyed_from: int, cps: dict[int, Any]) -> Walk:
    """Every event after ``after`` (up to ``upto``): sequence, chain, MAC (SHA-256 below
    ``keyed_from``), the keyed record's place, meters, the checkpoints ``cps`` met."""
    from controller.books.ledger import event_hash

    q = "SELECT seq, ts, table_id, round, kind, data, prev, hash FROM events WHERE seq > ?"
    args: tuple[int, ...] = (after,)
    if upto is not None:
        q, args = q + " AND seq <= ?", (after, upto)
    problems = w.problems
    # SHA-256 before the keyed record, the MAC from it on (not checked without the key)
    hash_check = (event_hash, _HASH_WRONG)
    mac_check = (led.event_mac, _MAC_WRONG) if led.keyed else None
    try:
        _walk_rows(w, led.db.execute(q + " ORDER BY seq", args), hash_check, mac_check, keyed_from, cps)
    except sqlite3.DataError:  # a value over the ledger's bound: never read (controller/books/ledgerfile.py)
        problems.append(_too_big(f"an event from {w.expect} on"))  # (the cursor reads a row ahead)
        w.bad_from = w.expect if w.bad_from is None else w.bad_from
    return w


def _too_big(what: str) -> str:
    from controller.books.ledgerfile import MAX_VALUE_BYTES

    return f"{what} holds a value over {MAX_VALUE_BYTES} bytes (no event is that large): not read"


def _walk_rows(
    w: Walk,
    rows: Iterable[tuple[Any, ...]],
    hash_check: tuple[Callable[[EventRow], str], str],
    mac_check: tuple[Callable[[EventRow], str], str] | None,
    keyed_from: int,
    cps: dict[int, Any],
) -> None:
    from controller.books.ledger import EventRow

    problems = w.problems
    for seq, ts, table, rnd, kind, data, p, h in rows:
        before = len(problems)
        row = EventRow(seq, ts, table, rnd, kind, data, p)
        _event_problems(w, row, h, hash_check if seq < keyed_from else mac_check, keyed_from)
        if seq in cps:
            _checkpoint(w, seq, h, cps[seq])
        w.prev, w.expect = h, seq + 1
        if w.bad_from is None and len(problems) > before:
            w.bad_from = seq
        if w.full:
            problems.append("... (stopped after 20 problems)")
            break


def _event_problems(
    w: Walk, row: EventRow, h: str, check: tuple[Callable[[EventRow], str], str] | None, keyed_from: int
) -> None:
    """One event of the walk: its place, its hash or MAC, the keyed record, its meter."""
    from controller.books.ledger import KEYED_KIND

    seq, rnd, kind, data = row.seq, row.round, row.kind, row.data
    _place_problems(w, seq, row.prev)
    digest, valid = _digest_problem(row, h, check)
    if digest is not None:
        w.problems.append(digest)
    kind = kind if valid else ""
    if seq == keyed_from and keyed_from > 1 and kind != KEYED_KIND:
        w.problems.append(f"event {seq}: the ledger says it is keyed from here, but this is not its {KEYED_KIND}")
    if kind.startswith("meter.") and w.with_meters:
        _apply_meter(w, seq, rnd, kind, data)


def _place_problems(w: Walk, seq: int, prev: str) -> None:
    """An event out of sequence, or not chained to the one before."""
    if seq != w.expect:
        w.problems.append(f"event sequence gap: expected {w.expect}, found {seq}")
    if prev != w.prev:
        w.problems.append(f"event {seq}: chain broken (prev hash does not match event {seq - 1})")


_HASH_WRONG = "hash does not match its contents"
_MAC_WRONG = "MAC does not match its contents (edited, or written without the key)"


def _digest_problem(
    row: EventRow, h: str, check: tuple[Callable[[EventRow], str], str] | None
) -> tuple[str | None, bool]:
    """What is wrong with an event's stored hash; False when the row is not an event."""
    if check is None:
        return None, True
    digest, wrong = check
    try:
        if digest(row) == h:
            return None, True
    except (TypeError, ValueError) as e:  # a value no event has (a BLOB put in): not an event
        return f"event {row.seq}: not a valid event ({e})", False
    return f"event {row.seq}: {wrong}", True


def _apply_meter(w: Walk, seq: int, rnd: int, kind: str, data: str) -> None:
    try:
        w.meters = meters_mod.apply(w.meters, kind, json.loads(data), round_no=rnd, seq=seq)
    except (ValueError, KeyError) as e:
        w.problems.append(f"event {seq}: meter event cannot be applied: {e}")


def _checkpoint(w: Walk, seq: int, h: str, cp: tuple[str, str]) -> None:
    if cp[0] != h:
        w.problems.append(f"checkpoint at event {seq} does not match the event log")
    elif json.loads(cp[1]) != {lv: m.to_row() for lv, m in sorted(w.meters.items())}:
        w.problems.append(f"checkpoint at event {seq}: meters differ from the events before it")
    else:
        w.good_checkpoints.append(seq)


def _meters_of(seal: S.Seal) -> dict[str, Meter]:
    return {lv: Meter.from_row(r) for lv, r in json.loads(seal.meters).items()}


def _seal_name(s: S.Seal) -> str:
    return f"seal {s.n} (events {s.first}-{s.last})"


#: the most events :func:`quick` walks after the last seal: a sound ledger has fewer than a
#: segment there (a seal is written with every checkpoint); more means seals were removed or
#: the ledger rewritten before them, which is reported, and the start-up stays bounded
MAX_TAIL = 10_000


def outside_the_chain(led: Ledger) -> list[str]:
    """Rows numbered below 1: never an event of the chain (which starts at 1), never checked
    by a walk, yet read by anything that selects by round or kind.  One seek down the rowid."""
    n, lo = led.db.execute("SELECT count(*), min(seq) FROM events WHERE seq < 1").fetchone()
    if not n:
        return []
    return [f"{n} row(s) outside the chain (numbered {lo} to 0; events are numbered from 1): not events of this ledger"]


def table_problems(led: Ledger, table_id: str) -> list[str]:
    """The ledger names another table than ``table_id``: its first event, or its last (each
    covered by its MAC, so a ledger cannot name one table and hold another's events unkeyed)."""
    out = []
    for which, order in (("first", "ASC"), ("last", "DESC")):
        row = led.db.execute(f"SELECT seq, table_id FROM events WHERE seq > 0 ORDER BY seq {order} LIMIT 1").fetchone()
        if row is not None and row[1] != table_id:
            out.append(f"the ledger was written by table {row[1]!r} ({which} event {row[0]}), not by {table_id!r}")
            break
    return out


def quick(led: Ledger) -> list[str]:
    """The start-up check: from the last seal on (see the module docstring)."""
    problems, keyed_from = header(led)
    if problems and "newer than this software" in problems[-1]:
        return problems
    problems += outside_the_chain(led)
    seal = S.last_seal(led.db)
    w = _walk_from(led, seal, problems)
    after = w.expect - 1
    w.problems = problems
    truncated = led.last_seq - after > MAX_TAIL
    if truncated:
        w = _tail_walk(led, after, problems)
        after = w.expect - 1
    cps = {s: (h, m) for s, h, m in led.db.execute("SELECT seq, hash, meters FROM checkpoints WHERE seq > ?", (after,))}
    walk(led, w, after, None, keyed_from, cps)
    if w.full:
        return w.problems
    problems += _past_the_end(led, w.expect - 1, keyed_from, cps, seal)
    if not truncated:  # (else the meters before the walk are not known: the problem is reported)
        problems += stored_meters(led, w.meters)
    return problems


def _walk_from(led: Ledger, seal: S.Seal | None, problems: list[str]) -> Walk:
    """A walk from the last seal (its MAC checked, with the key), or from the first event."""
    if seal is None:
        return Walk(GENESIS, 1, {})
    if led.keyed and not led.sealer.valid(seal):
        problems.append(f"{_seal_name(seal)}: its MAC does not match (edited, or written without the key)")
    return Walk(seal.head, seal.last + 1, _meters_of(seal))


def _tail_walk(led: Ledger, after: int, problems: list[str]) -> Walk:
    """Too many events after the last seal (at ``after``): said, and a walk of the last
    :data:`MAX_TAIL` only, without the meters (not known where it starts)."""
    problems.append(
        f"{led.last_seq - after} events after the last seal (at event {after}): seals removed, or the ledger "
        f"rewritten before them; the last {MAX_TAIL} checked here"
    )
    after = led.last_seq - MAX_TAIL
    row = led.db.execute("SELECT prev FROM events WHERE seq > ? ORDER BY seq LIMIT 1", (after,)).fetchone()
    return Walk(str(row[0]) if row else GENESIS, after + 1, {}, problems, with_meters=False)


def _past_the_end(
    led: Ledger, last: int, keyed_from: int, cps: dict[int, tuple[str, str]], seal: S.Seal | None
) -> list[str]:
    """What names events the ledger does not have: the keyed record, checkpoints, seals."""
    problems = []
    if keyed_from > last + 1:
        problems.append(f"the ledger says it is keyed from event {keyed_from}, but it ends at {last}")
    for seq in sorted(cps):
        if seq > last:
            problems.append(f"checkpoint at event {seq} is past the last event ({last})")
    if S.has_table(led.db):
        for n, first, end in led.db.execute(
            "SELECT n, first, last FROM seals WHERE n > ? ORDER BY n LIMIT 5", (seal.n if seal else 0,)
        ):
            problems.append(f"seal {n} (events {first}-{end}) does not name an event of this ledger")
    return problems


def stored_meters(led: Ledger, meters: dict[str, Meter]) -> list[str]:
    problems: list[str] = []
    stored = led.stored_meter_rows()
    for level, m in meters.items():
        row = stored.get(level)
        if row is None:
            problems.append(f"meter {level!r}: no stored meter, events say {m.value}")
        elif row != m.to_row():
            diff = sorted(k for k in row if row.get(k) != m.to_row().get(k))
            problems.append(f"meter {level!r}: stored meter differs from the events in {', '.join(diff)}")
        if m.value != m.expected_value():
            problems.append(f"meter {level!r}: value {m.value} != seed + increments - payouts {m.expected_value()}")
    for level in set(stored) - set(meters):
        problems.append(f"meter {level!r}: stored but never created by an event")
    return problems


def segments(led: Ledger, seals: Iterable[S.Seal], before: S.Seal | None, keyed_from: int) -> list[str]:
    """Sealed segments in order, ``before`` the seal just before the first (None: from the
    first).  Stops after about 20 problems."""
    problems: list[str] = []
    prev = before
    for s in seals:
        problems += _segment(led, s, prev, keyed_from)
        prev = s
        if len(problems) > MAX_PROBLEMS:
            problems.append("... (stopped after 20 problems)")
            break
    return problems


def _segment(led: Ledger, s: S.Seal, prev: S.Seal | None, keyed_from: int) -> list[str]:
    name = _seal_name(s)
    problems = _seal_order_problems(name, s, prev)
    seal_ok = not led.keyed or led.sealer.valid(s)
    if not seal_ok:
        problems.append(f"{name}: its MAC does not match (edited, or written without the key)")
    digest = led.sealer.running()
    try:
        count = S.feed(led.db, digest, s.first, s.last)
    except sqlite3.DataError:  # a value over the ledger's bound: never read (controller/books/ledgerfile.py)
        return [*problems, _too_big(f"{name}: a row")]
    except Exception:  # noqa: BLE001 - a row SQLite cannot encode (a BLOB put in) is the finding
        count = -1
    if count != s.events or (led.keyed and digest.hexdigest() != s.digest) or not seal_ok:
        problems += _drill(led, s, prev, keyed_from, count)
    return problems + _sealed_checkpoint_problems(led, s)


def _seal_order_problems(name: str, s: S.Seal, prev: S.Seal | None) -> list[str]:
    """The first of: a seal missing before ``s``, a gap in the events, a chain of seals rewritten."""
    n, first, mac = (prev.n + 1, prev.last + 1, prev.mac) if prev else (1, 1, GENESIS)
    if s.n != n:
        return [f"{name}: seal {n} is missing (the seals are not contiguous)"]
    if s.first != first:
        return [f"{name}: starts at event {s.first}, but the seal before ends at event {first - 1}"]
    if s.prev != mac:
        return [f"{name}: does not follow seal {n - 1} (the seals were rewritten)"]
    return []


def _sealed_checkpoint_problems(led: Ledger, s: S.Seal) -> list[str]:
    """The checkpoints inside the segment of ``s``: only its last event has one, matching the seal."""
    problems: list[str] = []
    for seq, h, m in led.db.execute(
        "SELECT seq, hash, meters FROM checkpoints WHERE seq BETWEEN ? AND ?", (s.first, s.last)
    ):
        if seq != s.last or h != s.head:
            problems.append(f"checkpoint at event {seq} does not match the event log")
        elif json.loads(m) != json.loads(s.meters):
            problems.append(f"checkpoint at event {seq}: meters differ from the events before it")
    return problems


def _drill(led: Ledger, s: S.Seal, prev: S.Seal | None, keyed_from: int, count: int) -> list[str]:
    """A segment whose rows do not give its seal's digest, walked event by event (at most one
    segment) to name its first bad event."""
    w = Walk(prev.head if prev else GENESIS, s.first, _meters_of(prev) if prev else {})
    walk(led, w, s.first - 1, s.last, keyed_from, {})
    if w.expect != s.last + 1 and not w.full:
        w.problems.append(f"{_seal_name(s)}: the ledger has {max(count, 0)} of its {s.events} events")
    if not w.problems:
        w.problems.append(f"{_seal_name(s)}: its rows differ from what was sealed (digest)")
    return w.problems


def full(led: Ledger) -> list[str]:
    """Every sealed segment by its digest, then :func:`quick`: the whole ledger."""
    head, keyed_from = header(led)
    if head and "newer than this software" in head[-1]:
        return head
    # every seal, those past a cut tail or naming a rewritten chain too (quick() says which)
    return segments(led, S.seals_from(led.db), None, keyed_from) + quick(led)


def read_problems(led: Ledger, ranges: Iterable[tuple[int, int]]) -> list[str]:
    """The sealed segments holding any event of ``ranges`` (``(lo, hi)``: what a command
    read), by their digests; the events after the last seal are the start-up check's."""
    wanted = {s.n: s for lo, hi in ranges for s in S.seals_over(led.db, lo, hi)}
    if not wanted:
        return []
    _h, keyed_from = header(led)
    problems: list[str] = []
    run: list[S.Seal] = []
    for n in sorted(wanted):
        if run and n != run[-1].n + 1:
            problems += segments(led, run, S.seal_number(led.db, run[0].n - 1), keyed_from)
            run = []
        run.append(wanted[n])
    return problems + segments(led, run, S.seal_number(led.db, run[0].n - 1), keyed_from)


def seal_history(led: Ledger) -> list[S.Seal]:
    """Schema 2 to 3 (``Ledger`` at its first open by this software, ``tablectl migrate``): the
    whole ledger walked event by event once, and a seal made at each checkpoint that matches
    the events, up to the first problem (damage is never sealed: the start-up check finds it
    after the last seal).  The walk and the digests read one snapshot (the caller's
    transaction), so what is sealed is what was checked."""
    _h, keyed_from = header(led)
    cps = {s: (h, m) for s, h, m in led.db.execute("SELECT seq, hash, meters FROM checkpoints")}
    w = walk(led, Walk(GENESIS, 1, {}), 0, None, keyed_from, cps)
    out: list[S.Seal] = []
    n, first, prev = 1, 1, GENESIS
    for cp in w.good_checkpoints:
        if w.bad_from is not None and cp >= w.bad_from:
            break
        (ts,) = led.db.execute("SELECT ts FROM events WHERE seq = ?", (cp,)).fetchone()
        digest = led.sealer.running()
        S.feed(led.db, digest, first, cp)
        seal = led.sealer.make(S.SealBody(n, first, cp, str(ts), digest.hexdigest(), cps[cp][0], cps[cp][1], prev))
        out.append(seal)
        n, first, prev = n + 1, cp + 1, seal.mac
    return out
