"""The service holds its state directory's lock from start to stop (
controller/books/statelock.py): a restore is refused while it runs, and a second service on the
same ledger does not start."""

from __future__ import annotations

import pytest

from controller.books.statelock import StateLock, StateLocked, in_use
from controller.daemon.options import StandIns, Trust
from controller.daemon.service import Service


def test_the_service_holds_the_state_dir_while_it_runs(make_rig):
    rig = make_rig().start()
    assert in_use(rig.state_dir)
    with pytest.raises(StateLocked, match=f"tablectl service, table {rig.hw.table_id}"):
        StateLock(rig.state_dir).acquire("restore")
    second = Service(
        rig.hw,
        stand_ins=StandIns(clock=rig.clock, pin_factory=rig.factory),
        trust=Trust(ledger_key=rig.ledger_key),
    )
    with pytest.raises(StateLocked, match="in use"):
        second.start()
    assert second.ledger is None  # refused before the ledger was opened
    second.stop()  # as `tablectl run` does after the refusal: nothing to stop, nothing raised
    assert in_use(rig.state_dir)  # and the running service keeps its lock
    rig.stop()
    assert not in_use(rig.state_dir)  # released at stop
