"""CRC-16/CCITT-FALSE of the frame format (docs/protocols.md section 2) through the
standard library's ``binascii.crc_hqx``: the same values as the table-driven
implementation it replaced (kept here as the reference), for any data and any
starting value."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.framing import crc16_ccitt, encode_frame


def _reference_table() -> list[int]:
    # the table-driven implementation drivers/framing.py used before, verbatim
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_TABLE = _reference_table()


def reference_crc(data: bytes, crc: int = 0xFFFF) -> int:
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def bitwise_crc(data: bytes, crc: int = 0xFFFF) -> int:
    """The definition, one bit at a time: poly 0x1021, MSB first, no reflection, no final xor."""
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def test_check_value():
    # the catalogued check value of CRC-16/CCITT-FALSE
    assert crc16_ccitt(b"123456789") == 0x29B1
    assert reference_crc(b"123456789") == bitwise_crc(b"123456789") == 0x29B1
    assert crc16_ccitt(b"") == 0xFFFF


def test_known_frames():
    # frames of docs/protocols.md section 5 end in these CRCs
    assert encode_frame(0, 0x02).hex(" ") == "a5 00 00 02 ec de"
    assert encode_frame(5, 0x12, bytes((3, 6))).hex(" ") == "a5 02 05 12 03 06 f1 5c"


@settings(max_examples=500)
@given(st.binary(max_size=300), st.integers(0, 0xFFFF))
def test_same_as_the_table_implementation(data, init):
    assert crc16_ccitt(data, init) == reference_crc(data, init) == bitwise_crc(data, init)
    assert crc16_ccitt(data) == reference_crc(data)


@given(st.binary(max_size=120), st.binary(max_size=120))
def test_incremental(a, b):
    # the running value carries over: one call over a+b equals two chained calls
    assert crc16_ccitt(a + b) == crc16_ccitt(b, crc16_ccitt(a))


def test_every_single_byte_and_bit_flip_detected():
    # a CRC-16 detects every single-bit error: a flipped bit anywhere in a frame body changes it
    body = bytes(range(40))
    crc = crc16_ccitt(body)
    for i in range(len(body)):
        for bit in range(8):
            flipped = bytearray(body)
            flipped[i] ^= 1 << bit
            assert crc16_ccitt(bytes(flipped)) != crc
