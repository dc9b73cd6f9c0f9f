"""Fixed vectors for every digest that is stored and checked later: an event's canonical text,
its SHA-256 (schema 1) and MAC (schema 2), a segment row's text, a seal's MAC, and a link
record's message and MAC.  Ledgers, seals and link records already written are verified against
these functions: a change of their bytes is a change of format, never a refactoring.  The
expected values were computed by the code that wrote the existing records."""

from __future__ import annotations

from pathlib import Path

from controller.books import ledger as L
from controller.books import seals as S
from controller.lap import linkauth as A

KEY = bytes(range(32))
TS = "2026-01-02T03:04:05.000006+00:00"
EVENT = L.EventRow(7, TS, "T-1", 42, "bet.placed", '{"amount":25,"seat":"3"}', "ab" * 32)
CANONICAL = (
    b'[7,"2026-01-02T03:04:05.000006+00:00","T-1",42,"bet.placed","{\\"amount\\":25,\\"seat\\":\\"3\\"}",'
    b'"abababababababababababababababababababababababababababababababab"]'
)
HASH = "158c71034d6bf11136ac5a5f21453572813a604eabc1f3c82d8902bf03e86032"
MAC = "d9da5f6ad7bca09a585431cc38cb3d5f760d197c2bcaeaceb25af21a56f145d2"
#: text outside ASCII: escaped in the canonical text, kept as is in a segment's row
WIDE = L.EventRow(8, "ts é", "T😀", 1, "kind", "{}", "0" * 64)
WIDE_CANONICAL = b'[8,"ts \\u00e9","T\\ud83d\\ude00",1,"kind","{}","' + b"0" * 64 + b'"]'
WIDE_HASH = "60a606f51104cf5b746159483b98625061a6a67df540e45696e2d1c39489223a"
WIDE_ROW = '[8,"ts é","T😀",1,"kind","{}","' + "0" * 64 + '","' + "cd" * 32 + '"]\n'


def test_an_events_canonical_text_hash_and_mac() -> None:
    assert L.canonical(EVENT) == CANONICAL
    assert L.event_hash(EVENT) == HASH
    assert L.event_mac(KEY, EVENT) == MAC
    assert L.canonical(WIDE) == WIDE_CANONICAL
    assert L.event_hash(WIDE) == WIDE_HASH


def test_a_ledgers_own_mac_of_an_event(tmp_path: Path) -> None:
    led = L.Ledger(tmp_path / "ledger.db", "T-1", key=KEY, reserve_bytes=0)
    try:
        assert led.event_mac(EVENT) == MAC
    finally:
        led.close()


def test_a_segments_row_text() -> None:
    assert S.row_text(WIDE, "cd" * 32) == WIDE_ROW


SEAL = S.SealBody(3, 4001, 6000, TS, "11" * 32, "22" * 32, '{"primary":{"coin_in":5}}', "33" * 32)
SEAL_MAC = "bb9517c559921f90b693ba333323ed223e700bd318c51c3d4d38e64f086b338f"


def test_a_seals_mac() -> None:
    sealer = S.Sealer(KEY)
    assert sealer.mac(SEAL) == SEAL_MAC
    seal = sealer.make(SEAL)
    assert seal == S.Seal(3, 4001, 6000, TS, "11" * 32, "22" * 32, '{"primary":{"coin_in":5}}', "33" * 32, SEAL_MAC)
    assert sealer.valid(seal) and seal.body == SEAL


LINK_KEY = A.LinkKey("lap_g1", "T-1", 2, KEY)
LINK_DATA = {"amount": "1.25", "b": [1, 2]}


def test_a_link_events_message_and_mac() -> None:
    assert A.event_message(LINK_KEY, 9, "contribution", "primary", TS, LINK_DATA) == (
        b'["event", "lap_g1", "T-1", 9, "contribution", "primary", 2, 1767323045000006, '
        b'{"b": [1, 2], "amount": "1.25"}]'
    )
    assert A.sign_event(LINK_KEY, 9, "contribution", "primary", TS, LINK_DATA) == (
        "64ff29f87df243a2bbff389edeed01770045c9edc25075811b1d4a0ecee1be76"
    )
    assert A.sign_event(LINK_KEY, 9, "paid", "primary", None, {"x": 1}) == (
        "cb8af9afcbfa54b757bc9b8ba201fbc8ca3402c9daed1e9aaabf022da4e49b43"
    )


def test_a_link_batchs_message_and_mac() -> None:
    assert A.batch_message(LINK_KEY, 120, 30, 12, "ab" * 32) == (
        b'["batch", "lap_g1", "T-1", 120, 30, 12, "' + b"ab" * 32 + b'", 2]'
    )
    assert (
        A.sign_batch(LINK_KEY, 120, 30, 12, "ab" * 32)
        == "3841bd797da18dca9a0f0b7edd7a024ffdfbdaba7666a817bc95a1a264a3ceb0"
    )
