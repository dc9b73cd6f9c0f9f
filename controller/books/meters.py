"""Progressive meters, exact (cf. § 605a.7(a); § 670a.12(d)).

Pure: no I/O.  A meter's value is an exact :class:`~fractions.Fraction` of
cents.  The sign shows the whole cents; the fraction below a cent is the
*hidden remainder*, carried forward, never dropped.  The only ways a meter
changes are ledger events, applied here by :func:`apply`:

===================  ===========================================================
``meter.init``       a level is created at its seed (``seed``, ``rate``, optional ``reserve_rate``)
``meter.increment``  an accepted wager's contribution: ``wager × rate`` to the meter and
                     ``wager × reserve_rate`` to the hidden reserve, exact, credited when the
                     dealer confirms the count (§ 670a.10(a)(2)(ii))
``meter.payout``     a payout from the meter (whole cents) — a percentage-of-meter hit,
                     paid by an attendant, not from the table inventory (§ 670a.11(h)(3)(i)(B)(IV))
``meter.fixed_paid`` a fixed progressive pay made from the table inventory: counted as
                     table-paid for the level, the meter itself does not move
``meter.reseed``     after a 100 % hit: the seed is added back, and the reserve (if the
                     paytable has one, § 688a.12(d) paytable 4) moves into the meter
``meter.void``       a voided round's contribution returned (exact reversal, reserve too)
``meter.adjust``     a technician's recorded parameter change (rate/seed for the future)
===================  ===========================================================

So at every instant, for every level::

    value == initial seed + Σ reseeds + Σ reserve moved in + Σ increments − Σ payouts − Σ voids

and a meter never decreases except through a recorded payout or a recorded
void.  The ledger recomputes every meter from its events at start-up and
compares with the stored meters (controller/books/ledger.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from controller.core.money import format_cents, format_exact, format_rate, plural
from controller.core.records import Kind

HIT_HISTORY = 25  # the last 25 hits of each level are recalled from the ledger (controller/books/history.py)


class MeterError(ValueError):
    pass


@dataclass(frozen=True)
class Meter:
    level: str
    seed_cents: int
    rate: Fraction  # increment rate (fraction of each wager)
    value: Fraction  # exact, in cents
    increments: Fraction = Fraction(0)
    increment_count: int = 0
    paid_table: int = 0  # cents paid from the table inventory
    paid_attendant: int = 0  # cents paid by an attendant (e.g. %-of-meter pays, § 670a.11(h)(3)(i)(B)(IV))
    reseeds: int = 0  # cents added back as seed
    voided: Fraction = Fraction(0)
    hits: int = 0
    initial_seed: int = 0
    reserve_rate: Fraction = Fraction(0)
    reserve: Fraction = Fraction(0)  # hidden reserve, funds the next jackpot above its seed
    reserve_moved: Fraction = Fraction(0)  # total reserve moved into the meter at resets
    fixed_hits: int = 0

    @property
    def cents(self) -> int:
        """What the sign shows: whole cents (floor)."""
        return self.value.numerator // self.value.denominator

    @property
    def remainder(self) -> Fraction:
        """The hidden fraction of a cent carried to the next increment."""
        return self.value - self.cents

    @property
    def paid_total(self) -> int:
        return self.paid_table + self.paid_attendant

    @property
    def paid_from_meter(self) -> int:
        return self.paid_attendant

    def expected_value(self) -> Fraction:
        return (
            self.initial_seed + self.reseeds + self.reserve_moved + self.increments - self.paid_attendant - self.voided
        )

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Meter:
        """The inverse of :meth:`to_row` (ledger checkpoints)."""
        f = Fraction
        return cls(
            level=row["level"],
            seed_cents=int(row["seed_cents"]),
            rate=f(row["rate"]),
            value=f(row["value"]),
            increments=f(row["increments"]),
            increment_count=int(row["increment_count"]),
            paid_table=int(row["paid_table"]),
            paid_attendant=int(row["paid_attendant"]),
            reseeds=int(row["reseeds"]),
            voided=f(row["voided"]),
            hits=int(row["hits"]),
            initial_seed=int(row["initial_seed"]),
            reserve_rate=f(row["reserve_rate"]),
            reserve=f(row["reserve"]),
            reserve_moved=f(row["reserve_moved"]),
            fixed_hits=int(row["fixed_hits"]),
        )

    def to_row(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "seed_cents": self.seed_cents,
            "rate": str(self.rate),
            "value": str(self.value),
            "increments": str(self.increments),
            "increment_count": self.increment_count,
            "paid_table": self.paid_table,
            "paid_attendant": self.paid_attendant,
            "reseeds": self.reseeds,
            "voided": str(self.voided),
            "hits": self.hits,
            "initial_seed": self.initial_seed,
            "reserve_rate": str(self.reserve_rate),
            "reserve": str(self.reserve),
            "reserve_moved": str(self.reserve_moved),
            "fixed_hits": self.fixed_hits,
        }


Meters = Mapping[str, Meter]


def _frac(x: Any, what: str) -> Fraction:
    try:
        return Fraction(str(x))
    except (ValueError, ZeroDivisionError):
        raise MeterError(f"{what}: {x!r} is not an exact number") from None


def apply(meters: Meters, kind: str, data: Mapping[str, Any], *, round_no: int = 0, seq: int = 0) -> dict[str, Meter]:
    """Return the meters after one ledger event (events of other kinds change nothing)."""
    if not kind.startswith("meter."):
        return dict(meters)
    out = dict(meters)
    level = data.get("level")
    if kind == Kind.METER_INIT:
        _init(out, level, data)
        return out
    if not isinstance(level, str) or level not in out:
        raise MeterError(f"{kind} for unknown meter level {level!r}")
    step = _STEPS.get(kind)
    if step is None:
        raise MeterError(f"unknown meter event {kind!r}")
    out[level] = step(out[level], level, data)
    return out


def _init(out: dict[str, Meter], level: Any, data: Mapping[str, Any]) -> None:
    if not isinstance(level, str):
        raise MeterError(f"meter.init without a level name ({level!r})")
    if level in out:
        raise MeterError(f"meter {level!r} initialised twice")
    seed = int(data["seed"])
    out[level] = Meter(
        level,
        seed,
        _frac(data["rate"], "rate"),
        Fraction(seed),
        initial_seed=seed,
        reserve_rate=_frac(data.get("reserve_rate", 0), "reserve_rate"),
    )


def _contribution(data: Mapping[str, Any]) -> tuple[Fraction, Fraction]:
    """A wager's exact contribution to the meter and to the reserve."""
    wager = int(data["wager"])
    return wager * _frac(data["rate"], "rate"), wager * _frac(data.get("reserve_rate", 0), "reserve_rate")


def _increment(m: Meter, level: str, data: Mapping[str, Any]) -> Meter:
    c, r = _contribution(data)
    if c < 0 or r < 0:
        raise MeterError("negative increment")
    return replace(
        m,
        value=m.value + c,
        increments=m.increments + c,
        increment_count=m.increment_count + 1,
        reserve=m.reserve + r,
    )


def _payout(m: Meter, level: str, data: Mapping[str, Any]) -> Meter:
    cents = int(data["cents"])
    if cents < 0 or cents > m.cents:
        raise MeterError(f"payout of {cents} cents from meter {level!r} showing {m.cents}")
    return replace(m, value=m.value - cents, paid_attendant=m.paid_attendant + cents, hits=m.hits + 1)


def _fixed_paid(m: Meter, level: str, data: Mapping[str, Any]) -> Meter:
    cents = int(data["cents"])
    if cents < 0:
        raise MeterError("negative fixed pay")
    return replace(m, paid_table=m.paid_table + cents, fixed_hits=m.fixed_hits + 1)


def _reseed(m: Meter, level: str, data: Mapping[str, Any]) -> Meter:
    cents = int(data["cents"])
    if cents < 0:
        raise MeterError("negative reseed")
    moved = m.reserve
    return replace(
        m,
        value=m.value + cents + moved,
        reseeds=m.reseeds + cents,
        reserve=Fraction(0),
        reserve_moved=m.reserve_moved + moved,
    )


def _void(m: Meter, level: str, data: Mapping[str, Any]) -> Meter:
    c, r = _contribution(data)
    if c > m.value or r > m.reserve:
        raise MeterError(f"void of {c} from meter {level!r} holding {m.value}")
    return replace(m, value=m.value - c, voided=m.voided + c, reserve=m.reserve - r)


def _adjust(m: Meter, level: str, data: Mapping[str, Any]) -> Meter:
    return replace(
        m,
        rate=_frac(data.get("rate", m.rate), "rate"),
        seed_cents=int(data.get("seed", m.seed_cents)),
        reserve_rate=_frac(data.get("reserve_rate", m.reserve_rate), "reserve_rate"),
    )


#: a meter event of a known level: the meter after it
_STEPS: dict[str, Callable[[Meter, str, Mapping[str, Any]], Meter]] = {
    Kind.METER_INCREMENT: _increment,
    Kind.METER_PAYOUT: _payout,
    Kind.METER_FIXED_PAID: _fixed_paid,
    Kind.METER_RESEED: _reseed,
    Kind.METER_VOID: _void,
    Kind.METER_ADJUST: _adjust,
}


def increment_for(wager_cents: int, rate: Fraction) -> Fraction:
    return wager_cents * rate


def percent_payout(m: Meter, fraction: Fraction) -> int:
    """Cents paid for a percentage-of-meter hit, from the meter *as it now stands*
    (§ 670a.12(d)(3)); the fraction of a cent stays in the meter (never dropped)."""
    if not 0 < fraction <= 1:
        raise MeterError(f"meter fraction {fraction} out of range")
    amt = fraction * m.cents
    return amt.numerator // amt.denominator


def meter_lines(level: str, m: Meter) -> list[str]:
    """A meter in full, in the words every output uses (``tablectl meters``, the console's
    ``meters``, the accounting report): meter hits are the percentage-of-meter pays an
    attendant makes, fixed pays the ones the table makes from its inventory."""
    reserve = (
        f"  reserve rate {format_rate(m.reserve_rate)}, hidden reserve {format_exact(m.reserve)}"
        if m.reserve_rate or m.reserve
        else ""
    )
    remainder = f"{m.remainder} of a cent" if m.remainder else "none"
    return [
        f"{level}: {format_exact(m.value)}  (the sign shows {format_cents(m.cents)}; hidden remainder {remainder})",
        f"  seed/reset {format_cents(m.seed_cents)}  increment rate {format_rate(m.rate)}{reserve}",
        f"  contributions: {plural(m.increment_count, 'wager')}, {format_exact(m.increments)}"
        f"  reseeds {format_cents(m.reseeds)}  voided {format_exact(m.voided)}",
        f"  meter hits {m.hits} (paid by an attendant {format_cents(m.paid_attendant)})  fixed pays {m.fixed_hits}"
        f" (paid by the table {format_cents(m.paid_table)})  cumulative paid {format_cents(m.paid_total)}",
    ]
