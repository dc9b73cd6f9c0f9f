"""Console roles, PINs and the login lock-out.

* Three roles: ``dealer``, ``floorperson``, ``technician``; every console
  command names the roles allowed to run it.
* Each role has its own PIN, stored only as a salted ``hashlib.scrypt`` hash
  (with its parameters) in ``<state_dir>/pins.toml`` (mode 0600), written by
  ``tablectl pin set ROLE``.  PINs are 4-12 digits and differ between roles.
* Failed logins are counted per role *and* per endpoint (the console's pty, its
  socket): after :data:`MAX_FAILURES` failures in a row for one role at one
  endpoint, that role is locked at that endpoint for :data:`LOCKOUT_S`.  A dealer's
  failures never lock the technician out, and a success for one role does not
  reset another's counter.
* Time is the monotonic clock, never the wall clock (a lock made while the clock
  was a year ahead once lasted 525,615 minutes).  What survives a restart is the
  *remaining* time: the failures and the lock are ledger events (``console.login``,
  ``console.locked`` with ``remaining_s``), and the remaining time of each active
  lock is kept in ``<state_dir>/console-lockout.json`` (written on each change and
  while a lock runs); :meth:`Lockout.load` rebuilds both at start-up.  A lock is
  never longer than its period, whatever any clock says.
* A technician may lift a lock (``unlock ROLE`` at the console): a
  ``console.unlocked`` ledger event, with who did it.
"""

from __future__ import annotations

import hashlib
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, Unpack

from controller.core.pinhash import (
    PIN_MAX,
    PIN_MIN,
    ROLES,
    PinError,
    ScryptParams,
    check_pin_format,
    check_role,
    hash_pin,
    verify_pin,
    write_private,
)
from controller.core.records import Kind
from controller.core.safefile import read_bounded, read_text_bounded

__all__ = [
    "LOCKOUT_S",
    "LOCK_FILE",
    "MAX_FAILURES",
    "PIN_FILE",
    "PIN_MAX",
    "PIN_MIN",
    "ROLES",
    "Lockout",
    "PinError",
    "PinStore",
    "check_pin_format",
    "check_role",
    "hash_pin",
    "verify_pin",
    "write_private",
]

PIN_FILE = "pins.toml"
MAX_FAILURES = 5
LOCKOUT_S = 15 * 60


class PinStore:
    """The PIN file: ``[role]`` tables with ``hash`` and ``set_at``."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def load(self) -> dict[str, dict[str, str]]:
        try:
            doc = tomllib.loads(read_text_bounded(self.path))  # bounded, never through a link
        except FileNotFoundError:
            return {}
        return {r: {k: str(v) for k, v in doc[r].items()} for r in ROLES if isinstance(doc.get(r), dict)}

    def roles_set(self) -> list[str]:
        return [r for r in ROLES if "hash" in self.load().get(r, {})]

    def fingerprint(self) -> str:
        """SHA-256 of the file (to notice and log a PIN change); '' when absent."""
        try:
            return hashlib.sha256(read_bounded(self.path)).hexdigest()
        except FileNotFoundError:
            return ""

    def verify(self, role: str, pin: str) -> bool | None:
        """True/False; None when no PIN is set for the role."""
        entry = self.load().get(role)
        if not entry or "hash" not in entry:
            return None
        return verify_pin(pin, entry["hash"])

    def set(self, role: str, pin: str, **scrypt: Unpack[ScryptParams]) -> None:
        check_role(role)
        check_pin_format(pin)
        doc = self.load()
        for other, entry in doc.items():
            if other != role and "hash" in entry and verify_pin(pin, entry["hash"]):
                raise PinError(f"that PIN is already the {other}'s; each role needs its own PIN")
        doc[role] = {"hash": hash_pin(pin, **scrypt), "set_at": datetime.now(UTC).isoformat(timespec="seconds")}
        lines = [
            "# tablectl console PINs: salted scrypt hashes, never the PINs.",
            "# Written by `tablectl pin set ROLE`; format scrypt$N$r$p$salt$hash (hex).",
            "",
        ]
        for r in ROLES:
            if r in doc:
                lines += [f"[{r}]"] + [f'{k} = "{v}"' for k, v in sorted(doc[r].items())] + [""]
        write_private(self.path, "\n".join(lines))


LOCK_FILE = "console-lockout.json"

Key = tuple[str, str]  # (role, endpoint)


class LoginEvent(Protocol):
    """A ledger event the lock-out is rebuilt from (``console.login``, ``.locked``, ``.unlocked``)."""

    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> Mapping[str, object]: ...


def key_name(key: Key) -> str:
    return f"{key[0]}@{key[1]}"


class Lockout:
    """Failed logins and the locks they cause, per (role, endpoint), on the monotonic clock."""

    def __init__(
        self,
        max_failures: int = MAX_FAILURES,
        period_s: float = LOCKOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.max_failures = max_failures
        self.period_s = period_s
        self.clock = clock
        self.failures: dict[Key, int] = {}
        self._until: dict[Key, float] = {}  # monotonic end of each active lock

    def load(self, events: Iterable[LoginEvent], remaining: Mapping[str, float] | None) -> None:
        """Rebuild from ledger events, newest first (``console.login``, ``console.locked``,
        ``console.unlocked``), and the remaining times saved (None: no file was found — a
        lock in the ledger then gets what it had when it was recorded, at most its period)."""
        self.failures, self._until = {}, {}
        closed: set[Key] = set()
        unlocked: set[str] = set()
        now = self.clock()
        for ev in events:
            d = ev.data
            role, endpoint = d.get("role"), d.get("console")
            if ev.kind == Kind.CONSOLE_UNLOCKED and isinstance(role, str):
                unlocked.add(role)
                continue
            if not isinstance(role, str) or not isinstance(endpoint, str):
                continue  # an event of the old format (one console-wide counter): not carried over
            key = (role, endpoint)
            if key in closed or role in unlocked:
                continue
            if ev.kind == Kind.CONSOLE_LOCKED:
                closed.add(key)
                self._restore_lock(key, d, remaining, now)
            elif ev.kind == Kind.CONSOLE_LOGIN:
                self._replay_login(key, d, closed)

    def _restore_lock(
        self, key: Key, d: Mapping[str, object], remaining: Mapping[str, float] | None, now: float
    ) -> None:
        """The newest lock of ``key``: what is left of it (saved, else as recorded), at most a period."""
        recorded = d.get("remaining_s", self.period_s)
        if remaining is not None:
            left = remaining.get(key_name(key))
        else:  # a recorded time that is not a number is no lock to restore
            left = float(recorded) if isinstance(recorded, (int, float)) else None
        if left is not None and left > 0:
            self._until[key] = now + min(float(left), self.period_s)

    def _replay_login(self, key: Key, d: Mapping[str, object], closed: set[Key]) -> None:
        """A login since the newest lock: a success ends the count (older events no longer matter),
        a counted failure adds to it."""
        if d.get("ok"):
            closed.add(key)
        elif d.get("counted", True):
            self.failures[key] = self.failures.get(key, 0) + 1

    def remaining(self, role: str, endpoint: str) -> float:
        """Seconds ``role`` stays locked at ``endpoint`` (0 when not locked)."""
        key = (role, endpoint)
        until = self._until.get(key)
        if until is None:
            return 0.0
        left = min(until - self.clock(), self.period_s)
        if left <= 0:
            del self._until[key]
            return 0.0
        return left

    def fail(self, role: str, endpoint: str) -> tuple[int, bool]:
        """Count a failure; returns (the failures counted, whether this one locks)."""
        key = (role, endpoint)
        n = self.failures.get(key, 0) + 1
        if n >= self.max_failures:
            self.failures.pop(key, None)
            self._until[key] = self.clock() + self.period_s
            return n, True
        self.failures[key] = n
        return n, False

    def succeed(self, role: str, endpoint: str) -> None:
        self.failures.pop((role, endpoint), None)

    def unlock(self, role: str) -> list[str]:
        """A technician's override: lift ``role``'s locks and counters at every endpoint;
        returns the endpoints that were locked."""
        was = sorted(e for (r, e) in self._until if r == role and self.remaining(r, e) > 0)
        self._until = {k: v for k, v in self._until.items() if k[0] != role}
        self.failures = {k: v for k, v in self.failures.items() if k[0] != role}
        return was

    def snapshot(self) -> dict[str, float]:
        """The remaining time of each active lock (what the lock file keeps)."""
        out = {}
        for role, endpoint in list(self._until):
            left = self.remaining(role, endpoint)
            if left > 0:
                out[key_name((role, endpoint))] = round(left, 3)
        return out
