"""Serial framing (docs/protocols.md): CRC-16/CCITT, encoding, and a decoder that
survives any byte stream (fuzzed with hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.framing import MAX_PAYLOAD, MAX_TYPE, START, Frame, FrameDecoder, FrameError, crc16_ccitt, encode_frame


def test_crc16_ccitt_false_check_value():
    # the standard check value of CRC-16/CCITT-FALSE
    assert crc16_ccitt(b"123456789") == 0x29B1
    assert crc16_ccitt(b"") == 0xFFFF


def test_encode_layout():
    f = encode_frame(7, 0x32, b"\x01\x02")
    assert f[0] == START and f[1] == 2 and f[2] == 7 and f[3] == 0x32 and f[4:6] == b"\x01\x02"
    assert int.from_bytes(f[6:8], "big") == crc16_ccitt(f[1:6])


def test_encode_rejects_oversized_payload_and_bad_numbers():
    with pytest.raises(FrameError):
        encode_frame(0, 1, bytes(MAX_PAYLOAD + 1))
    with pytest.raises(FrameError):
        encode_frame(256, 1)
    with pytest.raises(FrameError):
        encode_frame(0, -1)


def test_decoder_reassembles_split_frames():
    d = FrameDecoder()
    raw = encode_frame(1, 0x30, b"abc") + encode_frame(2, 0x31, b"")
    out = []
    for b in raw:
        out += d.feed(bytes([b]))
    assert out == [Frame(1, 0x30, b"abc"), Frame(2, 0x31, b"")]


def test_corrupted_frame_is_an_error_and_next_frame_recovered():
    good = encode_frame(3, 0x32, b"xyz")
    bad = bytearray(good)
    bad[5] ^= 0x40
    d = FrameDecoder()
    out = d.feed(bytes(bad) + good)
    assert any(isinstance(x, FrameError) and "CRC" in str(x) for x in out)
    assert out[-1] == Frame(3, 0x32, b"xyz")


def test_partial_frame_resync_after_deadline():
    d = FrameDecoder()
    assert d.feed(bytes([START, 200, 1, 2])) == []  # claims 200 bytes that never come
    assert d.pending
    good = encode_frame(9, 0x10, b"")
    out = d.resync() + d.feed(good)
    assert out[-1] == Frame(9, 0x10, b"")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600))
def test_fuzz_any_bytes_yield_frames_or_errors_only(data):
    d = FrameDecoder()
    out = d.feed(data)
    for _ in range(3):  # giving up on partial frames always terminates
        out += d.resync()
    assert all(isinstance(x, (Frame, FrameError)) for x in out)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 255), st.integers(0, MAX_TYPE), st.binary(max_size=MAX_PAYLOAD))
def test_fuzz_valid_frame_recovered_after_garbage(garbage, seq, mtype, payload):
    frame = encode_frame(seq, mtype, payload)
    d = FrameDecoder()
    out = d.feed(garbage + frame)
    # garbage may leave a partial "frame" swallowing ours; the per-frame deadline resyncs
    for _ in range(len(garbage) + 2):
        if any(isinstance(x, Frame) and x == Frame(seq, mtype, payload) for x in out):
            break
        out += d.resync()
    assert Frame(seq, mtype, payload) in out
