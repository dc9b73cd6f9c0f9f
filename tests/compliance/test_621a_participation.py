"""§ 621a.5(d): to play a round against the dealer's hands a player places a Pai Gow Wager; the
optional wagers (Pair Fortunes, the dice wagers) need it."""

from __future__ import annotations

from tests.integration.games.tiles_harness import TilesHarness
from tests.integration.harness import records


def test_621a_5_d_an_optional_wager_without_a_pai_gow_wager_is_refused_at_the_lockout(tmp_path):
    h = TilesHarness(tmp_path / "ledger.sqlite3")
    for bet in ("BET 1 base 10", "BET 1 pair-fortunes 5", "BET 2 pair-fortunes 5", "BET 3 sum 5"):
        assert not h.key(bet).startswith("ERROR"), bet
    h.press("lockout")
    refused = {(e.data["seat"], e.data["spot"]): e.data["reason"] for e in records(h, "wager.rejected")}
    assert set(refused) == {(2, "pair-fortunes"), (3, "sum")}
    assert all("needs a base wager (§ 621a.5(" in why for why in refused.values())
    assert set(h.rnd.wagers) == {(1, "base"), (1, "pair-fortunes")}
    h.close()
