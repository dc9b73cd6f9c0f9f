"""The table's hardware file (TOML): which pins, serial ports, ledger key and witness.

Read and range-checked like every configuration (controller/settings/config.py: an error names
the file, the section and the key; ``tablectl run`` exits with status 2 on it), before
any pin or serial port is touched.

Hardware file (``tablectl run --config /etc/tablectl/table.toml``)::

    [table]
    id = "PG-01"                    # table id, stamped on every log line and ledger event
    profile = "six-card-fortune"    # config/tables/<profile>.toml, or a path to a profile file
    state_dir = "/var/lib/tablectl" # ledger location
    software_record = "/etc/tablectl/software.json"  # the installed software's digest (root-owned)
    casino = "Keystone Riverside Casino"   # optional, for the accounting report: the licensed facility
    asset = "A-10001"               # optional: the table's asset number (the LAP's lap.toml [tables.<id>] asset)
    location = "Pit 2, table 7"     # optional: where the table stands on the floor

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

    [ledger]                        # optional (controller/books/ledgerkey.py, controller/books/witness.py)
    key_credential = "tablectl-ledger-key"  # the key's name under $CREDENTIALS_DIRECTORY (LoadCredential=)
    key_file = "/etc/tablectl/ledger.key"   # read when there is no credentials directory (tools, sim)
    witness_dir = "/var/lib/tablectl-witness"  # default: beside state_dir, "<state_dir>-witness"

    [serial.shoe]                   # one section per serial device: shoe, shaker, sign
    port = "/dev/serial/by-id/usb-tablectl_shoe-if00"
    baud = 115200
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.settings.config import ConfigError, ProfileUnreadable, Section, TableProfile, load_profile, read_toml
from controller.settings.pins import Expander, PinClash, Use, allocate, bus_uses
from drivers.devicedefs import names as serial_devices
from drivers.gpio import (
    CHIP_FACTORIES,
    EXPANDER_TYPES,
    HEADER_CHIP,
    PIN_FACTORIES,
    GpioSettings,
    Pin,
    PinAddr,
)
from drivers.serialdev import BAUD_RATES, SerialSettings


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
        order; the expanders' own header pins are :func:`controller.settings.pins.bus_uses`."""
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


MAX_SPOTS = 3  # one to three sensed wager spots per seat
SPOT_WAGERS = ("progressive", "fortune", "base", "insurance", "double-down", "trips", "bonus", "ace-high", "blind")


#: a ``[serial.<device>]`` section is read straight into the serial driver's settings
SerialConfig = SerialSettings


DEFAULT_KEY_CREDENTIAL = "tablectl-ledger-key"
DEFAULT_KEY_FILE = "/etc/tablectl/ledger.key"


@dataclass(frozen=True)
class LedgerConfig:
    """``[ledger]``: where the ledger's key and the witness of its head are."""

    key_credential: str = DEFAULT_KEY_CREDENTIAL
    key_file: Path = Path(DEFAULT_KEY_FILE)
    witness_dir: Path | None = None  # None: "<state_dir>-witness" (controller/books/witness.py)


@dataclass(frozen=True)
class HardwareConfig:
    file: str
    table_id: str
    profile: TableProfile
    state_dir: Path
    gpio: GpioConfig
    serial: Mapping[str, SerialSettings]
    #: the software digest recorded at installation (controller/boot/selfcheck.py): root-owned, never
    #: where the service may write
    software_record: Path = Path("/etc/tablectl/software.json")
    ledger: LedgerConfig = LedgerConfig()
    #: who and where, for the accounting report (controller/reports/report.py): "" when not given
    casino: str = ""
    asset: str = ""
    location: str = ""


#: ``[table]`` texts the accounting report prints: (key, what it is), all optional
LABELS = (
    ("casino", "the licensed facility's name"),
    ("asset", "the table's asset number"),
    ("location", "where the table stands (pit, position)"),
)
LABEL_MAX = 64


def _load_label(t: Section, key: str, what: str) -> str:
    """An optional ``[table]`` text for the report: one printable line, at most 64 characters."""
    if key not in t.data:
        return ""
    v = t.get_str(key).strip()
    if len(v) > LABEL_MAX:
        raise t.error(key, f"{what}: at most {LABEL_MAX} characters, got {len(v)}")
    if not v.isprintable():
        raise t.error(key, f"{what}: one line of printable text (no control characters)")
    return v


def _load_ledger(sec: Section | None, state_dir: Path) -> LedgerConfig:
    if sec is None:
        return LedgerConfig()
    cred = sec.get_str("key_credential", DEFAULT_KEY_CREDENTIAL)
    if "/" in cred or cred in (".", ".."):
        raise sec.error("key_credential", f"{cred!r} is a credential name (LoadCredential=), not a path")
    key_file = Path(sec.get_str("key_file", DEFAULT_KEY_FILE))
    if not key_file.is_absolute():
        raise sec.error("key_file", f"{str(key_file)!r} must be an absolute path")
    witness = _witness_dir(sec, state_dir) if "witness_dir" in sec.data else None
    sec.check_unused()
    return LedgerConfig(cred, key_file, witness)


def _witness_dir(sec: Section, state_dir: Path) -> Path:
    """``[ledger] witness_dir``: an absolute path outside ``state_dir`` (it witnesses that directory)."""
    wd = sec.get_str("witness_dir")
    witness = Path(wd)
    if not witness.is_absolute():
        raise sec.error("witness_dir", f"{wd!r} must be an absolute path")
    sd = state_dir.resolve() if state_dir.is_absolute() else state_dir
    w = witness.resolve()
    if w == sd or sd in w.parents:
        raise sec.error("witness_dir", f"{wd!r} must be outside state_dir ({state_dir}): it witnesses that directory")
    return witness


def _load_expanders(sec: Section, pin_factory: str) -> dict[int, Expander]:
    ex = sec.sub("expanders", required=False)
    if ex is None:
        return {}
    out: dict[int, Expander] = {}
    addresses: dict[int, int] = {}
    for name in ex.data:
        one = ex.sub(name)
        assert one is not None
        chip = _expander_chip(one, name)
        kind = one.get_str("type", "mcp23017", tuple(EXPANDER_TYPES))
        address = one.get_int("address", minval=0x20, maxval=0x27)
        if address in addresses:
            raise one.error("address", f"0x{address:02x} is also chip{addresses[address]}'s I2C address")
        interrupt = one.get_pin("interrupt")
        assert interrupt is not None
        one.check_unused()
        if pin_factory not in CHIP_FACTORIES:
            raise sec.error("pin_factory", f"{pin_factory!r} drives only the header; expanders need lgpio")
        addresses[address] = chip
        out[chip] = Expander(chip, kind, address, interrupt.line)
    return out


def _expander_chip(one: Section, name: str) -> int:
    """``[gpio.expanders.chipN]``: N, an expander's gpiochip (chip0 is the header)."""
    chip = name[4:] if name.startswith("chip") else ""
    if not chip.isdigit() or int(chip) == HEADER_CHIP:
        raise one.error(None, f"{name!r} is not an expander's gpiochip: chipN, N from 1 (chip0 is the header)")
    return int(chip)


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
    try:  # one use per line, across the header and the expanders (controller/settings/pins.py)
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
    state_dir, software_record = _table_paths(t)
    labels = {key: _load_label(t, key, what) for key, what in LABELS}
    t.check_unused()
    profile = _profile(t, profile_name, profile_dir)
    g = root.sub("gpio")
    assert g is not None
    gpio = _load_gpio(g, profile.seats, profile.sensed)
    serial = _load_serials(root, file, profile)
    ledger = _load_ledger(root.sub("ledger", required=False), state_dir)
    root.check_unused()
    return HardwareConfig(file, table_id, profile, state_dir, gpio, serial, software_record, ledger, **labels)


def _table_paths(t: Section) -> tuple[Path, Path]:
    """[table] state_dir and software_record: absolute paths."""
    state_dir = Path(t.get_str("state_dir", "/var/lib/tablectl"))
    if not state_dir.is_absolute():
        # systemd starts the service in / and a shell anywhere: a relative directory is two ledgers
        raise t.error("state_dir", f"{str(state_dir)!r} must be an absolute path (e.g. /var/lib/tablectl)")
    if state_dir.exists() and not state_dir.is_dir():
        raise t.error("state_dir", f"{state_dir} exists and is not a directory")
    software_record = Path(t.get_str("software_record", "/etc/tablectl/software.json"))
    if not software_record.is_absolute() or software_record.suffix != ".json":
        raise t.error("software_record", f"{str(software_record)!r} must be an absolute path to a .json file")
    return state_dir, software_record


def _profile(t: Section, profile_name: str, profile_dir: Path | None) -> TableProfile:
    try:
        return load_profile(profile_name, profile_dir)
    except ConfigError as e:
        if e.section or e.key:
            raise
        # the profile file itself cannot be read (not UTF-8, not TOML...): name the key that chose it too
        raise t.error("profile", f"{e.file}: {e.problem}") from None
    except ProfileUnreadable as e:
        raise t.error("profile", str(e)) from None


def _load_serials(root: Section, file: str, profile: TableProfile) -> dict[str, SerialSettings]:
    """[serial.*]: the devices the profile needs (others optional), each on a port of its own."""
    s = root.sub("serial")
    assert s is not None
    serial: dict[str, SerialSettings] = {}
    for dev in serial_devices():
        sub = s.sub(dev, required=dev in profile.required_devices)
        if sub is not None:
            serial[dev] = _load_serial(sub, dev)
    s.check_unused()
    ports: dict[str, str] = {}
    for dev, sc in serial.items():
        if sc.port in ports:
            raise ConfigError(file, f"serial.{dev}", "port", f"{sc.port} is already used by serial.{ports[sc.port]}")
        ports[sc.port] = dev
    return serial


def load_hardware(path: str | Path, profile_dir: Path | None = None) -> HardwareConfig:
    p = Path(path)
    return parse_hardware(read_toml(p), str(p), profile_dir)
