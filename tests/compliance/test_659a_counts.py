"""§ 659a.10(d): four cards left after seven stacks of seven (§ 659a.10(c)) and the round plays
on; more or fewer, or a position dealt more or fewer than seven cards (a misdeal), and every hand
is void, every wager returned."""

from __future__ import annotations

import pytest

from tests.integration.games.test_fortune_asia import _stacks, fa_doc, key
from tests.integration.harness import Harness, records


def _dealt(tmp_path, remaining: int, short_stack: bool = False) -> Harness:
    h = Harness(tmp_path / "l.db", fa_doc())
    h.shuffled()
    for text in ("BET 1 base 25", "BET 5 base 30"):
        assert key(h, text).startswith("SEAT"), text
    h.press("lockout")
    h.press("confirm")
    h.dice((1, 1, 1))
    for i, cards in enumerate(_stacks(), 1):
        cards = cards[:6] if short_stack and i == 4 else cards
        h.post("shoe", "shoe", msg="STACK", stack=i, count=len(cards), remaining=53 - 7 * i, cards=cards)
        if records(h, "round.void"):
            return h
    h.post("shoe", "shoe", msg="REMAINING", remaining=remaining, stacks=7)
    return h


def test_659a_10_d_four_cards_left_the_round_plays_on(tmp_path):
    h = _dealt(tmp_path, 4)
    assert records(h, "round.void") == []
    assert [e.data["remaining"] for e in records(h, "stub.verified")] == [4]
    assert h.state == "setting_hands"
    h.close()


@pytest.mark.parametrize(("remaining", "short_stack"), [(3, False), (5, False), (4, True)])
def test_659a_10_d_a_wrong_count_or_a_misdeal_voids_every_hand(tmp_path, remaining, short_stack):
    h = _dealt(tmp_path, remaining, short_stack)
    (void,) = records(h, "round.void")
    assert "misdeal" in void.data["reason"]
    assert records(h, "stub.verified") == [] and records(h, "wager.result") == []
    assert h.state == "open_for_wagers"
    h.close()
