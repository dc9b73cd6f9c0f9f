"""``tablectl bench framing``: the serial framing's cost per frame (drivers/framing.py).

Figures: CRC-16/CCITT-FALSE over a largest frame body (253 bytes: LEN SEQ TYPE and a
250-byte payload) through ``binascii.crc_hqx`` (``crc_us_253``), the same through a
table-driven CRC in Python as drivers/framing.py computed it before the table-driven CRC
(``crc_python_table_us_253``) and their ratio (``crc_speedup``); frames encoded and
decoded per second (``encode_frames_per_s``, ``decode_frames_per_s``).
"""

from __future__ import annotations

import argparse
import os
import timeit
from collections.abc import Callable

NAME = "framing"
HELP = "CRC-16 and frame encode/decode cost per frame (drivers/framing.py)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--frames", type=int, default=2000, help="frames per timing run (default 2000)")


def _python_table_crc() -> Callable[[bytes], int]:
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)

    def crc16(data: bytes, crc: int = 0xFFFF) -> int:
        for b in data:
            crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ b) & 0xFF]
        return crc

    return crc16


def _best(fn: Callable[[], object], number: int) -> float:
    """Seconds per call, the best of five runs (the least disturbed by other work)."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def run(args: argparse.Namespace, emit: Callable[[str, object], None]) -> int:
    from drivers.framing import MAX_PAYLOAD, FrameDecoder, crc16_ccitt, encode_frame

    n = max(1, args.frames)
    body = bytes((MAX_PAYLOAD, 7, 0x32)) + os.urandom(MAX_PAYLOAD)
    slow = _python_table_crc()
    if slow(body) != crc16_ccitt(body):
        raise AssertionError("the reference CRC disagrees with drivers.framing.crc16_ccitt")
    fast_s = _best(lambda: crc16_ccitt(body), n * 10)
    slow_s = _best(lambda: slow(body), n)
    emit("crc_us_253", f"{fast_s * 1e6:.3f}")
    emit("crc_python_table_us_253", f"{slow_s * 1e6:.3f}")
    emit("crc_speedup", f"{slow_s / fast_s:.1f}")
    payload = os.urandom(MAX_PAYLOAD)
    enc_s = _best(lambda: encode_frame(7, 0x32, payload), n)
    stream = b"".join(encode_frame(i % 256, 0x32, payload) for i in range(n))
    dec_s = _best(lambda: FrameDecoder().feed(stream), 1)
    emit("encode_frames_per_s", f"{1 / enc_s:.0f}")
    emit("decode_frames_per_s", f"{n / dec_s:.0f}")
    return 0
