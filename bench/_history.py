"""A table's history made quickly, for ``tablectl bench startup --history ROUNDS``.

The records a table writes, round after round, made here (not played) and appended with the
ledger's own code (``Ledger.append``: the MACs, checkpoints, seals and meters are the real
ones), with the wall clock set to each round's time: about 1,000 rounds a gaming day, from
10:00 to 04:00, ending now.  The mix follows what `tablectl sim` records:

* the game changes every week among three shapes: six-card hands (Six-Card Fortune: base,
  fortune and progressive wagers, a double-down now and then), seven-card hands (Face Up,
  Fortune Asia, DJ Wild: a raise or fold) and Pai Gow tiles (four tiles, the bank carried:
  ``game.carry``);
* one to seven seats, most with a progressive wager (a ``meter.increment`` each);
* about 1 round in 100 voided (``round.void``, every wager returned, the contributions
  ``meter.void``); a fixed progressive pay in about 1 in 40 (``meter.fixed_paid``); a
  meter hit, validated by a floorperson and paid by an attendant, about 1 in 2,500
  (``hit.pending``, ``hit.validated``, ``meter.payout``, ``meter.reseed``);
* each day a start (``power.up``, ``selfcheck``, ``config.loaded``), dealer changes, shuffles,
  console logins, and a tilt raised and cleared now and then.

Synchronous writes are off while it builds, and rounds go in about 20 at a time, stamped
with the first one's time (a bench's shortcuts: the ledger is made, not played); everything
else is the product's.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from controller.books.ledger import Ledger, Record

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = [r + s for r in RANKS for s in SUITS] + ["Jk"]
TILES = [f"T{i:02d}" for i in range(32)]
RATE = "21/100"
SEED_CENTS = 500_000
ROUNDS_PER_DAY = 1000
#: rounds are appended about this many events at a time (each batch stamped with its first
#: round's time: about 20 minutes of play), far fewer transactions than play makes
BATCH_EVENTS = 750
#: the gaming day's play, local-time hours from its 06:00 start: 10:00 to 04:00
PLAY_FROM_H, PLAY_HOURS = 4.0, 18.0


@dataclass
class Shape:
    game: str
    cards: int  # cards (or tiles) in a hand
    side: str | None  # a side wager
    decision: str  # what players decide after the deal


SHAPES = [
    Shape("six-card-fortune", 6, "fortune", "double-down"),
    Shape("face-up", 7, "envy", "setting"),
    Shape("dj-wild", 7, "trips", "raise"),
    Shape("pai-gow-tiles", 4, None, "setting"),
]


class History:
    """Makes the records of round after round; ``meter`` follows the meter's cents (for hits)."""

    def __init__(self, rng: random.Random, table: str = "BENCH-01"):
        self.rng = rng
        self.table = table
        self.meter = SEED_CENTS  # cents (21 % of a 100-cent wager is whole)
        self.round = 0

    def start_of_day(self, day: int) -> list[Record]:
        r = self.round
        recs = [
            Record("power.up", r, {"version": "0.26.0"}),
            Record("selfcheck", r, {"results": {"config": "pass", "ledger": "pass", "rng": "pass"}, "problems": []}),
            Record("config.loaded", r, {"file": "/etc/tablectl/table.toml", "digest": f"{day:064x}", "changed": {}}),
        ]
        if day == 0:
            recs.append(Record("meter.init", r, {"level": "primary", "seed": SEED_CENTS, "rate": RATE}))
        return recs

    def floor_events(self) -> list[Record]:
        """Between rounds, now and then: dealer changes, shuffles, logins, a tilt and its clear."""
        rng, r, out = self.rng, self.round, []
        if rng.random() < 1 / 40:
            out.append(Record("dealer.changed", r, {"dealer": f"D{rng.randrange(100):03d}"}))
        if rng.random() < 1 / 30:
            out.append(Record("shoe.shuffled", r, {"seconds": round(rng.uniform(20, 40), 1)}))
        if rng.random() < 1 / 300:
            out += [
                Record("console.login", r, {"role": "technician", "via": "socket"}),
                Record("console.command", r, {"line": "status"}),
                Record("console.logout", r, {"role": "technician"}),
            ]
        if rng.random() < 1 / 500:
            out += [
                Record("tilt.raised", r, {"source": "shoe", "reason": "shoe: link lost (no ACK)"}),
                Record("tilt.cleared", r, {"by": "tech 7", "reason": "reseated the shoe's cable", "tilts": ["shoe"]}),
            ]
        return out

    def play(self, shape: Shape) -> list[Record]:
        """One round's records."""
        self.round += 1
        rng, r = self.rng, self.round
        seats = sorted(rng.sample(range(1, 8), rng.randint(1, 7)))
        recs = [Record("round.open", r, {})]
        wagers: list[tuple[int, str, int]] = []
        for s in seats:
            recs += self._seat_wagers(shape, s, wagers)
        prog = [w for w in wagers if w[1] == "progressive"]
        recs.append(
            Record("lockout", r, {"count": len(prog), "t": round(rng.uniform(0, 1e5), 6), "wagers": len(wagers)})
        )
        recs += [Record("wager.accepted", r, {"cents": c, "seat": s, "spot": spot}) for s, spot, c in wagers]
        recs.append(Record("count.confirmed", r, {"count": len(prog)}))
        recs += [
            Record("meter.increment", r, {"level": "primary", "rate": RATE, "seat": s, "wager": 100})
            for s, _, _ in prog
        ]
        self.meter += 21 * len(prog)
        if rng.random() < 0.01:
            return recs + self._void(wagers, prog)
        recs += self._deal(shape, seats)
        return recs + self._settle(shape, wagers)

    def _void(self, wagers: list[tuple[int, str, int]], prog: list[tuple[int, str, int]]) -> list[Record]:
        r = self.round
        recs = [Record("round.void", r, {"reason": "shoe misdeal (§ 670a.13(c))"})]
        recs += [Record("wager.returned", r, {"cents": c, "seat": s, "spot": spot}) for s, spot, c in wagers]
        recs += [
            Record("meter.void", r, {"level": "primary", "rate": RATE, "seat": s, "wager": 100}) for s, _, _ in prog
        ]
        self.meter -= 21 * len(prog)
        return recs

    def _deal(self, shape: Shape, seats: list[int]) -> list[Record]:
        rng, r = self.rng, self.round
        dice = [rng.randint(1, 6) for _ in range(3)]
        recs = [
            Record(
                "dice",
                r,
                {
                    "dice": dice,
                    "red": rng.randrange(3),
                    "shake_ms": 5000,
                    "start": sum(dice) % 7 + 1,
                    "total": sum(dice),
                },
            )
        ]
        pool = TILES if shape.cards == 4 else DECK
        n = min(8, len(pool) // shape.cards)  # the dealer and up to seven seats
        drawn = rng.sample(pool, shape.cards * n)
        hands = {"dealer": " ".join(drawn[: shape.cards])}
        for i in range(1, n):
            hands[f"seat:{i}"] = " ".join(drawn[i * shape.cards : (i + 1) * shape.cards])
        recs.append(
            Record(
                "deal", r, {"cards_read": True, "hands": hands, "phase": "dispensing", "stacks": list(hands.values())}
            )
        )
        recs.append(Record("stub.verified", r, {"remaining": len(pool) - len(drawn)}))
        for s in seats:
            if rng.random() < 0.3:
                recs.append(
                    Record(
                        "decision",
                        r,
                        {"decision": shape.decision, "phase": "setting_hands", "seat": s, "text": f"SET {s}"},
                    )
                )
        recs.append(Record("decision", r, {"decision": "done", "phase": "setting_hands", "text": "DONE"}))
        return recs

    def _seat_wagers(self, shape: Shape, s: int, wagers: list[tuple[int, str, int]]) -> list[Record]:
        """A seat's wagers (added to ``wagers``): its base, perhaps the side wager, perhaps the
        progressive; the records of those keyed."""
        rng, r = self.rng, self.round
        base = rng.choice((500, 1000, 1500, 2500, 5000, 7500, 10000))
        wagers.append((s, "base", base))
        recs = [Record("wager.keyed", r, {"text": f"BET {s} base {base / 100:.2f}"})]
        if shape.side and rng.random() < 0.4:
            wagers.append((s, shape.side, rng.choice((100, 500, 1000))))
            recs.append(Record("wager.keyed", r, {"text": f"BET {s} {shape.side} {wagers[-1][2] / 100:.2f}"}))
        if rng.random() < 0.6:
            wagers.append((s, "progressive", 100))
        return recs

    def _wager(self, shape: Shape, s: int, spot: str, c: int) -> tuple[Record, list[Record], bool]:
        """One wager's result, its payments, and whether it hit the progressive's meter."""
        rng, r = self.rng, self.round
        outcome, net = self._outcome(spot, c)
        result = Record(
            "wager.result",
            r,
            {
                "cents": c,
                "commission": None,
                "detail": f"§ 670a.11(f)(2); {shape.game}: high won, low lost",
                "hand": rng.choice(("pair/queen", "straight/jack", "three-of-a-kind/nine", "flush/ace")),
                "net": net,
                "outcome": outcome,
                "pays": "1 to 1" if outcome == "win" else None,
                "seat": s,
                "wager": spot,
            },
        )
        paid = _payments(r, s, spot, c, net)
        return result, paid, spot == "progressive" and rng.random() < 1 / 1500

    def _outcome(self, spot: str, c: int) -> tuple[str, int]:
        """A wager's outcome and net: even odds for the others, a fixed pay 1 in 40 for the progressive."""
        rng = self.rng
        outcome = rng.choices(("win", "lose", "push"), (0.4, 0.4, 0.2))[0]
        net = c if outcome == "win" else -c if outcome == "lose" else 0
        if spot == "progressive":
            outcome, net = ("win", 300) if rng.random() < 1 / 40 else ("lose", -100)
        return outcome, net

    def _settle(self, shape: Shape, wagers: list[tuple[int, str, int]]) -> list[Record]:
        rng, r = self.rng, self.round
        recs: list[Record] = []
        paid: list[Record] = []
        hits: list[tuple[int, int]] = []
        for s, spot, c in wagers:
            result, pays, hit = self._wager(shape, s, spot, c)
            recs.append(result)
            paid += pays
            if hit:
                hits.append((s, 1))
        recs += paid
        pending = hits[:1]
        recs.append(Record("round.settled", r, {"earlier": 0, "pending_hits": len(pending), "results": len(wagers)}))
        for s, order in pending:
            recs += self._hit(s, order)
        if shape.game == "pai-gow-tiles":
            recs.append(
                Record(
                    "game.carry",
                    r,
                    {"game": "pai-gow-tiles", "state": {"bank": rng.randint(1, 7), "shooter": rng.randint(1, 7)}},
                )
            )
        recs.append(Record("round.complete", r, {"meter": str(self.meter)}))
        return recs

    def _hit(self, seat: int, order: int) -> list[Record]:
        r = self.round
        cents = self.meter
        self.meter = SEED_CENTS
        return [
            Record(
                "hit.pending",
                r,
                {"cents": cents, "hand": "seven-card straight flush", "level": "primary", "order": order, "seat": seat},
            ),
            Record("hit.validated", r, {"by": "floor 12", "order": order, "seat": seat}),
            Record(
                "meter.payout",
                r,
                {"cents": cents, "hand": "seven-card straight flush", "level": "primary", "order": order, "seat": seat},
            ),
            Record("meter.reseed", r, {"cents": SEED_CENTS, "level": "primary"}),
        ]


@dataclass(frozen=True)
class Span:
    """Which history :func:`build` makes: ``rounds`` rounds at table ``table``, drawn from
    ``seed``, the last one about ``end`` (None: now)."""

    rounds: int
    table: str = "BENCH-01"
    seed: int = 1
    end: datetime | None = None


def build(path: Path, key: bytes, span: Span, progress: Callable[[int], None] | None = None) -> tuple[int, float]:
    """Append ``span``'s rounds (and their days' other records) to the ledger at ``path`` under
    ``key``; returns (events, seconds)."""
    rounds, table, seed = span.rounds, span.table, span.seed
    end = span.end or datetime.now(UTC)
    days = max(1, -(-rounds // ROUNDS_PER_DAY))
    start = (end - timedelta(days=days)).replace(hour=6, minute=0, second=0, microsecond=0)
    clock = [start.timestamp()]
    led = Ledger(path, table, key=key, wall_clock=lambda: clock[0], reserve_bytes=0)
    led.db.execute("PRAGMA synchronous=OFF")  # made, not played (see the module docstring)
    t0 = time.perf_counter()
    h = History(random.Random(seed), table)
    step = PLAY_HOURS * 3600 / ROUNDS_PER_DAY
    for day in range(days):
        day_start = start.timestamp() + day * 86400 + PLAY_FROM_H * 3600
        batch = h.start_of_day(day)
        clock[0] = min(day_start, end.timestamp())
        for i in range(min(ROUNDS_PER_DAY, rounds - h.round)):
            batch += h.play(SHAPES[(day // 7) % len(SHAPES)]) + h.floor_events()
            if len(batch) >= BATCH_EVENTS:
                led.append(batch)
                batch = []
                clock[0] = min(day_start + (i + 1) * step, end.timestamp())
            if progress is not None and h.round % 10_000 == 0:
                progress(h.round)
        if batch:
            led.append(batch)
    led.db.execute("PRAGMA synchronous=FULL")
    led.checkpoint()
    events = led.last_seq
    led.close()
    return events, time.perf_counter() - t0


def _payments(r: int, s: int, spot: str, c: int, net: int) -> list[Record]:
    """What the table hands back for a wager that did not lose, and a progressive's fixed pay."""
    paid: list[Record] = []
    if net >= 0:
        paid.append(
            Record("payout", r, {"cents": c + net, "hand": "straight", "paid_by": "table", "seat": s, "wager": spot})
        )
    if spot == "progressive" and net > 0:
        paid.append(
            Record("meter.fixed_paid", r, {"cents": net + c, "hand": "straight", "level": "primary", "seat": s})
        )
    return paid
