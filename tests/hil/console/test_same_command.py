"""The console's ``same SEAT SEAT`` over a pty: one player on two adjacent
betting areas (§ 670a.7(f)) recorded in the ledger with the round, on a progressive-only
table where there is no keypad; refused, changing nothing, between rounds, for seats not
adjacent, and where the profile does not permit it."""

from __future__ import annotations

from hil.rig import TableSetup
from tests.hil.console.conftest import Term

W = 30.0


def test_670a_7_f_console_same_records_one_player(console_rig):
    rig, con = console_rig(rig_opts={"setup": TableSetup(profile_overrides={"options": {"adjacent_areas": True}})})
    t = Term(con.pty_path)
    try:
        t.login("floorperson")
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], W)
        assert t.cmd("same 2 3").startswith("refused: the same player is recorded during a round")
        rig.place(2)
        rig.place(3)
        rig.table.wait_for(lambda s: True, W)
        rig.press("lockout")
        rig.table.wait_for(lambda s: s["count_shown"], W)
        number = rig.table.status["round"]
        assert t.cmd("same 2 4").startswith("refused: seat 4 is not playing this round")
        assert t.cmd("same 3 2") == "seats 2 and 3 one player"
        assert t.cmd("same 2 3") == "refused: seat 2 is already one player's second betting area"
        rig.remove(2)
        rig.remove(3)
        rig.press("confirm")
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["round"] == number + 1, W)
    finally:
        t.close()
    recs = [(r, d) for r, _k, d in rig.ledger_events(kinds=("decision",)) if d.get("decision") == "adjacent"]
    assert [(r, d["seats"], d["by"], d["text"]) for r, d in recs] == [
        (number, [2, 3], "console:floorperson", "SAME 3 2")
    ]
    done = [(d["command"], d["outcome"]) for _r, _k, d in rig.ledger_events(kinds=("console.command",))]
    assert done == [("same", "refused"), ("same", "refused"), ("same", "ok"), ("same", "refused")]


def test_670a_7_f_console_same_refused_where_not_permitted(console_rig):
    """The console's ``same`` is one command for every game that permits one player on two
    adjacent areas (§ 659a.7(f), § 687a.7(e), § 688a.7(f) as § 670a.7(f)): two seats, or a usage
    error that changes nothing; each game's own refusal comes from its procedure."""
    rig, con = console_rig()
    t = Term(con.pty_path)
    try:
        t.login("dealer")
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], W)
        rig.place(2)
        rig.place(3)
        rig.table.wait_for(lambda s: True, W)
        rig.press("lockout")
        rig.table.wait_for(lambda s: s["count_shown"], W)
        assert t.cmd("same 2 3") == (
            "refused: this table does not permit wagers on two adjacent betting areas (Sec. 670a.7(f))"
        )
        assert t.cmd("same 2") == "error: usage: same SEAT SEAT"
    finally:
        t.close()
