"""One console session on one channel: login by role and PIN, then commands.

Login: the role (``dealer``, ``floorperson``, ``technician``)
then its PIN, typed without echo — always asked for, even while the role is
locked, so a PIN is never typed at a prompt that echoes (and digits typed at the
role prompt are shown as ``*``).  A wrong PIN is a counted failure for that role
at this endpoint; after :data:`~controller.console.auth.MAX_FAILURES` in a row
the role is locked here for :data:`~controller.console.auth.LOCKOUT_S`, and the
lock survives a restart (controller/console/auth.py).  Every login, logout and command is an event
(``console.login``, ``console.locked``, ``console.logout``, ``console.command``),
durable before the reply is shown.  A session idle for ``idle_s`` is logged out.
"""

from __future__ import annotations

import shlex
import threading
import time
from typing import TYPE_CHECKING

from controller.console import registry as R
from controller.console.auth import ROLES
from controller.console.lineio import Cancelled, Channel, Closed, Idle, LineEditor
from controller.core.records import Kind

if TYPE_CHECKING:
    from controller.console.server import ConsoleServer


#: what a new user types for a command, and the command it means
ALIASES = {"exit": "logout", "quit": "logout", "?": "help"}


def parse_command_line(line: str) -> tuple[str, list[str]]:
    """A command line -> (command name, arguments): shell-like words, the name in lower
    case (commands are case-insensitive) with the aliases applied.  Raises ValueError
    (an unclosed quote, an empty line); fuzzed by ``tablectl bench fuzz``."""
    words = shlex.split(line)
    if not words:
        raise ValueError("empty line")
    first = words[0].lower()
    return ALIASES.get(first, first), words[1:]


class Session:
    def __init__(self, server: ConsoleServer, chan: Channel):
        self.server = server
        self.chan = chan
        self.editor = LineEditor(chan, stop=server.stopping)
        self.role: str | None = None

    # ------------------------------------------------------------------ event log
    def wait_durable(self) -> None:
        """Block until everything submitted to the ledger so far is on disk."""
        done = threading.Event()
        writer = self.server.service.writer
        if writer is None:
            raise TimeoutError("the event log is not open")
        writer.submit([], lambda _e: done.set())
        if not done.wait(self.server.limits.call_timeout):
            raise TimeoutError("the event log did not confirm the write")

    def log(self, kind: Kind, **data: object) -> None:
        def job() -> None:
            t = self.server.service.table
            if t is None:
                raise RuntimeError("the table has not started")
            t.commit([t.rec(kind, console=self.chan.name, **data)])

        self.server.service.call(job, timeout=self.server.limits.call_timeout)
        self.wait_durable()

    # ------------------------------------------------------------------ loop
    def run(self) -> None:
        try:
            while not self.server.stopping():
                role = self._try_login()
                if role is not None:
                    self.shell(role)
        except Closed:
            pass
        finally:
            if self.role is not None:
                try:
                    self.log(Kind.CONSOLE_LOGOUT, role=self.role, why="disconnected")
                except Exception:  # noqa: BLE001 - the service may be stopping
                    pass

    def _try_login(self) -> str | None:
        """One login at the prompt; a failure is said (a fault of ours logged too), never the end of
        the console (but a closed channel, which is)."""
        ed = self.editor
        try:
            return self.login()
        except (Cancelled, EOFError):
            return None
        except TimeoutError as e:
            ed.println(f"error: {e}")
            return None
        except Closed:
            raise
        except Exception as e:  # noqa: BLE001 - keep the console alive
            self.server.log.error("console.login_failed", error=repr(e), exc_info=True)
            ed.println(f"error: internal error: {e!r} (logged)")
            return None

    def login(self) -> str | None:
        srv, ed = self.server, self.editor
        ed.println(f"tablectl {srv.version} console - table {srv.table_id}")
        role = self._ask_role()
        if role is None:
            return None
        endpoint = self.chan.name
        srv.note_pin_file(self)
        # the PIN is always asked for (without echo), locked or not: a PIN typed after a
        # lock-out message must never land at the echoing role prompt
        pin = ed.readline("PIN: ", echo=False)
        left = srv.lockout_remaining(role, endpoint)
        if left > 0:
            del pin
            self._refuse_locked(role, left)
            return None
        ok = srv.pins.verify(role, pin)
        del pin
        if ok is None:
            self.log(Kind.CONSOLE_LOGIN, role=role, ok=False, counted=False, reason="no PIN set")
            ed.println(f"error: no PIN is set for {role} (set one with: tablectl pin set {role})")
            return None
        if ok:
            srv.login_succeeded(role, endpoint)
            self.log(Kind.CONSOLE_LOGIN, role=role, ok=True)
            self.role = role
            ed.println(f"logged in as {role}; type help for the commands")
            return role
        self._wrong_pin(role, endpoint)
        return None

    def _ask_role(self) -> str | None:
        """The role typed at the prompt (lower case), or None: none typed, or not a role (said)."""
        ed = self.editor
        role = ed.readline(
            "role: ", complete=lambda buf: [r for r in ROLES if r.startswith(buf)], mask_digits=True
        ).strip()
        if not role:
            return None
        if role.lower() not in ROLES:
            shown = f" {role!r}" if not any(c.isdigit() for c in role) else ""  # never echo a PIN typed here
            ed.println(f"error: unknown role{shown} (roles: {', '.join(ROLES)})")
            return None
        return role.lower()

    def _refuse_locked(self, role: str, left: float) -> None:
        """A login to a role locked at this console: logged (not counted), refused after the delay."""
        srv = self.server
        self.log(Kind.CONSOLE_LOGIN, role=role, ok=False, counted=False, reason="role locked")
        time.sleep(srv.limits.fail_delay_s)
        self.editor.println(
            f"error: {role} locked at this console after {srv.limits.max_failures} failed logins; "
            f"try again in {int(left) // 60} min {int(left) % 60} s (or a technician may unlock it)"
        )

    def _wrong_pin(self, role: str, endpoint: str) -> None:
        """A wrong PIN: counted, logged (and the lock-out if this failure locks the role), said after the delay."""
        srv, ed = self.server, self.editor
        failures, locked = srv.login_failed(role, endpoint)
        self.log(Kind.CONSOLE_LOGIN, role=role, ok=False, counted=True, failures=failures)
        if locked:
            self.log(
                Kind.CONSOLE_LOCKED,
                role=role,
                remaining_s=srv.limits.lockout_s,
                failures=srv.limits.max_failures,
                period_s=srv.limits.lockout_s,
            )
        time.sleep(srv.limits.fail_delay_s)
        if locked:
            ed.println(
                f"error: wrong PIN; {role} locked at this console for {int(srv.limits.lockout_s) // 60} min "
                f"after {srv.limits.max_failures} failed logins"
            )
        else:
            ed.println("error: wrong PIN")

    def shell(self, role: str) -> None:
        srv, ed = self.server, self.editor
        prompt = f"{srv.table_id} {role}> "
        while not srv.stopping():
            try:
                line = ed.readline(
                    prompt, idle_s=srv.limits.idle_s, complete=lambda buf: R.complete(role, buf), history=True
                )
            except Idle:
                ed.println("")
                ed.println(f"logged out: idle for {int(srv.limits.idle_s)} s")
                self._logout("idle")
                return
            except Cancelled:
                continue
            except EOFError:
                self._logout("ctrl-d")
                return
            line = line.strip()
            if not line:
                continue
            if not self.execute(role, line):
                return

    def _logout(self, why: str) -> None:
        role, self.role = self.role, None
        try:
            self.log(Kind.CONSOLE_LOGOUT, role=role, why=why)
        except TimeoutError as e:
            self.editor.println(f"error: {e}")

    def execute(self, role: str, line: str) -> bool:
        """Run one command line; False when the session logs out."""
        ed = self.editor
        try:
            name, args = parse_command_line(line)
        except ValueError as e:
            return self._reject(role, line.split(" ")[0], [], "rejected", f"cannot parse the line: {e}")
        cmd = R.REGISTRY.get(name)
        refusal = _refusal(role, name, cmd)
        if refusal is not None:
            return self._reject(role, name, args, *refusal)
        assert cmd is not None
        ran, out = self._run(cmd, R.Ctx(self, role, name, args))
        if not ran:
            return True
        if out:
            ed.println(out)
        if name == "logout":
            self._logout("logout")
            return False
        return True

    def _run(self, cmd: R.Command, ctx: R.Ctx) -> tuple[bool, str | None]:
        """(whether the command ran, its output); a command that failed is said so (and logged)."""
        ed, role, name, args = self.editor, ctx.role, ctx.name, ctx.args
        try:
            out = cmd.run(ctx, args)
            if not ctx.logged:
                self.log(Kind.CONSOLE_COMMAND, role=role, command=name, args=args, outcome="ok", **ctx.detail)
        except R.CommandError as e:
            if ctx.logged:
                ed.println(f"error: {e}")
            else:
                self._reject(role, name, args, "rejected", str(e))
            return False, None
        except R.Refused as e:
            ed.println(f"refused: {e}")
            return False, None
        except TimeoutError as e:
            ed.println(f"error: controller not responding ({e or 'timeout'}); nothing was shown as done")
            return False, None
        except Closed:
            raise
        except Exception as e:  # noqa: BLE001 - a bug in one command must not take the console down
            self.server.log.error("console.command_failed", command=name, error=repr(e), exc_info=True)
            ed.println(f"error: internal error in {name}: {e!r} (logged)")
            return False, None
        return True, out

    def _reject(self, role: str, name: str, args: list[str], outcome: str, error: str) -> bool:
        try:
            self.log(
                Kind.CONSOLE_COMMAND,
                role=role,
                command=name[:40],
                args=[a[:80] for a in args[:10]],
                outcome=outcome,
                error=error,
            )
        except TimeoutError as e:
            self.editor.println(f"error: {e}")
        self.editor.println(f"error: {error}")
        return True


def _refusal(role: str, name: str, cmd: R.Command | None) -> tuple[str, str] | None:
    """(outcome, error) for a command that does not exist or is not for ``role``; None: it may run."""
    if cmd is None:
        from controller.core.suggest import did_you_mean

        mine = [n for n, c in R.REGISTRY.items() if role in c.roles]
        return "rejected", f"unknown command {name!r}{did_you_mean(name, mine)}; type help"
    if role not in cmd.roles:
        return "denied", f"{name} needs the {' or '.join(cmd.roles)} role (logged in as {role})"
    return None
