"""Money in words: integer cents (or exact fractions of a cent) as every output prints them,
and counts that read right.  Pure, no I/O; the lowest layer (the ledger, the table, the
reports and the tools all print money through it)."""

from __future__ import annotations

from fractions import Fraction


def format_cents(cents: int | Fraction) -> str:
    """Dollars with thousands separators, whole cents (a fraction of a cent is cut: see
    :func:`format_exact`): ``$5,002.94``."""
    c = int(cents) if isinstance(cents, int) else cents.numerator // cents.denominator
    sign = "-" if c < 0 else ""
    c = abs(c)
    return f"{sign}${c // 100:,}.{c % 100:02d}"


def format_exact(cents: int | Fraction) -> str:
    """Dollars, and the fraction of a cent below them, exactly: ``$1,000.33 + 1/3 of a cent``."""
    v = Fraction(cents)
    whole = v.numerator // v.denominator
    rest = v - whole
    return format_cents(whole) + (f" + {rest} of a cent" if rest else "")


def format_rate(rate: Fraction) -> str:
    """A rate as a percentage, exactly: ``21/100`` -> ``21%``, ``3/200`` -> ``1.5%``, ``1/3`` -> ``33 1/3%``."""
    q = Fraction(rate) * 100
    if q.denominator == 1:
        return f"{q.numerator}%"
    d = q.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d == 1:  # a finite decimal
        digits = 0
        while (q * 10**digits).denominator != 1:
            digits += 1
        return f"{q.numerator / q.denominator:.{digits}f}%" if digits <= 15 else f"{q}%"
    whole = q.numerator // q.denominator
    return f"{whole} {q - whole}%" if whole else f"{q}%"


def plural(n: int, noun: str) -> str:
    """A count that reads right: ``1 wager``, ``2 wagers``."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
