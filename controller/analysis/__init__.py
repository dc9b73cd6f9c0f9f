"""Exact analysis of wagers and paytables (``tablectl analyze``).

Each game module in this package registers its analyzers with
:func:`analyzer`; :func:`load_all` imports every module here, so adding an
analysis needs no edit anywhere else.  Analyses are *exact*: enumeration or
exact combinatorics, never sampling, and every figure is a ``Fraction`` or an
``int`` until it is printed.

An analyzer is ``fn(paytable: str | None, options: dict[str, str]) -> AnalysisResult``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction


@dataclass(frozen=True)
class AnalysisRow:
    outcome: str  # e.g. "royal-flush", "win", "push"
    count: int  # number of equally likely cases (or weight) with this outcome
    pays: str = ""  # the payout as printed, e.g. "250 to 1"
    #: net result per unit wagered for this outcome (win positive, loss -1)
    net: Fraction = Fraction(0)


@dataclass
class AnalysisResult:
    title: str
    rows: list[AnalysisRow]
    total: int  # total weight (sum of counts) = number of cases
    payback: Fraction | None  # expected return per unit wagered (1 = 100%); None: no wager
    notes: list[str] = field(default_factory=list)
    #: amount wagered per round when it is not 1 unit (e.g. ante + raise); payback is over this
    wagered: Fraction = Fraction(1)

    @property
    def house_edge(self) -> Fraction:
        if self.payback is None:
            raise ValueError(f"{self.title}: no wager, no house edge")
        return 1 - self.payback


Analyzer = Callable[[str | None, dict[str, str]], AnalysisResult]

ANALYZERS: dict[tuple[str, str], Analyzer] = {}
#: default paytable name per (game, wager), where a paytable applies
DEFAULT_PAYTABLE: dict[tuple[str, str], str] = {}


def analyzer(game: str, wager: str, default_paytable: str | None = None) -> Callable[[Analyzer], Analyzer]:
    def deco(fn: Analyzer) -> Analyzer:
        key = (game, wager)
        if key in ANALYZERS and ANALYZERS[key] is not fn:
            raise RuntimeError(f"analyzer for {game}/{wager} registered twice")
        ANALYZERS[key] = fn
        if default_paytable:
            DEFAULT_PAYTABLE[key] = default_paytable
        return fn

    return deco


_LOADED = False


def load_all() -> dict[tuple[str, str], Analyzer]:
    global _LOADED
    if not _LOADED:
        for info in pkgutil.iter_modules(__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__name__}.{info.name}")
        _LOADED = True
    return ANALYZERS


def format_result(res: AnalysisResult) -> str:
    """The printed table; the last line is ``payback: NN.NNNN%``."""
    lines = [res.title]
    w_out = max([len("outcome")] + [len(r.outcome) for r in res.rows])
    w_pay = max([len("pays")] + [len(r.pays) for r in res.rows])
    w_cnt = max([len("count")] + [len(str(r.count)) for r in res.rows])
    lines.append(f"{'outcome':<{w_out}}  {'pays':>{w_pay}}  {'count':>{w_cnt}}  {'probability':>12}  {'return':>10}")
    for r in res.rows:
        p = Fraction(r.count, res.total) if res.total else Fraction(0)
        lines.append(
            f"{r.outcome:<{w_out}}  {r.pays:>{w_pay}}  {r.count:>{w_cnt}}  {float(p):>12.8f}  {float(p * r.net):>10.6f}"
        )
    lines.append(f"total: {res.total}")
    for n in res.notes:
        lines.append(f"note: {n}")
    if res.payback is not None:  # a frequency table (e.g. --deck) analyses no wager
        lines.append(f"house_edge: {float(res.house_edge) * 100:.4f}%")
        lines.append(f"payback: {float(res.payback) * 100:.4f}%")
    return "\n".join(lines)


@dataclass(frozen=True)
class MeterValues:
    """The progressive figures an analysis used, and where each came from (the
    rate, reserve and seed are the casino's Rules Submission where the regulations print
    none; they are never invented)."""

    seed: int | None  # cents
    rate: Fraction | None
    meter: int  # cents: the meter when a percentage-of-meter pay is paid
    note: str


def _money_option(options: dict[str, str], key: str) -> int:
    """``--seed`` or ``--meter``: a positive amount of money, in cents."""
    from controller.rules.paytables import parse_money

    try:
        v = parse_money(options[key])
    except ValueError as e:
        raise ValueError(f"--{key} {options[key]!r}: {e}") from None
    if v <= 0:
        raise ValueError(f"--{key} {options[key]!r}: must be a positive amount")
    return v


def _rate_option(text: str) -> Fraction:
    """``--rate``: a percentage from 0 up to (not including) 100."""
    from controller.rules.paytables import parse_percent

    try:
        r = parse_percent(text)
    except ValueError as e:
        raise ValueError(f"--rate {text!r}: {e}") from None
    if not 0 <= r < 1:
        raise ValueError(f"--rate {text!r}: between 0% and 100%")
    return r


def meter_values(
    options: dict[str, str],
    seed: tuple[int, str] | None = None,
    rate: tuple[Fraction, str] | None = None,
) -> MeterValues:
    """``--seed``, ``--rate``, ``--meter`` (``options``) over the regulation's own figures
    (``(value, source)``, or None where the regulation prints none).  The meter defaults to
    the seed; with neither, a clear error."""
    s, s_src = (_money_option(options, "seed"), "--seed") if "seed" in options else (seed or (None, "none given"))
    r: Fraction | None
    if "rate" in options:
        r, r_src = _rate_option(options["rate"]), "--rate"
    else:
        r, r_src = rate or (None, "none given: the regulation prints none; increments not counted")
    if "meter" in options:
        m, m_src = _money_option(options, "meter"), "--meter"
    elif s is not None:
        m, m_src = s, "the seed"
    else:
        raise ValueError("give --meter (or --seed): the regulation fixes no seed for this progressive")
    parts = [
        f"meter ${m / 100:,.2f} ({m_src})",
        f"seed {'$' + format(s / 100, ',.2f') if s is not None else '-'} ({s_src})",
        f"rate {format(float(r) * 100, 'g') + '%' if r is not None else '-'} ({r_src})",
    ]
    return MeterValues(s, r, m, "values used: " + "; ".join(parts))
