"""The simulator's game clock: a :class:`controller.core.clock.ScaledClock` that skips idle time.

A simulated round spends most of its game time waiting: the 5-second shake
(§ 621a.2(f)(2)), the shoe's shuffle and dispensing delays, the dealer's and the
players' pauses.  At 50x that is still most of the wall time, while the work
itself takes a few milliseconds.  So, in the style
of a discrete-event simulation, when every party of the simulation is idle and
nothing is in flight between them, this clock jumps straight to the earliest
moment one of them waits for.  Game time keeps its order (no wake-up is passed
over; timers fire in the order of their game times); only the empty stretches
between wake-ups cost no wall time any more.

*Parties* are the threads that act in game time: the reactor (through
:meth:`Clock.idle` around its queue wait), the simulators' schedulers
(hil/sched.py), and the thread that drives the rig (the simulated people, a
scenario, a test), registered by :meth:`Rig.start`.  A party is idle only inside
a clock wait (:meth:`sleep`, :meth:`wait_for`, :meth:`idle`) and only while its
``ready()`` is false; a registered party anywhere else — computing, or blocked
in something the clock does not know — is busy, and then nothing is skipped:
the clock runs at its plain ``speed``, exactly like :class:`ScaledClock`.

*Flights* are work handed between threads that are not parties: a message on its
way over a pty and through a link's threads, a ledger commit on the writer
thread.  The rig counts them (:meth:`flight_begin` where a message is sent or a
commit submitted, :meth:`flight_end` where it has been handled) — see
``Rig._instrument``.  While any flight is open nothing is skipped.  A flight
that never lands (a muted device, a frame lost for good) is forgotten after
``FLIGHT_EXPIRY_S`` real seconds.

What this clock never skips to: the controller's own wake-ups.  The reactor is a
party too, but a *held* one (``expect(..., skip_to=False)``): its timers — the
table's device response deadlines, the debouncer's windows — are never a skip
target, and no skip passes over one; they come at the clock's plain speed,
exactly as before.  So the table judges time as it always did: a device
deadline is 30 s of game time at 50x with its floor of ``MIN_REAL_S`` real
seconds (controller/play/dealing.py), and a simulated device that answers 150 game
seconds late is as late, in game and in real time, as it ever was.  Only the
simulated world's waits — the simulators' delays, the people's pauses — are
skipped.  And wire time is never touched: ACK deadlines, heartbeats and the
device-lost rule run on ``time.monotonic`` (drivers/link.py).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TypeVar

from controller.core.clock import ScaledClock

T = TypeVar("T")

#: real seconds after which a flight that never landed is forgotten: by then its link has given
#: up on it (ACK timeout x transmissions: 0.8 s by default), and the table calls a device that
#: slow a fault anyway (controller/play/dealing.py MIN_REAL_S, the same 2 s)
FLIGHT_EXPIRY_S = 2.0
_EPS = 1e-9  # a skip lands this much past the wake-up, so that now() >= until despite rounding
#: real seconds a thread waits on the clock at most before it looks again (a flight may have expired)
_RECHECK_S = 0.25


class _Party:
    __slots__ = ("name", "thread", "idle", "until", "ready", "wake", "skip_to")

    def __init__(self, name: str, thread: threading.Thread | None = None, *, skip_to: bool = True):
        self.name = name
        self.thread = thread
        self.skip_to = skip_to  # False: its wake-ups are never skipped to (the controller's)
        self.idle = False
        self.until: float | None = None
        self.ready: Callable[[], bool] | None = None
        self.wake: Callable[[], None] | None = None

    def __repr__(self) -> str:
        state = f"idle until {self.until}" if self.idle else "busy"
        return f"<party {self.name} {state}>"


_Saved = tuple[bool, float | None, Callable[[], bool] | None, Callable[[], None] | None]


class _Idle:
    """The context manager :meth:`SimClock.idle` returns."""

    __slots__ = ("clock", "until", "ready", "wake", "party", "saved")

    def __init__(
        self,
        clock: SimClock,
        until: float | None,
        ready: Callable[[], bool] | None,
        wake: Callable[[], None] | None,
    ):
        self.clock, self.until, self.ready, self.wake = clock, until, ready, wake

    def __enter__(self) -> None:
        c = self.clock
        with c._cv:
            self.party = c._me()
            self.saved = c._save(self.party)
            c._set_idle(self.party, self.until, self.ready, self.wake, bump=True)

    def __exit__(self, *exc: object) -> None:
        c = self.clock
        with c._cv:
            c._restore(self.party, self.saved)


class SimClock(ScaledClock):
    """:class:`ScaledClock` plus idle skip (see the module's docstring).

    ``skip=False`` gives a plain scaled clock (``tablectl sim --no-idle-skip``,
    ``--realtime``).  Skipping starts only once :attr:`armed` is set — by the rig,
    when it has hooked the flight counting into the service; a service that is not
    instrumented never sees a skip."""

    def __init__(self, speed: float = 50.0, *, skip: bool = True):
        super().__init__(speed)
        self.skip = skip
        self.armed = False
        self._offset = 0.0
        self._cv = threading.Condition(threading.Lock())
        self._parties: dict[threading.Thread, _Party] = {}
        self._busy: set[_Party] = set()  # the parties not idle now (most checks end here)
        self._expected: dict[str, _Party] = {}  # thread name -> a party whose thread has not waited yet
        self._flights: dict[str, deque[float]] = {}
        self._gen = 0  # bumped whenever something may have changed what a waiting thread looks at
        self._sleepers = 0  # threads in self._cv.wait (nobody to notify: no notify)
        #: statistics: skips made, game seconds skipped, flights counted, flights forgotten after FLIGHT_EXPIRY_S
        self.skips = 0
        self.flights = 0
        self.skipped_s = 0.0
        self.expired = 0

    # ------------------------------------------------------------------ time
    def now(self) -> float:
        return (time.monotonic() - self._real0) * self.speed + self._offset

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.wait_for(None, game_s=seconds)

    def wait(self, event: threading.Event, seconds: float | None) -> bool:
        return bool(self.wait_for(event.is_set, game_s=seconds, interval=0.005, cheap=True))

    def idle(
        self,
        until: float | None = None,
        ready: Callable[[], bool] | None = None,
        wake: Callable[[], None] | None = None,
    ) -> _Idle:
        return _Idle(self, until, ready, wake)

    def wait_for(
        self,
        pred: Callable[[], T] | None,
        *,
        game_s: float | None = None,
        real_s: float | None = None,
        interval: float = 0.05,
        cheap: bool = False,
    ) -> T | None:
        """Block until ``pred()`` is true (returns its value), or ``game_s`` of game time or
        ``real_s`` of real time have passed (returns its last, false value; None without a
        ``pred``).  The thread is idle meanwhile: ``pred`` is looked at again whenever
        another party has done something (and every ``interval`` real seconds), so it may
        be as costly as reading the ledger.  ``cheap``: ``pred`` takes no lock and may run on
        any thread; the clock then also looks at it itself before it skips (for a ``pred``
        that something other than a party may make true, e.g. an event set by a timer)."""
        deadline = None if game_s is None else self.now() + game_s
        real_end = None if real_s is None else time.monotonic() + real_s
        v: T | None = None
        with self._cv:
            p = self._me()
            saved = self._save(p)
            try:
                while True:
                    g = self._gen
                    if pred is not None:
                        v = self._look(pred)
                        if v:
                            return v
                        if self._gen != g:
                            continue  # something happened while looking: look again
                    waits = self._time_left(deadline, real_end)
                    if waits is None:
                        return v
                    ready = None
                    if pred is not None:
                        waits.append(interval)
                        ready = self._changed_since(g, pred if cheap else None)
                    # a sleeper has finished its work (bump); a watcher only looks (no bump)
                    self._set_idle(p, deadline, ready, None, bump=pred is None)
                    if deadline is not None and self.now() >= deadline:
                        continue  # skipped to our own wake-up
                    if self.armed:  # look again now and then: an open flight may expire meanwhile
                        waits.append(_RECHECK_S)
                    self._sleep(waits)
            finally:
                self._restore(p, saved)

    def _sleep(self, waits: list[float]) -> None:
        """Wait on the clock (its lock held) for the shortest of ``waits`` real seconds, or a notify."""
        self._sleepers += 1
        try:
            self._cv.wait(min(waits) if waits else None)
        finally:
            self._sleepers -= 1

    def _look(self, pred: Callable[[], T]) -> T:
        """``pred()`` called without the clock's lock (held again after)."""
        self._cv.release()
        try:
            return pred()
        finally:
            self._cv.acquire()

    def _time_left(self, deadline: float | None, real_end: float | None) -> list[float] | None:
        """The real seconds left until the game-time ``deadline`` and the real ``real_end`` (those
        given); None once either has passed."""
        waits: list[float] = []
        if deadline is not None:
            left = deadline - self.now()
            if left <= 0:
                return None
            waits.append(left / self.speed)
        if real_end is not None:
            left = real_end - time.monotonic()
            if left <= 0:
                return None
            waits.append(left)
        return waits

    def _changed_since(self, g: int, pred: Callable[[], object] | None) -> Callable[[], bool]:
        if pred is None:
            return lambda: self._gen != g
        return lambda: self._gen != g or bool(pred())

    # ------------------------------------------------------------------ parties
    def register(self, thread: threading.Thread | None = None) -> None:
        """Make ``thread`` (default: the calling thread) a party: from now on the clock
        skips only while it waits on the clock.  A thread becomes a party anyway the
        first time it waits on the clock."""
        t = thread or threading.current_thread()
        with self._cv:
            if t not in self._parties:
                p = self._parties[t] = _Party(t.name, t)
                self._busy.add(p)

    def expect(self, name: str, *, skip_to: bool = True) -> None:
        """A party is coming: the thread named ``name`` (e.g. the service's ``reactor``);
        nothing is skipped until it has waited on the clock once.  ``skip_to=False``: the
        controller's thread, whose wake-ups are never skipped to (see the module's docstring)."""
        with self._cv:
            self._expected[name] = _Party(name, skip_to=skip_to)

    def flight_begin(self, key: str) -> None:
        """Work handed to threads that are not parties (see the module's docstring)."""
        with self._cv:
            self._flights.setdefault(key, deque()).append(time.monotonic())
            self.flights += 1

    def flight_end(self, key: str) -> None:
        """The oldest open flight under ``key`` has been handled."""
        with self._cv:
            q = self._flights.get(key)
            if q:
                q.popleft()
            self._bump()
            self._maybe_skip()

    def open_flights(self) -> dict[str, int]:
        with self._cv:
            return {k: len(q) for k, q in self._flights.items() if q}

    def parties(self) -> list[str]:
        with self._cv:
            return [repr(p) for p in self._parties.values()] + [f"<expected {n}>" for n in self._expected]

    # ------------------------------------------------------------------ internals (lock held)
    def _me(self) -> _Party:
        t = threading.current_thread()
        p = self._parties.get(t)
        if p is None:
            p = self._expected.pop(t.name, None) or _Party(t.name)
            p.thread = t
            self._parties[t] = p
            self._busy.add(p)
        return p

    @staticmethod
    def _save(p: _Party) -> _Saved:
        return (p.idle, p.until, p.ready, p.wake)

    def _restore(self, p: _Party, saved: _Saved) -> None:
        p.idle, p.until, p.ready, p.wake = saved
        if not p.idle:
            self._busy.add(p)

    def _bump(self) -> None:
        self._gen += 1
        if self._sleepers:
            self._cv.notify_all()

    def _set_idle(
        self,
        p: _Party,
        until: float | None,
        ready: Callable[[], bool] | None,
        wake: Callable[[], None] | None,
        *,
        bump: bool,
    ) -> None:
        first = not p.idle
        p.idle, p.until, p.ready, p.wake = True, until, ready, wake
        if first:
            self._busy.discard(p)
            if bump:
                self._bump()
        self._maybe_skip()

    def _maybe_skip(self) -> None:
        """Jump to the earliest wake-up if every party is idle and nothing is in flight."""
        target = self._skip_target()
        if target is None:
            return
        now = self.now()
        if target <= now:
            return  # due already: its owner is waking up by itself
        self._jump(target - now + _EPS)

    def _skip_target(self) -> float | None:
        """The earliest wake-up, when the clock may jump to it: skipping armed, nothing expected or
        in flight, every party idle, and the wake-up one that may be skipped to."""
        if not (self.skip and self.armed) or self._expected:
            return None
        if not self._busy_gone() or self._in_flight():
            return None
        earliest = self._earliest()
        if earliest is None:
            return None
        target, owners = earliest
        if not owners:
            return None  # everybody waits for somebody else: nothing to skip to
        if not all(p.skip_to for p in owners):
            return None  # the controller's own wake-up comes first: it comes at the clock's speed
        return target

    def _busy_gone(self) -> bool:
        """True when no party is at work (a thread that ended leaves its party behind: dropped)."""
        for p in self._busy:
            t = p.thread
            if t is None or t.ident is None or t.is_alive():
                return False
        for p in self._busy:
            if p.thread is not None:
                self._parties.pop(p.thread, None)
        self._busy.clear()
        return True

    def _in_flight(self) -> bool:
        """True when a message is in flight (those older than FLIGHT_EXPIRY_S are dropped)."""
        real = time.monotonic()
        for q in self._flights.values():
            while q and real - q[0] > FLIGHT_EXPIRY_S:
                q.popleft()
                self.expired += 1
            if q:
                return True
        return False

    def _earliest(self) -> tuple[float, list[_Party]] | None:
        """The earliest wake-up and the parties waiting for it; None when a party is about to act."""
        target = math.inf
        owners: list[_Party] = []
        for p in self._parties.values():  # all idle now
            if _about_to_act(p):
                return None
            if p.until is None:
                continue
            if p.until < target:
                target, owners = p.until, [p]
            elif p.until == target:
                owners.append(p)
        return target, owners

    def _jump(self, jump: float) -> None:
        self._offset += jump
        self.skips += 1
        self.skipped_s += jump
        for p in self._parties.values():  # whoever waits for a time looks at the clock again (a wait counted
            if p.wake is not None and p.until is not None:  # in real time would now be too long)
                p.wake()
        self._bump()


def _about_to_act(p: _Party) -> bool:
    """An idle party whose ready predicate holds (or fails: that counts as "about to act")."""
    if p.ready is None:
        return False
    try:
        return bool(p.ready())
    except Exception:  # noqa: BLE001 - a predicate that fails counts as "about to act"
        return True
