"""Reliable message link over one serial port (both ends use this class).

Rules (docs/protocols.md, "Link layer"):

* Every frame other than ACK/NAK is acknowledged by an ACK carrying its
  sequence number.  Stop-and-wait: one unacknowledged frame at a time.
* A frame that fails its CRC is answered with NAK — from a bucket of
  ``nak_burst`` NAKs refilled one per ``nak_interval``, so a few damaged frames are
  each NAKed at once while a burst of line noise costs a handful of NAKs, not one
  per damaged start byte.  A missing ACK after ``ack_timeout`` makes the sender
  retransmit the same frame (same sequence number), at most ``retries`` times;
  then the link reports ``fault`` and drops the message.  A NAK makes it
  retransmit at once within the same ACK deadline (so NAKs answering noise do not
  use up the retries), at most ``retries + 1`` times per deadline.  Nothing is
  retried forever.
* The receiver delivers each sequence number once: it keeps a window of the last
  ``REPLAY_WINDOW`` sequence numbers; a frame whose number is in it (a
  retransmission whose ACK was lost, a replayed or stale frame) is ACKed, dropped
  and counted (``stats.duplicates``, ``stats.stale``).  Every session (link start,
  port reopened) opens with HELLO, sequence 0, which resets the window; data
  frames then run 1..255, 1..255, ...
* Protocol errors (noise, damaged frames) are reported to the listener at most
  once per ``error_report_interval``, with the number left out.
* Heartbeat: when nothing has been sent for ``heartbeat`` seconds the link
  sends PING (acknowledged like any frame).  When nothing at all has been
  received for ``lost_after`` seconds the peer is ``lost``; the first frame
  after that reports ``restored``.  The controller latches the fault either
  way (a restored device does not clear a tilt).
* A partial frame that does not complete within ``frame_deadline`` is
  abandoned (the decoder re-scans from its next byte).  We never use
  ``readline()``: pyserial restarts its timeout on every byte.
* If the port itself fails (USB unplugged) the link closes it and reopens it
  with exponential back-off, at most ``reopen_attempts`` times, then reports
  ``gave-up``.

Timing here is *wire time* (real ``time.monotonic``), never the game clock:
see controller/core/clock.py.

Threads: a reader thread and a writer thread per link.  Listener callbacks run
on those threads and must only hand work on (``Reactor.post``).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from drivers.framing import ACK, HELLO, NAK, PING, Frame, FrameDecoder, FrameError, encode_frame


class Port(Protocol):
    """The byte pipe under a link: a pyserial ``Serial`` or a pty master (hil)."""

    def read(self, size: int = 1) -> bytes: ...

    def write(self, data: bytes) -> int | None: ...

    def close(self) -> None: ...


class LinkListener(Protocol):
    def on_message(self, mtype: int, payload: bytes) -> None:
        """A delivered application message (runs on the reader thread: post, don't work)."""

    def on_link_event(self, kind: str, detail: str) -> None:
        """kind: 'up', 'fault', 'lost', 'restored', 'protocol-error', 'disconnected', 'gave-up'."""


@dataclass
class LinkStats:
    sent: int = 0
    received: int = 0
    retransmits: int = 0
    naks_sent: int = 0
    naks_received: int = 0
    crc_errors: int = 0
    naks_suppressed: int = 0  # CRC errors not NAKed: the NAK bucket was empty (rate limit)
    noise_errors: int = 0  # bytes or headers that were not a frame
    duplicates: int = 0  # the frame delivered last, again
    stale: int = 0  # an older sequence number inside the window: replayed or stale
    errors_unreported: int = 0  # protocol errors folded into the next rate-limited report
    faults: int = 0
    reopens: int = 0
    last_rx: float = field(default_factory=time.monotonic)


class LinkClosed(Exception):
    pass


#: sequence numbers behind the last delivered one that are refused as replays or stale
#: (data frames run 1..255: half the cycle behind is old, half ahead is new)
REPLAY_WINDOW = 127


def seq_behind(last: int, seq: int) -> int | None:
    """How far ``seq`` is behind ``last`` in the 1..255 cycle (0 = the same frame), or
    None when it is ahead (new).  HELLO's 0 counts as the place before 1."""
    back = (last - seq) % 255 if seq else None
    if last == 0:  # just after HELLO: every data number is ahead
        return None
    return back if back is not None and back < REPLAY_WINDOW else None


@dataclass(frozen=True, slots=True)
class LinkTiming:
    """A link's times and limits, in seconds of wire time (the rules above)."""

    ack_timeout: float = 0.2
    retries: int = 3
    heartbeat: float | None = 1.0  # None: no PING
    lost_after: float | None = 3.5  # None: the peer is never ``lost``
    frame_deadline: float = 0.1
    reopen_attempts: int = 8
    reopen_backoff: float = 0.25
    nak_interval: float = 0.05
    nak_burst: int = 4
    error_report_interval: float = 1.0


class Link:
    def __init__(
        self,
        name: str,
        open_port: Callable[[], Port],
        listener: LinkListener,
        timing: LinkTiming = LinkTiming(),
    ):
        self.name = name
        self._open_port = open_port
        self.listener = listener
        self.ack_timeout = timing.ack_timeout
        self.retries = timing.retries
        self.heartbeat = timing.heartbeat
        self.lost_after = timing.lost_after
        self.frame_deadline = timing.frame_deadline
        self.reopen_attempts = timing.reopen_attempts
        self.reopen_backoff = timing.reopen_backoff
        self.nak_interval = timing.nak_interval
        self.nak_burst = timing.nak_burst
        self.error_report_interval = timing.error_report_interval
        self._nak_tokens = float(timing.nak_burst)
        self._last_nak = time.monotonic()
        self._last_error_report = -1e9
        self.stats = LinkStats()
        self._port: Port | None = None
        self._port_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._out: queue.Queue[tuple[int, bytes] | None] = queue.Queue()
        self._ack_cv = threading.Condition()
        self._acked: int | None = None
        self._nakked = False
        self._tx_seq = 0
        self._need_hello = True
        self._rx_last: int | None = None
        self._decoder = FrameDecoder()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._last_tx = time.monotonic()
        self._lost = False
        self._port_ok = threading.Event()

    # ------------------------------------------------------------------ control
    def start(self) -> None:
        self._need_hello = True
        self._port = self._open_port()
        self._port_ok.set()
        self.stats.last_rx = time.monotonic()
        for target, suffix in ((self._reader, "rx"), (self._writer, "tx")):
            t = threading.Thread(target=target, name=f"link-{self.name}-{suffix}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        self._stop.set()
        self._out.put(None)
        with self._ack_cv:
            self._ack_cv.notify_all()
        for t in self._threads:
            t.join(timeout=2.0)
        with self._port_lock:
            if self._port is not None:
                try:
                    self._port.close()
                except Exception:
                    pass
                self._port = None

    def send(self, mtype: int, payload: bytes = b"") -> None:
        """Queue an application message for reliable delivery.  Never blocks."""
        if mtype in (ACK, NAK, HELLO, PING):
            raise ValueError(f"type 0x{mtype:02x} is link-level; send() is for application messages only")
        self._out.put((mtype, bytes(payload)))

    def restart(self) -> bool:
        """After ``gave-up`` (or a stop): open the port again and start a new session —
        a technician's clear retries a dead device once, it never retries forever.
        Returns True when the port opened; the first frame the device then sends
        reports ``restored``."""
        if not self._stop.is_set():
            return False
        for t in self._threads:
            t.join(timeout=1.0)
        self._threads = []
        self._stop = threading.Event()
        self._out = queue.Queue()  # messages queued while the device was gone are stale
        self._decoder = FrameDecoder()
        self._rx_last = None
        self._tx_seq = 0
        try:
            self.start()
        except Exception as e:  # noqa: BLE001 - reported to the listener, no retry loop
            self._stop.set()
            self.listener.on_link_event("gave-up", f"restart failed: {e}")
            return False
        self._lost = True  # so the device's first frame reports "restored"
        self.listener.on_link_event("up", "port reopened by a restart")
        return True

    def new_session(self) -> None:
        """The byte pipe under us was replaced (a device re-plugged on its side): start a
        new session, i.e. HELLO before the next frame and a fresh duplicate filter."""
        self._decoder = FrameDecoder()
        self._rx_last = None
        self._need_hello = True

    @property
    def lost(self) -> bool:
        return self._lost

    # ------------------------------------------------------------------ internals
    def _next_seq(self) -> int:
        self._tx_seq = 1 if self._tx_seq >= 255 else self._tx_seq + 1
        return self._tx_seq

    def _raw_write(self, data: bytes) -> None:
        with self._write_lock:
            port = self._port
            if port is None:
                raise LinkClosed(self.name)
            port.write(data)

    def _port_failed(self, exc: BaseException) -> None:
        """Close the port and reopen it with back-off (called on the reader thread)."""
        self._port_ok.clear()
        with self._port_lock:
            try:
                if self._port is not None:
                    self._port.close()
            except Exception:
                pass
            self._port = None
        self.listener.on_link_event("disconnected", f"{type(exc).__name__}: {exc}")
        delay = self.reopen_backoff
        for attempt in range(1, self.reopen_attempts + 1):
            if self._stop.wait(delay):
                return
            try:
                port = self._open_port()
            except Exception as e:  # noqa: BLE001 - reported, bounded
                self.listener.on_link_event("protocol-error", f"reopen attempt {attempt} failed: {e}")
                delay = min(delay * 2, 8.0)
                continue
            with self._port_lock:
                self._port = port
            self.stats.reopens += 1
            self._decoder = FrameDecoder()
            self._rx_last = None
            self.stats.last_rx = time.monotonic()
            self._need_hello = True  # a new session: HELLO goes before anything else
            self._port_ok.set()
            self.listener.on_link_event("up", f"reopened after {attempt} attempt(s)")
            return
        self.listener.on_link_event("gave-up", f"port did not reopen after {self.reopen_attempts} attempts")
        self._stop.set()

    def _reader(self) -> None:
        partial_since: float | None = None
        while not self._stop.is_set():
            port = self._port
            if port is None:
                if self._stop.wait(0.05):
                    return
                continue
            try:
                data = _read_waiting(port)
            except Exception as exc:  # noqa: BLE001 - port failure is reported, then bounded reopen
                if self._stop.is_set():
                    return
                self._port_failed(exc)
                partial_since = None
                continue
            now = time.monotonic()
            items, partial_since = self._decode(data, now, partial_since)
            for item in items:
                if isinstance(item, FrameError):
                    self._on_bad_frame(item)
                else:
                    self._on_frame(item)
            if self.stats.errors_unreported and now - self._last_error_report >= self.error_report_interval:
                self._report_errors(now, "")
            self._check_lost(now)

    def _decode(
        self, data: bytes, now: float, partial_since: float | None
    ) -> tuple[list[Frame | FrameError], float | None]:
        """The frames and errors ``data`` completes; a partial frame pending longer than the frame
        deadline is given up (resync).  With them, since when the partial frame left is pending."""
        items: list[Frame | FrameError] = self._decoder.feed(data) if data else []
        if not self._decoder.pending:
            return items, None
        if partial_since is None:
            return items, now
        if now - partial_since > self.frame_deadline:
            items += self._decoder.resync()
            return items, now if self._decoder.pending else None
        return items, partial_since

    def _check_lost(self, now: float) -> None:
        if self.lost_after is not None and not self._lost and now - self.stats.last_rx > self.lost_after:
            self._lost = True
            self.listener.on_link_event("lost", f"nothing received for {now - self.stats.last_rx:.2f} s")

    def _on_bad_frame(self, err: FrameError) -> None:
        now = time.monotonic()
        if err.kind == "crc":
            self.stats.crc_errors += 1
            refill = (now - self._last_nak) / self.nak_interval if self.nak_interval > 0 else self.nak_burst
            self._nak_tokens = min(float(self.nak_burst), self._nak_tokens + refill)
            self._last_nak = now
            if self._nak_tokens >= 1.0:
                self._nak_tokens -= 1.0
                try:
                    self._raw_write(encode_frame(0, NAK, b""))
                    self.stats.naks_sent += 1
                except Exception:  # noqa: BLE001 - the writer will notice the dead port
                    pass
            else:
                self.stats.naks_suppressed += 1
        else:
            self.stats.noise_errors += 1
        self.stats.errors_unreported += 1
        if now - self._last_error_report >= self.error_report_interval:
            self._report_errors(now, str(err))

    def _report_errors(self, now: float, msg: str) -> None:
        """One ``protocol-error`` report per interval: a burst of noise is one line, not thousands."""
        n = self.stats.errors_unreported
        self.stats.errors_unreported = 0
        self._last_error_report = now
        more = f" ({n - 1} more protocol error(s) in this interval)" if msg and n > 1 else ""
        self.listener.on_link_event("protocol-error", (msg + more) if msg else f"{n} more protocol error(s)")

    def _on_frame(self, f: Frame) -> None:
        self.stats.last_rx = time.monotonic()
        if self._lost:
            self._lost = False
            self.listener.on_link_event("restored", "frames received again")
        if f.type in (ACK, NAK):
            self._on_answer(f)
            return
        try:
            self._raw_write(encode_frame(0, ACK, bytes((f.seq,))))
        except Exception:  # noqa: BLE001
            pass
        if f.type == HELLO:
            self._rx_last = 0
            return
        if not self._is_new(f.seq):
            return
        self._rx_last = f.seq
        self.stats.received += 1
        if f.type == PING:
            return
        self.listener.on_message(f.type, f.payload)

    def _on_answer(self, f: Frame) -> None:
        """An ACK or a NAK of the frame in flight: wakes the writer waiting for it."""
        with self._ack_cv:
            if f.type == ACK:
                self._acked = f.payload[0] if f.payload else None
            else:
                self.stats.naks_received += 1
                self._nakked = True
            self._ack_cv.notify_all()

    def _is_new(self, seq: int) -> bool:
        """Whether a frame numbered ``seq`` is the next one; a duplicate or a stale one is counted."""
        back = seq_behind(self._rx_last, seq) if self._rx_last is not None else None
        if back == 0:
            self.stats.duplicates += 1  # our ACK was lost: ACKed again, not delivered again
            return False
        if back is not None or seq == 0:
            self.stats.stale += 1  # replayed or stale (inside the window): ACKed, dropped, counted
            return False
        return True

    def _writer(self) -> None:
        while not self._stop.is_set():
            timeout = None
            if self.heartbeat is not None:
                timeout = max(0.0, self.heartbeat - (time.monotonic() - self._last_tx))
            try:
                item = self._out.get(timeout=timeout)
            except queue.Empty:
                item = (PING, b"")
            if item is None or self._stop.is_set():
                return
            if not self._port_ok.wait(timeout=5.0):
                self.stats.faults += 1
                self.listener.on_link_event("fault", f"type 0x{item[0]:02x} not sent: port closed")
                continue
            if self._need_hello:
                self._need_hello = False
                self._tx_seq = 0
                if not self._deliver(HELLO, b"", seq=0):
                    self._need_hello = True
                    continue
            self._deliver(*item)

    def _deliver(self, mtype: int, payload: bytes, seq: int | None = None) -> bool:
        if seq is None:
            seq = self._next_seq()
        frame = encode_frame(seq, mtype, payload)
        for attempt in range(self.retries + 1):
            with self._ack_cv:
                self._acked = None
                self._nakked = False
            if not self._send(frame, mtype):
                return False
            if attempt:
                self.stats.retransmits += 1
            answered = self._await_ack(frame, mtype, seq)
            if answered is not None:
                return answered
        self.stats.faults += 1
        self.listener.on_link_event(
            "fault", f"no ACK for type 0x{mtype:02x} seq {seq} after {self.retries + 1} transmissions"
        )
        return False

    def _send(self, frame: bytes, mtype: int) -> bool:
        """Write one frame; a failed write is a fault, reported (the reader handles the reopen)."""
        try:
            self._raw_write(frame)
        except Exception as exc:  # noqa: BLE001 - reported; the reader handles reopen
            self.stats.faults += 1
            self.listener.on_link_event("fault", f"write failed for type 0x{mtype:02x}: {exc}")
            return False
        self._last_tx = time.monotonic()
        return True

    def _await_ack(self, frame: bytes, mtype: int, seq: int) -> bool | None:
        """Wait the ACK timeout for ``seq``'s ACK, resending at once on a NAK: True when ACKed,
        False when stopped or the port failed, None when this transmission went unanswered."""
        deadline = time.monotonic() + self.ack_timeout
        nak_resends = 0
        while True:
            acked, nakked = self._wait_answer(seq, deadline)
            if acked:
                return True
            if self._stop.is_set():
                return False
            if not nakked or nak_resends > self.retries or time.monotonic() >= deadline:
                return None
            # a NAK: resend at once, inside this deadline (noise NAKs do not use up retries)
            nak_resends += 1
            if not self._send(frame, mtype):
                return False
            self.stats.retransmits += 1

    def _wait_answer(self, seq: int, deadline: float) -> tuple[bool, bool]:
        """(ACKed, NAKed) once ``seq`` is ACKed, a NAK comes, the link stops or the deadline passes."""
        with self._ack_cv:
            while self._acked != seq and not self._nakked and not self._stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._ack_cv.wait(left)
            if self._acked == seq:
                self.stats.sent += 1
                return True, False
            nakked, self._nakked = self._nakked, False
            return False, nakked


def _read_waiting(port: Port) -> bytes:
    """What is waiting on ``port``, or one byte blocking at most the port's short timeout:
    pyserial's read(n) would wait the whole timeout for n bytes."""
    if not hasattr(port, "in_waiting"):
        return port.read(4096)  # a pty master or socket returns what is there
    waiting = port.in_waiting
    return port.read(min(waiting, 4096) if waiting else 1)
