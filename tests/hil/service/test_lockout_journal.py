"""The lock-out's count is shown once the accepted set is durable in the lock-out journal
(controller/books/lockjournal.py); the ledger's copy follows.  Power lost between the two:
at the next start the journal's records go into the ledger (once), and the interrupted round is
voided with exactly the wagers the count showed returned (§ 670a.13)."""

from __future__ import annotations

from typing import Any

from hil.rig import Rig


def _placed_and_locked_out(rig: Rig, seats: tuple[int, ...]) -> dict[str, Any]:
    rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], 30)
    for s in seats:
        rig.place(s)
    rig.clock.sleep(0.2)
    rig.press("lockout")
    return dict(rig.table.wait_for(lambda s: s["count_shown"], 30))


def test_power_lost_after_the_count_was_shown_but_before_the_ledger_had_it(tmp_path):
    from controller.core.log import configure

    configure(level="critical", json=True)
    rig = Rig(tmp_path, seed=3, speed=50.0)
    rig.start()
    try:
        writer = rig.service.writer
        assert writer is not None
        submit = writer.submit
        lost: list[Any] = []

        def power_lost_from_the_lockout_on(records: Any, done: Any = None, **kw: Any) -> None:
            records = list(records)
            if lost or any(r.kind == "lockout" for r in records):
                lost.append(records)  # never reaches the disk
                return
            submit(records, done, **kw)

        writer.submit = power_lost_from_the_lockout_on  # type: ignore[method-assign]
        st = _placed_and_locked_out(rig, (2, 5))
        number = st["round"]
        assert lost, "the lock-out's records were submitted to the ledger"
        shown = sorted((r.data["seat"], r.data["spot"], r.data["cents"]) for r in lost[0] if r.kind == "wager.accepted")
        assert len(shown) == 2 and len(st["accepted"]) == 2
    finally:
        rig.stop()
    assert not [k for rnd, k, _d in rig.ledger_events() if rnd == number and k == "lockout"]  # only the journal has it

    rig2 = Rig(tmp_path, seed=4, speed=50.0)
    rig2.start()
    try:
        rig2.table.wait_for(lambda s: s["state"] == "open_for_wagers", 30)
    finally:
        rig2.stop()
    evs = [(k, d) for rnd, k, d in rig2.ledger_events() if rnd == number]
    kinds = [k for k, _d in evs]
    assert kinds.count("lockout") == 1 and kinds.count("lockout.recovered") == 1
    assert sorted((d["seat"], d["spot"], d["cents"]) for k, d in evs if k == "wager.accepted") == shown
    assert "round.void" in kinds  # power lost in the round: voided at start-up, every wager returned
    returned = sorted((d["seat"], d["cents"]) for k, d in evs if k == "wager.returned")
    assert returned == sorted((seat, cents) for seat, _spot, cents in shown)

    rig3 = Rig(tmp_path, seed=5, speed=50.0)  # and a further start adds nothing
    rig3.start()
    try:
        rig3.table.wait_for(lambda s: s["state"] == "open_for_wagers", 30)
    finally:
        rig3.stop()
    assert [k for _r, k, _d in rig3.ledger_events()].count("lockout.recovered") == 1


def test_the_count_waits_for_the_ledger_when_the_journal_cannot_be_written(tmp_path):
    """A failing disk: the journal's write fails, the count is shown only once the ledger has
    the records, and the fault latches a tilt."""
    from controller.core.log import configure

    configure(level="critical", json=True)
    rig = Rig(tmp_path, seed=3, speed=50.0)
    rig.start()
    try:
        journal = rig.service.ledger_stack.journal
        assert journal is not None

        def failing(_block: bytes) -> None:
            raise OSError(5, "Input/output error")

        journal.write = failing  # type: ignore[method-assign, assignment]
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], 30)
        rig.place(3)
        rig.clock.sleep(0.2)
        rig.press("lockout")
        st = rig.table.wait_for(lambda s: s["state"] == "tilt", 30)
        assert "lock-out journal could not be written" in str(st["tilts"])
    finally:
        rig.stop()
    kinds = [k for _r, k, _d in rig.ledger_events()]
    assert "lockout" in kinds and "wager.accepted" in kinds and "tilt.raised" in kinds
