"""Simulated serial devices: the far end of each protocol in docs/protocols.md.

Each simulator owns a pty (the controller opens its slave path with pyserial),
speaks the same framing and link rules through :class:`drivers.link.Link`, and
takes its delays from the shared game clock.  Fault injection is by attributes
(``faults``) that tests, scenarios and the crash bench set.
"""

from __future__ import annotations

import random
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.clock import Clock
from drivers import protocol as P
from drivers.link import Link
from hil.pty import PtyEnd
from hil.sched import Scheduler


class SimDevice:
    device = "?"

    def __init__(self, clock: Clock, rng: random.Random):
        self.clock = clock
        self.rng = rng
        self.pty = PtyEnd()
        self.path = self.pty.path
        self.sched = Scheduler(clock, self.device)
        self.link = Link(f"sim-{self.device}", lambda: self.pty, self, heartbeat=None, lost_after=None)
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.link_events: list[tuple[str, str]] = []
        self.faults: dict[str, Any] = {}
        self.silent = False            # fault: stop answering entirely (no ACKs either)
        self._lock = threading.Lock()

    def start(self) -> None:
        self.link.start()

    def stop(self) -> None:
        self.sched.stop()
        self.link.stop()
        self.pty.close()

    def send(self, name: str, **fields: Any) -> None:
        if self.silent:
            return
        mtype, payload = P.encode(self.device, name, **fields)
        self.link.send(mtype, payload)

    # LinkListener (reader thread)
    def on_message(self, mtype: int, payload: bytes) -> None:
        try:
            name, fields = P.decode(self.device, mtype, payload)
        except P.ProtocolError as e:
            self.link_events.append(("protocol-error", str(e)))
            self.send("ERROR", code=1, text=str(e)[:60])
            return
        with self._lock:
            self.received.append((name, fields))
        handler = getattr(self, f"on_{name}", None)
        if handler is not None:
            handler(**fields)

    def on_link_event(self, kind: str, detail: str) -> None:
        self.link_events.append((kind, detail))


# --------------------------------------------------------------------------- shoe


@dataclass
class ShoeFaults:
    jam_at_stack: int | None = None         # § 670a.13(m)
    face_up: dict[int, int] = field(default_factory=dict)   # stack -> number of face-up cards found
    remaining_offset: int = 0               # § 670a.10(e): wrong count of cards left
    short_stack: int | None = None          # a stack dispensed one card short (§ 670a.13(h))
    unread: bool = False                    # no card reading
    silent_after_stack: int | None = None   # stop answering after this stack


class ShoeSim(SimDevice):
    """Automated shuffler + dealing shoe with card reading."""

    device = "shoe"

    def __init__(self, clock: Clock, rng: random.Random, deck_size: int = 53,
                 dispense_s: float = 0.6, shuffle_s: float = 2.0):
        super().__init__(clock, rng)
        self.deck_size = deck_size
        self.dispense_s = dispense_s
        self.shuffle_s = shuffle_s
        self.deck: deque[int] = deque()
        self.stacks = 0
        self.shoe_faults = ShoeFaults()
        self.stacked_decks: deque[list[int]] = deque()   # scripted decks for tests (top card first)
        self.shuffles = 0

    def on_STATUS_REQ(self) -> None:
        self.send("STATUS", flags=P.SHOE_LOADED | (P.SHOE_SHUFFLED if self.deck else 0),
                  remaining=len(self.deck), stacks=self.stacks)

    def on_SHUFFLE(self) -> None:
        def done() -> None:
            if self.stacked_decks:
                cards = list(self.stacked_decks.popleft())
            else:
                cards = list(range(self.deck_size))
                self.rng.shuffle(cards)
            self.deck = deque(cards)
            self.stacks = 0
            self.shuffles += 1
            self.send("SHUFFLED", cards=len(self.deck))
        self.sched.later(self.shuffle_s, done)

    def on_DISPENSE(self, stack: int, cards: int) -> None:
        self.sched.later(self.dispense_s, self._dispense, stack, cards)

    def _dispense(self, stack: int, cards: int) -> None:
        f = self.shoe_faults
        if f.silent_after_stack is not None and stack > f.silent_after_stack:
            self.silent = True
            return
        if f.jam_at_stack == stack:
            n = self.rng.randrange(cards)
            for _ in range(n):
                self.deck.popleft()
            self.send("JAM", stack=stack, dispensed=n)
            return
        for _ in range(f.face_up.get(stack, 0)):
            # each face-up card found is reported and taken out (§ 670a.13(f)): the
            # controller burns one, and voids the round on a second
            self.send("FACE_UP", stack=stack, card=self.deck.popleft())
        n = cards - 1 if f.short_stack == stack else cards
        dealt = [self.deck.popleft() for _ in range(min(n, len(self.deck)))]
        self.stacks += 1
        shown = [P.CARD_UNREAD] * len(dealt) if f.unread else dealt
        self.send("STACK", stack=stack, count=len(dealt), remaining=len(self.deck), cards=shown)

    def on_COUNT_REQ(self) -> None:
        self.sched.later(0.2, lambda: self.send("REMAINING", remaining=len(self.deck) + self.shoe_faults.remaining_offset,
                                                stacks=self.stacks))


# --------------------------------------------------------------------------- shaker


@dataclass
class ShakerFaults:
    no_rolls: int = 0             # the next n shakes end in "no roll" (§ 670a.13(a))
    short_shake_ms: int | None = None   # next shake reports this duration (< 5 s, § 621a.2(f)(2))
    lid_open: bool = False
    scripted: deque[tuple[int, int, int, int]] = field(default_factory=deque)  # (d1, d2, d3, red)


class ShakerSim(SimDevice):
    device = "shaker"

    def __init__(self, clock: Clock, rng: random.Random, shake_s: float = 5.0):
        super().__init__(clock, rng)
        self.shake_s = shake_s
        self.armed: int | None = None
        self.shaker_faults = ShakerFaults()
        self.rolls: list[tuple[int, int, int, int]] = []

    def on_STATUS_REQ(self) -> None:
        flags = (0 if self.shaker_faults.lid_open else P.SHAKER_LID_CLOSED) | P.SHAKER_SEALED
        self.send("STATUS", flags=flags | (P.SHAKER_ARMED if self.armed is not None else 0))

    def on_ARM(self, who: int) -> None:
        self.armed = who

    def on_DISARM(self) -> None:
        self.armed = None

    def on_ACTIVATE(self, who: int) -> None:
        f = self.shaker_faults
        shake_ms = f.short_shake_ms if f.short_shake_ms is not None else int(self.shake_s * 1000)
        f.short_shake_ms = None
        self.send("SHAKING", who=who, planned_ms=shake_ms)
        self.sched.later(shake_ms / 1000, self._result, shake_ms)

    def _result(self, shake_ms: int) -> None:
        f = self.shaker_faults
        if f.lid_open:
            self.send("NO_ROLL", reason=P.NO_ROLL_LID_OPEN, shake_ms=shake_ms)
            return
        if f.no_rolls > 0:
            f.no_rolls -= 1
            self.send("NO_ROLL", reason=P.NO_ROLL_NOT_FLAT, shake_ms=shake_ms)
            return
        if f.scripted:
            d1, d2, d3, red = f.scripted.popleft()
        else:
            d1, d2, d3 = (self.rng.randint(1, 6) for _ in range(3))
            red = self.rng.randrange(3)
        self.rolls.append((d1, d2, d3, red))
        self.send("RESULT", d1=d1, d2=d2, d3=d3, red=red, shake_ms=shake_ms)


# --------------------------------------------------------------------------- sign


class SignSim(SimDevice):
    """The progressive sign: remembers what it was told to show."""

    device = "sign"

    def __init__(self, clock: Clock, rng: random.Random):
        super().__init__(clock, rng)
        self.meters: dict[int, int] = {}
        self.hand_lights: dict[int, int] = {}
        self.seat_lights: dict[int, int] = {}
        self.message_text = ""
        self.messages: list[str] = []
        self.changed = threading.Condition()

    def _changed(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def on_STATUS_REQ(self) -> None:
        self.send("STATUS", flags=0)

    def on_METERS(self, levels: Sequence[tuple[int, int]]) -> None:
        for lvl, cents in levels:
            self.meters[lvl] = cents
        self._changed()

    def on_HAND_LIGHT(self, hand: int, mode: int) -> None:
        if hand == 0:
            self.hand_lights.clear()
        else:
            self.hand_lights[hand] = mode
        self._changed()

    def on_SEAT_LIGHT(self, position: int, mode: int) -> None:
        self.seat_lights[position] = mode
        self._changed()

    def on_MESSAGE(self, text: str) -> None:
        self.message_text = text
        self.messages.append(text)
        self._changed()

    def on_CLEAR(self) -> None:
        self.hand_lights.clear()
        self.seat_lights.clear()
        self.message_text = ""
        self._changed()

    def wait_message(self, prefix: str, timeout: float) -> str:
        with self.changed:
            if not self.changed.wait_for(lambda: self.message_text.startswith(prefix), timeout):
                raise TimeoutError(f"sign never showed {prefix!r}; it shows {self.message_text!r}")
            return self.message_text
