"""Console roles, PINs and the login lock-out (issue 6 item 1).

* Three roles: ``dealer``, ``floorperson``, ``technician``; every console
  command names the roles allowed to run it.
* Each role has its own PIN, stored only as a salted ``hashlib.scrypt`` hash
  (with its parameters) in ``<state_dir>/pins.toml`` (mode 0600), written by
  ``tablectl pin set ROLE``.  PINs are 4-12 digits and differ between roles.
* After :data:`MAX_FAILURES` consecutive failed logins the console is locked
  for :data:`LOCKOUT_S`.  The failures and the lock are ledger events
  (``console.login``, ``console.locked``), so the lock survives a restart:
  :meth:`Lockout.load` rebuilds it from the ledger at start-up.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.records import Kind

ROLES = ("dealer", "floorperson", "technician")
PIN_FILE = "pins.toml"
MAX_FAILURES = 5
LOCKOUT_S = 15 * 60
PIN_MIN, PIN_MAX = 4, 12
SCRYPT_N, SCRYPT_R, SCRYPT_P, SCRYPT_LEN = 2**14, 8, 1, 32


class PinError(ValueError):
    """A PIN that cannot be used, or a role that does not exist."""


def check_role(role: str) -> str:
    if role not in ROLES:
        raise PinError(f"unknown role {role!r} (roles: {', '.join(ROLES)})")
    return role


def check_pin_format(pin: str) -> str:
    if not (pin.isascii() and pin.isdigit() and PIN_MIN <= len(pin) <= PIN_MAX):
        raise PinError(f"a PIN is {PIN_MIN} to {PIN_MAX} digits")
    return pin


def hash_pin(pin: str, *, n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P, salt: bytes | None = None) -> str:
    salt = salt if salt is not None else secrets.token_bytes(16)
    h = hashlib.scrypt(pin.encode(), salt=salt, n=n, r=r, p=p, dklen=SCRYPT_LEN, maxmem=64 * 1024 * 1024)
    return f"scrypt${n}${r}${p}${salt.hex()}${h.hex()}"


def verify_pin(pin: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, want = stored.split("$")
        if scheme != "scrypt":
            return False
        got = hashlib.scrypt(
            pin.encode(),
            salt=bytes.fromhex(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(bytes.fromhex(want)),
            maxmem=64 * 1024 * 1024,
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got.hex(), want)


class PinStore:
    """The PIN file: ``[role]`` tables with ``hash`` and ``set_at``."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def load(self) -> dict[str, dict[str, str]]:
        try:
            doc = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        return {r: {k: str(v) for k, v in doc[r].items()} for r in ROLES if isinstance(doc.get(r), dict)}

    def roles_set(self) -> list[str]:
        return [r for r in ROLES if "hash" in self.load().get(r, {})]

    def fingerprint(self) -> str:
        """SHA-256 of the file (to notice and log a PIN change); '' when absent."""
        try:
            return hashlib.sha256(self.path.read_bytes()).hexdigest()
        except FileNotFoundError:
            return ""

    def verify(self, role: str, pin: str) -> bool | None:
        """True/False; None when no PIN is set for the role."""
        entry = self.load().get(role)
        if not entry or "hash" not in entry:
            return None
        return verify_pin(pin, entry["hash"])

    def set(self, role: str, pin: str, **scrypt: Any) -> None:
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".pins-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


@dataclass
class Lockout:
    """Consecutive failed logins and the lock they cause (shared by all console endpoints)."""

    max_failures: int = MAX_FAILURES
    period_s: float = LOCKOUT_S
    wall: Callable[[], float] = time.time
    failures: int = 0
    locked_until: float = 0.0

    def load(self, events: Iterable[Any]) -> None:
        """Rebuild from ledger events, newest first (``console.login``/``console.locked``)."""
        self.failures, self.locked_until = 0, 0.0
        for ev in events:
            if ev.kind == Kind.CONSOLE_LOCKED:
                self.locked_until = float(ev.data.get("until", 0))
                break
            if ev.kind == Kind.CONSOLE_LOGIN:
                if ev.data.get("ok"):
                    break
                if ev.data.get("counted", True):
                    self.failures += 1

    def remaining(self) -> float:
        """Seconds the console stays locked (0 when not locked)."""
        left = self.locked_until - self.wall()
        if left <= 0 and self.locked_until:
            self.locked_until = 0.0
        return max(0.0, left)

    def fail(self) -> float | None:
        """Count a failure; returns the lock's end (epoch seconds) if this one locks."""
        self.failures += 1
        if self.failures >= self.max_failures:
            self.failures = 0
            self.locked_until = self.wall() + self.period_s
            return self.locked_until
        return None

    def succeed(self) -> None:
        self.failures = 0
