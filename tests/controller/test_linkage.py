"""When a linked table's wager is open (controller/play/linked.py): the LAP's records of the table
must agree with its ledger — a batch's totals (``mismatch``, until a later batch reconciles)
and the chain head the LAP recorded (``diverged``, until the uplink finds it again)."""

from __future__ import annotations

from controller.play.linked import Linkage


def running_link() -> tuple[Linkage, list[float]]:
    now = [100.0]
    link = Linkage("pit", 3.0, lambda: now[0])
    link.on_message({"t": "link", "up": True})
    link.on_message({"t": "hb", "state": "running", "meters": {}})
    link.on_message({"t": "reconciled", "seq": 0})
    assert link.change() == (True, "link reconciled")
    return link, now


def test_a_ledger_that_diverged_from_the_laps_record_closes_until_it_agrees_again() -> None:
    link, _ = running_link()
    link.on_message({"t": "diverged", "problem": "the LAP holds this table's ledger up to event 40, ..."})
    assert link.change() == (
        False,
        "the ledger differs from the LAP's record of it: the LAP holds this table's ledger up to event 40, ...",
    )
    link.on_message({"t": "reconciled", "seq": 10})  # a reconciliation does not lift it
    link.on_message({"t": "hb", "state": "running", "meters": {}})
    assert link.change() is None and link.open is False
    link.on_message({"t": "agrees"})
    assert link.change() == (True, "link reconciled")


def test_a_batch_whose_totals_differ_closes_until_a_later_batch_reconciles() -> None:
    link, _ = running_link()
    link.on_message({"t": "mismatch", "problem": "table says 3 events, 300 cents wagered up to seq 9; ..."})
    opened, why = link.should_be()
    assert not opened and why.startswith("the LAP's records of this table differ from its ledger: table says 3")
    assert link.change() is not None and link.open is False
    link.on_message({"t": "reconciled", "seq": 12})
    assert link.change() == (True, "link reconciled")


def test_the_laps_answers_kept_are_bounded_the_newest_kept() -> None:
    """A table that plays for a year: every hit's answer was kept for as long as
    the service ran; the newest ``ANSWERS_KEPT`` are (a hit is paid in its round)."""
    link, _now = running_link()
    for seq in range(1, 3 * Linkage.ANSWERS_KEPT + 1):
        assert link.on_message({"t": "hit", "seq": seq, "order": seq, "amount": 100 * seq}) == "answer"
    assert len(link.answers) == Linkage.ANSWERS_KEPT
    last = 3 * Linkage.ANSWERS_KEPT
    assert link.answers[last] == (last, 100 * last)
    assert 1 not in link.answers and min(link.answers) == last - Linkage.ANSWERS_KEPT + 1
    # an answer repeated (the uplink resent it) is the newest again, not dropped first
    oldest = min(link.answers)
    link.on_message({"t": "hit", "seq": oldest, "order": oldest, "amount": 100 * oldest})
    link.on_message({"t": "hit", "seq": last + 1, "order": last + 1, "amount": 1})
    assert oldest in link.answers and oldest + 1 not in link.answers
