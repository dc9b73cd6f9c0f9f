"""A round voided because a device timed out is voided once: the shoe stops
dealing (§ 670a.13(m)) -> ``round.void`` and a tilt; the technician's clear later closes
the tilt without a second ``round.void`` for the same round."""

from __future__ import annotations

import controller.play.timers
from tests.integration.harness import Harness, records


def test_a_void_by_a_device_timeout_is_not_voided_again_at_the_clear(tmp_path, monkeypatch):
    monkeypatch.setattr(controller.play.timers, "MIN_REAL_S", 0.0)  # the harness's clock is manual
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    h.edge("bet.progressive.2", True)
    h.press("lockout")
    h.edge("bet.progressive.2", False)
    h.press("confirm")
    h.dice((1, 2, 3))
    assert h.state == "dispensing"
    h.clock.advance(31.0)  # past the 30 s response deadline: no stack from the shoe
    h.pump()
    assert h.state == "tilt"
    voids = records(h, "round.void")
    assert len(voids) == 1 and "shoe stopped dealing" in voids[0].data["reason"]
    returned = len(records(h, "wager.result"))
    h.post("command", "console", cmd="clear", reason="shoe cable reseated", by="tech1")
    assert h.state == "open_for_wagers"
    assert [e.round for e in records(h, "round.void")] == [voids[0].round]
    assert len(records(h, "wager.result")) == returned  # nothing returned twice
    assert records(h, "tilt.cleared")
