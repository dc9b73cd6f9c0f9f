"""JSON lines read from a stream socket: one JSON value per ``\\n``-terminated line.

Both ends of a linked table's link socket (docs/linked.md) read with :func:`json_lines`: the
table service's :class:`controller.play.linked.LinkPort` and the uplink's
:class:`controller.uplink.channel.TableChannel`.  It lives here, not in the uplink's package, because
the table service never imports that package.

What it does with what arrives:

- a line split across reads is kept until its newline comes; several lines in one read are
  each yielded, in order;
- a line is kept, however many reads it takes, until its newline — up to ``max_line`` bytes
  (default 1 MiB): a longer one is yielded once as garbled and ``too_long`` with its first
  80 bytes, and the rest of it, up to its newline, is dropped (a peer that never sends a newline
  cannot grow the buffer without end);
- a line that is not JSON (not UTF-8, not JSON, or empty) is yielded as garbled, with its bytes,
  and reading goes on — what to do with it (skip it, log it) is the caller's;
- at end of file, on a socket error, or once ``stop`` is set (looked at before each read), the
  iteration ends; a partial line left without its newline is dropped.

A read that times out (the caller sets the socket's timeout) only looks at ``stop`` again.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Line:
    """One complete line: its bytes (without the newline) and its JSON value; ``garbled``:
    the bytes are not JSON (``value`` is None)."""

    raw: bytes
    value: Any = None
    garbled: bool = False
    too_long: bool = False


def decode(raw: bytes) -> Line:
    try:
        return Line(raw, json.loads(raw))
    except ValueError:  # json.JSONDecodeError, UnicodeDecodeError
        return Line(raw, garbled=True)


MAX_LINE = 1 << 20


def json_lines(conn: socket.socket, stop: threading.Event, *, bufsize: int, max_line: int = MAX_LINE) -> Iterator[Line]:
    """Each complete line read from ``conn``, decoded, until end of file, a socket error or
    ``stop`` (see the module's docstring); ``bufsize``: the most one read takes; ``max_line``:
    the longest line kept."""
    lines = _Splitter(max_line)
    while not stop.is_set():
        try:
            chunk = conn.recv(bufsize)
        except TimeoutError:
            continue
        except OSError:
            return
        if not chunk:
            return
        yield from lines.feed(chunk)


class _Splitter:
    """Bytes read into lines: each complete line decoded; one longer than ``max_line`` reported
    once (its first 80 bytes) and dropped up to its newline."""

    def __init__(self, max_line: int):
        self.max_line = max_line
        self.buf = bytearray()
        self.skipping = False  # inside a line already reported too long: dropped up to its newline

    def feed(self, chunk: bytes) -> Iterator[Line]:
        buf = self.buf
        start = 0
        while True:
            i = chunk.find(b"\n", start)
            if not self.skipping:
                buf += chunk[start : len(chunk) if i < 0 else i]
                if len(buf) > self.max_line:
                    yield Line(bytes(buf[:80]), garbled=True, too_long=True)
                    buf.clear()
                    self.skipping = True
            if i < 0:
                return
            if self.skipping:
                self.skipping = False  # the over-long line ends here
            else:
                yield decode(bytes(buf))
            buf.clear()
            start = i + 1
