"""A synchronous table harness: the real Table, Reactor, Ledger and meters on a
manual clock, with recording fakes for the devices (each implementing exactly its
driver's Protocol) and a writer that commits at once.  Deterministic and fast, for
property tests of whole rounds, voids, hits and restarts (the HIL rig covers the
same paths over real ptys)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from controller.books.ledger import Ledger, Record, StoredEvent
from controller.core.log import LogContext
from controller.core.reactor import Reactor
from controller.games.round import Round
from controller.play.context import Then
from controller.play.linked import Linkage
from controller.play.table import Devices, Table
from controller.rules.cards import parse_cards
from controller.rules.positions import delivery_order, seat_to_position
from controller.settings.config import parse_profile
from tests.conftest import TEST_KEY, ManualClock


class FakeDevice:
    """Base of the recording device fakes: each implements exactly its driver's
    Protocol (drivers/), and records every call as ``(method, args)`` in ``calls``.
    A method the Protocol does not declare does not exist here either, so a
    misspelt device call fails (tests/integration/test_fakes_match_protocols.py checks
    the fakes against the Protocols)."""

    def __init__(self, name: str):
        self.name = name
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def _record(self, method: str, *args: Any) -> None:
        self.calls.append((method, args))

    def restart(self) -> bool:
        self._record("restart")
        return True


class FakeShoe(FakeDevice):
    """drivers.shoe.Shoe"""

    def request_status(self) -> None:
        self._record("request_status")

    def shuffle(self) -> None:
        self._record("shuffle")

    def dispense(self, stack: int, cards: int) -> None:
        self._record("dispense", stack, cards)

    def request_count(self) -> None:
        self._record("request_count")


class FakeShaker(FakeDevice):
    """drivers.shaker.Shaker"""

    def request_status(self) -> None:
        self._record("request_status")

    def arm(self, who: int) -> None:
        self._record("arm", who)

    def activate(self, who: int) -> None:
        self._record("activate", who)

    def disarm(self) -> None:
        self._record("disarm")


class FakeSign(FakeDevice):
    """drivers.sign.Sign"""

    def show_meters(self, levels: Sequence[tuple[int, int]]) -> None:
        self._record("show_meters", levels)

    def hand_light(self, hand: int, mode: int) -> None:
        self._record("hand_light", hand, mode)

    def seat_light(self, position: int, mode: int) -> None:
        self._record("seat_light", position, mode)

    def message(self, text: str) -> None:
        self._record("message", text)

    def clear(self) -> None:
        self._record("clear")


class FakeKeypad(FakeDevice):
    """drivers.keypad.Keypad"""

    def __init__(self, name: str):
        super().__init__(name)
        self.prompt_id = 0

    def request_status(self) -> None:
        self._record("request_status")

    def prompt(self, text: str) -> int:
        self.prompt_id = self.prompt_id % 0xFFFF + 1
        self._record("prompt", text)
        return self.prompt_id


class FakeLights:
    def __init__(self) -> None:
        self.modes: dict[str, str] = {}

    def set(self, name: str, mode: str) -> None:
        self.modes[name] = mode

    def mode(self, name: str) -> str:
        return self.modes.get(name, "off")

    def close(self) -> None:
        pass


class FakeInputs:
    def __init__(self, names: Sequence[str]):
        self._names = list(names)

    def names(self) -> Iterable[str]:
        return self._names

    def is_active(self, name: str) -> bool:
        return False

    def close(self) -> None:
        pass


class SyncWriter:
    """Commits on submit; the durable callback still goes through the reactor queue."""

    def __init__(self, ledger: Ledger, reactor: Reactor):
        self.ledger = ledger
        self.reactor = reactor

    def submit(self, records: Iterable[Record], done: Then | None = None, *, hand_over: bool = False) -> None:
        stored = self.ledger.append(list(records))
        if done is not None:
            self.reactor.call_soon_threadsafe(done, stored)


def profile_doc(rate: str = "21%", seed: str = "$5,000", reserve: str = "0%") -> dict[str, Any]:
    return {
        "game": {"id": "six-card-fortune", "seats": 6, "positions": 7},
        "progressive": {
            "paytable": "Six-Card Fortune Progressive",
            "wager": "$1",
            "seed": seed,
            "increment_rate": rate,
            "reserve_rate": reserve,
            "envy_paytable": "Six-Card Fortune Progressive Envy $1",
            "envy_min_wager": "$1",
        },
    }


class Harness:
    def __init__(
        self,
        path: Path,
        doc: Mapping[str, Any] | None = None,
        rng: Any = None,
        wall_clock: Callable[[], float] | None = None,
    ):
        """``wall_clock``: the table's clock for its ledger's time stamps (default the machine's)."""
        self.path = path
        self.doc = dict(doc or profile_doc())
        self.clock = ManualClock()
        self.profile = parse_profile(self.doc, "<harness>")
        self.reactor = Reactor(self.clock)
        self.ledger = Ledger(path, "HARNESS", key=TEST_KEY, wall_clock=wall_clock or time.time)
        self.writer = SyncWriter(self.ledger, self.reactor)
        names = ["lockout", "confirm", "void", "key"] + [f"bet.progressive.{s}" for s in range(1, 7)]
        self.lights = FakeLights()
        self.shoe, self.shaker, self.sign = FakeShoe("shoe"), FakeShaker("shaker"), FakeSign("sign")
        self.keypad = FakeKeypad("keypad")
        self.devices = Devices(
            self.shoe, self.shaker, self.sign, self.lights, FakeInputs(names), rng=rng, keypad=self.keypad
        )
        self.table = Table(
            self.profile,
            self.reactor,
            self.writer,
            self.devices,
            LogContext("HARNESS"),
        )
        self.reactor.handler = self.table.handle
        self.table.start(self.ledger.verify())
        self.pump()

    # ---- driving ----------------------------------------------------------------
    def pump(self) -> None:
        for _ in range(1000):
            self.reactor.run_once(block=False)
            if self.reactor._q.empty():
                return
        raise RuntimeError("reactor did not settle")

    def post(self, kind: str, source: str, **data: Any) -> None:
        if kind == "keypad" and data.get("msg") == "ENTRY":
            # the keypad stamps an entry with the number of the prompt on its display
            data.setdefault("prompt", self.keypad.prompt_id)
        self.reactor.post(kind, source, data)
        self.pump()

    def edge(self, name: str, active: bool) -> None:
        self.post("input", name, active=active)
        self.clock.advance(0.05)  # past the debounce window
        self.pump()

    def press(self, name: str) -> None:
        self.edge(name, True)
        self.edge(name, False)

    def shuffled(self) -> None:
        self.post("shoe", "shoe", msg="SHUFFLED", cards=53)

    def dice(self, d: tuple[int, int, int], red: int = 0, shake_ms: int = 5000) -> None:
        self.post("shaker", "shaker", msg="RESULT", d1=d[0], d2=d[1], d3=d[2], red=red, shake_ms=shake_ms)

    def deal(self, stacks: Sequence[Sequence[int]], remaining: int = 11) -> None:
        for i, s in enumerate(stacks, 1):
            self.post("shoe", "shoe", msg="STACK", stack=i, count=len(s), remaining=53 - 6 * i, cards=list(s))
        self.post("shoe", "shoe", msg="REMAINING", remaining=remaining, stacks=len(stacks))

    def close(self) -> None:
        self.ledger.close()

    @property
    def state(self) -> str:
        return self.table.state

    @property
    def rnd(self) -> Round:
        """The round in play (the test fails here when there is none)."""
        rnd = self.table.round
        assert rnd is not None, f"no round in play (state {self.state})"
        return rnd

    @property
    def lap(self) -> Linkage:
        """The table's link to its LAP (the test fails here when the profile is not linked)."""
        lap = self.table.lap
        assert lap is not None, "the table is not linked"
        return lap


def stacks_for(start: int, hands: Mapping[int, str], filler: Sequence[int] | None = None) -> list[list[int]]:
    """Seven stacks of six delivered clockwise from ``start`` (§ 670a.10(c)) such
    that each seat in ``hands`` gets the given cards; the rest from ``filler``."""
    want = {seat_to_position(s, 6): list(parse_cards(c)) for s, c in hands.items()}
    used = {c for cards in want.values() for c in cards}
    pool = [c for c in (filler if filler is not None else range(53)) if c not in used]
    stacks = []
    for pos in delivery_order(start, 7):
        if pos in want:
            stacks.append(want[pos])
        else:
            stacks.append([pool.pop(0) for _ in range(6)])
    return stacks


def records(h: Harness, kind: str) -> list[StoredEvent]:
    return [e for e in h.ledger.events(kinds=[kind])]


class FixedRng:
    """An RNG double that returns scripted numbers (the real one is drivers/rng.py)."""

    def __init__(self, values: Sequence[int]):
        self.values = list(values)
        self.draws: list[int] = []

    def draw(self, n: int) -> int:
        v = self.values.pop(0)
        assert 1 <= v <= n
        self.draws.append(n)
        return v
