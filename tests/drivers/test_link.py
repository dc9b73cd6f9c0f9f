"""The reliable link (drivers/link.py; docs/protocols.md "Link layer"): ACK/NAK,
bounded retransmission, duplicate suppression, heartbeat and device-lost rule."""

from __future__ import annotations

import select
import socket
import threading
import time

from drivers.framing import ACK, FrameDecoder
from drivers.link import Link, LinkTiming


class SockPort:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.drop = None  # fn(bytes) -> bool : drop this outgoing write
        self.corrupt = None  # fn(bytes) -> bytes | None
        self.closed = False

    def read(self, size: int = 1) -> bytes:
        r, _, _ = select.select([self.sock], [], [], 0.01)
        return self.sock.recv(size) if r else b""

    def write(self, data: bytes) -> int:
        if self.drop and self.drop(data):
            return len(data)
        if self.corrupt:
            c = self.corrupt(data)
            if c is not None:
                data = c
        self.sock.sendall(data)
        return len(data)

    def close(self) -> None:
        self.closed = True


class Rx:
    def __init__(self):
        self.msgs: list[tuple[int, bytes]] = []
        self.events: list[tuple[str, str]] = []
        self.cv = threading.Condition()

    def on_message(self, mtype, payload):
        with self.cv:
            self.msgs.append((mtype, payload))
            self.cv.notify_all()

    def on_link_event(self, kind, detail):
        with self.cv:
            self.events.append((kind, detail))
            self.cv.notify_all()

    def wait(self, pred, timeout=3.0):
        with self.cv:
            assert self.cv.wait_for(pred, timeout), (self.msgs, self.events)


def pair(**kw):
    a, b = socket.socketpair()
    pa, pb = SockPort(a), SockPort(b)
    ra, rb = Rx(), Rx()
    la = Link("a", lambda: pa, ra, LinkTiming(**kw))
    lb = Link("b", lambda: pb, rb, LinkTiming(**kw))
    la.start()
    lb.start()
    return la, lb, pa, pb, ra, rb


def test_messages_delivered_once_in_order():
    la, lb, *_, rb = pair(heartbeat=None, lost_after=None)
    try:
        for i in range(20):
            la.send(0x20, bytes([i]))
        rb.wait(lambda: len(rb.msgs) == 20)
        assert [p[0] for _, p in rb.msgs] == list(range(20))
        time.sleep(0.2)
        assert len(rb.msgs) == 20 and la.stats.faults == 0
    finally:
        la.stop(), lb.stop()


def test_lost_ack_causes_retransmit_but_no_duplicate_delivery():
    la, lb, pa, pb, ra, rb = pair(heartbeat=None, lost_after=None, ack_timeout=0.05)
    dropped: list[bytes] = []

    def drop_first_ack(data: bytes) -> bool:
        if not dropped and data[3] == ACK and data[4] == 1:  # the ACK of the first data frame
            dropped.append(data)
            return True
        return False

    pb.drop = drop_first_ack
    try:
        la.send(0x21, b"once")
        rb.wait(lambda: len(rb.msgs) >= 1)
        time.sleep(0.3)
        assert rb.msgs == [(0x21, b"once")]
        assert lb.stats.duplicates == 1 and la.stats.retransmits >= 1
    finally:
        la.stop(), lb.stop()


def test_corrupted_frame_is_nakked_and_retransmitted():
    la, lb, pa, pb, ra, rb = pair(heartbeat=None, lost_after=None, ack_timeout=0.5)
    hits: list[int] = []

    def corrupt_first(data: bytes):
        if not hits and data[3] == 0x22:
            hits.append(1)
            b = bytearray(data)
            b[-1] ^= 0xFF
            return bytes(b)
        return None

    pa.corrupt = corrupt_first
    try:
        t0 = time.monotonic()
        la.send(0x22, b"crc")
        rb.wait(lambda: len(rb.msgs) == 1)
        assert time.monotonic() - t0 < 0.45  # NAK made it faster than the ACK timeout
        assert lb.stats.naks_sent == 1 and la.stats.naks_received == 1
        assert rb.msgs == [(0x22, b"crc")]
    finally:
        la.stop(), lb.stop()


def test_silent_peer_is_a_fault_after_bounded_retries_and_then_lost():
    la, lb, pa, pb, ra, rb = pair(heartbeat=0.1, lost_after=0.5, ack_timeout=0.05, retries=2)
    lb.stop()  # the peer goes silent
    try:
        la.send(0x23, b"x")
        ra.wait(lambda: any(k == "fault" for k, _ in ra.events))
        fault = next(d for k, d in ra.events if k == "fault")
        assert "after 3 transmissions" in fault
        ra.wait(lambda: any(k == "lost" for k, _ in ra.events), timeout=3)
        assert la.lost
    finally:
        la.stop()


def test_heartbeat_keeps_link_alive():
    la, lb, pa, pb, ra, rb = pair(heartbeat=0.05, lost_after=0.4)
    try:
        time.sleep(1.0)
        assert not la.lost and not lb.lost
        assert not [e for e in ra.events + rb.events if e[0] in ("lost", "fault")]
    finally:
        la.stop(), lb.stop()


def test_decoder_used_by_link_is_fresh_per_link():
    assert FrameDecoder().pending == 0
