"""§ 670a.13(h), (k): a player or the dealer dealt an incorrect number of cards — here the shoe's
count of the stacks it dispensed, or of the cards left, is not what seven stacks of six leave
(§ 670a.10(d), (e)) — voids every hand and returns every wager; the right count plays on."""

from __future__ import annotations

import pytest

from tests.integration.harness import Harness, records, stacks_for


def _dealt(tmp_path, remaining: int, stacks: int) -> Harness:
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    for s in (2, 4):
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    h.press("confirm")
    h.dice((2, 3, 4))
    for i, cards in enumerate(stacks_for((2 + 3 + 4 - 1) % 7 + 1, {}), 1):
        h.post("shoe", "shoe", msg="STACK", stack=i, count=6, remaining=53 - 6 * i, cards=list(cards))
    h.post("shoe", "shoe", msg="REMAINING", remaining=remaining, stacks=stacks)
    return h


def test_670a_13_h_the_right_count_plays_on(tmp_path):
    h = _dealt(tmp_path, 11, 7)
    assert records(h, "round.void") == []
    assert [e.data["remaining"] for e in records(h, "stub.verified")] == [11]
    settled = {(e.data["seat"], e.data["wager"]) for e in records(h, "wager.result")}
    assert {(2, "progressive"), (4, "progressive")} <= settled
    h.close()


@pytest.mark.parametrize(("remaining", "stacks"), [(12, 7), (10, 7), (11, 6)])
def test_670a_13_h_a_wrong_count_voids_every_hand(tmp_path, remaining, stacks):
    h = _dealt(tmp_path, remaining, stacks)
    (void,) = records(h, "round.void")
    assert "misdeal" in void.data["reason"]
    assert records(h, "stub.verified") == [] and records(h, "wager.result") == []
    assert h.state == "open_for_wagers"
    h.close()
