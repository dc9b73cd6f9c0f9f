"""Who may open the floor view (docs/linked.md, "Floor view"): the staff file, sessions and the login.

- :class:`StaffStore`: ``floor-staff.toml``, per-person salted scrypt hashes with the console's
  roles (controller/core/pinhash.py); only a ``floorperson`` or ``technician`` opens the page.
- :class:`Sessions`: random tokens (the cookie) that expire; each session carries its own CSRF
  token, which every POST but the login must send back (controller/lap/floor_server.py).
- :class:`Login`: one attempt, start to end.  Its answer takes the same work whether the name is
  on the staff file or not (an unknown name's PIN is checked against a dummy scrypt hash with the
  same parameters, and it is counted in the lock-out table like any other), so the time it takes
  does not tell a real name from a made-up one.  Failures per name lock that name for a while
  (controller/lap/floorlock.py, in the LAP's database); the rows kept for names that are not on
  the staff file are capped (:data:`controller.lap.floorlock.MAX_UNKNOWN`), so guessing names
  cannot grow the table without bound.  Every attempt is recorded in ``floor_logins``.
"""

from __future__ import annotations

import secrets
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from psycopg import sql

from controller.core.pinhash import ROLES, PinError, check_pin_format, check_role, hash_pin, verify_pin, write_private
from controller.lap.floorlock import Connect, Lockouts

FLOOR_ROLES = ("floorperson", "technician")  # a dealer's PIN does not open the floor view
NAME_MAX = 40
#: checked for a name that is not on the staff file, so that its answer costs what a real one does
_DUMMY_HASH = hash_pin("0000000000")

Log = Callable[[str], None]


class StaffStore:
    """``floor-staff.toml``: ``[people.NAME]`` with ``role`` and ``hash`` (scrypt, as the console's)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def load(self) -> dict[str, dict[str, str]]:
        try:
            doc = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        people = doc.get("people", {})
        return {str(k): {a: str(b) for a, b in v.items()} for k, v in people.items() if isinstance(v, dict)}

    def set(self, person: str, role: str, pin: str) -> None:
        check_role(role)
        check_pin_format(pin)
        if not person.replace("-", "").replace("_", "").replace(".", "").isalnum() or len(person) > NAME_MAX:
            raise PinError(f"a person's name: letters, digits, - _ . (max {NAME_MAX}), got {person!r}")
        doc = self.load()
        doc[person] = {"role": role, "hash": hash_pin(pin), "set_at": datetime.now(UTC).isoformat(timespec="seconds")}
        lines = ["# tablectl floor staff: salted scrypt hashes, never the PINs (`tablectl lap --staff-pin`).", ""]
        for name in sorted(doc):
            lines += [f'[people."{name}"]'] + [f'{k} = "{v}"' for k, v in sorted(doc[name].items())] + [""]
        write_private(self.path, "\n".join(lines))

    def check(self, person: str, pin: str) -> tuple[str | None, str]:
        """(role, why): the role when the PIN is the person's and the role may see the floor.
        One scrypt verification whether or not the name is known (the dummy hash otherwise)."""
        entry = self.load().get(person)
        ok = verify_pin(pin, entry.get("hash", _DUMMY_HASH) if entry else _DUMMY_HASH)
        if entry is None or not ok:
            return None, "wrong name or PIN"
        role = entry.get("role", "")
        if role not in ROLES:
            return None, f"unknown role {role!r}"
        if role not in FLOOR_ROLES:
            return None, f"a {role} may not open the floor view"
        return role, "ok"

    def known(self, person: str) -> bool:
        return person in self.load()


@dataclass
class Session:
    person: str
    role: str
    expires: float
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))


@dataclass
class Sessions:
    ttl_s: float
    now: Callable[[], float] = time.monotonic
    _by_token: dict[str, Session] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def new(self, person: str, role: str) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._drop_expired()
            self._by_token[token] = Session(person, role, self.now() + self.ttl_s)
        return token

    def _drop_expired(self) -> None:
        n = self.now()
        for t in [t for t, s in self._by_token.items() if s.expires <= n]:
            del self._by_token[t]

    def get(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self._lock:
            s = self._by_token.get(token)
            if s is not None and s.expires <= self.now():
                del self._by_token[token]
                return None
            return s

    def end(self, token: str | None) -> None:
        with self._lock:
            self._by_token.pop(token or "", None)


class Login:
    """One login attempt against the staff file, the lock-outs and the audit (all blocking: the
    server runs it on its worker threads)."""

    def __init__(self, conn: Connect, schema: str, staff: StaffStore, sessions: Sessions, log: Log):
        self.conn, self.schema, self.staff, self.sessions, self.log = conn, schema, staff, sessions, log
        # failures and lock-outs per person live in the LAP's database (a restart lifts none)
        self.lockouts = Lockouts(conn, schema)

    def audit(self, person: str, role: str | None, ok: bool, why: str, addr: str) -> None:
        try:
            with self.conn() as c:
                c.execute(
                    sql.SQL(
                        "INSERT INTO {}.floor_logins (person, role, ok, why, addr) VALUES (%s, %s, %s, %s, %s)"
                    ).format(sql.Identifier(self.schema)),
                    (person[:NAME_MAX], role, ok, why, addr[:64]),
                )
        except psycopg.Error as e:
            self.log(f"lap: floor login not recorded ({e}); refused")
            raise

    def __call__(self, person: str, pin: str, addr: str) -> tuple[str | None, str]:
        """(session token, message)."""
        person = person.strip()[:NAME_MAX]
        pin = pin[:64]
        try:
            locked = self.lockouts.attempt(person, known=self.staff.known(person))
        except psycopg.Error as e:
            self.log(f"lap: floor login lock-out not readable ({e}); refused")
            return None, "the login could not be recorded"
        if locked:
            why = "locked after repeated failures"
            try:
                self.audit(person, None, False, why, addr)
            except psycopg.Error:
                pass  # refused either way
            return None, why
        role, why = self.staff.check(person, pin)
        try:
            if role is not None:
                self.lockouts.succeeded(person)
            self.audit(person, role, role is not None, why, addr)
        except psycopg.Error:
            return None, "the login could not be recorded"
        if role is None:
            return None, why
        return self.sessions.new(person, role), "ok"
