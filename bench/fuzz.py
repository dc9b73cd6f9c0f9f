"""``tablectl bench fuzz``: mutational fuzzing of the two parsers that take bytes from
outside — the serial frame decoder (drivers/framing.py) and the console's line editor and
command-line parser (controller/console/lineio.py, session.py ``parse_command_line``).

Inputs are built from a corpus (every device message of drivers/protocol.py encoded as a
frame; every console command name with typical arguments, control keys and escape
sequences) by random mutations — bit flips, bytes replaced, inserted or deleted, runs of
0xA5 or of noise, truncation, splicing, duplication — and by plain random bytes, fed in
random chunks.  For each input the harness checks:

* decoder: ``feed`` returns only frames and protocol errors; giving up partial frames
  (``resync``) always terminates; a valid frame appended after the input is recovered —
  unless bytes of the input and of that frame together form a valid frame (a CRC-16
  match by chance, or a frame cut short before its last byte 0xA5), which any decoder
  must take: counted as ``decoder_crc_collisions``, not as a crash;
* console: ``readline`` returns lines of at most 200 printable ASCII characters or raises
  one of its own signals (Cancelled, EOFError, Closed); ``parse_command_line`` returns a
  command and arguments or raises ValueError; completion never raises.

Anything else is a **crash**; an input that takes longer than ``--hang-s`` (a SIGALRM timer)
is a **hang**.  Figures: inputs, crashes, hangs, lost frames, inputs per second, wall time.
"""

from __future__ import annotations

import argparse
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

NAME = "fuzz"
HELP = "fuzz the frame decoder and the console line parser (>= 10^6 inputs): inputs, crashes, hangs"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--inputs", type=int, default=1_000_000, help="inputs per target (default 1,000,000)")
    p.add_argument("--seed", type=int, default=13, help="random seed (default 13)")
    p.add_argument("--hang-s", type=float, default=2.0, help="an input taking longer than this is a hang")
    p.add_argument("--targets", default="decoder,console", help="comma-separated: decoder, console")


class _Hang(Exception):
    pass


def _on_alarm(_sig: int, _frame: Any) -> None:
    raise _Hang()


def _flip_bit(rng: random.Random, b: bytearray, i: int, corpus: list[bytes]) -> None:
    j = rng.randrange(len(b))
    b[j] ^= 1 << rng.randrange(8)


def _set_byte(rng: random.Random, b: bytearray, i: int, corpus: list[bytes]) -> None:
    b[rng.randrange(len(b))] = rng.randrange(256)


def _insert_byte(rng: random.Random, b: bytearray, i: int, corpus: list[bytes]) -> None:
    b[i:i] = bytes([rng.randrange(256)])


def _delete_byte(rng: random.Random, b: bytearray, i: int, corpus: list[bytes]) -> None:
    del b[rng.randrange(len(b))]


def _insert_starts(rng: random.Random, b: bytearray, i: int, corpus: list[bytes]) -> None:
    b[i:i] = bytes([0xA5]) * rng.randint(1, 8)


def _insert_random(rng: random.Random, b: bytearray, i: int, corpus: list[bytes]) -> None:
    b[i:i] = rng.randbytes(rng.randint(1, 64))


def _truncate(rng: random.Random, b: bytearray, i: int, corpus: list[bytes]) -> None:
    del b[rng.randrange(len(b) + 1) :]


def _splice(rng: random.Random, b: bytearray, i: int, corpus: list[bytes]) -> None:
    other = rng.choice(corpus)
    b[i:i] = other[: rng.randint(0, len(other))]


def _repeat_head(rng: random.Random, b: bytearray, i: int, corpus: list[bytes]) -> None:
    b += b[: rng.randint(0, len(b))]


#: the mutations, by the number drawn
_MUTATIONS = (
    _flip_bit,
    _set_byte,
    _insert_byte,
    _delete_byte,
    _insert_starts,
    _insert_random,
    _truncate,
    _splice,
    _repeat_head,
)
#: the mutations of a byte already there: with no data, the (empty) head is repeated instead
_IN_PLACE = frozenset((0, 1, 3))


def mutate(rng: random.Random, data: bytes, corpus: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(9)
        i = rng.randrange(len(b) + 1)
        if op in _IN_PLACE and not b:
            op = len(_MUTATIONS) - 1
        _MUTATIONS[op](rng, b, i, corpus)
    return bytes(b)


def _chunks(rng: random.Random, data: bytes) -> list[bytes]:
    if len(data) < 2 or rng.random() < 0.5:
        return [data]
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 4))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


# --------------------------------------------------------------------------- decoder


def _decoder_corpus() -> list[bytes]:
    from drivers import protocol as P
    from drivers.framing import ACK, HELLO, NAK, PING, encode_frame

    rng = random.Random(0)
    out = [encode_frame(0, HELLO), encode_frame(3, PING), encode_frame(0, ACK, b"\x05"), encode_frame(0, NAK)]
    limits = {"B": 255, "H": 65535, "I": 2**32 - 1}
    for spec in P.messages():
        values: dict[str, Any] = {n: rng.randint(0, limits[t]) for n, t in spec.fields}
        if spec.tail:
            kind, name = spec.tail.split(":")
            values[name] = {"bytes": [1, 2, 52], "text": "SEAT 3 OK", "meters": [(1, 500042)]}[kind]
        mtype, payload = P.encode(spec.device, spec.name, **values)
        out.append(encode_frame(rng.randint(1, 255), mtype, payload))
    return out


def _decoder_one(rng: random.Random, data: bytes) -> int:
    """Feed one input and a valid frame after it; returns 1 if that frame was lost."""
    from drivers.framing import Frame, FrameDecoder, FrameError, encode_frame

    d = FrameDecoder()
    out: list[Any] = []
    for c in _chunks(rng, data):
        out += d.feed(c)
    tail = Frame(7, 0x31, b"tail")
    out += d.feed(encode_frame(7, 0x31, b"tail"))
    out += _resync_all(d, len(data))
    for x in out:
        if not isinstance(x, (Frame, FrameError)):
            raise AssertionError(f"decoder returned {type(x).__name__}")
    if tail in out:
        return 0
    return _tail_taken_by_chance(data, out, tail)


def _resync_all(d: Any, size: int) -> list[Any]:
    """Resync until nothing is pending (bounded by the input's ``size``: it must terminate)."""
    out: list[Any] = []
    steps = 0
    while d.pending:
        out += d.resync()
        steps += 1
        if steps > size + 300:
            raise AssertionError("resync does not terminate")
    return out


def _tail_taken_by_chance(data: bytes, out: list[Any], tail: Any) -> int:
    """1 when the lost tail frame's bytes went into a frame the input alone does not make."""
    from drivers.framing import Frame, FrameDecoder

    # CRC-16 cannot tell: bytes of the input and of the appended frame together *are* a
    # valid frame (a header in the input whose CRC matches by chance, 1 in 65,536, or a frame
    # cut short before its last byte 0xA5).  Any decoder takes it; counted, not a crash.
    alone = FrameDecoder()
    seen = alone.feed(data)
    while alone.pending:
        seen += alone.resync()
    got, alone_got = Counter(x for x in out if isinstance(x, Frame)), Counter(x for x in seen if isinstance(x, Frame))
    if any(n > alone_got[f] for f, n in got.items() if f != tail):  # a frame that took bytes of the tail
        return 1
    raise AssertionError("a valid frame after the input was not recovered")


# --------------------------------------------------------------------------- console


def _console_corpus() -> list[bytes]:
    import controller.console.cmd_basic  # noqa: F401
    import controller.console.cmd_config  # noqa: F401
    import controller.console.cmd_diag  # noqa: F401
    import controller.console.cmd_records  # noqa: F401
    from controller.console import registry as R
    from controller.console.server import ConsoleServer  # noqa: F401 - registers the commands

    lines = [f"{name} a 'b c' \"d\" 12" for name in R.REGISTRY] + ["technician", "3333", "exit", "?", "QUIT"]
    keys = [b"\x7f", b"\x08", b"\x15", b"\x03", b"\x04", b"\t", b"\x1b[A", b"\x1b[B", b"\x1b[D", b"\x1bO", b"\r\n"]
    return [ln.encode() + b"\r" for ln in lines] + keys


class _MemChannel:
    """An in-memory channel: the input in chunks, then end of stream."""

    name = "fuzz"

    def __init__(self, chunks: list[bytes]):
        self._chunks = list(chunks)
        self._pending = b""
        self.written = 0

    def read(self, timeout: float) -> bytes:
        from controller.console.lineio import Closed

        if self._pending:
            data, self._pending = self._pending, b""
            return data
        if not self._chunks:
            raise Closed("end of input")
        return self._chunks.pop(0)

    def unread(self, data: bytes) -> None:
        self._pending = data + self._pending

    def write(self, data: bytes) -> None:
        self.written += len(data)


def _console_one(rng: random.Random, data: bytes) -> int:
    from controller.console import registry as R
    from controller.console.lineio import MAX_LINE, Cancelled, Closed, LineEditor
    from controller.console.session import parse_command_line

    ed = LineEditor(_MemChannel(_chunks(rng, data)))  # type: ignore[arg-type]
    for _ in range(len(data) + 2):
        try:
            line = ed.readline("> ", history=True, mask_digits=rng.random() < 0.2, complete=lambda b: [])
        except (Cancelled, EOFError):
            continue
        except Closed:
            return 0
        if len(line) > MAX_LINE or any(not 0x20 <= ord(c) < 0x7F for c in line):
            raise AssertionError(f"readline returned a bad line {line!r}")
        R.complete("technician", line)
        try:
            name, args = parse_command_line(line)
        except ValueError:
            continue
        if name != name.lower():
            raise AssertionError("command name not folded to lower case")
    raise AssertionError("readline does not consume its input")


# --------------------------------------------------------------------------- run


def _input(rng: random.Random, corpus: list[bytes]) -> bytes:
    """One input: random bytes, a run of the bytes that mean something (start, escape, CR, ^C),
    or most often a mutated corpus entry."""
    r = rng.random()
    if r < 0.15:
        return rng.randbytes(rng.randint(0, 300))
    if r < 0.25:
        return bytes(rng.choice((0xA5, 0x1B, 0x0D, 0x03, rng.randrange(256))) for _ in range(rng.randint(0, 80)))
    return mutate(rng, rng.choice(corpus), corpus)


def _fuzz(
    target: str, n: int, rng: random.Random, hang_s: float, emit: Callable[[str, object], None]
) -> tuple[int, int]:
    """``n`` inputs to one target; its figures emitted: inputs, crashes, hangs (the decoder's CRC
    collisions), speed, the first crash."""
    make, one = TARGETS[target]
    corpus = make()
    crashes = hangs = lost = 0
    first_crash = ""
    t0 = time.perf_counter()
    for k in range(n):
        data = _input(rng, corpus)
        signal.setitimer(signal.ITIMER_REAL, hang_s)
        try:
            lost += one(rng, data)
        except _Hang:
            hangs += 1
        except Exception as e:  # noqa: BLE001 - a crash is what we count
            crashes += 1
            if not first_crash:
                first_crash = f"{type(e).__name__}: {e} on input {data[:80].hex()}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if (k + 1) % 200_000 == 0:
            emit(f"{target}_progress", f"{k + 1} inputs, {time.perf_counter() - t0:.1f} s")
    wall = time.perf_counter() - t0
    emit(f"{target}_inputs", n)
    emit(f"{target}_crashes", crashes)
    emit(f"{target}_hangs", hangs)
    if target == "decoder":
        emit("decoder_crc_collisions", lost)
    emit(f"{target}_inputs_per_s", f"{n / wall:.0f}")
    emit(f"{target}_wall_s", f"{wall:.1f}")
    if first_crash:
        emit(f"{target}_first_crash", first_crash)
    return crashes, hangs


#: each target: its corpus, and one input through it (the inputs lost, e.g. the decoder's CRC collisions)
TARGETS: dict[str, tuple[Callable[[], list[bytes]], Callable[[random.Random, bytes], int]]] = {
    "decoder": (_decoder_corpus, _decoder_one),
    "console": (_console_corpus, _console_one),
}


def run(args: argparse.Namespace, emit: Callable[[str, object], None]) -> int:
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    bad = [t for t in targets if t not in TARGETS]
    if bad:
        emit("error", f"unknown target(s) {', '.join(bad)}; known: {', '.join(TARGETS)}")
        return 2
    old = signal.signal(signal.SIGALRM, _on_alarm)
    t0 = time.perf_counter()
    total_crashes = total_hangs = total = 0
    try:
        for t in targets:
            c, h = _fuzz(t, max(1, args.inputs), random.Random(f"{args.seed}:{t}"), args.hang_s, emit)
            total_crashes += c
            total_hangs += h
            total += max(1, args.inputs)
    finally:
        signal.signal(signal.SIGALRM, old)
    emit("inputs", total)
    emit("crashes", total_crashes)
    emit("hangs", total_hangs)
    emit("wall_s", f"{time.perf_counter() - t0:.1f}")
    return 1 if total_crashes or total_hangs else 0
