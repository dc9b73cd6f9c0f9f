"""Configuration: TOML read into typed sections, and the table profile.

Klipper's discipline: every option is read and range-checked at start-up,
before any pin or serial port is touched; an unknown option, a missing required
option or an out-of-range value is a :class:`ConfigError` whose message names
the file, the section and the key.  ``tablectl run`` exits with status 2 on it.

:class:`Section` is that typed, range-checked access to one TOML table, used by
every configuration file: the table's hardware file (controller/settings/hardware.py),
the table profile here, the LAP's and the uplink's files (controller/lap/config.py,
controller/commands/uplink.py).

The table profile (``config/tables/*.toml``) says which game is dealt and which
wagers, paytables and progressive parameters are offered; see
:func:`load_profile`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from controller.core.safefile import CONFIG as CONFIG_MAX
from controller.core.safefile import read_bounded
from controller.gamedefs import game_ids
from controller.rules.paytables import parse_money, parse_percent
from controller.settings.pins import Expander
from drivers.gpio import BCM_PINS, HEADER_CHIP, PinAddr, parse_pin


class ConfigError(ValueError):
    """An invalid configuration; the message names file, section and key."""

    def __init__(self, file: str, section: str, key: str | None, problem: str):
        self.file, self.section, self.key, self.problem = file, section, key, problem
        where = f"[{section}]" + (f" {key}" if key else "") if section or key else ""
        super().__init__(f"{file}: {where}: {problem}" if where else f"{file}: {problem}")


_MISSING = object()

_BCM_RANGE = f"{BCM_PINS.start}..{BCM_PINS.stop - 1}"


def pin_value(v: Any, expanders: Mapping[int, Expander]) -> PinAddr:
    """A configured pin: a BCM number on the header (``17``), or ``"chipN:LINE"`` on a
    declared expander (``"chip2:5"``, ``"chip2:GPA5"``; ``"chip0:17"`` is BCM 17)."""
    if isinstance(v, bool) or not isinstance(v, int | str):
        raise ValueError(f'{v!r} is not a pin: a BCM GPIO number ({_BCM_RANGE}) or "chipN:LINE"')
    if isinstance(v, int):
        a = PinAddr(HEADER_CHIP, v)
    else:
        a = parse_pin(v)
    if a.chip == HEADER_CHIP:
        if a.line not in BCM_PINS:
            raise ValueError(f"{v!r} is not a usable BCM GPIO number ({_BCM_RANGE})")
        return a
    _check_expander_line(v, a, expanders)
    return a


def _check_expander_line(v: Any, a: PinAddr, expanders: Mapping[int, Expander]) -> None:
    """``a`` is a line of a declared expander (``v``: the pin as configured, for the error)."""
    e = expanders.get(a.chip)
    if e is None:
        declared = ", ".join(f"chip{c}" for c in sorted(expanders)) or "none"
        raise ValueError(
            f"{v!r}: chip{a.chip} is not a declared expander ([gpio.expanders.chip{a.chip}]; declared: {declared})"
        )
    if a.line not in e.lines:
        raise ValueError(f"{v!r}: a {e.type} has lines 0..{e.lines.stop - 1} (GPA0..GPB7)")


def _show(v: Any, limit: int = 60) -> str:
    """A value in an error message: its repr, cut short (an error names what is wrong; it
    does not reproduce the file)."""
    r = repr(v)
    return r if len(r) <= limit else r[: limit - 3] + "..."


class Section:
    """Typed, range-checked access to one section; unknown keys are errors."""

    def __init__(self, file: str, name: str, data: Mapping[str, Any]):
        if not isinstance(data, Mapping):
            raise ConfigError(file, name, None, "must be a table")
        self.file, self.name, self.data = file, name, data
        self._used: set[str] = set()

    def error(self, key: str | None, problem: str) -> ConfigError:
        return ConfigError(self.file, self.name, key, problem)

    def _get(self, key: str, default: Any) -> Any:
        self._used.add(key)
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise self.error(key, "required option is missing")
        return default

    def get_str(self, key: str, default: Any = _MISSING, choices: tuple[str, ...] | None = None) -> str:
        v = self._get(key, default)
        if not isinstance(v, str) or not v.strip():
            raise self.error(key, f"must be a non-empty string, got {_show(v)}")
        if choices is not None and v not in choices:
            raise self.error(key, f"{_show(v)} is not one of {', '.join(choices)}")
        return v

    def get_int(self, key: str, default: Any = _MISSING, minval: int | None = None, maxval: int | None = None) -> int:
        v = self._get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(key, f"must be an integer, got {_show(v)}")
        if minval is not None and v < minval:
            raise self.error(key, f"{v} is below the minimum {minval}")
        if maxval is not None and v > maxval:
            raise self.error(key, f"{v} is above the maximum {maxval}")
        return v

    def get_bool(self, key: str, default: Any = _MISSING) -> bool:
        v = self._get(key, default)
        if not isinstance(v, bool):
            raise self.error(key, f"must be true or false, got {_show(v)}")
        return v

    def get_money(self, key: str, default: Any = _MISSING, mincents: int = 0, maxcents: int | None = None) -> int:
        v = self._get(key, default)
        if isinstance(v, int) and not isinstance(v, bool):
            raise self.error(key, f'write amounts as strings like "$5" or "$2.50", got {_show(v)}')
        try:
            cents = parse_money(str(v))
        except ValueError as e:
            raise self.error(key, str(e)) from None
        if cents < mincents:
            raise self.error(key, f"{v} is below the minimum ${mincents / 100:,.2f}")
        if maxcents is not None and cents > maxcents:
            raise self.error(key, f"{v} is above the maximum ${maxcents / 100:,.2f}")
        return cents

    def get_percent(
        self, key: str, default: Any = _MISSING, minval: Fraction = Fraction(0), maxval: Fraction = Fraction(1)
    ) -> Fraction:
        v = self._get(key, default)
        try:
            p = parse_percent(str(v))
        except ValueError as e:
            raise self.error(key, str(e)) from None
        if not minval <= p <= maxval:
            raise self.error(key, f"{v} is outside {float(minval) * 100:g}%..{float(maxval) * 100:g}%")
        return p

    def get_pin(
        self, key: str, default: Any = _MISSING, expanders: Mapping[int, Expander] | None = None
    ) -> PinAddr | None:
        v = self._get(key, default)
        if v is None:
            return None
        try:
            return pin_value(v, expanders or {})
        except ValueError as e:
            raise self.error(key, str(e)) from None

    def get_pin_list(
        self,
        key: str,
        default: Any = _MISSING,
        length: int | None = None,
        expanders: Mapping[int, Expander] | None = None,
    ) -> list[PinAddr]:
        v = self._get(key, default)
        if not isinstance(v, list):
            raise self.error(key, f'must be a list of pins (BCM numbers or "chipN:LINE"), got {_show(v)}')
        out = []
        for i, p in enumerate(v):
            try:
                out.append(pin_value(p, expanders or {}))
            except ValueError as e:
                raise self.error(key, f"item {i + 1}: {e}") from None
        if length is not None and len(v) != length:
            raise self.error(key, f"needs {length} pins (one per seat), got {len(v)}")
        return out

    def sub(self, key: str, required: bool = True) -> Section | None:
        v = self._get(key, _MISSING if required else None)
        if v is None:
            return None
        return Section(self.file, f"{self.name}.{key}" if self.name else key, v)

    def check_unused(self) -> None:
        unknown = sorted(set(self.data) - self._used)
        if unknown:
            raise self.error(
                unknown[0], "unknown option" + (f" (also: {', '.join(unknown[1:])})" if unknown[1:] else "")
            )


def read_toml(p: Path) -> dict[str, Any]:
    """A TOML file's document; any problem reading it is a :class:`ConfigError` naming
    the file and saying what is wrong, never quoting the file's bytes."""
    if p.is_dir():
        raise ConfigError(str(p), "", None, "is a directory, not a file")
    try:
        data = read_bounded(p, CONFIG_MAX, follow=True)  # an administrator's file may be a link
    except OSError as e:
        raise ConfigError(str(p), "", None, f"cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(str(p), "", None, f"not UTF-8 text (byte {e.start + 1}, line {line})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(p), "", None, f"not valid TOML: {e}") from None
    except RecursionError:  # nested past the parser's own recursion (arrays or inline tables)
        raise ConfigError(str(p), "", None, f"nested deeper than {CONFIG_DEPTH} levels") from None
    if toml_depth(doc) > CONFIG_DEPTH:
        raise ConfigError(str(p), "", None, f"nested deeper than {CONFIG_DEPTH} levels") from None
    return doc


#: how deep a configuration nests tables and arrays (ours use 3: a section, a sub-table, a list);
#: bounded as the size is, so that nothing reading it recurses without end
CONFIG_DEPTH = 16


def toml_depth(doc: Any) -> int:
    """How deep tables and arrays nest in a parsed document (a scalar: 0), counted without recursion."""
    deepest, todo = 0, [(doc, 1)]
    while todo:
        v, depth = todo.pop()
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        todo.extend((c, depth + 1) for c in children)
    return deepest


# --------------------------------------------------------------------------- table profile


@dataclass(frozen=True)
class ProgressiveConfig:
    paytable: str
    wager_cents: int  # the fixed Progressive Payout Wager (e.g. $1, § 670a.12(d)(2))
    seed_cents: int  # seed and reseed amount
    increment_rate: Fraction  # e.g. 21% (§ 670a.12(d)(2))
    envy_paytable: str | None
    envy_min_wager_cents: int
    reserve_rate: Fraction = Fraction(0)  # § 688a.12(d) paytable 4: part of each wager to a reserve
    #: the linked group whose LAP controller holds the meter (docs/linked.md), or None: a local meter
    linked: str | None = None
    link_timeout_s: float = 3.0  # no heartbeat for this long: the linked wager closes


@dataclass(frozen=True)
class FloodLimits:
    summary_s: int = 10  # one summary record per interval of this many seconds
    detail: int = 20  # rejected entries recorded in full (and answered) per interval
    tilt_rejects: int = 100  # this many rejected entries ...
    tilt_window_s: int = 10  # ... within this many seconds: a flood -> tilt


def parse_flood_limits(sec: Section | None) -> FloodLimits:
    """``[keypad]`` of a table profile: ``reject_summary_s`` (1..3600), ``reject_detail``
    (1..100), ``flood_rejects`` (10..100000), ``flood_window_s`` (1..3600)."""
    if sec is None:
        return FloodLimits()
    lim = FloodLimits(
        summary_s=sec.get_int("reject_summary_s", 10, 1, 3600),
        detail=sec.get_int("reject_detail", 20, 1, 100),
        tilt_rejects=sec.get_int("flood_rejects", 100, 10, 100_000),
        tilt_window_s=sec.get_int("flood_window_s", 10, 1, 3600),
    )
    if lim.detail >= lim.tilt_rejects:
        raise sec.error("reject_detail", f"must be below flood_rejects ({lim.tilt_rejects})")
    sec.check_unused()
    return lim


@dataclass(frozen=True)
class TableProfile:
    file: str
    name: str
    game: str
    seats: int
    positions: int  # betting positions counted for the starting position (incl. dealer)
    progressive: ProgressiveConfig | None
    start_method: str  # "shaker" | "rng" | "none"
    options: Mapping[str, Any] = field(default_factory=dict)
    #: wager spots the progressive system senses at each seat (the progressive one at least)
    sensed: tuple[str, ...] = ("progressive",)
    #: rejected keypad input: summary interval and flood thresholds ([keypad]; controller/play/flood.py)
    keypad: FloodLimits = field(default_factory=FloodLimits)

    @property
    def required_devices(self) -> tuple[str, ...]:
        devs = ["shoe", "sign"]
        if self.start_method == "shaker":
            devs.append("shaker")
        return tuple(devs)


def parse_profile(doc: Mapping[str, Any], file: str) -> TableProfile:
    root = Section(file, "", doc)
    g = root.sub("game")
    assert g is not None
    game = g.get_str("id", choices=game_ids())
    name = g.get_str("name", game)
    seats = g.get_int("seats", 6, 1, 7)
    positions = g.get_int("positions", seats + 1, 2, 8)
    # "none": the game has no starting position (DJ Wild § 687a.10(b), Over/Under § 686a.7)
    start_method = g.get_str("start_method", "shaker", ("shaker", "rng", "none"))
    sensed = _sensed(g)
    opts = g.sub("options", required=False)  # [game.options]: the game's procedure reads them
    options = dict(opts.data) if opts is not None else {}
    g.check_unused()
    p = root.sub("progressive", required=False)
    prog = _progressive(p) if p is not None else None
    keypad = parse_flood_limits(root.sub("keypad", required=False))
    root.check_unused()
    return TableProfile(file, name, game, seats, positions, prog, start_method, options, tuple(sensed), keypad)


def _sensed(g: Section) -> list[str]:
    """``[game] sensed``: the wagers with bet sensors, each once.  An empty list: every wager is
    keyed by the dealer (no bet sensors in use, e.g. Pai Gow tiles)."""
    sensed = g._get("sensed", ["progressive"])
    if not isinstance(sensed, list) or not all(isinstance(x, str) for x in sensed):
        raise g.error("sensed", f"must be a list of wager ids, got {_show(sensed)}")
    twice = sorted({x for x in sensed if sensed.count(x) > 1})
    if twice:
        raise g.error("sensed", f"{twice[0]!r} is listed more than once")
    return sensed


def _progressive(p: Section) -> ProgressiveConfig:
    """``[progressive]``: paytables that exist, and a rate and reserve that fit in the wager."""
    from controller.rules.paytables import all_paytables

    tables = all_paytables()
    pt = p.get_str("paytable")
    if pt not in tables:
        raise p.error("paytable", f"no paytable named {pt!r} in config/paytables")
    envy = p.get_str("envy_paytable", None) if "envy_paytable" in p.data else None
    if envy is not None and envy not in tables:
        raise p.error("envy_paytable", f"no paytable named {envy!r} in config/paytables")
    prog = ProgressiveConfig(
        paytable=pt,
        wager_cents=p.get_money("wager", mincents=1, maxcents=100_000),
        seed_cents=p.get_money("seed", mincents=0, maxcents=100_000_000),
        increment_rate=p.get_percent("increment_rate", maxval=Fraction(1)),
        envy_paytable=envy,
        envy_min_wager_cents=p.get_money("envy_min_wager", "$5", mincents=0),
        # seed, rate and reserve are the Rules Submission's; none is assumed
        reserve_rate=p.get_percent("reserve_rate", maxval=Fraction(1, 2)),
        linked=p.get_str("linked") if "linked" in p.data else None,
        link_timeout_s=p.get_int("link_timeout", 3, minval=1, maxval=60) * 1.0,
    )
    if prog.increment_rate + prog.reserve_rate > 1:
        raise p.error("reserve_rate", "increment_rate + reserve_rate exceed 100% of the wager")
    p.check_unused()
    return prog


def profile_path(name: str, profile_dir: Path | None = None) -> Path:
    if "/" in name or name.endswith(".toml"):
        return Path(name)
    if profile_dir is None:
        from config import CONFIG_DIR

        profile_dir = CONFIG_DIR / "tables"
    return profile_dir / f"{name}.toml"


class ProfileUnreadable(FileNotFoundError):
    """The table profile named is missing or is not a file (reported against ``[table] profile``)."""


def profile_names(profile_dir: Path | None = None) -> list[str]:
    """The table profiles shipped (``config/tables/*.toml``), by name: the games ``tablectl sim``
    plays and ``[table] profile`` may name."""
    d = profile_path("x", profile_dir).parent
    return sorted(p.stem for p in d.glob("*.toml"))


def load_profile(name: str, profile_dir: Path | None = None) -> TableProfile:
    path = profile_path(name, profile_dir)
    if not path.exists():
        if "/" in name or name.endswith(".toml"):
            raise ProfileUnreadable(f"no table profile {name!r} (looked for {path})")
        from controller.core.suggest import did_you_mean

        known = profile_names(profile_dir)
        raise ProfileUnreadable(f"no table profile {name!r}{did_you_mean(name, known)}; profiles: {', '.join(known)}")
    if not path.is_file():
        raise ProfileUnreadable(f"{path} is not a file")
    return parse_profile(read_toml(path), str(path))
