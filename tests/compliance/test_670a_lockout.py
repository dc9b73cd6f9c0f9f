"""§ 670a.2(c)(2): the dealer's lock-out freezes the Progressive Payout Wagers accepted at that
moment.  A lock-out before the shoe reported a shuffled deck still freezes them (the dealer
decides when betting ends), and the table warns that the deck was not ready — only then."""

from __future__ import annotations

from structlog.testing import capture_logs

from tests.integration.harness import Harness, records


def _lock(tmp_path, shuffled: bool) -> tuple[Harness, list[str]]:
    with capture_logs() as logs:
        h = Harness(tmp_path / "l.db")
        if shuffled:
            h.shuffled()
        for s in (1, 3):
            h.edge(f"bet.progressive.{s}", True)
        h.press("lockout")
    return h, [str(e.get("event")) for e in logs]


def test_670a_2_c_lockout_freezes_the_accepted_wagers_and_warns_only_before_a_shuffle(tmp_path):
    h, events = _lock(tmp_path / "a", shuffled=True)
    assert h.state == "no_more_bets" and sorted(h.rnd.accepted) == [1, 3]
    assert "lockout.before_shuffle" not in events
    h.edge("bet.progressive.5", True)  # a chip placed after "no more bets" is not accepted
    assert sorted(h.rnd.accepted) == [1, 3]
    h.close()
    h, events = _lock(tmp_path / "b", shuffled=False)
    assert h.state == "no_more_bets" and sorted(h.rnd.accepted) == [1, 3]
    assert "lockout.before_shuffle" in events
    assert records(h, "round.void") == []
    h.close()
