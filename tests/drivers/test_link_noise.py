"""The link through line noise and replays (docs/protocols.md § 2 "Decoding"
and § 3): a stray start byte costs no frame deadline, NAKs are rate-limited, a burst of
noise such as a real RS-232/USB line sees does not bring the link down, and a replayed
or stale frame is ACKed, dropped and counted (each frame is delivered once)."""

from __future__ import annotations

import random
import threading
import time

import pytest

from drivers.framing import ACK, HELLO, START, Frame, FrameDecoder, encode_frame
from drivers.link import Link, LinkTiming
from tests.drivers.test_link import Rx, SockPort, pair


def line_noise(n: int, seed: int = 13) -> bytes:
    """Noise rich in start bytes and plausible headers (the worst case for a decoder that
    waits for a frame's deadline): a quarter of the bytes are 0xA5, the rest random."""
    rng = random.Random(seed)
    return bytes(START if rng.random() < 0.25 else rng.randrange(256) for _ in range(n))


def test_a_stray_start_byte_does_not_delay_the_next_frame():
    """Before: the frame behind a stray 0xA5 came out only after the 100 ms frame deadline."""
    good = encode_frame(9, 0x31, b"hello")
    d = FrameDecoder()
    assert d.feed(bytes([START]) + good)[-1] == Frame(9, 0x31, b"hello")
    d = FrameDecoder()
    out = d.feed(bytes([START, 40, 1, 0x30, 7, 7]) + good)  # a plausible header, then a real frame
    assert out[-1] == Frame(9, 0x31, b"hello") and d.pending == 0


def test_noise_resynchronises_without_any_deadline():
    """Every frame after any of the noise bursts is decoded in the same feed."""
    for n in (40, 256, 8192):
        for seed in range(5):
            good = encode_frame(5, 0x32, b"stack")
            d = FrameDecoder()
            out = d.feed(line_noise(n, seed) + good)
            assert Frame(5, 0x32, b"stack") in out, (n, seed)


@pytest.mark.parametrize("n", [40, 256, 8192])
def test_link_stays_up_through_a_burst_of_line_noise(n):
    """Messages flow while ``n`` bytes of noise hit the receiver: all are delivered once, in
    order, promptly; no fault, no lost; NAKs stay few.  Before: 40 bytes tilted the link, 256
    gave a 12.8 s blackout, 8 KiB sent 8,051 NAKs."""
    la, lb, pa, pb, ra, rb = pair(heartbeat=0.2, lost_after=1.5, ack_timeout=0.2, retries=3)
    noise = line_noise(n)
    try:
        t0 = time.monotonic()

        def spray() -> None:  # the noise arrives in bursts between and inside the frames
            for i in range(0, len(noise), 64):
                pa.sock.sendall(noise[i : i + 64])
                time.sleep(0.002)

        sprayer = threading.Thread(target=spray)
        sprayer.start()
        for k in range(20):
            la.send(0x21, bytes([k]))
        sprayer.join()
        rb.wait(lambda: len(rb.msgs) == 20, timeout=5.0)
        took = time.monotonic() - t0
        assert rb.msgs == [(0x21, bytes([k])) for k in range(20)]
        assert took < 2.0, took
        time.sleep(0.3)
        bad = [e for e in ra.events + rb.events if e[0] in ("fault", "lost", "gave-up")]
        assert not bad, bad
        # a burst of 4, then one NAK per 50 ms at most, whatever the noise
        assert lb.stats.naks_sent <= lb.nak_burst + 1 + took / lb.nak_interval, lb.stats
        reports = [e for e in rb.events if e[0] == "protocol-error"]
        assert len(reports) <= 2 + took / lb.error_report_interval, len(reports)
    finally:
        la.stop(), lb.stop()


def test_replayed_and_stale_frames_are_acked_dropped_and_counted():
    """Sequence 200, 201, 200, 202, 200, 150: each of 200, 201, 202 is delivered once; the
    three old ones are ACKed (the sender stops resending), dropped and counted.  Before: only a
    back-to-back duplicate was filtered, and 200 and 150 were delivered again."""
    import socket

    a, b = socket.socketpair()
    rx = Rx()
    port = SockPort(b)
    link = Link("b", lambda: port, rx, LinkTiming(heartbeat=None, lost_after=None))
    link.start()
    try:
        for seq in (200, 201, 200, 202, 200, 150):
            a.sendall(encode_frame(seq, 0x31, bytes([seq])))
        rx.wait(lambda: link.stats.stale == 3 and len(rx.msgs) == 3)
        time.sleep(0.1)
        assert rx.msgs == [(0x31, bytes([200])), (0x31, bytes([201])), (0x31, bytes([202]))]
        assert link.stats.stale == 3
        a.settimeout(1.0)
        acks = FrameDecoder().feed(a.recv(4096))
        assert [f.payload[0] for f in acks if isinstance(f, Frame) and f.type == ACK] == [200, 201, 200, 202, 200, 150]
        # a new session (HELLO) opens a fresh window: 1 is new again
        a.sendall(encode_frame(0, HELLO) + encode_frame(1, 0x31, b"\x01"))
        rx.wait(lambda: len(rx.msgs) == 4)
        assert rx.msgs[-1] == (0x31, b"\x01")
    finally:
        link.stop()
