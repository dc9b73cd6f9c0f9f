"""Simulated serial devices: the far end of each protocol in docs/protocols.md.

Each simulator owns a pty (the controller opens its slave path with pyserial, or
a symlink to it standing in for ``/dev/serial/by-id/...``), speaks the same
framing and link rules through :class:`drivers.link.Link`, and takes its delays
from the shared game clock.

Fault injection (docs/hil.md lists every switch):

* wire level, on :attr:`SimDevice.port` (:class:`hil.pty.SimPort`): ``mute``
  (dead device, no ACKs), ``corrupt_next``/``corrupt_all`` (damaged CRCs),
  ``nak_all`` (NAK storm); :meth:`SimDevice.unplug` / :meth:`SimDevice.replug`
  (USB disconnect and reconnect: the pty disappears, a new one appears under the
  same symlink);
* device level: :attr:`SimDevice.silent` (stops sending application messages
  while its link layer still answers: a stuck device), :attr:`SimDevice.reply_delay_s`
  (late replies, game seconds), and each device's own faults
  (:class:`ShoeFaults`, :class:`ShakerFaults`).
"""

from __future__ import annotations

import os
import random
import sys
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.core.clock import Clock
from drivers import protocol as P
from drivers.link import Link, LinkTiming
from hil.pty import PtyEnd, SimPort
from hil.sched import Scheduler
from hil.simclock import SimClock


class SimDevice:
    device = "?"

    def __init__(self, clock: Clock, rng: random.Random, link_dir: Path | None = None):
        self.clock = clock
        self.rng = rng
        self.pty = PtyEnd()
        self.port = SimPort(self.pty)
        self.link_path: Path | None = None
        if link_dir is not None:  # a stable name, like /dev/serial/by-id/...
            self.link_path = Path(link_dir) / f"tty-{self.device}"
            self._point_link()
        self.path = str(self.link_path) if self.link_path else self.pty.path
        self.sched = Scheduler(clock, self.device)
        self.link = Link(f"sim-{self.device}", lambda: self.port, self, LinkTiming(heartbeat=None, lost_after=None))
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.link_events: list[tuple[str, str]] = []
        self.faults: dict[str, Any] = {}
        self.silent = False  # fault: stops sending application messages (its link still ACKs)
        self.reply_delay_s = 0.0  # fault: every reply this much later (game seconds)
        self.plugged = True
        self._lock = threading.Lock()
        #: the simulator's clock counts the messages on their way (hil/simclock.py "flights"):
        #: ours to the controller from here until the controller has taken them; the
        #: controller's to us (the rig counts them out) until our handler has run
        self._flights = clock if isinstance(clock, SimClock) else None
        self.flight_out = f"{self.device}>ctl"
        self.flight_in = f"ctl>{self.device}"

    def _point_link(self) -> None:
        assert self.link_path is not None
        tmp = self.link_path.with_name(self.link_path.name + ".new")
        if tmp.is_symlink():
            tmp.unlink()
        os.symlink(self.pty.path, tmp)
        os.replace(tmp, self.link_path)

    def start(self) -> None:
        self.link.start()

    def stop(self) -> None:
        self.sched.stop()
        self.link.stop()
        self.port.close()
        self.pty.close()
        if self.link_path is not None and self.link_path.is_symlink():
            self.link_path.unlink()

    # ---- wire faults ---------------------------------------------------------
    def unplug(self) -> None:
        """USB cable pulled: the pty (and its by-id name) disappears; the controller's
        next read fails."""
        self.plugged = False
        end = self.pty
        self.port.end = None
        if self.link_path is not None and self.link_path.is_symlink():
            self.link_path.unlink()
        end.close()

    def replug(self) -> None:
        """Plugged back in: a new pty under the same name; a new link session (HELLO)."""
        if self.plugged:
            return
        self.pty = PtyEnd()
        if self.link_path is not None:
            self._point_link()
        else:
            self.path = self.pty.path
        self.link.new_session()
        self.port.end = self.pty
        self.plugged = True

    # ---- messages --------------------------------------------------------------
    def send(self, name: str, **fields: Any) -> None:
        if self.silent:
            return
        if self.reply_delay_s > 0:
            self.sched.later(self.reply_delay_s, self._send_now, name, fields)
        else:
            self._send_now(name, fields)

    def _send_now(self, name: str, fields: dict[str, Any]) -> None:
        if self.silent:
            return
        mtype, payload = P.encode(self.device, name, **fields)
        with self._lock:
            self.sent.append((name, dict(fields)))
        if self._flights is not None:
            self._flights.flight_begin(self.flight_out)
        self.link.send(mtype, payload)

    # LinkListener (reader thread)
    def on_message(self, mtype: int, payload: bytes) -> None:
        try:
            self._on_message(mtype, payload)
        finally:  # handled: what it started (a reply, a delay) is in flight or scheduled by now
            if self._flights is not None:
                self._flights.flight_end(self.flight_in)

    def _on_message(self, mtype: int, payload: bytes) -> None:
        try:
            name, fields = P.decode(self.device, mtype, payload)
        except P.ProtocolError as e:
            self.link_events.append(("protocol-error", str(e)))
            self.send("ERROR", code=P.ERR_BAD_MESSAGE, text=str(e)[:60])
            return
        with self._lock:
            self.received.append((name, fields))
        # by the interned name: CPython's type attribute cache keeps every name object it looks up
        # (by address, up to 4,096): a fresh string per message filled it over a long session
        handler = getattr(self, sys.intern(f"on_{name}"), None)
        if handler is not None:
            handler(**fields)

    def on_link_event(self, kind: str, detail: str) -> None:
        self.link_events.append((kind, detail))
        if kind == "fault" and self._flights is not None:  # our link dropped a message: it never lands
            self._flights.flight_end(self.flight_out)

    def count(self, name: str, sent: bool = False) -> int:
        """How many ``name`` messages this device received (or sent)."""
        with self._lock:
            return sum(1 for n, _ in (self.sent if sent else self.received) if n == name)


# --------------------------------------------------------------------------- shoe


@dataclass
class ShoeFaults:
    jam_at_stack: int | None = None  # § 670a.13(m): jams while dispensing this stack
    face_up: dict[int, int] = field(default_factory=dict)  # stack -> face-up cards found (§ 670a.13(f))
    remaining_offset: int = 0  # § 670a.10(e): wrong count of cards left
    stacks_offset: int = 0  # § 670a.10(e): wrong count of stacks dispensed
    short_stack: int | None = None  # this stack one card short (§ 670a.13(h),(k))
    misnumber_stack: int | None = None  # this stack reported under the next number (§ 670a.13(k))
    unread: bool = False  # no card reading (the keypad must supply the cards)
    silent_after_stack: int | None = None  # stops dealing after this stack (§ 670a.13(m)); link still up
    shuffle_failures: int = 0  # the next n shuffles fail (§ 670a.13(l))
    shuffle_fail_code: int = P.SHUFFLE_JAM
    door_open: bool = False
    # multi-deck shoe (§ 686a.3(a), § 686a.5(d), § 686a.7(d))
    cover_at: int | None = None  # the next shuffles put the cover card after this many cards
    no_cover: bool = False  # the cover card is missing (SHUFFLED reports cover 0)
    cover_unreported: bool = False  # the cover card comes out but the shoe does not report it


class ShoeSim(SimDevice):
    """Automated shuffler + dealing shoe with card reading.

    ``deck_size`` is the game's deck (the procedure's ``deck``): 53 cards (52 and the
    joker) or 32 tiles, shuffled before every round; or a multiple of 52 — a multi-deck
    batch (six decks, 312 cards, for Over/Under, § 686a.3(a)) dealt continuously across
    rounds, with a cover card: SHUFFLED says how many cards lie above it (by default a
    random place at most ``deck - ceil(deck/4)`` cards down, i.e. at least 1/4 of the way
    in from the bottom, § 686a.5(d)); when it comes out the shoe sets it aside, reports
    COVER and deals on (§ 686a.7(d)).  The burn card (§ 686a.7(c)) is a one-card stack
    the controller dispenses like any other.
    """

    device = "shoe"

    def __init__(
        self,
        clock: Clock,
        rng: random.Random,
        deck_size: int = 53,
        dispense_s: float = 0.6,
        shuffle_s: float = 2.0,
        link_dir: Path | None = None,
    ):
        super().__init__(clock, rng, link_dir)
        self.deck_size = deck_size
        self.dispense_s = dispense_s
        self.shuffle_s = shuffle_s
        #: decks in a multi-deck batch (0: a single deck or a set of tiles, no cover card)
        self.decks = deck_size // 52 if deck_size > 53 and deck_size % 52 == 0 else 0
        self.deck: deque[int] = deque()
        self.stacks = 0
        self.shoe_faults = ShoeFaults()
        self.stacked_decks: deque[list[int]] = deque()  # scripted decks for tests (top card first)
        self.shuffles = 0
        self.shuffle_failures = 0
        self.cover_at = P.NO_COVER  # cards above the cover card after the last shuffle
        self.dealt = 0  # cards dealt since the last shuffle
        self.cover_out = False
        self.covers = 0  # cover cards that came out

    def batch(self) -> list[int]:
        """Every card of the game's deck, in order: ``decks`` x 0..51, else 0..deck_size-1."""
        if self.decks:
            return [c for _ in range(self.decks) for c in range(52)]
        return list(range(self.deck_size))

    def _flags(self) -> int:
        f = self.shoe_faults
        return (
            P.SHOE_LOADED
            | (P.SHOE_SHUFFLED if self.deck else 0)
            | (P.SHOE_DOOR_OPEN if f.door_open else 0)
            | (0 if f.unread else P.SHOE_READS_CARDS)
        )

    def on_STATUS_REQ(self) -> None:
        self.send("STATUS", flags=self._flags(), remaining=len(self.deck), stacks=self.stacks)

    def _place_cover(self, n: int) -> int:
        f = self.shoe_faults
        if not self.decks or f.no_cover:
            return P.NO_COVER
        if f.cover_at is not None:
            return int(f.cover_at)
        deepest = n - -(-n // 4)  # at least 1/4 of the way in from the bottom
        return self.rng.randint(max(1, deepest - 26), deepest)

    def on_SHUFFLE(self) -> None:
        def done() -> None:
            f = self.shoe_faults
            if f.shuffle_failures > 0:  # § 670a.13(l), § 686a.9(d): jammed / stopped / cycle not completed
                f.shuffle_failures -= 1
                self.shuffle_failures += 1
                self.deck = deque()
                self.send("SHUFFLE_FAILED", code=f.shuffle_fail_code, cards=self.deck_size)
                return
            if self.stacked_decks:
                cards = list(self.stacked_decks.popleft())
            else:
                cards = self.batch()
                self.rng.shuffle(cards)
            self.deck = deque(cards)
            self.stacks = 0
            self.shuffles += 1
            self.dealt = 0
            self.cover_out = False
            self.cover_at = self._place_cover(len(cards))
            self.send("SHUFFLED", cards=len(self.deck), cover=self.cover_at)

        self.sched.later(self.shuffle_s, done)

    def _take(self, stack: int, in_stack: int) -> int:
        """The next card; the cover card, when it is next, comes out first (§ 686a.7(d))."""
        if self.cover_at and not self.cover_out and self.dealt >= self.cover_at:
            self.cover_out = True
            self.covers += 1
            if not self.shoe_faults.cover_unreported:
                self.send("COVER", stack=stack, dealt=in_stack, remaining=len(self.deck))
        self.dealt += 1
        return self.deck.popleft()

    def on_DISPENSE(self, stack: int, cards: int) -> None:
        self.sched.later(self.dispense_s, self._dispense, stack, cards)

    def _dispense(self, stack: int, cards: int) -> None:
        f = self.shoe_faults
        if f.silent_after_stack is not None and stack > f.silent_after_stack:
            self.silent = True
            return
        if not self.deck:
            self.send("ERROR", code=P.ERR_BAD_STATE, text="dispense requested with no shuffled deck")
            return
        if f.jam_at_stack == stack:
            self._jam(stack, cards)
            return
        self._face_up(stack, f.face_up.get(stack, 0))
        self._stack(stack, cards - 1 if f.short_stack == stack else cards)

    def _stack(self, stack: int, n: int) -> None:
        """A stack of (at most) ``n`` cards dealt and reported: the cards not read, or the stack
        misnumbered, as the faults say."""
        f = self.shoe_faults
        dealt = [self._take(stack, i) for i in range(min(n, len(self.deck)))]
        self.stacks += 1
        shown = [P.CARD_UNREAD] * len(dealt) if f.unread else dealt
        number = stack + 1 if f.misnumber_stack == stack else stack
        self.send("STACK", stack=number, count=len(dealt), remaining=len(self.deck), cards=shown)

    def _jam(self, stack: int, cards: int) -> None:
        """The shoe jams part way through a stack: some cards out, then JAM."""
        n = self.rng.randrange(cards)
        for i in range(min(n, len(self.deck))):
            self._take(stack, i)
        self.send("JAM", stack=stack, dispensed=n)

    def _face_up(self, stack: int, count: int) -> None:
        """Each face-up card found is reported and taken out (§ 670a.13(f), § 686a.9(a)): the
        controller burns it (and for 670a voids the round on a second)."""
        for _ in range(count):
            if self.deck:
                self.send("FACE_UP", stack=stack, card=self._take(stack, 0))

    def on_COUNT_REQ(self) -> None:
        f = self.shoe_faults
        self.sched.later(
            0.2,
            lambda: self.send(
                "REMAINING", remaining=len(self.deck) + f.remaining_offset, stacks=self.stacks + f.stacks_offset
            ),
        )


# --------------------------------------------------------------------------- shaker


@dataclass
class ShakerFaults:
    no_rolls: int = 0  # the next n shakes end in "no roll" (§ 670a.13(a),(b); § 621a.10(a))
    no_roll_reason: int = P.NO_ROLL_NOT_FLAT
    short_shake_ms: int | None = None  # next shake reports this duration (< 5 s, § 621a.2(f)(2))
    lid_open: bool = False  # lid/seal open (§ 621a.2(f)(1)); shakes end in NO_ROLL(lid open)
    seal_broken: bool = False
    scripted: deque[tuple[int, int, int, int]] = field(default_factory=deque)  # (d1, d2, d3, red)


class ShakerSim(SimDevice):
    """Dice shaker, dealer- or player-activated (§ 621a.2(f)): ARM names who may start
    the shake (0 = dealer, 1..8 = the activation button at that position); the
    shake starts on ACTIVATE from the controller or on the armed seat's button
    (:meth:`press_button`), lasts ``shake_s`` and ends in RESULT or NO_ROLL."""

    device = "shaker"

    def __init__(self, clock: Clock, rng: random.Random, shake_s: float = 5.0, link_dir: Path | None = None):
        super().__init__(clock, rng, link_dir)
        self.shake_s = shake_s
        self.armed: int | None = None
        self.shaking = False
        self.shaker_faults = ShakerFaults()
        self.rolls: list[tuple[int, int, int, int]] = []

    def _flags(self) -> int:
        f = self.shaker_faults
        return (
            (0 if f.lid_open else P.SHAKER_LID_CLOSED)
            | (0 if f.seal_broken else P.SHAKER_SEALED)
            | (P.SHAKER_ARMED if self.armed is not None else 0)
            | (P.SHAKER_SHAKING if self.shaking else 0)
        )

    def on_STATUS_REQ(self) -> None:
        self.send("STATUS", flags=self._flags())

    def set_lid(self, open_: bool) -> None:
        """Open or close the lid/seal; the shaker reports the change (LID)."""
        self.shaker_faults.lid_open = open_
        self.send("LID", open=1 if open_ else 0)

    def on_ARM(self, who: int) -> None:
        self.armed = who

    def on_DISARM(self) -> None:
        self.armed = None

    def on_ACTIVATE(self, who: int) -> None:
        if self.armed is None or self.shaking:
            self.send(
                "ERROR",
                code=P.ERR_BAD_STATE,
                text="activate while not armed" if not self.shaking else "activate while shaking",
            )
            return
        self._shake(who)

    def press_button(self, seat: int) -> bool:
        """A player presses the activation button at ``seat``: it starts a shake only
        when the shaker is armed for that seat."""
        if self.armed != seat or self.shaking:
            return False
        self._shake(seat)
        return True

    def _shake(self, who: int) -> None:
        f = self.shaker_faults
        shake_ms = f.short_shake_ms if f.short_shake_ms is not None else int(self.shake_s * 1000)
        f.short_shake_ms = None
        self.shaking = True
        self.send("SHAKING", who=who, planned_ms=shake_ms)
        self.sched.later(shake_ms / 1000, self._result, shake_ms)

    def _result(self, shake_ms: int) -> None:
        f = self.shaker_faults
        self.shaking = False
        if f.lid_open:
            self.send("NO_ROLL", reason=P.NO_ROLL_LID_OPEN, shake_ms=shake_ms)
            return
        if f.no_rolls > 0:
            f.no_rolls -= 1
            self.send("NO_ROLL", reason=f.no_roll_reason, shake_ms=shake_ms)
            return
        if f.scripted:
            d1, d2, d3, red = f.scripted.popleft()
        else:
            d1, d2, d3 = (self.rng.randint(1, 6) for _ in range(3))
            red = self.rng.randrange(3)
        self.rolls.append((d1, d2, d3, red))
        self.armed = None  # one result per arming
        self.send("RESULT", d1=d1, d2=d2, d3=d3, red=red, shake_ms=shake_ms)


# --------------------------------------------------------------------------- sign


class SignSim(SimDevice):
    """The progressive sign: remembers what it was told to show."""

    device = "sign"

    def __init__(self, clock: Clock, rng: random.Random, link_dir: Path | None = None):
        super().__init__(clock, rng, link_dir)
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
        with self.clock.idle(ready=lambda: self.message_text.startswith(prefix)), self.changed:
            if not self.changed.wait_for(lambda: self.message_text.startswith(prefix), timeout):
                raise TimeoutError(f"sign never showed {prefix!r}; it shows {self.message_text!r}")
            return self.message_text


# --------------------------------------------------------------------------- keypad


class KeypadSim(SimDevice):
    """The dealer's keypad: shows the controller's prompts; :meth:`enter` is the
    dealer keying a line and pressing enter."""

    device = "keypad"

    def __init__(self, clock: Clock, rng: random.Random, link_dir: Path | None = None):
        super().__init__(clock, rng, link_dir)
        self.prompts: list[str] = []
        self.shown = 0  # the number of the prompt on the display (stamped on each ENTRY)
        self._prompted = threading.Condition()

    def on_STATUS_REQ(self) -> None:
        self.send("STATUS", flags=P.KEYPAD_READY)

    def on_PROMPT(self, prompt: int, text: str) -> None:
        with self._prompted:
            self.shown = prompt
            self.prompts.append(text)
            self._prompted.notify_all()

    def enter(self, text: str) -> None:
        self.send("ENTRY", prompt=self.shown, text=text)

    def wait_shown(self, prompt: int, timeout: float = 30.0) -> None:
        """Wait until prompt number ``prompt`` is on the display: a dealer reads the
        display before keying (an entry answers the prompt shown, docs/protocols.md § 4.4)."""

        def shown() -> bool:  # that prompt or a newer one (numbers wrap after 65535)
            return (self.shown - prompt) % 0xFFFF < 0x8000

        with self._prompted:
            with self.clock.idle(ready=shown):
                if not self._prompted.wait_for(shown, timeout):
                    raise TimeoutError(f"prompt {prompt} never reached the keypad (showing {self.shown})")

    def enter_and_wait(self, text: str, timeout: float = 30.0) -> str:
        """Key a line and wait for the controller's reply on the display."""
        with self._prompted:
            n = len(self.prompts)
            self.send("ENTRY", prompt=self.shown, text=text)
            with self.clock.idle(ready=lambda: len(self.prompts) > n):
                if not self._prompted.wait_for(lambda: len(self.prompts) > n, timeout):
                    raise TimeoutError(f"no reply on the keypad to {text!r}")
            return self.prompts[n]


# --------------------------------------------------------------------------- RNG


class ScriptedRng:
    """The RNG the rig hands the controller (drivers.rng.Rng): scripted draws first
    (``scripted``), then a seeded source; ``biased`` makes the source the classic
    modulo-biased one so the start-up self-test must fail.  :meth:`self_test` tests the
    source, never consuming the script."""

    def __init__(self, seed: int | str = 0, biased: bool = False):
        self.scripted: deque[int] = deque()
        self.biased = biased
        self._r = random.Random(f"{seed}/rng")
        self.draws: list[tuple[int, int]] = []

    def _source(self, n: int) -> int:
        if self.biased:
            return self._r.getrandbits(max(1, (n - 1).bit_length())) % n + 1
        return self._r.randrange(n) + 1

    def draw(self, n: int) -> int:
        v = self.scripted.popleft() if self.scripted else self._source(n)
        if not 1 <= v <= n:
            raise ValueError(f"scripted draw {v} outside 1..{n}")
        self.draws.append((n, v))
        return v

    def self_test(self, rng: Any = None, samples: int = 20_000, sides: Sequence[int] = (7, 8)) -> list[str]:
        from drivers.rng import self_test

        class _Source:
            draw = staticmethod(self._source)

        return self_test(rng if rng is not None else _Source(), samples=samples, sides=sides)
