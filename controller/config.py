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
    software_record = "/etc/tablectl/software.json"  # the installed software's digest (root-owned)

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

    [ledger]                        # optional (controller/ledgerkey.py, controller/witness.py)
    key_credential = "tablectl-ledger-key"  # the key's name under $CREDENTIALS_DIRECTORY (LoadCredential=)
    key_file = "/etc/tablectl/ledger.key"   # read when there is no credentials directory (tools, sim)
    witness_dir = "/var/lib/tablectl-witness"  # default: beside state_dir, "<state_dir>-witness"

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
from controller.pins import Expander, PinClash, Use, allocate, bus_uses
from controller.rules.paytables import GAMES, parse_money, parse_percent
from drivers.gpio import (
    BCM_PINS,
    CHIP_FACTORIES,
    EXPANDER_TYPES,
    HEADER_CHIP,
    PIN_FACTORIES,
    GpioSettings,
    Pin,
    PinAddr,
    parse_pin,
)
from drivers.serialdev import BAUD_RATES, SERIAL_DEVICES, SerialSettings


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
    e = expanders.get(a.chip)
    if e is None:
        declared = ", ".join(f"chip{c}" for c in sorted(expanders)) or "none"
        raise ValueError(
            f"{v!r}: chip{a.chip} is not a declared expander ([gpio.expanders.chip{a.chip}]; declared: {declared})"
        )
    if a.line not in e.lines:
        raise ValueError(f"{v!r}: a {e.type} has lines 0..{e.lines.stop - 1} (GPA0..GPB7)")
    return a


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


# --------------------------------------------------------------------------- hardware


@dataclass(frozen=True)
class GpioConfig:
    pin_factory: str
    bounce_ms: int
    lockout: PinAddr
    confirm: PinAddr
    void: PinAddr
    key_switch: PinAddr
    door: PinAddr | None
    beacon: PinAddr | None
    #: sensed wager spots: wager id -> (sensor pins, light pins), one of each per seat, seat 1 first
    spots: Mapping[str, SpotPins]
    start_game: PinAddr | None = None
    active_low: bool = True
    #: I/O expanders by gpiochip number (``[gpio.expanders.chipN]``)
    expanders: Mapping[int, Expander] = field(default_factory=dict)

    def pin_uses(self) -> list[Use]:
        """Every line the configuration names, by what (the inputs, the lights), in the file's
        order; the expanders' own header pins are :func:`controller.pins.bus_uses`."""
        uses: list[Use] = []
        for name in ("lockout", "confirm", "void", "key_switch", "door", "beacon", "start_game"):
            p = getattr(self, name)
            if p is not None:
                uses.append(Use(p, name, "gpio", name))
        for wager, spot in self.spots.items():
            for kind, lst in (("sensors", spot.sensors), ("lights", spot.lights)):
                for i, p in enumerate(lst, 1):
                    uses.append(Use(p, f"spots.{wager}.{kind} seat {i}", f"gpio.spots.{wager}", kind))
        return uses

    def driver_settings(self) -> GpioSettings:
        """The GPIO driver's settings: every input and light under the name the table
        knows it by (``lockout``, ``key``, ``bet.<wager>.<seat>``, ``light.<wager>.<seat>``,
        ``beacon``)."""
        inputs: dict[str, Pin] = {
            "lockout": self.lockout,
            "confirm": self.confirm,
            "void": self.void,
            "key": self.key_switch,
        }
        if self.door is not None:
            inputs["door"] = self.door
        if self.start_game is not None:
            inputs["start_game"] = self.start_game
        lights: dict[str, Pin] = {}
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
    sensors: tuple[PinAddr, ...]
    lights: tuple[PinAddr, ...]


MAX_SPOTS = 3  # one to three sensed wager spots per seat (issue 4)
SPOT_WAGERS = ("progressive", "fortune", "base", "insurance", "double-down", "trips", "bonus", "ace-high", "blind")


#: a ``[serial.<device>]`` section is read straight into the serial driver's settings
SerialConfig = SerialSettings


DEFAULT_KEY_CREDENTIAL = "tablectl-ledger-key"
DEFAULT_KEY_FILE = "/etc/tablectl/ledger.key"


@dataclass(frozen=True)
class LedgerConfig:
    """``[ledger]``: where the ledger's key and the witness of its head are (issue 13)."""

    key_credential: str = DEFAULT_KEY_CREDENTIAL
    key_file: Path = Path(DEFAULT_KEY_FILE)
    witness_dir: Path | None = None  # None: "<state_dir>-witness" (controller/witness.py)


@dataclass(frozen=True)
class HardwareConfig:
    file: str
    table_id: str
    profile: TableProfile
    state_dir: Path
    gpio: GpioConfig
    serial: Mapping[str, SerialSettings]
    #: the software digest recorded at installation (controller/selfcheck.py): root-owned, never
    #: where the service may write
    software_record: Path = Path("/etc/tablectl/software.json")
    ledger: LedgerConfig = LedgerConfig()


def _load_ledger(sec: Section | None, state_dir: Path) -> LedgerConfig:
    if sec is None:
        return LedgerConfig()
    cred = sec.get_str("key_credential", DEFAULT_KEY_CREDENTIAL)
    if "/" in cred or cred in (".", ".."):
        raise sec.error("key_credential", f"{cred!r} is a credential name (LoadCredential=), not a path")
    key_file = Path(sec.get_str("key_file", DEFAULT_KEY_FILE))
    if not key_file.is_absolute():
        raise sec.error("key_file", f"{str(key_file)!r} must be an absolute path")
    wd = sec.get_str("witness_dir") if "witness_dir" in sec.data else None
    witness = Path(wd) if wd is not None else None
    if witness is not None:
        if not witness.is_absolute():
            raise sec.error("witness_dir", f"{wd!r} must be an absolute path")
        sd = state_dir.resolve() if state_dir.is_absolute() else state_dir
        w = witness.resolve()
        if w == sd or sd in w.parents:
            raise sec.error(
                "witness_dir", f"{wd!r} must be outside state_dir ({state_dir}): it witnesses that directory"
            )
    sec.check_unused()
    return LedgerConfig(cred, key_file, witness)


def _load_expanders(sec: Section, pin_factory: str) -> dict[int, Expander]:
    ex = sec.sub("expanders", required=False)
    if ex is None:
        return {}
    out: dict[int, Expander] = {}
    addresses: dict[int, int] = {}
    for name in ex.data:
        one = ex.sub(name)
        assert one is not None
        chip = name[4:] if name.startswith("chip") else ""
        if not chip.isdigit() or int(chip) == HEADER_CHIP:
            raise one.error(None, f"{name!r} is not an expander's gpiochip: chipN, N from 1 (chip0 is the header)")
        kind = one.get_str("type", "mcp23017", tuple(EXPANDER_TYPES))
        address = one.get_int("address", minval=0x20, maxval=0x27)
        if address in addresses:
            raise one.error("address", f"0x{address:02x} is also chip{addresses[address]}'s I2C address")
        interrupt = one.get_pin("interrupt")
        assert interrupt is not None
        one.check_unused()
        if pin_factory not in CHIP_FACTORIES:
            raise sec.error("pin_factory", f"{pin_factory!r} drives only the header; expanders need lgpio")
        addresses[address] = int(chip)
        out[int(chip)] = Expander(int(chip), kind, address, interrupt.line)
    return out


def _load_gpio(sec: Section, seats: int, sensed: tuple[str, ...]) -> GpioConfig:
    pin_factory = sec.get_str("pin_factory", "lgpio", PIN_FACTORIES)
    ex = _load_expanders(sec, pin_factory)
    fields: dict[str, Any] = dict(
        pin_factory=pin_factory,
        bounce_ms=sec.get_int("bounce_ms", 20, 1, 500),
        lockout=sec.get_pin("lockout", expanders=ex),
        confirm=sec.get_pin("confirm", expanders=ex),
        void=sec.get_pin("void", expanders=ex),
        key_switch=sec.get_pin("key_switch", expanders=ex),
        door=sec.get_pin("door", None, expanders=ex),
        beacon=sec.get_pin("beacon", None, expanders=ex),
        start_game=sec.get_pin("start_game", None, expanders=ex),
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
            tuple(one.get_pin_list("sensors", length=seats, expanders=ex)),
            tuple(one.get_pin_list("lights", length=seats, expanders=ex)),
        )
        one.check_unused()
    if not 1 <= len(spots) <= MAX_SPOTS:
        raise sp.error(None, f"a table has one to {MAX_SPOTS} sensed wager spots per seat, got {len(spots)}")
    for wager in sensed:
        if wager not in spots:
            raise sp.error(wager, "the table profile senses this wager but no sensor pins are given")
    sec.check_unused()
    g = GpioConfig(spots=spots, expanders=ex, **fields)
    try:  # one use per line, across the header and the expanders (controller/pins.py)
        allocate([*bus_uses(ex), *g.pin_uses()])
    except PinClash as e:
        raise ConfigError(sec.file, e.second.section, e.second.key, str(e)) from None
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
    if not state_dir.is_absolute():
        # systemd starts the service in / and a shell anywhere: a relative directory is two ledgers
        raise t.error("state_dir", f"{str(state_dir)!r} must be an absolute path (e.g. /var/lib/tablectl)")
    if state_dir.exists() and not state_dir.is_dir():
        raise t.error("state_dir", f"{state_dir} exists and is not a directory")
    software_record = Path(t.get_str("software_record", "/etc/tablectl/software.json"))
    if not software_record.is_absolute() or software_record.suffix != ".json":
        raise t.error("software_record", f"{str(software_record)!r} must be an absolute path to a .json file")
    t.check_unused()
    try:
        profile = load_profile(profile_name, profile_dir)
    except ConfigError as e:
        if e.section or e.key:
            raise
        # the profile file itself cannot be read (not UTF-8, not TOML...): name the key that chose it too
        raise t.error("profile", f"{e.file}: {e.problem}") from None
    except ProfileUnreadable as e:
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
    ledger = _load_ledger(root.sub("ledger", required=False), state_dir)
    root.check_unused()
    return HardwareConfig(file, table_id, profile, state_dir, gpio, serial, software_record, ledger)


def read_toml(p: Path) -> dict[str, Any]:
    """A TOML file's document; any problem reading it is a :class:`ConfigError` naming
    the file and saying what is wrong, never quoting the file's bytes."""
    if p.is_dir():
        raise ConfigError(str(p), "", None, "is a directory, not a file")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ConfigError(str(p), "", None, f"cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(str(p), "", None, f"not UTF-8 text (byte {e.start + 1}, line {line})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(p), "", None, f"not valid TOML: {e}") from None


def load_hardware(path: str | Path, profile_dir: Path | None = None) -> HardwareConfig:
    p = Path(path)
    return parse_hardware(read_toml(p), str(p), profile_dir)


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
        raise g.error("sensed", f"must be a list of wager ids, got {_show(sensed)}")
    twice = sorted({x for x in sensed if sensed.count(x) > 1})
    if twice:
        raise g.error("sensed", f"{twice[0]!r} is listed more than once")
    opts = g.sub("options", required=False)  # [game.options]: the game's procedure reads them
    options = dict(opts.data) if opts is not None else {}
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
            # issue 12: seed, rate and reserve are the Rules Submission's; none is assumed
            reserve_rate=p.get_percent("reserve_rate", maxval=Fraction(1, 2)),
            linked=p.get_str("linked") if "linked" in p.data else None,
            link_timeout_s=p.get_int("link_timeout", 3, minval=1, maxval=60) * 1.0,
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


class ProfileUnreadable(FileNotFoundError):
    """The table profile named is missing or is not a file (reported against ``[table] profile``)."""


def load_profile(name: str, profile_dir: Path | None = None) -> TableProfile:
    path = profile_path(name, profile_dir)
    if not path.exists():
        raise ProfileUnreadable(f"no table profile {name!r} (looked for {path})")
    if not path.is_file():
        raise ProfileUnreadable(f"{path} is not a file")
    return parse_profile(read_toml(path), str(path))
