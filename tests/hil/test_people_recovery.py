"""After a power loss while a hit waits for the floorperson, the table comes back in
floor_validation (§ 670a.11(h)(3)(i)(B)(III)); the simulated floorperson validates it
and play goes on."""

from __future__ import annotations

import random

from controller.rules.cards import parse_cards
from hil.people import People
from hil.rig import Rig


def test_people_validate_a_recovered_hit_then_play(tmp_path):
    from controller.core.log import configure

    configure(level="critical", json=True)
    royal = list(parse_cards("As Ks Qs Js Ts 4d"))
    deck = royal + [c for c in range(53) if c not in royal]
    rig = Rig(tmp_path, seed=4, speed=50.0)
    rig.shaker.shaker_faults.scripted.append((2, 3, 4, 0))  # start position 2: the first stack is seat 6's
    rig.shoe.stacked_decks.append(deck)
    rig.start()
    try:
        rig.table.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], 30)
        rig.place(6)
        rig.clock.sleep(0.2)
        rig.press("lockout")
        rig.table.wait_for(lambda s: s["count_shown"], 30)
        rig.remove(6)
        rig.press("confirm")
        rig.table.wait_for(lambda s: s["state"] == "floor_validation", 30)
    finally:
        rig.stop()  # power lost while the hit waits
    rig2 = Rig(tmp_path, seed=5, speed=50.0)
    rig2.start()
    try:
        st = rig2.table.wait_for(lambda s: s["state"] in ("floor_validation", "open_for_wagers"), 30)
        assert st["state"] == "floor_validation" and st["pending_hits"] == 1
        people = People(rig2, random.Random(1))
        n = people.play_round()
        assert n == st["round"] + 1
        pays = rig2.ledger_events(kinds=("meter.payout",))
        assert [(d["seat"], d["hand"]) for _s, _k, d in pays] == [(6, "royal-flush")]
    finally:
        rig2.stop()
