"""`tablectl sim --hit-rate` (hil/luck.py) deals five aces first in a share of the rounds: the hits come,
and each has its payout slip (controller/reports/slip.py)."""

from __future__ import annotations

import io
import json

from controller.books.history import open_readonly
from controller.reports import slip as S


def test_the_sims_ledger_hit_has_its_slip(tmp_path):
    """A ledger of `tablectl sim --hit-rate` (five aces dealt first): every hit has its slip."""

    from hil.simrun import run_sim

    state = tmp_path / "state"
    assert run_sim(game="six-card-fortune", rounds=6, seed=3, state_dir=state, out=io.StringIO(), hit_rate=1.0) == 0
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        hits = conn.execute("SELECT round, data FROM events WHERE kind = 'meter.payout'").fetchall()
        assert hits, "no hit in six rounds dealt five aces first"
        rnd, data = hits[0]
        slip = S.from_ledger(conn, int(rnd), int(json.loads(data)["seat"]))
    finally:
        conn.close()
    assert slip.hand in ("Five Aces", "Royal Flush") and slip.validated_by == "key switch"
    assert slip.meter_before is not None and slip.meter_after is not None and slip.meter_after < slip.meter_before
    assert slip.meter_after == 500000 or slip.hand == "Royal Flush"  # a 100 % hit resets to the seed
