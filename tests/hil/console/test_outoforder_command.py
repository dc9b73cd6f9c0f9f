"""§ 670a.13(n): a device that cannot be used is marked out of order, with the method used
instead, before any other method is used; the console's ``outoforder DEVICE ALTERNATIVE`` does
it once (again is refused, changing nothing) and a malformed line is a usage error."""

from __future__ import annotations

from tests.hil.console.conftest import Term

W = 30.0


def test_670a_13_n_console_marks_a_device_out_of_order_once(console_rig):
    rig, con = console_rig()
    t = Term(con.pty_path)
    try:
        t.login("floorperson")
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers", W)
        assert t.cmd("outoforder shaker").startswith("error: usage: outoforder DEVICE ALTERNATIVE")
        assert "shaker marked out of order; rng used instead (Sec. 670a.13(n))" in t.cmd("outoforder shaker rng")
        assert t.cmd("outoforder shaker rng") == "refused: the shaker is already out of order"
    finally:
        t.close()
    marked = [d for _r, _k, d in rig.ledger_events(kinds=("device.out_of_order",))]
    assert [(d["device"], d["by"]) for d in marked] == [("shaker", "console:floorperson")]
