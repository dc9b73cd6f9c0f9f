"""The floor view's login lock-out (docs/linked.md, "Floor view"): after ``max_failures`` wrong
attempts a person's name is locked for ``lock_s`` seconds.

The count and the lock-out's end are rows of the LAP's schema (``floor_lockouts``,
controller/lap/schema_floor.py), not the LAP process's memory: restarting
``tablectl lap`` does not lift a lock-out, and the lock-out ends by the database's clock
(``clock_timestamp()``), not the process's.  Each attempt is counted *before* its PIN is
checked, in one transaction holding the person's row, so concurrent guesses cannot slip past
the limit; a successful login clears the count (and a lock-out its own attempt set).
The attempts themselves are audited separately (``floor_logins``, append-only).

Names that are not on the staff file are counted too (their answers must look like a real
name's), but their rows are capped: past :data:`MAX_UNKNOWN` such rows, the least recently tried
go, so guessing made-up names cannot grow the table without bound.  A real name's row is never
dropped that way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import psycopg
from psycopg import sql

MAX_FAILURES = 5
LOCK_S = 15 * 60
#: rows kept for names not on the staff file (the least recently tried go first)
MAX_UNKNOWN = 1000

Connect = Callable[[], AbstractContextManager[psycopg.Connection]]


class Lockouts:
    """Per-person failure counts and lock-outs in the LAP's database."""

    def __init__(
        self,
        conn: Connect,
        schema: str,
        max_failures: int = MAX_FAILURES,
        lock_s: float = LOCK_S,
        max_unknown: int = MAX_UNKNOWN,
    ):
        if max_failures < 1 or lock_s <= 0 or max_unknown < 1:
            raise ValueError(
                f"lock-out: max_failures {max_failures} must be >= 1, lock_s {lock_s} > 0, "
                f"max_unknown {max_unknown} >= 1"
            )
        self.conn, self.max_failures, self.lock_s, self.max_unknown = conn, max_failures, lock_s, max_unknown
        self.t = sql.Identifier(schema, "floor_lockouts")

    def attempt(self, person: str, known: bool = True) -> bool:
        """Count an attempt by ``person`` before the PIN is checked; True when the name is locked
        (the attempt is then refused unchecked and counts nothing).  The attempt that reaches
        the limit sets the lock-out; it still opens if its PIN is right (:meth:`succeeded`).
        ``known``: the name is on the staff file (rows of other names are capped, see the module).
        Raises psycopg.Error when the database cannot say (the caller refuses the login)."""
        with self.conn() as c, c.transaction():
            c.execute(
                sql.SQL(
                    "INSERT INTO {} (person, known) VALUES (%s, %s) ON CONFLICT (person) DO UPDATE SET known = %s"
                ).format(self.t),
                (person, known, known),
            )
            # the same statement for every attempt (a real name's answer takes what a made-up one's does)
            c.execute(
                sql.SQL(
                    "DELETE FROM {t} WHERE person IN (SELECT person FROM {t} WHERE NOT known AND person <> %s"
                    " ORDER BY at DESC OFFSET %s)"
                ).format(t=self.t),
                (person, self.max_unknown - 1),
            )
            row = c.execute(
                sql.SQL(
                    "SELECT failures, coalesce(locked_until > clock_timestamp(), false) FROM {}"
                    " WHERE person = %s FOR UPDATE"
                ).format(self.t),
                (person,),
            ).fetchone()
            assert row is not None
            failures, locked = int(row[0]), bool(row[1])
            if locked:
                return True
            if failures + 1 >= self.max_failures:
                c.execute(
                    sql.SQL(
                        "UPDATE {} SET failures = 0, locked_until = clock_timestamp() + make_interval(secs => %s),"
                        " at = clock_timestamp() WHERE person = %s"
                    ).format(self.t),
                    (float(self.lock_s), person),
                )
            else:
                c.execute(
                    sql.SQL(
                        "UPDATE {} SET failures = %s, locked_until = NULL, at = clock_timestamp() WHERE person = %s"
                    ).format(self.t),
                    (failures + 1, person),
                )
            return False

    def succeeded(self, person: str) -> None:
        """A right PIN: the count starts again (and a lock-out this very attempt set ends)."""
        with self.conn() as c:
            c.execute(sql.SQL("DELETE FROM {} WHERE person = %s").format(self.t), (person,))

    def counts(self) -> Iterator[tuple[str, int, float]]:
        """(person, failures, seconds left locked) for every name with a count or a lock-out."""
        with self.conn() as c:
            rows = c.execute(
                sql.SQL(
                    "SELECT person, failures, greatest(extract(epoch FROM locked_until - clock_timestamp()), 0)"
                    " FROM {} ORDER BY person"
                ).format(self.t)
            ).fetchall()
        for person, failures, left in rows:
            yield str(person), int(failures), float(left or 0)
