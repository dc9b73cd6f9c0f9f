"""The pin budget: every GPIO line the configuration uses, on the header and on the
I/O expanders, by what, and the lines still free; and the refusal of a line used twice.

A six-seat table with three sensed spots per seat needs 18 sensors and 18 lights
besides the dealer's buttons, the key and door switches and the beacon: more than
the header's 26 usable BCM pins.  The rest go on MCP23017 expanders (16 lines each,
GPA0..7 and GPB0..7) on the I²C bus, each a gpiochip of its own (the kernel's
``mcp23017`` overlay); docs/wiring.md has the full table's wiring.

Besides the configured inputs and lights, expanders take header pins themselves:
BCM 2 and 3 (SDA1/SCL1) for the bus, and one interrupt pin per expander (its INTA,
mirrored to INTB, is the overlay's ``gpiopin``).  :func:`allocate` finds any line
claimed twice — the same BCM pin written ``17`` and ``"chip0:17"``, a sensor on the
I²C pins, a light on an expander's interrupt pin — and names both uses;
``tablectl run`` (and ``--check``) then stops with exit status 2 (controller/settings/hardware.py
turns :class:`PinClash` into a :class:`~controller.settings.config.ConfigError`).
:func:`budget` and :func:`format_budget` are what ``tablectl run --check`` prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from drivers.gpio import BCM_PINS, EXPANDER_TYPES, HEADER_CHIP, I2C_PINS, PinAddr

if TYPE_CHECKING:
    from controller.settings.hardware import GpioConfig


@dataclass(frozen=True)
class Expander:
    """An I/O expander on the I²C bus, seen by Linux as gpiochip ``chip``."""

    chip: int
    type: str  # a key of drivers.gpio.EXPANDER_TYPES
    address: int  # I²C address (MCP23017: 0x20..0x27 by its A2..A0 pins)
    interrupt: int  # the BCM pin its INTA (mirrored INTB) is wired to

    @property
    def lines(self) -> range:
        return range(EXPANDER_TYPES[self.type])


@dataclass(frozen=True)
class Use:
    """One line claimed by the configuration: ``what`` uses it; ``section``/``key`` is where
    the configuration says so (for the error)."""

    addr: PinAddr
    what: str
    section: str
    key: str | None


class PinClash(ValueError):
    """A line claimed twice; the message names both uses."""

    def __init__(self, first: Use, second: Use):
        self.first, self.second = first, second
        name = str(first.addr) if first.addr.chip == HEADER_CHIP else f"{first.addr} ({first.addr.port_name()})"
        super().__init__(f"{name} is used by both {first.what} and {second.what}")


def bus_uses(expanders: Mapping[int, Expander]) -> list[Use]:
    """The header pins the expanders take: the I²C bus and each one's interrupt pin."""
    if not expanders:
        return []
    chips = ", ".join(f"chip{c}" for c in sorted(expanders))
    uses = [
        Use(PinAddr(HEADER_CHIP, I2C_PINS[0]), f"I2C SDA1 (expanders {chips})", "gpio.expanders", None),
        Use(PinAddr(HEADER_CHIP, I2C_PINS[1]), f"I2C SCL1 (expanders {chips})", "gpio.expanders", None),
    ]
    for c in sorted(expanders):
        e = expanders[c]
        uses.append(
            Use(
                PinAddr(HEADER_CHIP, e.interrupt),
                f"chip{c} interrupt ({e.type} 0x{e.address:02x} INTA)",
                f"gpio.expanders.chip{c}",
                "interrupt",
            )
        )
    return uses


def allocate(uses: Iterable[Use]) -> dict[PinAddr, Use]:
    """Every line to its one use; :class:`PinClash` at the first line claimed twice."""
    owners: dict[PinAddr, Use] = {}
    for u in uses:
        if u.addr in owners:
            raise PinClash(owners[u.addr], u)
        owners[u.addr] = u
    return owners


@dataclass(frozen=True)
class ChipBudget:
    chip: int
    label: str
    lines: tuple[int, ...]  # every usable line of the chip
    used: Mapping[int, str]  # line -> what uses it

    @property
    def free(self) -> list[int]:
        return [n for n in self.lines if n not in self.used]


def budget(uses: Iterable[Use], expanders: Mapping[int, Expander]) -> list[ChipBudget]:
    """The header and each expander: its lines, which are used by what, which are free."""
    owners = allocate([*bus_uses(expanders), *uses])
    used: dict[int, dict[int, str]] = {HEADER_CHIP: {}, **{c: {} for c in expanders}}
    for addr, u in sorted(owners.items()):
        used.setdefault(addr.chip, {})[addr.line] = u.what
    chips = []
    for c in sorted(used):
        e = expanders.get(c)
        if c == HEADER_CHIP:
            label, lines = "header (BCM)", tuple(BCM_PINS)
        elif e is not None:
            label, lines = f"{e.type} at I2C 0x{e.address:02x}, interrupt BCM {e.interrupt}", tuple(e.lines)
        else:  # the configuration refuses an undeclared chip; a budget still shows what uses it
            label, lines = "undeclared", ()
        chips.append(ChipBudget(c, label, lines, used[c]))
    return chips


def _line_name(chip: int, line: int) -> str:
    a = PinAddr(chip, line)
    return f"BCM {line:2d}" if chip == HEADER_CHIP else f"chip{chip}:{line:<2d} {a.port_name()}"


def format_budget(chips: Sequence[ChipBudget]) -> list[str]:
    """``tablectl run --check``'s pin budget: per chip, each line in use and by what, then the free ones."""
    out: list[str] = []
    total_used = total_free = 0
    for b in chips:
        out.append(f"chip{b.chip}: {b.label}: {len(b.used)} used, {len(b.free)} free")
        for line in sorted(b.used):
            out.append(f"  {_line_name(b.chip, line)}  {b.used[line]}")
        if b.free:
            names = [str(n) if b.chip == HEADER_CHIP else PinAddr(b.chip, n).port_name() for n in b.free]
            out.append(f"  free: {', '.join(names)}")
        total_used += len(b.used)
        total_free += len(b.free)
    out.append(f"pins: {total_used} used, {total_free} free")
    return out


def budget_lines(gpio: GpioConfig) -> list[str]:
    """The pin budget of a loaded ``[gpio]`` configuration, as ``tablectl run --check`` prints it."""
    return format_budget(budget(gpio.pin_uses(), gpio.expanders))


def open_expander_chips(gpio: GpioConfig, make: Callable[[str, int], Any] | None = None) -> list[str]:
    """For ``run --check``'s preflight: open (then close) each declared expander's gpiochip
    with the configured pin factory; the problems, each naming ``[gpio.expanders.chipN]``
    (an empty list when every chip opened).  ``make`` replaces
    :func:`drivers.gpio.make_pin_factory` (tests)."""
    from drivers.gpio import make_pin_factory

    opener: Callable[[str, int], Any] = make if make is not None else make_pin_factory
    problems = []
    for chip in sorted(gpio.expanders):
        e = gpio.expanders[chip]
        try:
            factory = opener(gpio.pin_factory, chip)
        except Exception as exc:  # noqa: BLE001 - any failure to open the chip is reported, with its cause
            problems.append(
                f"[gpio.expanders.chip{chip}]: cannot open /dev/gpiochip{chip} ({e.type} at I2C 0x{e.address:02x})"
                f" with the {gpio.pin_factory} pin factory: {exc}"
            )
            continue
        close = getattr(factory, "close", None)
        if close is not None:
            close()
    return problems
