"""Console commands: the registry, the roles allowed to run each one, argument
completion, and the per-command context (:class:`Ctx`) through which a command
reaches the table (on the reactor thread) and the event log.

Every command, accepted or not, is written to the event log as a
``console.command`` record (role, command, arguments, outcome) *before* its
reply is shown.  A command that changes the table does its checks and its
change in one call on the reactor thread (:meth:`Ctx.act`), so nothing can
slip in between the check and the change, and the ``console.command`` record
sits next to the records of the change (before them, or right after them where
the table itself validates the request before changing anything).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from controller.console.auth import ROLES
from controller.core.records import Kind

if TYPE_CHECKING:
    from controller.books.ledger import Record
    from controller.console.port import ConsoleService, ConsoleTable
    from controller.console.server import ConsoleServer
    from controller.console.session import Session

T = TypeVar("T")
#: an argument's completion choices: the words, or a function giving them when asked
Choices = Sequence[str] | Callable[[], Iterable[str]]

ALL = ROLES
FLOOR = ("floorperson", "technician")
TECH = ("technician",)


class CommandError(ValueError):
    """An unknown command or a bad argument: a one-line error, nothing changes."""


class Refused(Exception):
    """The command is valid but the table cannot do it now (e.g. not between rounds)."""


@dataclass(frozen=True)
class Command:
    name: str
    roles: tuple[str, ...]
    usage: str
    summary: str
    run: Callable[[Ctx, list[str]], str]
    args: tuple[Choices, ...] = ()  # completion choices per argument position


REGISTRY: dict[str, Command] = {}


def command(
    name: str, roles: Sequence[str], usage: str, summary: str, args: Sequence[Choices] = ()
) -> Callable[[Callable[[Ctx, list[str]], str]], Callable[..., str]]:
    def deco(fn: Callable[[Ctx, list[str]], str]) -> Callable[..., str]:
        REGISTRY[name] = Command(
            name, tuple(roles), usage, summary, fn, tuple(a if callable(a) else tuple(a) for a in args)
        )
        return fn

    return deco


def complete(role: str, buf: str) -> list[str]:
    words = buf.split(" ")
    if len(words) == 1:
        return sorted(n for n, c in REGISTRY.items() if role in c.roles and n.startswith(words[0]))
    c = REGISTRY.get(words[0])
    if c is None or role not in c.roles:
        return []
    return _complete_argument(c, words)


def _complete_argument(c: Command, words: list[str]) -> list[str]:
    """The choices for the argument being typed (the last of ``words``), by its position."""
    pos = len([w for w in words[1:-1] if w])
    if pos >= len(c.args):
        return []
    arg = c.args[pos]
    choices = arg() if callable(arg) else arg
    return sorted(x for x in choices if x.startswith(words[-1]))


def want_args(args: list[str], lo: int, hi: int | None, usage: str) -> None:
    if len(args) < lo or (hi is not None and len(args) > hi):
        raise CommandError(f"usage: {usage}")


def parse_int(text: str, what: str, lo: int, hi: int) -> int:
    if not text.isdigit():
        raise CommandError(f"{what} must be a whole number {lo}..{hi}, got {text!r}")
    v = int(text)
    if not lo <= v <= hi:
        raise CommandError(f"{what} must be {lo}..{hi}, got {v}")
    return v


class Log(Protocol):
    """Writes a command's ``console.command`` record (``ok``), with what it adds."""

    def __call__(self, **detail: object) -> None: ...


@dataclass
class Ctx:
    session: Session
    role: str
    name: str
    args: list[str]
    logged: bool = False
    detail: dict[str, object] = field(default_factory=dict)  # added to the ok record of a read-only command

    @property
    def service(self) -> ConsoleService:
        return self.session.server.service

    @property
    def server(self) -> ConsoleServer:
        return self.session.server

    def call(self, fn: Callable[..., T], *args: object) -> T:
        """Run ``fn(*args)`` on the reactor thread (the table's owner)."""
        return self.service.call(fn, *args, timeout=self.server.limits.call_timeout)

    def table(self) -> ConsoleTable:
        """The table, on the reactor thread (:meth:`call`, :meth:`act`)."""
        table = self.service.table
        if table is None:
            raise Refused("the table has not started")
        return table

    def record(self, table: ConsoleTable, outcome: str, **detail: object) -> Record:
        return table.rec(
            Kind.CONSOLE_COMMAND,
            console=self.session.chan.name,
            role=self.role,
            command=self.name,
            args=list(self.args),
            outcome=outcome,
            **detail,
        )

    def act(self, fn: Callable[[ConsoleTable, Log], str]) -> str:
        """Check and change the table in one reactor call.  ``fn(table, log)`` raises
        :class:`Refused` before changing anything, or calls ``log(**detail)`` (which
        writes the ``console.command`` record) and then makes its change."""

        def job() -> str | Refused:
            try:
                table = self.table()
            except Refused as e:
                return e
            state = {"logged": False}

            def log(**detail: object) -> None:
                table.commit([self.record(table, "ok", **detail)])
                state["logged"] = True

            try:
                out = fn(table, log)
            except Refused as e:
                if not state["logged"]:
                    table.commit([self.record(table, "refused", reason=str(e))])
                return e
            if not state["logged"]:
                table.commit([self.record(table, "ok")])
            return out

        res = self.call(job)
        self.logged = True
        self.session.wait_durable()
        if isinstance(res, Refused):
            raise res
        return str(res)

    def log_now(self, **detail: object) -> None:
        """Write this command's ``console.command`` record now (before streaming output)."""
        self.session.log(
            Kind.CONSOLE_COMMAND, role=self.role, command=self.name, args=list(self.args), outcome="ok", **detail
        )
        self.logged = True

    def say(self, text: str) -> None:
        """Stream a line of output while the command runs."""
        self.session.editor.println(text)

    def sleep(self, seconds: float) -> bool:
        """Wait; True if the user interrupted (typed anything) meanwhile."""
        import time

        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.session.editor.interrupted():
                return True
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))
        return False
