"""The lock-out's path through the table (docs/architecture.md "The path of
one event"): the accepted set goes to the ledger first — the state machine's
transition and the status publish then run while the disk syncs — and nothing is
shown before it is durable (§ 670a.7(c), § 670a.10(a)(2)(ii))."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from controller.books.ledger import Record
from controller.core.reactor import Event
from controller.play.context import Then
from tests.integration.harness import Harness, records


def test_the_lockout_records_are_submitted_before_the_transition_and_shown_only_once_durable(tmp_path):
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    for s in (2, 5):
        h.edge(f"bet.progressive.{s}", True)
    seen: list[dict[str, Any]] = []
    seen_hand_over: list[bool] = []
    submit = h.writer.submit

    def watching(recs: Iterable[Record], done: Then | None = None, *, hand_over: bool = False) -> None:
        recs = list(recs)
        if any(r.kind == "lockout" for r in recs):
            seen.append(
                {
                    "state": h.table.state,
                    "stored": len(records(h, "lockout")),
                    "signs": [a for m, a in h.sign.calls if m == "message"],
                    "lights": {s: h.lights.mode(f"progressive.{s}") for s in (2, 5)},
                }
            )
        seen_hand_over.append(hand_over and any(r.kind == "lockout" for r in recs))
        submit(recs, done)

    lights_before = {s: h.lights.mode(f"progressive.{s}") for s in (2, 5)}
    h.writer.submit = watching  # type: ignore[method-assign, assignment]
    h.press("lockout")
    assert len(seen) == 1 and sum(seen_hand_over) == 1  # the lock-out's commit, handed over
    # submitted before the state machine left open_for_wagers; nothing shown yet
    assert seen[0]["state"] == "open_for_wagers" and seen[0]["stored"] == 0
    assert not any("NO MORE BETS" in str(a) for a in seen[0]["signs"])
    assert seen[0]["lights"] == lights_before
    # then durable, and shown
    assert h.state == "no_more_bets" and len(records(h, "lockout")) == 1
    assert any("NO MORE BETS - COUNT 2" in str(a) for m, a in h.sign.calls if m == "message")
    assert h.table.round is not None and sorted(h.rnd.accepted) == [2, 5]


def test_one_status_publish_per_event_handled(tmp_path):
    """A transition inside an event's handling no longer publishes a snapshot of its own:
    the status is published once, when the event is done (and it shows the new state)."""
    h = Harness(tmp_path / "l.db")
    h.shuffled()
    h.edge("bet.progressive.3", True)
    published: list[str] = []
    board = h.table._status
    publish = board.publish

    def counting() -> None:
        publish()
        published.append(str(board.status["state"]))

    board.publish = counting  # type: ignore[method-assign]
    h.table.handle(Event("input", "lockout", {"active": True}, h.clock.now()))  # the edge alone
    assert published == ["no_more_bets"]
    assert h.table.status["state"] == "no_more_bets"
