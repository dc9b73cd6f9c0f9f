"""The JSON-lines reader both ends of the link socket use (controller/core/jsonlines.py):
partial lines, several lines in one read, garbled lines, over-long lines, end of file, a
socket error, a stop."""

from __future__ import annotations

import socket
import threading
from typing import Any

from controller.core.jsonlines import Line, json_lines


class Script:
    """A connection whose reads return the scripted chunks (or raise the scripted
    exceptions) one by one, then end of file."""

    def __init__(self, *reads: bytes | BaseException, stop: threading.Event | None = None, stop_after: int = -1):
        self.reads = list(reads)
        self.sizes: list[int] = []
        self.stop, self.stop_after = stop, stop_after

    def recv(self, n: int) -> bytes:
        self.sizes.append(n)
        if self.stop is not None and len(self.sizes) == self.stop_after:
            self.stop.set()
        if not self.reads:
            return b""
        r = self.reads.pop(0)
        if isinstance(r, BaseException):
            raise r
        return r


def read(*reads: bytes | BaseException, bufsize: int = 4096) -> tuple[list[Line], Script]:
    conn = Script(*reads)
    return list(json_lines(conn, threading.Event(), bufsize=bufsize)), conn  # type: ignore[arg-type]


def values(lines: list[Line]) -> list[Any]:
    return [line.value for line in lines]


def test_a_line_split_across_reads_is_one_message():
    lines, conn = read(b'{"t": "h', b'b", "meters": {"L1"', b": 12345}}\n")
    assert values(lines) == [{"t": "hb", "meters": {"L1": 12345}}]
    assert lines[0].raw == b'{"t": "hb", "meters": {"L1": 12345}}' and not lines[0].garbled
    assert len(conn.sizes) == 4  # three reads of data, then end of file


def test_two_messages_in_one_read_and_the_start_of_a_third():
    lines, _ = read(b'{"t": "outbox", "seq": 1}\n{"t": "outbox", "seq": 2}\n{"t": "out', b'box", "seq": 3}\n')
    assert values(lines) == [{"t": "outbox", "seq": n} for n in (1, 2, 3)]


def test_a_garbled_line_is_yielded_as_garbled_and_reading_goes_on():
    lines, _ = read(b'{"t": "hb"\n', b"\xff\xfe not utf-8\n", b"\n", b'[1, 2]\n{"t": "state"}\n')
    assert [(line.raw, line.garbled) for line in lines] == [
        (b'{"t": "hb"', True),  # not JSON
        (b"\xff\xfe not utf-8", True),  # not UTF-8
        (b"", True),  # an empty line is not JSON either
        (b"[1, 2]", False),  # JSON, not an object: the caller decides
        (b'{"t": "state"}', False),
    ]
    assert [line.value for line in lines if line.garbled] == [None, None, None]
    assert values(lines)[3:] == [[1, 2], {"t": "state"}]


def test_a_line_longer_than_max_line_is_reported_once_and_dropped_up_to_its_newline():
    """A peer that never ends its line cannot grow the buffer without end."""
    conn = Script(b'{"n": 1}\n{"pad": "', *([b"y" * 64] * 40), b'"}\n{"n": 2}\n')
    lines = list(json_lines(conn, threading.Event(), bufsize=64, max_line=1000))  # type: ignore[arg-type]
    assert [(line.value, line.garbled, line.too_long) for line in lines] == [
        ({"n": 1}, False, False),
        (None, True, True),  # once, with its first 80 bytes
        ({"n": 2}, False, False),  # the next line is read as usual
    ]
    assert lines[1].raw == b'{"pad": "' + b"y" * 71
    conn = Script(b'{"n": 1}\n', b"z" * 5000)  # and one that never ends is dropped at end of file
    lines = list(json_lines(conn, threading.Event(), bufsize=4096, max_line=1000))  # type: ignore[arg-type]
    assert [line.too_long for line in lines] == [False, True]


def test_an_over_long_line_is_kept_until_its_newline_however_many_reads_it_takes():
    big = b'{"t": "meter", "pad": "' + b"x" * 50_000 + b'"}'
    chunks = [big[i : i + 64] for i in range(0, len(big), 64)]
    lines, conn = read(*chunks, b'\n{"t": "hb"}\n', bufsize=64)
    assert values(lines) == [{"t": "meter", "pad": "x" * 50_000}, {"t": "hb"}]
    assert set(conn.sizes) == {64}  # every read asks for bufsize at most


def test_end_of_file_ends_the_iteration_and_drops_a_partial_line():
    lines, conn = read(b'{"t": "hb"}\n{"t": "me', b'ter", "level": "L1"')
    assert values(lines) == [{"t": "hb"}]
    assert len(conn.sizes) == 3  # the third read saw end of file and nothing was read after it


def test_a_socket_error_ends_the_iteration_a_timeout_does_not():
    lines, conn = read(b'{"n": 1}\n', TimeoutError(), b'{"n": 2}\n', ConnectionResetError(), b'{"n": 3}\n')
    assert values(lines) == [{"n": 1}, {"n": 2}]
    assert len(conn.sizes) == 4 and conn.reads == [b'{"n": 3}\n']


def test_stop_is_looked_at_before_each_read():
    stop = threading.Event()
    conn = Script(b'{"n": 1}\n{"n": 2}\n', b'{"n": 3}\n', stop=stop, stop_after=1)
    lines = list(json_lines(conn, stop, bufsize=4096))  # type: ignore[arg-type]
    assert values(lines) == [{"n": 1}, {"n": 2}]  # the lines of the read before the stop, not one more read
    assert len(conn.sizes) == 1


def test_over_a_real_socket_pair():
    a, b = socket.socketpair()
    b.settimeout(0.05)
    stop = threading.Event()
    got: list[Line] = []
    reader = threading.Thread(target=lambda: got.extend(json_lines(b, stop, bufsize=8)))
    reader.start()
    try:
        a.sendall(b'{"t": "hb", "state": "running"}\n{"t"')
        a.sendall(b': "link", "up": true}\nnot json\n{"t": "cut')
    finally:
        a.close()  # end of file: the reader ends by itself, the partial line dropped
    reader.join(5)
    b.close()
    assert not reader.is_alive()
    assert [(line.value, line.garbled) for line in got] == [
        ({"t": "hb", "state": "running"}, False),
        ({"t": "link", "up": True}, False),
        (None, True),
    ]
