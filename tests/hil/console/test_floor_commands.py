"""The floorperson's console commands over a pty: validate a progressive hit by PIN
(§ 670a.11(h)(3)(i)(B)(III)), order a reshuffle (§ 670a.5(a)), record a new dealer;
each refused, changing nothing, when the table cannot do it now."""

from __future__ import annotations

from tests.conftest import eventually
from tests.hil.console.conftest import Term
from tests.hil.test_round_670a import stacked_deck

W = 30.0


def test_floorperson_reshuffles_then_validates_a_hit_by_pin(console_rig):
    """The console's ``reshuffle`` is the floorperson's order of a reshuffle after any round,
    one command for every game (§ 670a.5(a); Over/Under's § 686a.5(f))."""
    rig, con = console_rig()
    t = Term(con.pty_path)
    try:
        assert "logged in as floorperson" in t.login("floorperson")
        assert t.cmd("validate") == "refused: no progressive hit is waiting for validation"
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], W)
        # the next shuffle is a stacked deck: seat 3 (position 5) receives a royal flush
        rig.shaker.shaker_faults.scripted.append((2, 3, 4, 0))
        rig.shoe.stacked_decks.append(
            stacked_deck(
                [
                    "8c 8d 3c 5d 9h Kd",
                    "2h 3h 4s 6c 9d Jc",
                    "9c Td Jh Qd Kc 3d",
                    "2c 2d 4c 4h 5c 6d",
                    "As Ks Qs Js Ts 4d",
                    "3s 5s 6s 8s 9s Jd",
                    "7c 7d 7h 7s 2s 5h",
                ]
            )
        )
        shuffles = rig.shoe.count("SHUFFLE")
        assert t.cmd("reshuffle") == "reshuffle ordered: the cards are shuffled before the next deal"
        eventually(
            lambda: rig.shoe.count("SHUFFLE") == shuffles + 1 and not rig.shoe.stacked_decks,
            W,
            what="the ordered shuffle",
        )
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], W)
        number = rig.table.status["round"]

        rig.place(3)
        rig.table.wait_for(lambda s: True, W)
        rig.press("lockout")
        rig.table.wait_for(lambda s: s["count_shown"], W)
        assert t.cmd("reshuffle").startswith("refused: a reshuffle is ordered between rounds only")
        assert t.cmd("newdealer").startswith("refused: a new dealer is recorded between rounds only")
        rig.remove(3)
        rig.press("confirm")
        rig.table.wait_for(lambda s: s["state"] == "floor_validation", W)
        assert t.cmd("validate") == "validated: seat 3 royal-flush; paid from the meter as it now stands"
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["round"] == number + 1, W)
        (hit,) = [d for _r, _k, d in rig.ledger_events(kinds=("hit.validated",))]
        assert hit["seat"] == 3 and hit["by"] == "console:floorperson"
        assert t.cmd("newdealer") == "new dealer recorded"
    finally:
        t.close()
    done = [(d["command"], d["outcome"]) for _r, _k, d in rig.ledger_events(kinds=("console.command",))]
    assert done == [
        ("validate", "refused"),
        ("reshuffle", "ok"),
        ("reshuffle", "refused"),
        ("newdealer", "refused"),
        ("validate", "ok"),
        ("newdealer", "ok"),
    ]
    assert [d["by"] for _r, _k, d in rig.ledger_events(kinds=("shoe.reshuffle_ordered", "dealer.changed"))] == [
        "console:floorperson",
        "console:floorperson",
    ]


def test_a_dealer_may_not_validate_or_reshuffle(console_rig):
    """A dealer records a new dealer (Over/Under then burns a card, § 686a.7(c)) but neither
    validates nor reshuffles."""
    rig, con = console_rig()
    t = Term(con.pty_path)
    try:
        t.login("dealer")
        assert t.cmd("validate") == "error: validate needs the floorperson or technician role (logged in as dealer)"
        assert t.cmd("reshuffle").startswith("error: reshuffle needs the floorperson or technician role")
        assert t.cmd("newdealer") == "new dealer recorded"
    finally:
        t.close()
