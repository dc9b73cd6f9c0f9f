"""A keypad line received twice (a double Enter): an entry answers the prompt that
was on the keypad's display when it was keyed (ENTRY carries that prompt's number,
docs/protocols.md § 4.4); a second entry to a prompt already answered is refused and
recorded (``keypad.rejected``), and changes nothing."""

from __future__ import annotations

from tests.integration.games.test_fortune_asia import _stacks, fa_doc
from tests.integration.games.tiles_harness import TilesHarness
from tests.integration.harness import Harness, records


def double_enter(h: Harness, text: str) -> None:
    """The keypad sends the same line twice, both keyed at the prompt on display, before
    the controller has handled the first (the two ENTRY frames arrive back to back)."""
    shown = h.keypad.prompt_id
    h.reactor.post("keypad", "keypad", {"msg": "ENTRY", "prompt": shown, "text": text})
    h.reactor.post("keypad", "keypad", {"msg": "ENTRY", "prompt": shown, "text": text})
    h.pump()


def _fortune_asia_to_setting_hands(h: Harness) -> None:
    h.shuffled()
    for text in ("BET 1 base 25", "BET 4 base 15", "BET 5 base 30"):
        h.post("keypad", "keypad", msg="ENTRY", text=text)
    h.press("lockout")
    h.press("confirm")
    h.dice((1, 1, 1))
    for i, s in enumerate(_stacks(), 1):
        h.post("shoe", "shoe", msg="STACK", stack=i, count=7, remaining=53 - 7 * i, cards=s)
    h.post("shoe", "shoe", msg="REMAINING", remaining=4, stacks=7)
    assert h.state == "setting_hands"


def test_fortune_asia_double_done_ends_only_the_phase_it_answers(tmp_path):
    """Before: the second DONE also ended the surrender phase and the table tilted with an
    internal error (``MachineError``).  Now it is refused and recorded; the surrender phase
    stays open for the players' answers (§ 659a.11(d))."""
    h = Harness(tmp_path / "l.db", fa_doc())
    _fortune_asia_to_setting_hands(h)
    double_enter(h, "DONE")
    assert h.state == "dealer_sets_surrender"
    assert not h.table.tilts, h.table.tilts
    rejected = [e.data for e in records(h, "keypad.rejected")]
    assert [r["text"] for r in rejected] == ["DONE"]
    assert "already answered" in rejected[0]["error"]
    # the surrender phase still takes its answers, then DONE settles the round
    assert h.keypad.calls[-1][1][0].startswith("DEALER")
    h.post("keypad", "keypad", msg="ENTRY", text="SUR 4")
    assert h.keypad.calls[-1][1][0] == "SEAT 4 SURRENDERS 15.00"
    h.post("keypad", "keypad", msg="ENTRY", text="DONE")
    assert h.state == "open_for_wagers"
    assert not h.table.tilts


def test_tiles_double_done_does_not_skip_the_dice(tmp_path):
    """Before: the second DONE of the bank selection skipped the dice phase and dealing
    failed with a TypeError.  Now the round waits for the shake (§ 621a.6(a)(3))."""
    h = TilesHarness(tmp_path / "l.db")
    h.open_round(["6 base 100", "1 base 50"])
    assert h.state == "bank_selection"
    double_enter(h, "DONE")
    assert h.state == "starting_position"
    assert not h.table.tilts, h.table.tilts
    assert [e.data["text"] for e in records(h, "keypad.rejected")] == ["DONE"]
    assert h.armed_for() == 6


def test_an_entry_keyed_at_an_earlier_step_is_refused(tmp_path):
    """A line keyed at the prompt of an earlier step, once the current step has shown its
    own prompt (the dealer keyed on before the display changed), does not act on the new
    step: ``SUR 4`` keyed while the setting prompt was shown does not surrender seat 4."""
    h = Harness(tmp_path / "l.db", fa_doc())
    _fortune_asia_to_setting_hands(h)
    old = h.keypad.prompt_id
    h.post("keypad", "keypad", msg="ENTRY", text="DONE")
    assert h.state == "dealer_sets_surrender"
    h.post("keypad", "keypad", msg="ENTRY", prompt=old, text="SUR 4")
    rejected = [e.data for e in records(h, "keypad.rejected")]
    assert [r["text"] for r in rejected] == ["SUR 4"]
    assert "earlier prompt" in rejected[0]["error"]
    assert not [e for e in records(h, "decision") if e.data.get("decision") == "surrender"]
    # keyed again at the prompt shown, it is taken
    h.post("keypad", "keypad", msg="ENTRY", text="SUR 4")
    assert h.keypad.calls[-1][1][0] == "SEAT 4 SURRENDERS 15.00"


def test_a_bet_keyed_twice_is_recorded_once(tmp_path):
    h = Harness(tmp_path / "l.db", fa_doc())
    h.shuffled()
    double_enter(h, "BET 1 base 25")
    assert len(records(h, "wager.keyed")) == 1
    assert [e.data["text"] for e in records(h, "keypad.rejected")] == ["BET 1 base 25"]


def test_a_reply_of_the_last_step_is_not_the_new_steps_opening_prompt(tmp_path):
    """The reply to the last step's entry (sent from its records' durable callback) can reach
    the display after the table has moved to the next step.  An entry keyed before that reply
    showed answers the new step, which opened without a prompt of its own: it applies (the
    HIL scenario ou-09 met this race under load).  A step that opens with its own prompt still
    refuses a line keyed before it."""
    h = Harness(tmp_path / "l.db")
    d = h.table.parts.deciding
    shown = h.keypad.prompt("SEAT 3 UNDER-18 10.00")  # the last step's display
    d.state_entered()  # the next step (hand entry) begins
    d._prompt("SEAT 3 UNDER-18 10.00")  # the last step's reply, shown only now
    assert d._refused(shown, "1 9h Kd As") == ""
    # a step that opens with a prompt of its own: a line keyed at the display before it is stale
    d.state_entered()
    before = h.keypad.prompt_id
    h.keypad.prompt("OVER/UNDER SEATS 1,3: ...")
    assert "keyed at an earlier prompt" in d._refused(before, "OVER 1")
    assert d._refused(h.keypad.prompt_id, "OVER 1") == ""
