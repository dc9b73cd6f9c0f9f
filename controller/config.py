"""Configuration: the table's hardware file (TOML) and its table profile.

Klipper's discipline: every option is read and range-checked at start-up,
before any pin or serial port is touched; an unknown option, a missing required
option or an out-of-range value is a :class:`ConfigError` whose message names
the file, the section and the key.  ``tablectl run`` exits with status 2 on it.

Hardware file (``tablectl run --config /etc/tablectl/table.toml``)::

    [table]
    id = "PG-01"                    # table id, stamped on every log line and ledger event
    profile = "six-card-fortune"    # config/tables/<profile>.toml, or a path to a profile file
    state_dir = "/var/lib/tablectl" # ledger location

    [gpio]
    pin_factory = "lgpio"           # lgpio | rpigpio | pigpio | native | mock
    bounce_ms = 20                  # our own debounce window (mock pins do not bounce; see drivers/gpio.py)
    lockout = 17                    # BCM pin numbers from here on
    confirm = 27
    void = 22
    key_switch = 23                 # floorperson's key: validates progressive payouts
    door = 24                       # cabinet door switch
    beacon = 25                     # hit beacon (output)
    [gpio.spots.progressive]        # one to three sensed wager spots per seat
    sensors = [5, 6, 12, 13, 16, 19]   # one per seat, seat 1 first
    lights = [4, 14, 15, 18, 20, 21]

    [serial.shoe]                   # one section per serial device: shoe, shaker, sign
    port = "/dev/serial/by-id/usb-tablectl_shoe-if00"
    baud = 115200

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

from controller.flood import FloodLimits, parse_limits
from controller.rules.paytables import GAMES, parse_money, parse_percent
from drivers.gpio import BCM_PINS, PIN_FACTORIES, GpioSettings
from drivers.serialdev import BAUD_RATES, SERIAL_DEVICES, SerialSettings


class ConfigError(ValueError):
    """An invalid configuration; the message names file, section and key."""

    def __init__(self, file: str, section: str, key: str | None, problem: str):
        self.file, self.section, self.key, self.problem = file, section, key, problem
        where = f"[{section}]" + (f" {key}" if key else "")
        super().__init__(f"{file}: {where}: {problem}")


_MISSING = object()


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
            raise self.error(key, f"must be a non-empty string, got {v!r}")
        if choices is not None and v not in choices:
            raise self.error(key, f"{v!r} is not one of {', '.join(choices)}")
        return v

    def get_int(self, key: str, default: Any = _MISSING, minval: int | None = None, maxval: int | None = None) -> int:
        v = self._get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(key, f"must be an integer, got {v!r}")
        if minval is not None and v < minval:
            raise self.error(key, f"{v} is below the minimum {minval}")
        if maxval is not None and v > maxval:
            raise self.error(key, f"{v} is above the maximum {maxval}")
        return v

    def get_bool(self, key: str, default: Any = _MISSING) -> bool:
        v = self._get(key, default)
        if not isinstance(v, bool):
            raise self.error(key, f"must be true or false, got {v!r}")
        return v

    def get_money(self, key: str, default: Any = _MISSING, mincents: int = 0, maxcents: int | None = None) -> int:
        v = self._get(key, default)
        if isinstance(v, int) and not isinstance(v, bool):
            raise self.error(key, f'write amounts as strings like "$5" or "$2.50", got {v!r}')
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

    def get_pin(self, key: str, default: Any = _MISSING) -> int | None:
        v = self._get(key, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v not in BCM_PINS:
            raise self.error(key, f"{v!r} is not a usable BCM GPIO number ({BCM_PINS.start}..{BCM_PINS.stop - 1})")
        return v

    def get_pin_list(self, key: str, default: Any = _MISSING, length: int | None = None) -> list[int]:
        v = self._get(key, default)
        if not isinstance(v, list):
            raise self.error(key, f"must be a list of BCM pin numbers, got {v!r}")
        for i, p in enumerate(v):
            if isinstance(p, bool) or not isinstance(p, int) or p not in BCM_PINS:
                raise self.error(
                    key, f"item {i + 1} ({p!r}) is not a usable BCM GPIO number ({BCM_PINS.start}..{BCM_PINS.stop - 1})"
                )
        if length is not None and len(v) != length:
            raise self.error(key, f"needs {length} pins (one per seat), got {len(v)}")
        return list(v)

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


# --------------------------------------------------------------------------- hardware


@dataclass(frozen=True)
class GpioConfig:
    pin_factory: str
    bounce_ms: int
    lockout: int
    confirm: int
    void: int
    key_switch: int
    door: int | None
    beacon: int | None
    #: sensed wager spots: wager id -> (sensor pins, light pins), one of each per seat, seat 1 first
    spots: Mapping[str, SpotPins]
    start_game: int | None = None
    active_low: bool = True

    def driver_settings(self) -> GpioSettings:
        """The GPIO driver's settings: every input and light under the name the table
        knows it by (``lockout``, ``key``, ``bet.<wager>.<seat>``, ``light.<wager>.<seat>``,
        ``beacon``)."""
        inputs = {"lockout": self.lockout, "confirm": self.confirm, "void": self.void, "key": self.key_switch}
        if self.door is not None:
            inputs["door"] = self.door
        if self.start_game is not None:
            inputs["start_game"] = self.start_game
        lights: dict[str, int] = {}
        for wager, spot in self.spots.items():
            for i, pin in enumerate(spot.sensors, 1):
                inputs[f"bet.{wager}.{i}"] = pin
            for i, pin in enumerate(spot.lights, 1):
                lights[f"light.{wager}.{i}"] = pin
        if self.beacon is not None:
            lights["beacon"] = self.beacon
        return GpioSettings(self.pin_factory, inputs, lights, self.active_low)


@dataclass(frozen=True)
class SpotPins:
    sensors: tuple[int, ...]
    lights: tuple[int, ...]


MAX_SPOTS = 3  # one to three sensed wager spots per seat (issue 4)
SPOT_WAGERS = ("progressive", "fortune", "base", "insurance", "double-down", "trips", "bonus", "ace-high", "blind")


#: a ``[serial.<device>]`` section is read straight into the serial driver's settings
SerialConfig = SerialSettings


@dataclass(frozen=True)
class HardwareConfig:
    file: str
    table_id: str
    profile: TableProfile
    state_dir: Path
    gpio: GpioConfig
    serial: Mapping[str, SerialSettings]


def _load_gpio(sec: Section, seats: int, sensed: tuple[str, ...]) -> GpioConfig:
    fields: dict[str, Any] = dict(
        pin_factory=sec.get_str("pin_factory", "lgpio", PIN_FACTORIES),
        bounce_ms=sec.get_int("bounce_ms", 20, 1, 500),
        lockout=sec.get_pin("lockout"),
        confirm=sec.get_pin("confirm"),
        void=sec.get_pin("void"),
        key_switch=sec.get_pin("key_switch"),
        door=sec.get_pin("door", None),
        beacon=sec.get_pin("beacon", None),
        start_game=sec.get_pin("start_game", None),
        active_low=sec.get_bool("active_low", True),
    )
    sp = sec.sub("spots")
    assert sp is not None
    spots: dict[str, SpotPins] = {}
    for wager in sp.data:
        one = sp.sub(wager)
        assert one is not None
        if wager not in SPOT_WAGERS:
            raise one.error(None, f"{wager!r} is not a wager that can be sensed ({', '.join(SPOT_WAGERS)})")
        spots[wager] = SpotPins(
            tuple(one.get_pin_list("sensors", length=seats)), tuple(one.get_pin_list("lights", length=seats))
        )
        one.check_unused()
    if not 1 <= len(spots) <= MAX_SPOTS:
        raise sp.error(None, f"a table has one to {MAX_SPOTS} sensed wager spots per seat, got {len(spots)}")
    for wager in sensed:
        if wager not in spots:
            raise sp.error(wager, "the table profile senses this wager but no sensor pins are given")
    sec.check_unused()
    g = GpioConfig(spots=spots, **fields)
    owners: dict[int, str] = {}
    for name in ("lockout", "confirm", "void", "key_switch", "door", "beacon", "start_game"):
        p = getattr(g, name)
        if p is None:
            continue
        if p in owners:
            raise sec.error(name, f"BCM {p} is already used by {owners[p]}")
        owners[p] = name
    for wager, pins in spots.items():
        for kind, lst in (("sensors", pins.sensors), ("lights", pins.lights)):
            for i, p in enumerate(lst):
                if p in owners:
                    raise ConfigError(
                        sec.file, f"gpio.spots.{wager}", kind, f"BCM {p} (seat {i + 1}) is already used by {owners[p]}"
                    )
                owners[p] = f"spots.{wager}.{kind} seat {i + 1}"
    return g


def _load_serial(sec: Section, device: str) -> SerialSettings:
    s = SerialSettings(
        device=device,
        port=sec.get_str("port"),
        baud=sec.get_int("baud", 115200),
        ack_timeout_ms=sec.get_int("ack_timeout_ms", 200, 10, 5000),
        retries=sec.get_int("retries", 3, 0, 10),
        heartbeat_ms=sec.get_int("heartbeat_ms", 1000, 100, 60000),
        lost_after_ms=sec.get_int("lost_after_ms", 3500, 300, 300000),
    )
    if s.baud not in BAUD_RATES:
        raise sec.error("baud", f"{s.baud} is not one of {', '.join(map(str, BAUD_RATES))}")
    if s.lost_after_ms <= s.heartbeat_ms:
        raise sec.error("lost_after_ms", f"must be longer than heartbeat_ms ({s.heartbeat_ms})")
    sec.check_unused()
    return s


def parse_hardware(doc: Mapping[str, Any], file: str, profile_dir: Path | None = None) -> HardwareConfig:
    root = Section(file, "", doc)
    t = root.sub("table")
    assert t is not None
    table_id = t.get_str("id")
    if len(table_id) > 32 or not table_id.replace("-", "").replace("_", "").isalnum():
        raise t.error("id", f"{table_id!r} must be 1-32 letters, digits, '-' or '_'")
    profile_name = t.get_str("profile")
    state_dir = Path(t.get_str("state_dir", "/var/lib/tablectl"))
    t.check_unused()
    try:
        profile = load_profile(profile_name, profile_dir)
    except ConfigError:
        raise
    except FileNotFoundError as e:
        raise t.error("profile", str(e)) from None
    g = root.sub("gpio")
    assert g is not None
    gpio = _load_gpio(g, profile.seats, profile.sensed)
    s = root.sub("serial")
    assert s is not None
    serial: dict[str, SerialSettings] = {}
    for dev in SERIAL_DEVICES:
        sub = s.sub(dev, required=dev in profile.required_devices)
        if sub is not None:
            serial[dev] = _load_serial(sub, dev)
    s.check_unused()
    ports: dict[str, str] = {}
    for dev, sc in serial.items():
        if sc.port in ports:
            raise ConfigError(file, f"serial.{dev}", "port", f"{sc.port} is already used by serial.{ports[sc.port]}")
        ports[sc.port] = dev
    root.check_unused()
    return HardwareConfig(file, table_id, profile, state_dir, gpio, serial)


def load_hardware(path: str | Path, profile_dir: Path | None = None) -> HardwareConfig:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(str(p), "", None, f"cannot read: {e.strerror}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(p), "", None, f"not valid TOML: {e}") from None
    return parse_hardware(doc, str(p), profile_dir)


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
    #: rejected keypad input: summary interval and flood thresholds ([keypad], controller/flood.py)
    keypad: FloodLimits = field(default_factory=FloodLimits)

    @property
    def required_devices(self) -> tuple[str, ...]:
        devs = ["shoe", "sign"]
        if self.start_method == "shaker":
            devs.append("shaker")
        return tuple(devs)


def parse_profile(doc: Mapping[str, Any], file: str) -> TableProfile:
    from controller.rules.paytables import all_paytables

    root = Section(file, "", doc)
    g = root.sub("game")
    assert g is not None
    game = g.get_str("id", choices=GAMES)
    name = g.get_str("name", game)
    seats = g.get_int("seats", 6, 1, 7)
    positions = g.get_int("positions", seats + 1, 2, 8)
    # "none": the game has no starting position (DJ Wild § 687a.10(b), Over/Under § 686a.7)
    start_method = g.get_str("start_method", "shaker", ("shaker", "rng", "none"))
    sensed = g._get("sensed", ["progressive"])
    # an empty list: every wager is keyed by the dealer (no bet sensors in use, e.g. Pai Gow tiles)
    if not isinstance(sensed, list) or not all(isinstance(x, str) for x in sensed):
        raise g.error("sensed", f"must be a list of wager ids, got {sensed!r}")
    options = dict(g.data.get("options", {}))
    g._used.add("options")
    g.check_unused()
    prog = None
    p = root.sub("progressive", required=False)
    if p is not None:
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
            reserve_rate=p.get_percent("reserve_rate", "0%", maxval=Fraction(1, 2)),
        )
        if prog.increment_rate + prog.reserve_rate > 1:
            raise p.error("reserve_rate", "increment_rate + reserve_rate exceed 100% of the wager")
        p.check_unused()
    keypad = parse_limits(root.sub("keypad", required=False))
    root.check_unused()
    return TableProfile(file, name, game, seats, positions, prog, start_method, options, tuple(sensed), keypad)


def profile_path(name: str, profile_dir: Path | None = None) -> Path:
    if "/" in name or name.endswith(".toml"):
        return Path(name)
    if profile_dir is None:
        from config import CONFIG_DIR

        profile_dir = CONFIG_DIR / "tables"
    return profile_dir / f"{name}.toml"


def load_profile(name: str, profile_dir: Path | None = None) -> TableProfile:
    path = profile_path(name, profile_dir)
    if not path.exists():
        raise FileNotFoundError(f"no table profile {name!r} (looked for {path})")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(path), "", None, f"not valid TOML: {e}") from None
    return parse_profile(doc, str(path))
