"""``lap.toml``: one linked group's levels and member tables (parsed like every other
configuration: an error names file, section and key, and changes nothing).

Example::

    [link]
    group = "pit1"               # the name tables use in their profile: linked = "pit1"
    heartbeat = "1s"             # how often the LAP tells every table it is alive
    reconcile = "10s"            # how often the LAP reconciles every level and checks its schema
    # schema = "lap_pit1"        # PostgreSQL schema (default lap_<group>)
    # software_record = "/etc/tablectl/software.json"   # the release's digest (tablectl verify --record)
    # casino = "Riverside Casino"  # the casino's name on the LAP's report and its payout slips
    # allow_async_replication = false  # true: run without a synchronous standby streaming (an
                                 # acknowledged hit can then be lost with the primary: a lab, a
                                 # single-server test rig); the LAP refuses to run otherwise
    # table_hold = "1s"          # a table's session holding a lock another waits for this long is
                                 # ended (idle in its transaction) or its statement cancelled
    # table_run = "10s"          # a table's statement or transaction running this long is ended

    [levels.primary]
    seed = "$5,000"              # the first value of the meter
    reset = "$5,000"             # the value after a 100 % hit (plus the reserve)
    increment_rate = "21%"       # of every wager, to the meter
    reserve_rate = "0%"          # of every wager, to the hidden reserve that funds the next reset
    limit = "$250,000"           # optional: the meter's ceiling
    max_wager = "$5"             # required: the largest progressive wager a seat can make (a larger
                                 # contribution is refused: N.J.A.C. 13:69E-1.39A(a))
    meter_pays = ["100%", "10%"] # required: the paytable's percentage-of-meter pays (any other is refused)
    at_limit = "reserve"         # "reserve": contributions above the limit go to the reserve;
                                 # "freeze": they are recorded as overflow and the meter stands still

    [tables.T01]
    asset = "A-10001"            # the asset number the common meter shows for a winner
    game = "six-card-fortune"

    [floor]                      # optional: the read-only floor view (docs/linked.md); off without it
    bind = "127.0.0.1"
    port = 8080
    staff = "floor-staff.toml"   # per-person scrypt PINs (relative to this file); `tablectl lap --staff-pin`
    session = "8h"               # a login expires after this long
    tls_cert = "floor.crt"       # optional, with tls_key: serve HTTPS (PEM files, relative to this file)
    tls_key = "floor.key"

    [sign]                       # optional: the common progressive sign, always at /sign on the floor
    bind = "0.0.0.0"             # view's address; with a port, on an address of its own too (only the
    port = 8081                  # sign is served there)
    hold = "30s"                 # how long the sign celebrates a hit, then back to the meters
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from controller.lap.schema import check_name
from controller.rules.paytables import parse_percent
from controller.settings.config import Section, read_toml

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,30}$")


@dataclass(frozen=True)
class LevelParams:
    level: str
    seed_cents: int
    reset_cents: int
    rate: Fraction
    reserve_rate: Fraction
    limit_cents: int | None
    at_limit: str  # "reserve" | "freeze"
    #: the largest contribution's wager (N.J.A.C. 13:69E-1.39A(a): an "unreasonable contribution"
    #: limit); required, no default
    max_wager_cents: int
    #: the paytable's percentage-of-meter pays (a hit claim for any other fraction is refused)
    meter_pays: tuple[Fraction, ...]

    @property
    def pays_text(self) -> list[str]:
        """The pays as the database keeps them: reduced fractions ``num/den``, in order."""
        return [f"{p.numerator}/{p.denominator}" for p in self.meter_pays]

    @property
    def den(self) -> int:
        """The common denominator of the level's exact accounts."""
        a, b = self.rate.denominator, self.reserve_rate.denominator
        from math import lcm

        return lcm(a, b)


@dataclass(frozen=True)
class MemberParams:
    table_id: str
    asset: str
    game: str


@dataclass(frozen=True)
class FloorParams:
    bind: str
    port: int
    staff: Path
    session_s: float
    tls_cert: Path | None = None
    tls_key: Path | None = None
    sign_bind: str | None = None  # [sign]: the sign on an address of its own
    sign_port: int | None = None
    sign_hold_s: float = 30.0


@dataclass(frozen=True)
class LapConfig:
    file: str
    group: str
    schema: str
    heartbeat_s: float
    levels: tuple[LevelParams, ...]
    tables: tuple[MemberParams, ...]
    floor: FloorParams | None = None
    reconcile_s: float = 10.0
    #: the release's software digest, compared before the LAP operates (controller/boot/selfcheck.py)
    software_record: Path = Path("/etc/tablectl/software.json")
    #: ``[link] allow_async_replication``: the operator accepts running without a synchronous
    #: standby streaming (the LAP refuses to, without it)
    allow_async_replication: bool = False
    #: ``[link] casino``: the casino's name on the LAP's report and its payout slips
    casino: str = ""
    #: ``[link] table_hold`` and ``table_run``: the LAP's deadlines on the tables' sessions, which
    #: it keeps itself (controller/lap/guard.py), whatever a table's role sets in its session
    table_hold_s: float = 1.0
    table_run_s: float = 10.0

    def role_for(self, table_id: str) -> str:
        """The PostgreSQL role a table's uplink logs in as (one per table)."""
        return check_name(f"{self.schema}_{table_id.lower().replace('-', '_')}", "role")


def _seconds(sec: Section, key: str, default: str, lo: float, hi: float) -> float:
    v = sec._get(key, default)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*", str(v))
    if not m:
        raise sec.error(key, f'write a duration like "1s" or "500ms", got {v!r}')
    s = float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]
    if not lo <= s <= hi:
        raise sec.error(key, f"{v} is outside {lo:g}s..{hi:g}s")
    return s


#: a rate is kept to 4 decimal places of a percent (a millionth of the wager): the LAP keeps each
#: level's accounts over the common denominator of its rates in a PostgreSQL bigint, and every
#: such denominator divides 10**6, however often the rates change (lcm of divisors of 10**6)
RATE_DEN = 10**6


def _rate(sec: Section, key: str, default: Any = None) -> Fraction:
    r = sec.get_percent(key) if default is None else sec.get_percent(key, default)
    if RATE_DEN % r.denominator:
        raise sec.error(
            key, f"{sec.data.get(key, default)} is finer than the LAP keeps: at most 4 decimal places of a percent"
        )
    return r


def parse_lap(doc: Mapping[str, Any], file: str) -> LapConfig:
    root = Section(file, "", doc)
    link = root.sub("link")
    assert link is not None
    group = link.get_str("group")
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,30}", group):
        raise link.error("group", f"{group!r}: use lower-case letters, digits and _ (letter first, max 31)")
    schema = link.get_str("schema", f"lap_{group}")
    try:
        check_name(schema)
    except ValueError as e:
        raise link.error("schema", str(e)) from None
    hb = _seconds(link, "heartbeat", "1s", 0.05, 10)
    reconcile_s = _seconds(link, "reconcile", "10s", 0.05, 3600)
    software = Path(link.get_str("software_record", "/etc/tablectl/software.json"))
    allow_async = link.get_bool("allow_async_replication", False)
    casino = _casino(link)
    # under the tables' link timeout (3 s by default), so the tables waiting behind a held lock
    # stay open; above an uplink's statement deadline (its link timeout + 1 s)
    hold = _seconds(link, "table_hold", "1s", 0.2, 2.5)
    run = _seconds(link, "table_run", "10s", 5, 3600)
    link.check_unused()
    levels = _levels(root)
    tables = _members(root, schema)
    floor = _floor(root, file)
    root.check_unused()
    return LapConfig(
        file,
        group,
        schema,
        hb,
        levels,
        tables,
        floor,
        reconcile_s,
        software,
        allow_async,
        casino,
        table_hold_s=hold,
        table_run_s=run,
    )


def _levels(root: Section) -> tuple[LevelParams, ...]:
    """``[levels.<name>]``: at least one, each named in lower-case letters, digits and _."""
    lv_sec = root.sub("levels")
    assert lv_sec is not None
    levels = []
    for name in lv_sec.data:
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,30}", name):
            raise lv_sec.error(name, "a level's name: lower-case letters, digits and _")
        s = lv_sec.sub(name)
        assert s is not None
        levels.append(_level(name, s))
    if not levels:
        raise lv_sec.error(None, "needs at least one level")
    lv_sec._used.update(lv_sec.data)
    return tuple(levels)


def _members(root: Section, schema: str) -> tuple[MemberParams, ...]:
    """``[tables.<id>]``: at least one member table, each with a database role of its own in
    ``schema`` (two ids that fold to the same role name are refused)."""
    t_sec = root.sub("tables")
    assert t_sec is not None
    tables = []
    roles: dict[str, str] = {}
    for tid in t_sec.data:
        if not _ID.match(tid):
            raise t_sec.error(tid, "a table id: letters, digits, - and _ (max 31)")
        t = t_sec.sub(tid)
        assert t is not None
        asset = t.get_str("asset")
        game = t.get_str("game")
        t.check_unused()
        tables.append(MemberParams(tid, asset, game))
        role = f"{schema}_{tid.lower().replace('-', '_')}"
        if role in roles:
            raise t_sec.error(tid, f"gets the same database role as table {roles[role]!r}")
        roles[role] = tid
        try:
            check_name(role, "role")
        except ValueError as e:
            raise t_sec.error(tid, str(e)) from None
    if not tables:
        raise t_sec.error(None, "needs at least one member table")
    t_sec._used.update(t_sec.data)
    return tuple(tables)


def _casino(link: Section) -> str:
    """``[link] casino``: one printable line of at most 64 characters (optional)."""
    if "casino" not in link.data:
        return ""
    name = link.get_str("casino")
    if len(name) > 64 or not name.isprintable():
        raise link.error("casino", "one printable line of at most 64 characters")
    return name.strip()


def _level(name: str, s: Section) -> LevelParams:
    seed = s.get_money("seed", maxcents=1_000_000_000)
    reset = s.get_money("reset", s.data.get("seed", "$0"), maxcents=1_000_000_000)
    rate = _rate(s, "increment_rate")
    reserve = _rate(s, "reserve_rate", "0%")
    if rate + reserve > 1:
        raise s.error("reserve_rate", "increment_rate + reserve_rate exceed 100% of the wager")
    limit = s.get_money("limit", maxcents=10_000_000_000) if "limit" in s.data else None
    if limit is not None and limit < max(seed, reset):
        raise s.error("limit", "is below the seed or the reset")
    at_limit = s.get_str("at_limit", "reserve", ("reserve", "freeze"))
    # N.J.A.C. 13:69E-1.39A(a): the LAP's "unreasonable contribution" limit; the operator's to set
    max_wager = s.get_money("max_wager", mincents=1, maxcents=100_000_000)
    pays = _meter_pays(s)
    s.check_unused()
    return LevelParams(name, seed, reset, rate, reserve, limit, at_limit, max_wager, pays)


def _meter_pays(s: Section) -> tuple[Fraction, ...]:
    """The paytable's percentage-of-meter pays: a non-empty list of percentages in (0, 100%]."""
    v = s._get("meter_pays", None)
    if v is None:
        raise s.error("meter_pays", 'is required: the paytable\'s percentage pays, e.g. ["100%", "10%"]')
    if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
        raise s.error("meter_pays", f'write a list of percentages like ["100%", "10%"], got {v!r}')
    out = []
    for x in v:
        try:
            p = parse_percent(x)
        except ValueError as e:
            raise s.error("meter_pays", str(e)) from None
        if not 0 < p <= 1:
            raise s.error("meter_pays", f"{x} is outside (0%, 100%]")
        if p in out:
            raise s.error("meter_pays", f"{x} is listed twice")
        out.append(p)
    return tuple(out)


def _path(sec: Section, key: str, file: str) -> Path:
    p = Path(sec.get_str(key))
    return p if p.is_absolute() else Path(file).parent / p


def _tls(sec: Section, file: str) -> tuple[Path | None, Path | None]:
    """``tls_cert`` and ``tls_key``: both or neither; the pair must load (checked here, so that
    ``tablectl lap --check`` names the option that is wrong)."""
    if "tls_cert" not in sec.data and "tls_key" not in sec.data:
        return None, None
    for opt in ("tls_cert", "tls_key"):
        if opt not in sec.data:
            raise sec.error(opt, "tls_cert and tls_key go together (PEM certificate chain and its private key)")
    cert, key = _path(sec, "tls_cert", file), _path(sec, "tls_key", file)
    import ssl

    for opt, path in (("tls_cert", cert), ("tls_key", key)):
        try:
            path.read_bytes()
        except OSError as e:
            raise sec.error(opt, f"cannot read {path}: {e.strerror}") from None
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(str(cert), str(key))
    except ssl.SSLError as e:
        why = f"{cert} and {key} are not a PEM certificate and its private key ({e.reason})"
        raise sec.error("tls_key", why) from None
    return cert, key


def _floor(root: Section, file: str) -> FloorParams | None:
    f_sec = root.sub("floor", required=False)
    s_sec = root.sub("sign", required=False)
    if f_sec is None:
        if s_sec is not None:
            raise s_sec.error(None, "the sign is served by the floor view's server: add a [floor] section")
        return None
    bind = f_sec.get_str("bind", "127.0.0.1")
    port = f_sec.get_int("port", minval=1, maxval=65535)
    staff = _path(f_sec, "staff", file) if "staff" in f_sec.data else Path(file).parent / "floor-staff.toml"
    session_s = _seconds(f_sec, "session", "8h", 60, 24 * 3600)
    cert, key = _tls(f_sec, file)
    f_sec.check_unused()
    sign_bind, sign_port, hold = None, None, 30.0
    if s_sec is not None:
        if "port" in s_sec.data:  # else the sign is at /sign on the floor view's address only
            sign_bind = s_sec.get_str("bind", "127.0.0.1")
            sign_port = s_sec.get_int("port", minval=1, maxval=65535)
            if (sign_bind, sign_port) == (bind, port):
                raise s_sec.error("port", f"{sign_bind}:{sign_port} is the floor view's own address")
        elif "bind" in s_sec.data:
            raise s_sec.error("port", "a bind address of the sign's own needs its port")
        hold = _seconds(s_sec, "hold", "30s", 5, 600)
        s_sec.check_unused()
    return FloorParams(bind, port, staff, session_s, cert, key, sign_bind, sign_port, hold)


def load_lap(path: str | Path) -> LapConfig:
    p = Path(path)
    # bounded; a file that is not UTF-8 or not TOML is a configuration error (exit 2: no restart loop)
    return parse_lap(read_toml(p), str(p))
