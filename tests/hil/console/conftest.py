"""Fixtures for console tests: a HIL rig with a console on a pty, and a terminal
(pexpect over the pty's slave end, exactly what picocom or screen would use)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pexpect
import pytest
from pexpect import fdpexpect

FAST_SCRYPT: dict[str, Any] = {"n": 2**10}  # the stored hash carries its parameters; tests use a cheap one
PINS = {"dealer": "1111", "floorperson": "2222", "technician": "314159"}


def set_pins(state_dir: Path, pins: dict[str, str] = PINS) -> None:
    from controller.console.auth import PIN_FILE, PinStore

    store = PinStore(state_dir / PIN_FILE)
    for role, pin in pins.items():
        store.set(role, pin, **FAST_SCRYPT)


class Term:
    """A person at a serial terminal attached to the console's pty."""

    def __init__(self, path: str, timeout: float = 15):
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        self.c = fdpexpect.fdspawn(self.fd, timeout=timeout, encoding="ascii")
        self.expect("role: ")  # the session's first prompt (waiting in the pty since it began)

    def expect(self, pattern: str) -> str:
        self.c.expect(pattern)
        return str(self.c.before)

    def send(self, text: str) -> None:
        self.c.send(text)

    def login(self, role: str, pin: str | None = None) -> str:
        """At the role prompt: log in; returns what the console said (ends at the next prompt)."""
        self.send(role + "\r")
        self.expect("PIN: ")
        self.send((pin if pin is not None else PINS[role]) + "\r")
        i = self.c.expect([r"> ", "role: "])
        return str(self.c.before) + ("" if i == 0 else "role: ")

    def cmd(self, line: str, role: str = r"\w+") -> str:
        """Type a command; return its reply (without the echoed line)."""
        self.send(line + "\r")
        self.c.expect(rf"\r\nSIM-01 {role}> ")
        out = self.c.before
        return out.split("\r\n", 1)[1] if "\r\n" in out else ""

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


@pytest.fixture
def console_rig(tmp_path):
    """A started rig with PINs set and a console on a pty; yields (rig, console)."""
    from controller.console.server import ConsoleLimits
    from controller.core.log import configure
    from hil.rig import Rig

    configure(level="warning", json=True)
    state = tmp_path / "state"
    state.mkdir()
    set_pins(state)
    rigs = []

    def make(rig_opts=None, **limits):
        r = Rig(state, seed=5, **(rig_opts or {})).start()
        rigs.append(r)
        r.table.wait_for(lambda s: s.get("state") in ("open_for_wagers", "tilt"), 15)
        con = r.service.start_console(
            pty=True, limits=ConsoleLimits(**{"fail_delay_s": 0.0, "diag_light_s": 0.1, **limits})
        )
        return r, con

    yield make
    for r in rigs:
        r.stop()


__all__ = ["Term", "set_pins", "PINS", "pexpect"]
