"""Start-up: the one path from a configuration file to a running table.

Two kinds of problem, never a traceback and never an exit that makes systemd
restart the service in a loop:

* **configuration** (the files, and ``tablectl run --check``'s look at the pins
  and ports): a :class:`~controller.settings.config.ConfigError` naming file, section and
  key; ``tablectl run`` prints it and exits with :data:`EXIT_CONFIG` (2), which the
  unit's ``RestartPreventExitStatus=2`` keeps from restarting;
* **runtime** (a ledger that cannot be opened or written, a pin factory that
  cannot start, anything unexpected while the service assembles itself): the
  service stays up with the table closed under a latched tilt, sends READY=1 with
  the tilt as its status and pings the watchdog (controller/daemon/service.py,
  ``Service.halt``).  A device that cannot be opened (a missing serial port) is a
  device fault of the running table: its own latched tilt.

Expected problems are logged once as one line; an unexpected one is logged once
with its traceback (:func:`log_unexpected`).

``tablectl run --check`` runs :func:`load_config` and then :func:`preflight`: the
checks in :data:`PREFLIGHT` look at what the configuration names on this machine
(the pin factory loads, every serial port opens and closes).  A check is a
function ``check(hw, report)``; another check (a pin budget, say) is one more
entry in :data:`PREFLIGHT` and prints through ``report.info``.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.settings.config import ConfigError
from controller.settings.hardware import HardwareConfig, load_hardware

if TYPE_CHECKING:
    from controller.games.base import Procedure

EXIT_CONFIG = 2


def load_config(path: str | Path) -> tuple[HardwareConfig, Procedure]:
    """The hardware file, its table profile and the game's own ``[game.options]``
    (checked by the game's procedure, controller/games/), or a :class:`ConfigError`."""
    hw = load_hardware(path)
    from controller.games import procedure_for

    try:
        proc = procedure_for(hw.profile.game, hw.profile)
    except ConfigError:
        raise
    except ValueError as e:
        # the procedures' messages name the profile, section and key already ("FILE: [game.options] KEY: ...")
        raise ProfileError(hw.profile.file, str(e)) from None
    return hw, proc


class ProfileError(ConfigError):
    """A game procedure refused its profile; its message names the section and key."""

    def __init__(self, file: str, message: str):
        ValueError.__init__(self, message if message.startswith(file) else f"{file}: {message}")
        self.file, self.section, self.key, self.problem = file, "game.options", None, message


# --------------------------------------------------------------------------- preflight (run --check)


@dataclass
class Report:
    """What the preflight checks found: lines to print, and errors naming file, section and key."""

    lines: list[str] = field(default_factory=list)
    errors: list[ConfigError] = field(default_factory=list)

    def info(self, line: str) -> None:
        self.lines.append(line)

    def error(self, err: ConfigError) -> None:
        self.errors.append(err)


def _reason(e: BaseException) -> str:
    if isinstance(e, ModuleNotFoundError):
        return f"its library is not installed (No module named {e.name!r})"
    text = str(e).strip() or type(e).__name__
    return f"{type(e).__name__}: {text}" if not isinstance(e, OSError) else text


def check_pin_factory(hw: HardwareConfig, report: Report) -> None:
    """The configured gpiozero pin factory loads on this machine (then is closed)."""
    from drivers.gpio import make_pin_factory

    name = hw.gpio.pin_factory
    try:
        factory = make_pin_factory(name)
    except Exception as e:  # noqa: BLE001 - every way it cannot load is the finding
        report.error(ConfigError(hw.file, "gpio", "pin_factory", f"{name!r} cannot be used here: {_reason(e)}"))
        return
    try:
        factory.close()
    except Exception:  # noqa: BLE001, S110 - loaded is what was asked; closing a factory is best effort
        pass
    report.info(f"gpio: pin factory {name} loads")


def check_serial_ports(hw: HardwareConfig, report: Report) -> None:
    """Every configured serial port opens (exclusively, as the service opens it) and closes."""
    from drivers.serialdev import open_serial

    for dev, sc in hw.serial.items():
        try:
            port = open_serial(sc)
        except Exception as e:  # noqa: BLE001 - pyserial's SerialException, OSError...
            report.error(ConfigError(hw.file, f"serial.{dev}", "port", f"{sc.port} cannot be opened: {_reason(e)}"))
            continue
        try:
            port.close()
        finally:
            report.info(f"serial.{dev}: {sc.port} opens")


def check_expander_chips(hw: HardwareConfig, report: Report) -> None:
    """Every declared I/O expander's gpiochip opens with the pin factory (then is closed)."""
    from controller.settings.pins import open_expander_chips

    if not hw.gpio.expanders:
        return
    problems = open_expander_chips(hw.gpio)
    for p in problems:
        chip = p.split("]", 1)[0].lstrip("[")
        report.error(ConfigError(hw.file, chip, None, p.split("]: ", 1)[-1]))
    if not problems:
        report.info(f"gpio: expander chips {', '.join(f'chip{c}' for c in sorted(hw.gpio.expanders))} open")


#: the checks ``tablectl run --check`` runs after the configuration parsed, in order
PREFLIGHT: list[Callable[[HardwareConfig, Report], None]] = [
    check_pin_factory,
    check_expander_chips,
    check_serial_ports,
]


def preflight(hw: HardwareConfig, checks: list[Callable[[HardwareConfig, Report], None]] | None = None) -> Report:
    rep = Report()
    for check in PREFLIGHT if checks is None else checks:
        try:
            check(hw, rep)
        except ConfigError as e:
            rep.error(e)
    return rep


# --------------------------------------------------------------------------- logging the unexpected


def log_unexpected(log: Any, event: str, exc: BaseException, **fields: Any) -> None:
    """Log an unexpected exception once, with its traceback in the one record."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    log.error(event, error=repr(exc), traceback=tb, **fields)
