"""§ 670a.11(c): after the players have examined their cards, each may place a Double Down Wager
equal to the Six-Card Fortune Pai Gow Poker Wager; the controller takes it at the decision step —
the one wager made after "no more bets" (§ 670a.7(c))."""

from __future__ import annotations

from tests.integration.harness import Harness, profile_doc, stacks_for


def _to_decisions(tmp_path, keyed):
    doc = profile_doc()
    doc["game"]["options"] = {"keyed": keyed}
    h = Harness(tmp_path / "l.db", doc)
    h.shuffled()
    for text in ("BET 2 base 25", "BET 5 base 10"):
        h.post("keypad", "keypad", msg="ENTRY", text=text)
    h.press("lockout")
    h.press("confirm")
    h.dice((2, 3, 4))
    h.deal(stacks_for((2 + 3 + 4 - 1) % 7 + 1, {}))
    return h


def _key(h: Harness, text: str) -> str:
    h.post("keypad", "keypad", msg="ENTRY", text=text)
    return str(h.keypad.calls[-1][1][0])


def test_670a_11_c_double_down_equals_the_wager_once_per_seat(tmp_path):
    h = _to_decisions(tmp_path, ["base", "double-down"])
    assert _key(h, "DD 2") == "SEAT 2 DOUBLE DOWN 25.00"
    assert h.rnd.wagers[(2, "double-down")] == 2500 == h.rnd.wagers[(2, "base")]
    assert "already doubled down" in _key(h, "DD 2")
    assert h.rnd.wagers[(2, "double-down")] == 2500
    assert (5, "double-down") not in h.rnd.wagers
    h.close()


def test_670a_11_c_no_double_down_where_the_table_does_not_offer_it(tmp_path):
    h = _to_decisions(tmp_path, ["base"])
    assert "does not offer the Double Down Wager" in _key(h, "DD 2")
    assert (2, "double-down") not in h.rnd.wagers
    h.close()
