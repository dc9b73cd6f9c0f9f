"""`tablectl sim --hit-rate` (hil/luck.py) deals five aces or a royal flush first in a share of the rounds:
the hits come, and each has its payout slip (controller/reports/slip.py)."""

from __future__ import annotations

import io
import json

from controller.books.history import open_readonly
from controller.reports import slip as S


def test_the_sims_ledger_hit_has_its_slip(tmp_path):
    """A ledger of `tablectl sim --hit-rate` (five aces dealt first): every hit has its slip."""

    from hil.simrun import SimSettings, run_sim

    state = tmp_path / "state"
    assert (
        run_sim(
            SimSettings(game="six-card-fortune", rounds=6, seed=3, state_dir=state, hit_rate=1.0), out=io.StringIO()
        )
        == 0
    )
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        hits = conn.execute("SELECT round, data FROM events WHERE kind = 'meter.payout'").fetchall()
        assert hits, "no hit in six rounds dealt five aces first"
        rnd, data = hits[0]
        slip = S.from_ledger(conn, int(rnd), int(json.loads(data)["seat"]))
    finally:
        conn.close()
    assert slip.hand in ("Five Aces", "Royal Flush") and slip.validated_by == "key switch"
    assert slip.meter.before is not None and slip.meter.after is not None and slip.meter.after < slip.meter.before
    assert slip.meter.after == 500000 or slip.hand == "Royal Flush"  # a 100 % hit resets to the seed


def test_a_hit_rate_outside_0_to_1_is_a_usage_error(capsys):
    from controller.cli import main

    for bad in ("1.5", "-0.1"):
        assert main(["sim", "--rounds", "1", "--hit-rate", bad]) == 2
        assert "--hit-rate must be from 0 to 1" in capsys.readouterr().err


def test_only_a_shoe_of_one_53_card_deck_is_loaded():
    import random

    from hil.luck import TOP_HANDS, five_aces_first, maybe_stack

    class Shoe:
        def __init__(self, size: int, decks: int = 0):
            self.deck_size, self.decks = size, decks
            self.stacked_decks: list[list[int]] = []

    class Rig:
        def __init__(self, shoe: Shoe):
            self.shoe = shoe

    rng = random.Random(1)
    poker, tiles, six_decks = Rig(Shoe(53)), Rig(Shoe(32)), Rig(Shoe(312, 6))
    assert sum(maybe_stack(poker, rng, 0.5) for _ in range(200)) in range(70, 131)
    assert not any(maybe_stack(r, rng, 1.0) for r in (tiles, six_decks)) and not tiles.shoe.stacked_decks
    deck = five_aces_first(random.Random(2), TOP_HANDS[1])
    assert len(deck) == len(set(deck)) == 53 and sorted(deck) == list(range(53))
