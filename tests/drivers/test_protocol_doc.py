"""docs/protocols.md matches the code: every example frame encodes to
the bytes shown and decodes back to its fields, and every device's message table lists
exactly the messages of drivers/protocol.py with the same type bytes and fields."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from drivers import framing as F
from drivers import protocol as P

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocols.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```frames\n(.*?)\n(.*?)\n```", TEXT, re.S)
LINK = {"HELLO": F.HELLO, "PING": F.PING, "ACK": F.ACK, "NAK": F.NAK}
TYPES = {"B": "u8", "H": "u16", "I": "u32"}


def _parse(head: str):
    m = re.fullmatch(r"(\w+) (\w+) seq=(\d+) (\{.*\})", head.strip())
    assert m, head
    return m.group(1), m.group(2), int(m.group(3)), yaml.safe_load(m.group(4)) or {}


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def test_the_document_has_examples_for_every_device_and_the_link():
    devices = {_parse(h)[0] for h, _ in BLOCKS}
    assert devices == {"link", "shoe", "shaker", "sign", "keypad"}
    assert len(BLOCKS) >= 15


@pytest.mark.parametrize("head, wire", BLOCKS, ids=[h.split(" {")[0] for h, _ in BLOCKS])
def test_example_frame_encodes_and_decodes(head, wire):
    device, name, seq, fields = _parse(head)
    raw = bytes.fromhex(wire)
    if device == "link":
        mtype = LINK[name]
        payload = bytes([fields["acked_seq"]]) if name == "ACK" else b""
    else:
        mtype, payload = P.encode(device, name, **fields)
    assert F.encode_frame(seq, mtype, payload) == raw
    frames = F.FrameDecoder().feed(raw)
    assert frames == [F.Frame(seq, mtype, payload)]
    if device != "link":
        frame = frames[0]
        assert isinstance(frame, F.Frame)
        got_name, got = P.decode(device, frame.type, frame.payload)
        assert got_name == name
        assert {k: _plain(v) for k, v in got.items()} == fields


def _doc_rows():
    rows = set()
    for m in re.finditer(
        r"^\| (\w+) \| `0x([0-9A-F]{2})` \| `(\w+)` \| (host → device|device → host) \| (.*?) \|$", TEXT, re.M
    ):
        rows.add((m.group(1), int(m.group(2), 16), m.group(3), m.group(4), m.group(5).strip()))
    return rows


def _code_rows():
    rows = set()
    for s in P.messages():
        f = [f"{n}:{TYPES[t]}" for n, t in s.fields]
        if s.tail:
            kind, n = s.tail.split(":")
            f.append({"bytes": f"{n}:u8[]", "text": f"{n}:utf8", "meters": f"{n}:(u8,u32)[]"}[kind])
        rows.add(
            (
                s.device,
                s.type,
                s.name,
                "host → device" if s.direction == "host" else "device → host",
                ", ".join(f) or "—",
            )
        )
    return rows


def test_message_tables_match_drivers_protocol():
    doc, code = _doc_rows(), _code_rows()
    assert doc - code == set(), "documented but not in drivers/protocol.py"
    assert code - doc == set(), "in drivers/protocol.py but not documented"


def test_directions_follow_the_type_ranges():
    for s in P.messages():
        assert (0x10 <= s.type <= 0x2F) == (s.direction == "host"), s
        assert 0x10 <= s.type <= 0x4F


def test_documented_constants_match_the_code():
    assert "CRC-16/CCITT-FALSE" in TEXT and "`0x29B1`" in TEXT
    assert F.crc16_ccitt(b"123456789") == 0x29B1
    assert f"0 … {F.MAX_PAYLOAD}" in TEXT
    assert (P.SHOE_LOADED, P.SHOE_SHUFFLED, P.SHOE_DOOR_OPEN, P.SHOE_JAMMED, P.SHOE_READS_CARDS) == (1, 2, 4, 8, 16)
    assert (P.SHUFFLE_JAM, P.SHUFFLE_STOPPED, P.SHUFFLE_INCOMPLETE) == (1, 2, 3)
    assert (P.NO_ROLL_NOT_FLAT, P.NO_ROLL_DIE_OUT, P.NO_ROLL_SHORT_SHAKE, P.NO_ROLL_LID_OPEN) == (1, 2, 3, 4)
    assert (P.LIGHT_OFF, P.LIGHT_ON, P.LIGHT_BLINK) == (0, 1, 2)
    assert (P.ERR_BAD_MESSAGE, P.ERR_BAD_STATE, P.ERR_HARDWARE, P.ERR_DOOR_OPEN) == (1, 2, 3, 4)
    from drivers.link import Link

    link = Link("x", lambda: None, None)  # type: ignore[arg-type, return-value]  # defaults only; never started
    assert (
        link.ack_timeout,
        link.retries,
        link.heartbeat,
        link.lost_after,
        link.frame_deadline,
        link.reopen_attempts,
        link.reopen_backoff,
    ) == (0.2, 3, 1.0, 3.5, 0.1, 8, 0.25)


def test_shoe_card_counts_are_16_bit_for_a_six_deck_shoe():
    """§ 686a.3(a): a six-deck shoe holds 312 cards — more than a byte; 53-card games unchanged."""
    for name, fields in (
        ("STATUS", {"flags": 3, "remaining": 311, "stacks": 1}),
        ("SHUFFLED", {"cards": 312, "cover": 234}),
        ("STACK", {"stack": 1, "count": 1, "remaining": 311, "cards": [37]}),
        ("REMAINING", {"remaining": 300, "stacks": 9}),
        ("SHUFFLE_FAILED", {"code": 1, "cards": 312}),
        ("COVER", {"stack": 2, "dealt": 1, "remaining": 78}),
    ):
        mtype, payload = P.encode("shoe", name, **fields)
        got = P.decode("shoe", mtype, payload)
        assert got == (name, fields)
    with pytest.raises(P.ProtocolError):
        P.encode("shoe", "SHUFFLED", cards=65_536, cover=0)
    # a 53-card deck shuffled: no cover card
    assert P.decode("shoe", 0x31, bytes([0, 53, 0, 0])) == ("SHUFFLED", {"cards": 53, "cover": P.NO_COVER})


def test_the_shoe_simulator_deals_a_continuous_six_deck_shoe_with_its_cover_card():
    """hil/devices.py ShoeSim: 312 cards (6 x 52, § 686a.3(a)), the cover card at least 1/4 of
    the way in from the bottom (§ 686a.5(d)), COVER when it comes out and dealing goes on
    (§ 686a.7(d)); a 53-card shoe has no cover card."""
    import random
    from collections import Counter

    from controller.core.clock import ScaledClock
    from hil.devices import ShoeSim

    sent: list[tuple[str, dict[str, Any]]] = []
    sim = ShoeSim(ScaledClock(1000.0), random.Random(3), deck_size=312)
    sim._send_now = lambda name, fields: sent.append((name, dict(fields)))  # type: ignore[method-assign]  # capture
    sim.sched.later = lambda _s, fn, *a: fn(*a)  # type: ignore[method-assign]  # no delays
    try:
        assert sim.decks == 6 and Counter(sim.batch()) == Counter({c: 6 for c in range(52)})
        sim.on_SHUFFLE()
        name, f = sent.pop()
        assert name == "SHUFFLED" and f["cards"] == 312 and 1 <= f["cover"] <= 312 - 78
        cover = f["cover"]
        dealt = 0
        while dealt + 3 <= cover + 3:
            sim.on_DISPENSE(1, 3)
            dealt += 3
        names = [n for n, _ in sent]
        assert names.count("COVER") == 1 and names[-1] == "STACK"
        c = next(d for n, d in sent if n == "COVER")
        assert c["remaining"] == 312 - cover
        assert sent[-1][1]["remaining"] == 312 - dealt  # dealing went on
        single = ShoeSim(ScaledClock(1000.0), random.Random(3), deck_size=53)
        single._send_now = lambda name, fields: sent.append((name, dict(fields)))  # type: ignore[method-assign]
        single.sched.later = lambda _s, fn, *a: fn(*a)  # type: ignore[method-assign]
        single.on_SHUFFLE()
        assert sent[-1] == ("SHUFFLED", {"cards": 53, "cover": P.NO_COVER})
        single.sched.stop()
    finally:
        sim.sched.stop()
