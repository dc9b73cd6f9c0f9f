"""The LAP's reconciliation of every level, exactly, from the records (``tablectl lap
--reconcile``, the LAP's start-up self-check and its timer; docs/linked.md).

For every level::

    value + reserve + overflow + Σ hits paid == seed + Σ resets + Σ contributions − Σ voids

with every contribution equal to its wager × the rates of the version it was taken under (each
priced from ``rates``), the running totals the database keeps (``inflow_num``, ``paid_cents``:
what ``check_batch`` compares at every batch) equal to the records' sums, and every event either
applied or recorded as refused.  A refusal is not a reconciliation problem: it is recorded and
closes its table only.  Nor is a table whose own batch totals disagree with what the LAP holds of
it (``members.mismatch``): that is one table's fault, shown to that table (which keeps its linked
wager closed) and to the operator, never a reason to make the whole link inoperable
(:attr:`Reconciliation.link_problems`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from controller.core.money import format_exact, plural

if TYPE_CHECKING:
    from controller.lap.lap import LapStore


@dataclass(frozen=True)
class LevelState:
    level: str
    value: Fraction  # exact cents
    reserve: Fraction
    overflow: Fraction
    hits: int
    version: int

    @property
    def cents(self) -> int:
        return self.value.numerator // self.value.denominator


@dataclass
class Reconciliation:
    ok: bool
    tables: int
    contributions: int
    hits: int
    problems: list[str] = field(default_factory=list)
    levels: dict[str, LevelState] = field(default_factory=dict)
    refusals: int = 0
    #: the problems that are one table's own (its batch totals disagree): among ``problems``
    table_problems: list[str] = field(default_factory=list)

    @property
    def link_problems(self) -> list[str]:
        """What makes the link inoperable: the problems that are not one table's own."""
        return [p for p in self.problems if p not in self.table_problems]

    def counts(self) -> str:
        """``2 tables, 460 contributions, 1 meter hit``: counts that read right, in every output's words."""
        return f"{plural(self.tables, 'table')}, {plural(self.contributions, 'contribution')}, " + plural(
            self.hits, "meter hit"
        )


def level_line(st: LevelState) -> str:
    """A level in dollars, exactly (the fraction of a cent carried shown as such)."""
    return (
        f"level {st.level}: meter {format_exact(st.value)}, hidden reserve {format_exact(st.reserve)}, "
        f"overflow {format_exact(st.overflow)}, {plural(st.hits, 'meter hit')}"
    )


_UNMATCHED = (
    "SELECT e.table_id, e.seq, e.kind FROM {s}.events e WHERE NOT EXISTS ("
    " SELECT 1 FROM {s}.contributions c WHERE c.table_id = e.table_id AND c.seq = e.seq"
    " UNION ALL SELECT 1 FROM {s}.voids v WHERE v.table_id = e.table_id AND v.seq = e.seq"
    " UNION ALL SELECT 1 FROM {s}.hits h WHERE h.table_id = e.table_id AND h.seq = e.seq"
    " UNION ALL SELECT 1 FROM {s}.payouts p WHERE p.table_id = e.table_id AND p.seq = e.seq"
    " UNION ALL SELECT 1 FROM {s}.refusals r WHERE r.table_id = e.table_id AND r.seq = e.seq"
    " AND r.kind = e.kind) LIMIT 20"
)
_CONTRIB = (
    "SELECT level, den, sum(to_meter + to_reserve + to_overflow) AS amt,"
    " sum(wager_cents * (rate_num * (den / rate_den) + reserve_num * (den / reserve_den))) AS want,"
    " count(*) AS n FROM {s}.contributions GROUP BY level, den"
)
# a contribution priced off the rates of its version (the version's row is append-only)
_OFF_VERSION = (
    "SELECT c.table_id, c.seq, c.level, c.rate_version FROM {s}.contributions c"
    " LEFT JOIN {s}.rates r ON r.level = c.level AND r.version = c.rate_version"
    " WHERE r.level IS NULL OR (r.rate_num, r.rate_den, r.reserve_num, r.reserve_den)"
    " <> (c.rate_num, c.rate_den, c.reserve_num, c.reserve_den) LIMIT 20"
)


def _read(store: LapStore) -> dict[str, Any]:
    """Everything the identity needs, in one consistent snapshot."""
    rows = store._rows
    with store.conn.transaction():
        store.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return {
            "levels": rows("SELECT * FROM {s}.levels ORDER BY level"),
            "contrib": rows(_CONTRIB),
            "voids": rows("SELECT level, den, sum(amount) AS amt FROM {s}.voids GROUP BY level, den"),
            "hits": rows("SELECT level, sum(amount_cents) AS amt, count(*) AS n FROM {s}.hits GROUP BY level"),
            "resets": rows("SELECT level, sum(reset_cents) AS amt FROM {s}.reseeds GROUP BY level"),
            "tables": rows("SELECT count(*) AS n FROM {s}.members")[0]["n"],
            "refusals": rows("SELECT count(*) AS n FROM {s}.refusals")[0]["n"],
            "unmatched": rows(_UNMATCHED),
            "off_version": rows(_OFF_VERSION),
            "mismatches": rows("SELECT table_id, mismatch FROM {s}.members WHERE mismatch IS NOT NULL"),
            "held": rows(_HELD),
        }


#: each table's running totals (``held``: what the batch check reads) against its events
_HELD = (
    "SELECT table_id, h.events, h.wagers, h.max_seq, e.n, e.w, e.mx FROM {s}.held h FULL JOIN"
    " (SELECT table_id, count(*) AS n, sum({s}.event_wager(x)) AS w, max(seq) AS mx FROM {s}.events x"
    " GROUP BY table_id) e USING (table_id) WHERE (h.events, h.wagers, h.max_seq) IS DISTINCT FROM (e.n, e.w, e.mx)"
)


def level_state(r: dict[str, Any]) -> LevelState:
    d = int(r["den"])
    return LevelState(
        r["level"],
        Fraction(int(r["value_num"]), d),
        Fraction(int(r["reserve_acc"]), d),
        Fraction(int(r["overflow_acc"]), d),
        int(r["hits"]),
        int(r["version"]),
    )


def _contributions(name: str, got: dict[str, Any]) -> tuple[list[str], Fraction, int]:
    """A level's contributions, each held amount checked against its wagers × rates:
    (problems, the amount they hold, how many)."""
    problems: list[str] = []
    total = Fraction(0)
    n = 0
    for c in (c for c in got["contrib"] if c["level"] == name):
        amt, want = int(c["amt"]), int(c["want"])
        if amt != want:
            problems.append(f"level {name}: contributions hold {amt}/{c['den']}, wagers × rates {want}")
        total += Fraction(amt, int(c["den"]))
        n += int(c["n"])
    return problems, total, n


def _level_problems(lv: dict[str, Any], got: dict[str, Any]) -> tuple[list[str], int, int]:
    """One level's identity: (problems, contributions, hits)."""
    name, den = lv["level"], int(lv["den"])
    st = level_state(lv)
    problems, contributed, n_contrib = _contributions(name, got)
    inflow = Fraction(int(lv["seed_cents"])) + contributed
    inflow -= sum((Fraction(int(v["amt"]), int(v["den"])) for v in got["voids"] if v["level"] == name), Fraction(0))
    inflow += sum(int(r["amt"]) for r in got["resets"] if r["level"] == name)
    hit_rows = [h for h in got["hits"] if h["level"] == name]
    paid = sum(int(h["amt"]) for h in hit_rows)
    held = st.value + st.reserve + st.overflow + paid
    if held != inflow:
        problems.append(f"level {name}: meter+reserve+overflow+paid = {held}, seed+resets+contributions = {inflow}")
    if Fraction(int(lv["inflow_num"]), den) != inflow or int(lv["paid_cents"]) != paid:
        problems.append(
            f"level {name}: the running totals ({Fraction(int(lv['inflow_num']), den)} in, {lv['paid_cents']} paid)"
            f" differ from the records ({inflow} in, {paid} paid)"
        )
    return problems, n_contrib, sum(int(h["n"]) for h in hit_rows)


def reconcile(store: LapStore) -> Reconciliation:
    """Check, exactly, every level's identity and that every event was applied or refused."""
    got = _read(store)
    problems = [
        f"event {u['table_id']}/{u['seq']} ({u['kind']}) was neither applied nor refused" for u in got["unmatched"]
    ]
    problems += [
        f"contribution {o['table_id']}/{o['seq']} is not priced at the rates of its version {o['rate_version']}"
        for o in got["off_version"]
    ]
    mine = [f"table {m['table_id']}: {m['mismatch']}" for m in got["mismatches"]]
    problems += mine
    problems += [
        f"table {h['table_id']}: the running totals ({h['events']} events, {h['wagers']} cents, to seq "
        f"{h['max_seq']}) differ from its events ({h['n']}, {h['w']}, to seq {h['mx']})"
        for h in got["held"]
    ]
    n_contrib = n_hits = 0
    for lv in got["levels"]:
        p, c, h = _level_problems(lv, got)
        problems += p
        n_contrib += c
        n_hits += h
    levels = {lv["level"]: level_state(lv) for lv in got["levels"]}
    return Reconciliation(
        not problems,
        int(got["tables"]),
        n_contrib,
        n_hits,
        problems,
        levels,
        refusals=int(got["refusals"]),
        table_problems=mine,
    )
