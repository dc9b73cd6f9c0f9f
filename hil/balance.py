"""The simulation's balance: every wager of every round accounted for to the cent.

What the simulated players placed (hil/people.py ``placed``) is compared with
the ledger: every placed wager was accepted by the table for the same amount,
and has exactly one outcome — won, lost, pushed, surrendered (a ``wager.result``)
or returned by a void (``wager.returned``); nothing was accepted that nobody
placed; every amount handed back to a player is recorded as a payout; the hash
chain verifies; and every progressive meter equals seed + increments − payouts
(+ reseeds − voids) exactly.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Balance:
    ok: bool
    problems: list[str] = field(default_factory=list)
    rounds: int = 0
    wagers: int = 0
    wagered_cents: int = 0
    players_net_cents: int = 0  # what the players won (+) or lost (-), meter pays included
    meter_paid_cents: int = 0

    def line(self) -> str:
        from controller.core.money import format_cents

        if self.ok:
            return (
                f"balance: OK ({self.rounds} rounds, {self.wagers} wagers, {format_cents(self.wagered_cents)} "
                f"wagered, players net {format_cents(self.players_net_cents)}, meters reconciled)"
            )
        more = f" (+{len(self.problems) - 3} more)" if len(self.problems) > 3 else ""
        return "balance: MISMATCH " + "; ".join(self.problems[:3]) + more


Events = list[tuple[str, dict[str, Any]]]


def check(ledger_path: Path, placed: Mapping[int, Mapping[tuple[int, str], int]]) -> Balance:
    conn = sqlite3.connect(f"file:{ledger_path}?mode=ro", uri=True)
    ev: dict[int, Events] = defaultdict(list)
    for rnd, kind, data in conn.execute("SELECT round, kind, data FROM events ORDER BY seq"):
        ev[rnd].append((kind, json.loads(data)))
    conn.close()
    b = Balance(ok=True)
    for rnd in sorted(placed):
        _check_round(b, rnd, dict(placed[rnd]), ev.get(rnd, []))
    _check_ledger(b, ledger_path)
    b.ok = not b.problems
    return b


def _check_round(b: Balance, rnd: int, want: dict[tuple[int, str], int], evs: Events) -> None:
    """One round: what was taken as placed, one outcome per wager, payouts as owed."""
    accepted = _accepted(evs)
    if accepted != want:
        b.problems.append(_placed_problem(rnd, want, accepted))
    outcomes: Counter[tuple[int, str]] = Counter()
    for k, d in evs:
        _count_event(b, rnd, k, d, accepted, outcomes)
    if {e[0] for e in evs} & {"round.complete", "round.void"}:
        _check_closed(b, rnd, evs, accepted, outcomes)
    else:
        b.problems.append(f"round {rnd}: never closed (no round.complete or round.void)")
    b.rounds += 1
    b.wagers += len(accepted)
    b.wagered_cents += sum(c for c in accepted.values() if c)


def _accepted(evs: Events) -> dict[tuple[int, str], Any]:
    """The round's accepted wagers: (seat, spot) -> cents (None: a sensed chip of no amount)."""
    return {(d["seat"], d.get("spot", "progressive")): d.get("cents") for k, d in evs if k == "wager.accepted"}


def _placed_problem(rnd: int, want: Mapping[tuple[int, str], int], accepted: Mapping[tuple[int, str], Any]) -> str:
    """What differs between the wagers placed and those the table took."""
    extra = {k: v for k, v in accepted.items() if want.get(k) != v}
    missing = {k: v for k, v in want.items() if accepted.get(k) != v}
    return (
        f"round {rnd}: placed but not taken as placed {sorted(missing.items())}; "
        f"taken but not placed {sorted(extra.items())}"
    )


def _count_event(
    b: Balance,
    rnd: int,
    k: str,
    d: dict[str, Any],
    accepted: Mapping[tuple[int, str], Any],
    outcomes: Counter[tuple[int, str]],
) -> None:
    if k == "wager.result" and d.get("cents"):
        outcomes[(d["seat"], d["wager"])] += 1
        if accepted.get((d["seat"], d["wager"])) != d["cents"]:
            b.problems.append(
                f"round {rnd}: seat {d['seat']} {d['wager']} settled for {d['cents']} "
                f"cents, accepted {accepted.get((d['seat'], d['wager']))}"
            )
        b.players_net_cents += d["net"]
    elif k == "wager.result":
        b.players_net_cents += d["net"]  # an envy bonus: no wager of its own
    elif k == "wager.returned":
        outcomes[(d["seat"], d.get("wager", "progressive"))] += 1
    elif k in ("meter.payout", "link.paid"):  # a linked hit: paid what the LAP answered
        b.meter_paid_cents += d["cents"]
        b.players_net_cents += d["cents"]


def _check_closed(
    b: Balance,
    rnd: int,
    evs: Events,
    accepted: Mapping[tuple[int, str], Any],
    outcomes: Counter[tuple[int, str]],
) -> None:
    """A closed round: every accepted wager has one outcome, and the payouts are what the results owe."""
    b.problems += _outcome_problems(rnd, accepted, outcomes)
    results = [d for k, d in evs if k == "wager.result"]
    owed = sum(d["cents"] + d["net"] for d in results if d["cents"] + d["net"] > 0)
    paid = sum(d["cents"] for k, d in evs if k == "payout")
    if owed != paid:
        b.problems.append(f"round {rnd}: results owe {owed} cents back to the players, payouts record {paid}")


def _outcome_problems(
    rnd: int, accepted: Mapping[tuple[int, str], Any], outcomes: Counter[tuple[int, str]]
) -> list[str]:
    """Every accepted wager has one outcome; no outcome for a wager never accepted."""
    problems = [
        f"round {rnd}: seat {key[0]} {key[1]} has {outcomes[key]} outcome(s), not 1"
        for key in accepted
        if outcomes[key] != 1
    ]
    return problems + [
        f"round {rnd}: an outcome for seat {key[0]} {key[1]}, never accepted" for key in outcomes if key not in accepted
    ]


def _check_ledger(b: Balance, ledger_path: Path) -> None:
    """The ledger's chain, and every meter equal to seed + increments - payouts."""
    from controller.books.ledger import Ledger
    from hil.rig import rig_ledger_key

    led = Ledger.open_readonly(ledger_path, "balance", key=rig_ledger_key(Path(ledger_path).parent))
    try:
        chain = led.verify()
        meters = led.recompute_meters()
    finally:
        led.close()
    b.problems += [f"ledger: {p}" for p in chain]
    for level, m in meters.items():
        if m.value != m.expected_value() or not 0 <= m.remainder < 1:
            b.problems.append(f"meter {level}: {m.value} is not seed + increments - payouts ({m.expected_value()})")
