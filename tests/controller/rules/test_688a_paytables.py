"""Every paytable printed in § 688a.12 is data in config/paytables/688a.toml."""

from __future__ import annotations

from fractions import Fraction

import pytest

from controller.rules.paytables import all_paytables, get_paytable
from tests.controller.rules._payback import pay_line


def _688a():
    return {n: t for n, t in all_paytables().items() if t.source.endswith("688a.toml")}


def test_688a_12_every_paytable_present():
    names = set(_688a())
    expected = {"Face Up Base", "Face Up Progressive Meter 4", "Face Up Progressive Envy 4"}
    expected |= {f"Ace High {i}" for i in range(1, 6)}
    expected |= {f"Face Up Fortune {i}" for i in range(1, 7)} | {f"Face Up Fortune Envy {i}" for i in range(1, 7)}
    expected |= {f"Face Up Progressive {i}" for i in range(1, 8)}
    assert names == expected
    assert all(t.game == "face-up" and t.section.startswith("§ 688a.12") for t in _688a().values())


@pytest.mark.parametrize(
    "n,pays", [(1, (20, 10, 8)), (2, (40, 15, 5)), (3, (30, 15, 6)), (4, (25, 10, 7)), (5, (40, 12, 5))]
)
def test_688a_12_b_ace_high(n, pays):
    t = get_paytable(f"Ace High {n}")
    got = tuple(pay_line(t, k).ratio for k in ("both-ace-high", "dealer-ace-high-joker", "dealer-ace-high-natural"))
    assert got == pays


def test_688a_12_c_fortune_spot_checks():
    f1, f5 = get_paytable("Face Up Fortune 1"), get_paytable("Face Up Fortune 5")
    assert pay_line(f1, "seven-card-natural-straight-flush").ratio == 5000
    assert pay_line(f1, "three-pair").kind == "push"  # Paytable 1 only
    assert get_paytable("Face Up Fortune 2").payout("three-pair") is None
    assert pay_line(f5, "four-of-a-kind").ratio == 5  # printed "5 to 1"
    assert pay_line(f5, "royal-flush").ratio == 100
    e2 = get_paytable("Face Up Fortune Envy 2")
    assert pay_line(e2, "seven-card-natural-straight-flush").cents == 500_000
    assert pay_line(get_paytable("Face Up Fortune Envy 5"), "royal-flush").cents == 5_500
    for i in range(1, 7):
        t = get_paytable(f"Face Up Fortune {i}")
        assert t.options["envy_paytable"] == f"Face Up Fortune Envy {i}"
        assert pay_line(t, "straight").ratio == 2 and pay_line(t, "three-of-a-kind").ratio == 3


@pytest.mark.parametrize(
    "n,seed,rate,returned,joker",
    [
        (1, "$10,000", "28%", False, "bug"),
        (2, "$10,000", "7%", False, "fully-wild"),
        (3, "$2,000", "29%", False, "bug"),
        (4, "$10,000", "1%", True, "bug"),
        (5, "$5,000", "17%", False, "fully-wild"),
        (6, "$2,000", "17%", False, "fully-wild"),
        (7, "$1,000", "26%", False, "fully-wild"),
    ],
)
def test_688a_12_d_progressive_options(n, seed, rate, returned, joker):
    t = get_paytable(f"Face Up Progressive {n}")
    assert t.options["seed"] == seed and t.options["rate_of_progression"] == rate
    assert t.options["original_wager_returned"] is returned and t.options["joker"] == joker
    assert t.per_wager_cents == (500 if n == 4 else 100)


def test_688a_12_d_paytable_4_columns():
    t, m, e = (get_paytable(f"Face Up Progressive {s}4") for s in ("", "Meter ", "Envy "))
    assert t.options["reserve_rate"] == "1%"
    assert pay_line(t, "straight").cents == 750
    assert pay_line(m, "royal-flush-royal-match").ratio == Fraction(1, 5)
    assert pay_line(e, "royal-flush-royal-match").cents == 375_000
