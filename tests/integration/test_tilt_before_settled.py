"""A device's fault that lands between the settlement's durable commit and its callback (a sign
whose write timed out while the round's results were being written): the table stays in the tilt,
never an internal error, and the technician's clear completes the round once — the results were
durable before the fault (§ 670a.13(n): the table stops until the fault is cleared)."""

from __future__ import annotations

from typing import Any

from controller.core.records import Kind
from tests.integration.harness import Harness, records
from tests.integration.test_table_progressive import play_to_settlement


def _tilt_after_settled_commit(h: Harness) -> None:
    """The writer commits round.settled and queues its callback; the sign's fault comes next."""
    submit = h.writer.submit

    def submit_then_fault(recs: Any, done: Any = None, *, hand_over: bool = False) -> None:
        recs = list(recs)
        submit(recs, done, hand_over=hand_over)
        if any(r.kind == Kind.ROUND_SETTLED for r in recs):
            setattr(h.writer, "submit", submit)  # noqa: B010 - once
            h.table.raise_tilt("sign", "sign link fault: write failed for type 0x11: Write timeout")

    setattr(h.writer, "submit", submit_then_fault)  # noqa: B010 - the harness's writer, wrapped for this test


def test_a_tilt_between_the_settled_commit_and_its_callback_stays_a_tilt(tmp_path):
    h = Harness(tmp_path / "l.db")
    _tilt_after_settled_commit(h)
    play_to_settlement(h, (3,))
    h.pump()
    assert h.state == "tilt"
    assert set(h.table.tilts) == {"sign"}  # the device's fault only: no internal error beside it
    assert records(h, "round.settled") and not records(h, "round.complete")
    h.post("command", "console", cmd="clear", reason="sign answers again", by="tech1")
    assert h.state == "open_for_wagers"
    done = records(h, "round.complete")
    assert len(done) == 1 and done[0].data.get("after_tilt") is True


def test_a_hit_settled_before_the_tilt_goes_to_the_floorperson_once_cleared(tmp_path):
    from tests.integration.test_table_progressive import ROYAL

    h = Harness(tmp_path / "l.db")
    _tilt_after_settled_commit(h)
    play_to_settlement(h, (3,), hands={3: ROYAL})
    h.pump()
    assert h.state == "tilt" and set(h.table.tilts) == {"sign"}
    assert len(records(h, "hit.pending")) == 1
    h.post("command", "console", cmd="clear", reason="sign answers again", by="tech1")
    assert h.state == "floor_validation"  # the hit is never dropped (§ 670a.11(h)(3)(i)(B)(III))
    assert not records(h, "round.complete")
