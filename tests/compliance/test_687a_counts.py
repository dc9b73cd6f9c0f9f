"""DJ Wild Stud Poker's counts at the table: stacks of five (§ 687a.10(b),(c)); a stub count that
shows the 53 cards lets the round play on (§ 687a.10(e)), one that does not voids every hand and
returns every wager (§ 687a.10(f)), as does a player dealt an incorrect number of cards
(§ 687a.13(c))."""

from __future__ import annotations

import pytest

from controller.rules.cards import parse_cards
from tests.integration.games.test_djwild import _harness, _key
from tests.integration.harness import Harness, records

SEAT2, DEALER = "As Ad Ac 5d 6d", "Ks Kd 8c 9h Th"


def _dealt(tmp_path, seat_cards: str, remaining: int) -> Harness:
    h = _harness(tmp_path)
    h.shuffled()
    for text in ("BET 2 ante 5", "BET 2 blind 5"):
        assert not _key(h, text).startswith("ERROR"), text
    h.press("start_game")
    h.press("confirm")
    left = 53
    for i, s in enumerate((seat_cards, DEALER), 1):
        cards = list(parse_cards(s, allow_joker=True))
        left -= len(cards)
        h.post("shoe", "shoe", msg="STACK", stack=i, count=len(cards), remaining=left, cards=cards)
        if records(h, "round.void"):
            return h
    assert h.state == "stub_check"  # the first round's stub is counted (§ 687a.10(d))
    h.post("shoe", "shoe", msg="REMAINING", remaining=remaining, stacks=2)
    return h


def _voided(h: Harness) -> None:
    (void,) = records(h, "round.void")
    assert "misdeal" in void.data["reason"]
    assert records(h, "stub.verified") == [] and records(h, "wager.result") == []
    assert h.state == "open_for_wagers"


def test_687a_10_e_a_right_stub_count_plays_on(tmp_path):
    h = _dealt(tmp_path, SEAT2, 43)  # 53 - two stacks of five
    assert records(h, "round.void") == []
    assert [e.data["remaining"] for e in records(h, "stub.verified")] == [43]
    assert h.state == "raise_or_fold"
    _key(h, "RAISE 2")
    got = [(r.data["wager"], r.data["outcome"]) for r in records(h, "wager.result")]
    assert got == [("ante", "win"), ("blind", "push"), ("raise", "win")]
    h.close()


@pytest.mark.parametrize("remaining", [42, 44])
def test_687a_10_f_a_wrong_stub_count_voids_every_hand(tmp_path, remaining):
    h = _dealt(tmp_path, SEAT2, remaining)
    _voided(h)
    h.close()


@pytest.mark.parametrize("seat_cards", ["As Ad Ac 5d", "As Ad Ac 5d 6d 7d"])
def test_687a_13_c_a_player_dealt_an_incorrect_number_of_cards_voids_every_hand(tmp_path, seat_cards):
    h = _dealt(tmp_path, seat_cards, 43)
    _voided(h)
    h.close()


def test_687a_13_f_a_shoe_that_jams_voids_the_round_at_once(tmp_path):
    """§ 687a.13(f): the shoe jams during the round: void, every wager returned, the cards
    reshuffled — on the jam itself, not when the deal's deadline passes."""
    h = _harness(tmp_path)
    h.shuffled()
    for text in ("BET 2 ante 5", "BET 2 blind 5"):
        _key(h, text)
    h.press("start_game")
    h.press("confirm")
    cards = list(parse_cards(SEAT2))
    h.post("shoe", "shoe", msg="STACK", stack=1, count=5, remaining=48, cards=cards)
    assert records(h, "round.void") == []
    shuffles = len([c for c in h.shoe.calls if c[0] == "shuffle"])
    h.post("shoe", "shoe", msg="JAM", stack=2)
    (void,) = records(h, "round.void")
    assert "jammed" in void.data["reason"]
    assert records(h, "wager.result") == [] and h.state == "open_for_wagers"
    assert len([c for c in h.shoe.calls if c[0] == "shuffle"]) == shuffles + 1
    h.close()
