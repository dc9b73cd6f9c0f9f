"""A linked progressive at the table (§ 688a.2(d) -> § 605a.8, read with
N.J.A.C. 13:69E-1.39B / 9 NYCRR 5321.18): the outbox, the linked meter on the sign, a hit paid
only with the LAP's answer, and the linked wager closed while the link is lost — through the
synchronous harness, the LAP's messages posted as the table's link socket would post them."""

from __future__ import annotations

from typing import Any

from controller.play.linking import LinkedWager
from tests.integration.harness import Harness, profile_doc, records
from tests.integration.test_table_progressive import ROYAL, play_to_settlement


def _linked(h: Harness) -> LinkedWager:
    """The table's linked wager (the test fails here when the profile is not linked)."""
    w = h.table.parts.linked
    assert w is not None, "the table has no linked wager"
    return w


def linked_doc(timeout: int = 3) -> dict[str, Any]:
    d = profile_doc()
    d["progressive"] = {**d["progressive"], "linked": "pit1", "link_timeout": timeout}
    return d


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def linked(tmp_path, name: str = "l.db") -> tuple[Harness, Clock]:
    h = Harness(tmp_path / name, linked_doc())
    clock = Clock()
    assert h.table.lap is not None
    h.lap.now = clock
    return h, clock


def lap(h: Harness, **msg: Any) -> None:
    h.post("lap", "uplink", **msg)


def heartbeat(h: Harness, cents: int = 1_234_567) -> None:
    lap(h, t="link", up=True)
    lap(h, t="hb", state="running", meters={"primary": cents})


def bring_up(h: Harness, cents: int = 1_234_567) -> None:
    heartbeat(h, cents)
    lap(h, t="reconciled", seq=h.lap.last_outbox)


def link_states(h: Harness) -> list[tuple[bool, str]]:
    return [(e.data["open"], e.data["reason"]) for e in records(h, "link.state")]


def test_closed_until_the_lap_is_heard_sensors_reject_lights_off(tmp_path):
    h, _ = linked(tmp_path)
    assert h.state == "open_for_wagers" and not h.lap.open
    assert link_states(h) == [(False, "no heartbeat from the LAP yet")]  # recorded at start-up
    assert [c for c in h.sign.calls if c[0] == "message"][-1] == ("message", ("LINKED PROGRESSIVE CLOSED",))
    h.shuffled()
    h.edge("bet.progressive.2", True)
    assert h.lights.mode("light.progressive.2") == "off"
    assert [(e.data["seat"], e.data["reason"]) for e in records(h, "wager.rejected")] == [
        (2, "linked progressive closed")
    ]
    h.press("lockout")
    assert h.rnd.accepted == {}  # nothing accepted on a closed linked wager


def test_opens_with_heartbeat_and_reconciliation_and_sign_shows_the_linked_meter(tmp_path):
    h, _ = linked(tmp_path)
    heartbeat(h)
    assert h.lap.open  # nothing written yet: nothing to reconcile
    bring_up(h)
    assert h.lap.open
    assert link_states(h)[-1] == (True, "link reconciled")
    assert ("show_meters", ([(1, 1_234_567)],)) in h.sign.calls
    assert h.table.status["link"]["open"]


def test_contributions_are_link_records_in_the_ledger_first(tmp_path):
    h, _ = linked(tmp_path)
    bring_up(h)
    play_to_settlement(h, (1, 4))
    contrib = records(h, "link.contribution")
    assert [(e.data["seat"], e.data["wager"], e.data["level"]) for e in contrib] == [
        (1, 100, "primary"),
        (4, 100, "primary"),
    ]
    assert records(h, "meter.increment") == [] and records(h, "meter.init") == []
    assert h.lap.last_outbox == contrib[-1].seq
    assert h.lap.open  # records on their way close nothing while the link is up


def test_hit_pending_until_the_lap_answers_then_paid_its_amount(tmp_path):
    h, _ = linked(tmp_path)
    bring_up(h)
    play_to_settlement(h, (3,), hands={3: ROYAL})
    assert h.state == "floor_validation"
    claim = records(h, "link.hit")
    assert [(e.data["seat"], e.data["fraction"]) for e in claim] == [(3, "1/10")]  # the paytable's share
    messages = [c[1][0] for c in h.sign.calls if c[0] == "message"]
    assert messages[-1].startswith("HIT SEAT 3") and messages[-1].endswith("WAITING FOR LINK")
    h.press("key")  # the floorperson validates; the amount is not known yet
    assert h.state == "floor_validation" and records(h, "link.paid") == []
    lap(h, t="hit", seq=claim[0].seq, level="primary", order=7, amount=2_345_678)
    paid = records(h, "link.paid")
    assert [(e.data["hit_seq"], e.data["cents"], e.data["lap_order"]) for e in paid] == [(claim[0].seq, 2_345_678, 7)]
    assert h.state == "open_for_wagers"
    assert [e.data["by"] for e in records(h, "hit.validated")] == ["key switch"]


def test_the_laps_proof_of_the_amount_is_recorded_with_the_payment(tmp_path):
    """A LAP that goes back in time takes a paid hit back at the amount paid only with its own proof
    that it decided it (docs/security.md): the table keeps the proof the LAP answered with."""
    h, _ = linked(tmp_path)
    bring_up(h)
    play_to_settlement(h, (3,), hands={3: ROYAL})
    seq = records(h, "link.hit")[0].seq
    lap(h, t="hit", seq=seq, level="primary", order=1, amount=99_999, proof="ab" * 32)
    h.press("key")
    assert [(e.data["cents"], e.data["proof"]) for e in records(h, "link.paid")] == [(99_999, "ab" * 32)]


def test_answer_before_validation_waits_for_the_floor(tmp_path):
    h, _ = linked(tmp_path)
    bring_up(h)
    play_to_settlement(h, (3,), hands={3: ROYAL})
    seq = records(h, "link.hit")[0].seq
    lap(h, t="hit", seq=seq, level="primary", order=1, amount=99_999)
    assert h.state == "floor_validation" and records(h, "link.paid") == []
    h.press("key")
    assert [e.data["cents"] for e in records(h, "link.paid")] == [99_999]
    assert h.state == "open_for_wagers"


def test_link_lost_within_the_configured_time_closes_the_wager_and_accepted_wagers_stay(tmp_path):
    h, clock = linked(tmp_path)
    bring_up(h)
    h.shuffled()
    h.edge("bet.progressive.1", True)
    h.press("lockout")
    assert h.rnd.accepted == {1: 100}
    clock.t += 2.9
    _linked(h).check()
    assert h.lap.open  # within 3 s: still open
    clock.t += 0.2
    _linked(h).check()  # the reactor's tick does this every 0.25 s
    h.pump()
    assert not h.lap.open
    assert link_states(h)[-1][0] is False and "no heartbeat" in link_states(h)[-1][1]
    assert ("message", ("LINKED PROGRESSIVE CLOSED",)) in h.sign.calls
    h.edge("bet.progressive.1", False)
    h.press("confirm")  # the wager accepted before the loss stays valid: its contribution is in the outbox
    assert [e.data["seat"] for e in records(h, "link.contribution")] == [1]


def test_reopens_only_after_the_lap_reconciled_what_was_written_meanwhile(tmp_path):
    h, clock = linked(tmp_path)
    bring_up(h)
    h.shuffled()
    h.edge("bet.progressive.1", True)
    h.press("lockout")
    clock.t += 5
    _linked(h).check()
    assert not h.lap.open
    h.edge("bet.progressive.1", False)
    h.press("confirm")
    outbox = h.lap.last_outbox
    heartbeat(h)  # the LAP is back ...
    lap(h, t="reconciled", seq=outbox - 1)  # ... but does not hold everything yet
    assert not h.lap.open
    lap(h, t="reconciled", seq=outbox)
    assert h.lap.open and link_states(h)[-1] == (True, "link reconciled")


def test_lap_stopped_closes_it(tmp_path):
    h, _ = linked(tmp_path)
    bring_up(h)
    lap(h, t="state", state="stopped")
    assert not h.lap.open and link_states(h)[-1] == (False, "the link is stopped")


def test_void_after_confirmation_voids_the_contribution_on_the_link(tmp_path):
    h, _ = linked(tmp_path)
    bring_up(h)
    h.shuffled()
    h.edge("bet.progressive.5", True)
    h.press("lockout")
    h.edge("bet.progressive.5", False)
    h.press("confirm")
    h.table.parts.wagering.void("shoe jam")
    assert [(e.data["seat"], e.data["level"]) for e in records(h, "link.void")] == [(5, "primary")]


def test_restart_with_a_pending_linked_hit_is_paid_when_the_answer_comes(tmp_path):
    h, _ = linked(tmp_path)
    bring_up(h)
    play_to_settlement(h, (3,), hands={3: ROYAL})
    seq = records(h, "link.hit")[0].seq
    h.close()
    h2, _ = linked(tmp_path)
    assert h2.state == "floor_validation"
    assert list(h2.rnd.link_hits.values()) == [seq]
    lap(h2, t="hit", seq=seq, level="primary", order=1, amount=1_000_000)
    h2.press("key")
    assert [e.data["cents"] for e in records(h2, "link.paid")] == [1_000_000]
    assert h2.state == "open_for_wagers"


def test_profile_linked_options_are_checked():
    import pytest

    from controller.settings.config import ConfigError, parse_profile

    doc = linked_doc()
    prog = parse_profile(doc, "t.toml").progressive
    assert prog is not None and prog.linked == "pit1"
    doc["progressive"]["link_timeout"] = 0
    with pytest.raises(ConfigError, match=r"t.toml: \[progressive\] link_timeout"):
        parse_profile(doc, "t.toml")
    doc = linked_doc()
    doc["progressive"]["linked"] = ""
    with pytest.raises(ConfigError, match=r"t.toml: \[progressive\] linked"):
        parse_profile(doc, "t.toml")


def test_validation_given_while_waiting_for_the_lap_survives_a_restart(tmp_path):
    # § 670a.11(h)(3)(i)(B)(III): the floorperson validated the hit; the table then restarts
    # before the LAP's answer comes: the validation is a ledger record and is not asked again
    h, _ = linked(tmp_path)
    bring_up(h)
    play_to_settlement(h, (3,), hands={3: ROYAL})
    seq = records(h, "link.hit")[0].seq
    h.press("key")  # validated; the amount is not known yet
    held = records(h, "hit.awaiting_lap")
    assert [(e.data["seat"], e.data["by"], e.data["hit_seq"]) for e in held] == [(3, "key switch", seq)]
    assert h.sign.calls[-1] == ("message", ("HIT SEAT 3 VALIDATED - WAITING FOR LINK",))
    h.press("key")  # a second turn of the key while waiting records nothing more
    assert len(records(h, "hit.awaiting_lap")) == 1
    h.close()
    h2, _ = linked(tmp_path)
    assert h2.state == "floor_validation" and h2.rnd.validated_by == "key switch"
    assert records(h2, "round.recovered")[-1].data == {"pending_hits": 1, "validated_by": "key switch"}
    messages = [c[1][0] for c in h2.sign.calls if c[0] == "message"]
    assert "HIT SEAT 3 VALIDATED - WAITING FOR LINK" in messages
    assert records(h2, "link.paid") == []
    lap(h2, t="hit", seq=seq, level="primary", order=1, amount=1_000_000)  # no key pressed again
    assert [e.data["cents"] for e in records(h2, "link.paid")] == [1_000_000]
    assert [e.data["by"] for e in records(h2, "hit.validated")] == ["key switch"]
    assert h2.state == "open_for_wagers"


def test_a_validation_restored_at_start_up_is_paid_when_the_answer_is_already_there(tmp_path):
    h, _ = linked(tmp_path)
    bring_up(h)
    play_to_settlement(h, (3,), hands={3: ROYAL})
    seq = records(h, "link.hit")[0].seq
    h.press("key")
    h.close()
    h2, _ = linked(tmp_path)
    # the answer is known before the start-up records are durable (the uplink's snapshot)
    h2.lap.answers[seq] = (1, 777_777)
    h2.table.parts.settling.next_hit_or_complete(h2.rnd)
    h2.pump()
    assert [e.data["cents"] for e in records(h2, "link.paid")] == [777_777]
    assert h2.state == "open_for_wagers"


def sign_messages(h: Harness) -> list[str]:
    return [c[1][0] for c in h.sign.calls if c[0] == "message"]


def won(h: Harness, table: str = "T2", asset: str | None = "A-1002", amount: int = 500_021) -> None:
    lap(h, t="won", level="primary", order=1, table=table, asset=asset, amount=amount)


def test_a_hit_on_the_link_shows_the_winning_tables_asset_number_on_the_sign(tmp_path):
    h, _ = linked(tmp_path)
    bring_up(h)
    assert sign_messages(h)[-1] == "PLACE YOUR BETS"
    won(h)  # beside what the line said, never instead of it
    assert sign_messages(h)[-1] == "LINKED HIT TABLE T2 ASSET A-1002 $5,000.21 / PLACE YOUR BETS"
    won(h, asset=None, amount=1_000_000)  # a LAP without the asset number: the table id alone
    assert sign_messages(h)[-1] == "LINKED HIT TABLE T2 $10,000.00 / PLACE YOUR BETS"  # replaces the last one
    h.shuffled()
    h.edge("bet.progressive.1", True)
    h.press("lockout")
    assert sign_messages(h)[-1] == "NO MORE BETS - COUNT 1"
    won(h, table="T3", asset="A-1003", amount=123_456)
    assert sign_messages(h)[-1] == "LINKED HIT TABLE T3 ASSET A-1003 $1,234.56 / NO MORE BETS - COUNT 1"


def test_the_linked_hit_is_shown_beside_a_pending_hits_line_and_a_closed_wager(tmp_path):
    h, clock = linked(tmp_path)
    bring_up(h)
    play_to_settlement(h, (3,), hands={3: ROYAL})
    seq = records(h, "link.hit")[0].seq
    lap(h, t="hit", seq=seq, level="primary", order=1, amount=1_000_000)  # the winner is told first
    won(h, table="T1", asset="A-1001", amount=1_000_000)
    assert sign_messages(h)[-1] == "LINKED HIT TABLE T1 ASSET A-1001 $10,000.00 / HIT SEAT 3 ROYAL-FLUSH - CALL FLOOR"
    h.press("key")
    assert h.state == "open_for_wagers"
    clock.t += 5
    _linked(h).check()
    h.pump()
    assert not h.lap.open
    won(h)
    assert sign_messages(h)[-1] == "LINKED HIT TABLE T2 ASSET A-1002 $5,000.21 / LINKED PROGRESSIVE CLOSED"


def test_a_linked_hit_during_a_tilt_keeps_the_tilt_on_the_sign(tmp_path):
    h, _ = linked(tmp_path)
    bring_up(h)
    h.table.raise_tilt("shoe", "jammed")
    h.pump()
    assert sign_messages(h)[-1] == "TILT - CALL TECHNICIAN"
    won(h)
    assert sign_messages(h)[-1] == "LINKED HIT TABLE T2 ASSET A-1002 $5,000.21 / TILT - CALL TECHNICIAN"
