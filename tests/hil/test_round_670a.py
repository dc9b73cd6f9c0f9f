"""One whole Six-Card Fortune round through the pty-connected simulators and the
mock pins: states visited, lights, sign and the meter's exact value in cents
(§§ 670a.5(i), 670a.10, 670a.11(h)(3), 670a.12(d))."""

from __future__ import annotations

from fractions import Fraction

from controller.rules.cards import parse_cards
from drivers import protocol as P
from drivers.gpio import BLINK_FAST, OFF, ON
from tests.conftest import eventually

W = 30.0  # real seconds before a wait is a hang


def stacked_deck(stacks: list[str]) -> list[int]:
    """53 cards: the given stacks in dispensing order, then every other card."""
    cards = [c for s in stacks for c in parse_cards(s)]
    rest = [c for c in range(53) if c not in cards]
    deck = cards + rest
    assert len(deck) == 53 and len(set(deck)) == 53
    return deck


def test_whole_round_with_royal_flush_hit(make_rig):
    rig = make_rig()
    # dice 2+3+4 = 9 -> position (9-1) % 7 + 1 = 2 = seat 6 (§ 670a.5(i)(1)(iii));
    # stacks go clockwise from there: seat 6, dealer, seat 1, seat 2, seat 3, seat 4, seat 5 (§ 670a.10(c))
    rig.shaker.shaker_faults.scripted.append((2, 3, 4, 0))
    rig.shoe.stacked_decks.append(
        stacked_deck(
            [
                "8c 8d 3c 5d 9h Kd",  # seat 6: pair -> loses
                "2h 3h 4s 6c 9d Jc",  # dealer
                "9c Td Jh Qd Kc 3d",  # seat 1: straight, 3 for 1
                "2c 2d 4c 4h 5c 6d",  # seat 2: no wager
                "As Ks Qs Js Ts 4d",  # seat 3: royal flush, 10% of meter
                "3s 5s 6s 8s 9s Jd",  # seat 4: no wager
                "7c 7d 7h 7s 2s 5h",  # seat 5: four of a kind, 150 for 1
            ]
        )
    )
    rig.start()
    t = rig.table
    st = t.wait_for(lambda s: s["state"] == "open_for_wagers" and s["deck_ready"], W)
    assert st["meter_cents"] == 500_000  # seed $5,000 (§ 670a.12(d)(2))
    number = st["round"]
    events = []
    t.listeners.append(lambda what, data: events.append((what, data)))

    for seat in (1, 3, 5, 6):
        rig.place(seat)
    t.wait_for(lambda s: True, W)
    eventually(
        lambda: [rig.light_mode(s) for s in range(1, 7)] == [ON, OFF, ON, OFF, ON, ON],
        W,
        what="lights following the sensors",
    )

    rig.press("lockout")
    t.wait_for(lambda s: s["count_shown"], W)
    assert rig.sign.wait_message("NO MORE BETS - COUNT 4", W)
    rig.place(2)  # too late: rejected, flashed
    deadline_state = t.wait_for(lambda s: s["state"] == "no_more_bets", W)
    assert deadline_state["accepted"] == {1: 100, 3: 100, 5: 100, 6: 100}
    for seat in (1, 2, 3, 5, 6):  # the dealer collects the chips
        rig.remove(seat)
    eventually(lambda: rig.light_mode(2) == BLINK_FAST, W, what="late chip flashed")
    assert [rig.light_mode(s) for s in (1, 3, 5, 6)] == [ON] * 4
    assert rig.light_mode(4) == OFF

    rig.press("confirm")
    st = t.wait_for(lambda s: s["state"] == "floor_validation", W)
    # 4 accepted $1 wagers x 21% = 84 cents credited at confirmation (§ 670a.12(d)(2))
    assert st["meter_cents"] == 500_084
    eventually(lambda: rig.sign.message_text.startswith("HIT SEAT 3"), W, what="hit message on the sign")
    assert rig.sign.meters[1] == 500_084
    # the appropriate light is illuminated (§ 670a.11(h)(3)(i)(B)(II)): royal flush hand light, seat 3
    assert rig.sign.hand_lights == {2: P.LIGHT_BLINK}
    assert rig.sign.seat_lights[2] == P.LIGHT_ON  # the starting position, position 2
    assert rig.sign.seat_lights[5] == P.LIGHT_BLINK  # seat 3 is position 6 + 2 - 3 = 5
    assert rig.sign.message_text.startswith("HIT SEAT 3 ROYAL-FLUSH")
    assert rig.light_mode(3) == BLINK_FAST

    rig.press("key")  # floorperson validates (§ 670a.11(h)(3)(i)(B)(III))
    st = t.wait_for(lambda s: s["state"] == "open_for_wagers" and s["round"] == number + 1, W)
    # 10% of the meter as it stands when seat 3 is paid: floor(50,008.4) = 50,008 cents (§ 670a.12(d)(3));
    # the 0.4 cent stays in the meter
    assert st["meter_cents"] == 500_084 - 50_008 == 450_076
    m = t.meters["primary"]
    assert m.value == 450_076 and m.paid_attendant == 50_008 and m.hits == 1

    visited = list(t.visited)
    i = len(visited) - 1 - visited[::-1].index("no_more_bets") - 1
    assert visited[i : i + 11] == [
        "open_for_wagers",
        "no_more_bets",
        "starting_position",
        "dispensing",
        "stub_check",
        "setting_hands",
        "settlement",
        "floor_validation",
        "settlement",
        "round_complete",
        "open_for_wagers",
    ]

    done = next(d for w, d in events if w == "round")
    rnd = done["data"]
    assert rnd.dice == (2, 3, 4) and rnd.start == 2
    prog = {r.seat: r for r in rnd.results if r.wager == "progressive"}
    assert prog[6].outcome == "lose" and prog[6].net == -100
    assert prog[5].net == 14_900  # 150 for 1 on $1
    assert prog[1].net == 200  # 3 for 1 on $1
    # 10% of meter: the $1 was collected at lock-out, the meter amount is the whole pay
    assert prog[3].meter_fraction == Fraction(1, 10) and prog[3].net == -100
    # envy (§ 670a.12(d)(4), $1 table): royal flush $50 and four of a kind $5 to every *other* bettor
    envy = sorted((r.seat, r.hand, r.net) for r in rnd.results if r.wager == "progressive-envy")
    assert envy == [
        (1, "four-of-a-kind", 500),
        (1, "royal-flush", 5_000),
        (3, "four-of-a-kind", 500),
        (5, "royal-flush", 5_000),
        (6, "four-of-a-kind", 500),
        (6, "royal-flush", 5_000),
    ]
    assert rnd.payouts == [{"seat": 3, "hand": "royal-flush", "cents": 50_008, "order": 1}]

    # the ledger holds the round and reconciles
    led = rig.service.ledger
    kinds = [e.kind for e in led.events(round_no=number)]
    for k in (
        "round.open",
        "lockout",
        "wager.accepted",
        "wager.rejected",
        "count.confirmed",
        "meter.increment",
        "dice",
        "deal",
        "stub.verified",
        "wager.result",
        "hit.pending",
        "hit.validated",
        "meter.payout",
        "round.complete",
    ):
        assert k in kinds, k
    assert kinds.count("wager.accepted") == 4 and kinds.count("meter.increment") == 4
