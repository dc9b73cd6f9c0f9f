"""Roles and PINs, as both the technician console (controller/console/auth.py) and the LAP's floor
view (controller/lap/floor_auth.py) keep them: a PIN is stored only as a salted ``hashlib.scrypt``
hash with its parameters, checked in constant time, written to a private file atomically."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path
from typing import TypedDict

ROLES = ("dealer", "floorperson", "technician")
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


class ScryptParams(TypedDict, total=False):
    """The scrypt cost a PIN is hashed with (tests pass a cheap one)."""

    n: int
    r: int
    p: int


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


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically and durably, mode 0600 (PIN hashes: the console's
    and the floor staff's): a temporary file beside it, fsynced, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
