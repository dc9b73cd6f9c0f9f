"""Crash consistency (SPEC § 5): kill the controller with SIGKILL at
random instants — mid-transaction too — 25 times and restart it; nothing lost,
nothing doubled, meters reconciled to the cent."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from bench import crash
from tests.conftest import TEST_KEY


@pytest.mark.slow
@pytest.mark.soak
def test_25_kills_lose_and_double_nothing(tmp_path):
    figures: dict[str, Any] = {}
    args = argparse.Namespace(
        kills=25,
        seed=3,
        max_wait=1.0,
        mix=crash.parse_mix("external=0.5,startup=0.2,commit=0.2,checkpoint=0.1"),
        startup_window=1.0,
        state_dir=tmp_path,
    )
    status = crash.run(args, lambda k, v: figures.__setitem__(k, v))
    assert figures["kills"] == 25 and sum(int(figures[f"kills_{k}"]) for k in crash.KINDS) == 25
    assert int(figures["kills_external"]) > 0 and int(figures["kills_commit"]) > 0
    assert figures["lost"] == 0 and figures["doubled"] == 0
    assert figures["meters_reconcile"] == "yes" and figures["chain_problems"] == 0
    assert figures["witnessed"] > 0 and figures["rounds"] > 0
    assert status == 0


def test_checker_detects_doubles_and_losses(tmp_path):
    """The checker itself must be able to fail: a duplicated acceptance, a payout
    that is witnessed but not in the ledger."""
    import json

    from controller.books.ledger import Ledger, Record
    from controller.daemon.service import LEDGER_FILE

    led = Ledger(tmp_path / LEDGER_FILE, "T", key=TEST_KEY)
    led.append(
        [
            Record("meter.init", 0, {"level": "primary", "seed": 500_000, "rate": "21/100"}),
            Record("round.open", 1, {}),
            Record("lockout", 1, {"count": 1}),
            Record("wager.accepted", 1, {"seat": 2, "spot": "progressive", "cents": 100}),
            Record("wager.accepted", 1, {"seat": 2, "spot": "progressive", "cents": 100}),
            Record("round.complete", 1, {}),
        ]
    )
    led.close()
    w = tmp_path / "witness.jsonl"
    w.write_text(json.dumps({"what": "hit_paid", "round": 1, "seat": 2, "cents": 5, "order": 1}) + "\n")
    res = crash.check(tmp_path, w)
    assert res["doubled"] == 1 and res["lost"] == 1
