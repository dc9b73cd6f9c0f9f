"""Start-up self-checks (SPEC § 5), run before any pin is claimed
or any serial link is opened:

1. **configuration** — the hardware file and table profile were parsed and
   range-checked already (controller/settings/config.py); here: the profile's paytables
   load, the state directory is a writable directory;
2. **ledger integrity** — the hash chain and the meters recomputed from the
   events (:meth:`controller.books.ledger.Ledger.verify`);
3. **software digest** — SHA-256 over everything the service imports that is
   installed: our packages and the whole virtualenv (its site-packages, ``.pth``
   files, compiled extensions, metadata), compared with the value recorded at
   installation (``tablectl verify --record``) in a file the service user cannot
   write (``[table] software_record``, default ``/etc/tablectl/software.json``);
4. **RNG self-test** — ``drivers.rng.self_test`` (chi-square, runs and serial
   correlation at 99 %).

Every problem becomes a latched tilt through the table (``Table.start(problems)``),
is written to the ledger, and survives restarts until a technician clears it.

The software digest is reproducible with standard tools: it is the SHA-256 of
the ``sha256sum``-style listing (``<sha256>  <name>`` lines, sorted by name,
``LC_ALL=C``) of

* the shipped files of our packages (``*.py``, ``*.toml``, ``*.yaml``, ``*.yml``,
  ``*.json`` under :data:`PACKAGES`), named ``controller/daemon/service.py`` etc.;
* every file under each of the interpreter's site-packages directories (the
  virtualenv's), named ``site-packages/<path>``;

* the virtualenv's ``pyvenv.cfg`` and every entry of its ``bin/`` (the ``tablectl`` script the
  unit runs; a link as ``symlink:<target>``), named ``venv/pyvenv.cfg``, ``venv/bin/<name>``;

in the first two, ``__pycache__`` directories and ``*.pyc`` files are left out — except in a
record made with ``bytecode`` (``tablectl verify --record --bytecode``, what
systemd/install.sh makes): a release's compiled files are written once, at
installation, into root-owned directories, and Python runs a ``.pyc`` whose header
matches its source's size and time without reading the source, so a replaced
``.pyc`` would run other code under a matching digest of the sources.  Such a record
also lists every file in the ``__pycache__`` directories of both, and the service
compares it the same way (drop the two ``__pycache__``/``.pyc`` exclusions below).
From the directory holding the packages, with ``SP`` the site-packages directory::

    { find controller drivers config -type f \\( -name '*.py' -o -name '*.toml' \\
        -o -name '*.yaml' -o -name '*.yml' -o -name '*.json' \\) -not -path '*/__pycache__/*' | xargs -d '\\n' sha256sum
      (cd "$SP" && find . -type f -not -path '*/__pycache__/*' -not -name '*.pyc' | sed 's|^./||' \\
        | xargs -d '\\n' sha256sum | sed 's|  |  site-packages/|'); } | LC_ALL=C sort -k2 | sha256sum

(that line leaves out the ``venv/`` entries; with them, add their ``<sha256>  venv/...`` lines
before sorting).

At start-up a file whose size, modification time, change time and inode are
those recorded beside its hash is not read again (the record is root-owned and
any write to a file moves its change time, which no unprivileged user can set);
``tablectl verify``, ``verify --record`` and the console's ``verify`` read every file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

#: what a table runs (the simulators and benchmarks, hil/ and bench/, are tablectl-rigs: not on a table)
PACKAGES = ("controller", "drivers", "config")
SUFFIXES = (".py", ".toml", ".yaml", ".yml", ".json")
RECORD_FILE = "software.json"
RECORD_MAX = 32 * 1024 * 1024
RNG_SAMPLES = 20_000


# --------------------------------------------------------------------------- software digest

#: where ``tablectl verify --record`` keeps the record unless the configuration says
#: (``[table] software_record``): root-owned, outside the service's writable paths
DEFAULT_RECORD = Path("/etc/tablectl") / RECORD_FILE


def package_roots() -> dict[str, Path]:
    """Where each shipped package is installed (found without importing it)."""
    roots: dict[str, Path] = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        roots[name] = Path(list(spec.submodule_search_locations)[0])
    return roots


def site_roots() -> list[Path]:
    """The interpreter's site-packages directories (a virtualenv's own), each once."""
    import site

    seen: dict[Path, None] = {}
    for d in site.getsitepackages():
        p = Path(d)
        if p.is_dir():
            seen.setdefault(p.resolve(), None)
    return list(seen)


def _scan(
    root: str,
    prefix: str,
    keep: Callable[[str], bool],
    out: dict[str, tuple[str, os.stat_result]],
    bytecode: bool = False,
) -> None:
    """Every file under ``root`` (``__pycache__`` left out unless ``bytecode``, and then every
    file in it), named ``prefix + relative path``, with its ``stat`` (os.scandir: one system
    call per file, no Path objects — this is on the start-up path)."""
    stack = [(root, prefix, False)]
    while stack:
        d, pre, in_cache = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    cache = e.name == "__pycache__"
                    if bytecode or not cache:  # a __pycache__ only with bytecode, and then all of it
                        stack.append((e.path, f"{pre}{e.name}/", in_cache or cache))
                elif in_cache or keep(e.name):
                    try:
                        out[pre + e.name] = (e.path, e.stat())
                    except OSError:
                        continue  # a dangling link: not installed


def installed_files(bytecode: bool = False) -> dict[str, tuple[str, os.stat_result]]:
    """``{name in the listing: (file, its stat)}`` for every file the digest covers
    (with ``bytecode``, the compiled files in ``__pycache__`` too)."""
    out: dict[str, tuple[str, os.stat_result]] = {}
    for name, root in package_roots().items():
        _scan(str(root), f"{name}/", lambda f: f.endswith(SUFFIXES), out, bytecode)
    for root in site_roots():
        _scan(str(root), "site-packages/", lambda f: not f.endswith(".pyc"), out, bytecode)
    _venv_files(out)
    return out


def _venv_files(out: dict[str, tuple[str, os.stat_result]]) -> None:
    """What the unit executes outside site-packages: the virtualenv's ``bin/`` (``tablectl``, the
    script systemd runs, and the ``python`` links) and its ``pyvenv.cfg`` (which interpreter, and
    whether the system's site-packages are read), named ``venv/...``.  A link is listed by its
    target (``symlink:<target>`` hashed), never followed.  Nothing outside a virtualenv."""
    import sys

    if sys.prefix == sys.base_prefix:
        return
    root = Path(sys.prefix)
    cfg = root / "pyvenv.cfg"
    if cfg.is_file():
        out["venv/pyvenv.cfg"] = (str(cfg), cfg.stat())
    try:
        it = os.scandir(root / "bin")
    except OSError:
        return
    with it:
        for e in it:
            if e.is_symlink() or e.is_file(follow_symlinks=False):
                out[f"venv/bin/{e.name}"] = (e.path, e.stat(follow_symlinks=False))


def _stat_key(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _hash(p: str, st: os.stat_result | None = None) -> str:
    if st is not None and stat.S_ISLNK(st.st_mode):  # a link is its target, never followed
        return hashlib.sha256(b"symlink:" + os.fsencode(os.readlink(p))).hexdigest()
    with open(p, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


#: this process's hashes by file, with the stat they were made at (a simulator or a test
#: starts many services in one process; memory is not where an attacker writes)
_SEEN: dict[str, tuple[list[int], str]] = {}


def manifest(
    trust: SoftwareRecord | None = None,
    *,
    stats: dict[str, list[int]] | None = None,
    full: bool = False,
    bytecode: bool | None = None,
) -> dict[str, str]:
    """``{"controller/daemon/service.py": sha256, "site-packages/serial/__init__.py": sha256, ...}``.

    A file whose size, times and inode are as ``trust`` (a record) recorded them, or
    as when this process last hashed it, is not read again; ``full`` reads every
    file (``tablectl verify``).  ``stats`` receives every file's.  ``bytecode``: the
    compiled files too (default: as ``trust`` was recorded, else not)."""
    out: dict[str, str] = {}
    if bytecode is None:
        bytecode = trust is not None and trust.bytecode
    trust = _trusted(trust)
    known = trust.stats if trust is not None and not full else {}
    for name, (path, st) in installed_files(bytecode).items():
        key = _stat_key(st)
        h = _known_hash(name, path, key, trust, known, full)
        if h is None:
            try:
                h = _hash(path, st)
            except OSError:
                continue  # removed meanwhile: it is "missing"
            _SEEN[path] = (key, h)
        out[name] = h
        if stats is not None:
            stats[name] = key
    return out  # in no order: digest_of sorts the listing (the record is written with sorted keys)


def _trusted(trust: SoftwareRecord | None) -> SoftwareRecord | None:
    """The record, unless it contradicts itself (its digest is not its files'): such a record
    vouches for nothing, every file is read."""
    if trust is not None and digest_of(trust.files) != trust.digest:
        return None
    return trust


def _known_hash(
    name: str, path: str, key: list[int], trust: SoftwareRecord | None, known: Mapping[str, list[int]], full: bool
) -> str | None:
    """The hash of a file whose stat is still ``key``: as ``trust`` recorded it, or as this process
    last made it (not with ``full``); None: it must be read."""
    if trust is not None and known.get(name) == key and name in trust.files:
        return trust.files[name]
    seen = None if full else _SEEN.get(path)
    if seen is not None and seen[0] == key:
        return seen[1]
    return None


def digest_of(files: Mapping[str, str]) -> str:
    listing = "".join(f"{h}  {p}\n" for p, h in sorted(files.items(), key=lambda kv: kv[0].encode()))
    return hashlib.sha256(listing.encode()).hexdigest()


@dataclass(frozen=True)
class SoftwareRecord:
    version: str
    digest: str
    files: dict[str, str]
    recorded: str = ""
    #: per file: size, mtime_ns, ctime_ns, inode when recorded (the start-up check's shortcut)
    stats: dict[str, list[int]] = field(default_factory=dict)
    #: the compiled files (``__pycache__``) are listed too: a release, compiled at installation
    bytecode: bool = False


def record_path(where: Path) -> Path:
    """The record file: ``where`` itself when it names a ``.json`` file, else
    ``where/software.json`` (a state directory: the simulator and tests)."""
    where = Path(where)
    return where if where.suffix == ".json" else where / RECORD_FILE


def record_digest(where: Path, *, bytecode: bool = False) -> SoftwareRecord:
    """Record the digest of the installed files (at installation, as root:
    ``tablectl verify --record``; with ``bytecode`` the compiled files too, once every
    module is compiled).  The file is readable by all, writable by its owner."""
    from controller import __version__

    stats: dict[str, list[int]] = {}
    files = manifest(
        stats=stats, bytecode=bytecode
    )  # no record trusted; this process's own hashes of unchanged files are
    rec = SoftwareRecord(
        __version__,
        digest_of(files),
        files,
        datetime.now(UTC).isoformat(timespec="seconds"),
        stats=stats,
        bytecode=bytecode,
    )
    path = record_path(where)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".software-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(dataclasses.asdict(rec), f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return rec


def load_record(where: Path) -> SoftwareRecord | None:
    from controller.core.safefile import read_bounded

    path = record_path(where)
    try:
        # bounded (a release's record, its compiled files included, is about 1 MB); root's file: a link is fine
        doc = json.loads(read_bounded(path, RECORD_MAX, follow=True))
    except FileNotFoundError:
        return None
    stats = {str(k): [int(x) for x in v] for k, v in dict(doc.get("stats", {})).items()}
    return SoftwareRecord(
        str(doc["version"]),
        str(doc["digest"]),
        dict(doc["files"]),
        str(doc.get("recorded", "")),
        stats,
        bytecode=bool(doc.get("bytecode", False)),  # records made before it: the sources alone
    )


def writable_by_us(path: Path) -> bool:
    """The record (or its directory) can be changed by this process's (unprivileged) user."""
    if os.geteuid() == 0:
        return False  # root can change anything; the unit runs the service as its own user
    return os.access(path, os.W_OK) or os.access(path.parent, os.W_OK)


def compare(recorded: Mapping[str, str], now: Mapping[str, str]) -> dict[str, list[str]]:
    """Files changed, missing and added since the record."""
    return {
        "changed": sorted(p for p in now if p in recorded and recorded[p] != now[p]),
        "missing": sorted(p for p in recorded if p not in now),
        "added": sorted(p for p in now if p not in recorded),
    }


def difference_lines(diff: Mapping[str, list[str]]) -> list[str]:
    """One line per file of :func:`compare`'s differences: ``  changed: controller/x.py``."""
    return [f"  {what}: {p}" for what in ("changed", "missing", "added") for p in diff[what]]


def describe_mismatch(diff: Mapping[str, list[str]], limit: int = 3) -> str:
    parts = []
    for what in ("changed", "missing", "added"):
        files = diff[what]
        if files:
            shown = ", ".join(files[:limit]) + (f" and {len(files) - limit} more" if len(files) > limit else "")
            parts.append(f"{what}: {shown}")
    return "; ".join(parts) or "digest differs"


def software_record_of(hw: Any) -> Path:
    """Where the configuration keeps the software record (``[table] software_record``)."""
    rec = getattr(hw, "software_record", None)
    return Path(rec) if rec is not None else Path(hw.state_dir)


@dataclass(frozen=True)
class SoftwareCheck:
    problems: list[str]
    digest: str  # "" when nothing was hashed (no record, not required)
    recorded: str | None  # the recorded digest, None when there is no record


def check_software(where: Path, *, require: bool) -> SoftwareCheck:
    """The installed software's digest against the record at ``where`` (a ``.json`` file or a
    directory holding ``software.json``): the table service's start-up check, and what ``tablectl
    lap`` and ``tablectl uplink`` run before they operate.  ``require``: a missing record, or one
    this process's (unprivileged) user could change, is itself a problem (a real installation);
    else a missing record only skips the comparison (the simulator, tests)."""
    try:
        rec = load_record(where)
    except (OSError, ValueError, KeyError, TypeError) as e:
        return SoftwareCheck(
            [f"software: the recorded digest {record_path(where)} cannot be read: {e}"], digest_of(manifest()), None
        )
    if rec is None:
        if not require:
            return SoftwareCheck([], "", None)  # nothing to compare with, nothing hashed (~1 s)
        return SoftwareCheck(
            [f"software: no recorded digest in {record_path(where)} (`tablectl verify --record` at installation)"],
            digest_of(manifest()),
            None,
        )
    files = manifest(trust=rec)
    digest = digest_of(files)
    probs = []
    if require and writable_by_us(record_path(where)):
        probs.append(
            f"software: the recorded digest {record_path(where)} can be changed by the service's user; "
            "keep it root-owned (tablectl verify --record as root)"
        )
    if rec.digest != digest:
        probs.append(
            f"software: digest {digest[:16]}... does not match the recorded {rec.digest[:16]}... "
            f"({describe_mismatch(compare(rec.files, files))})"
        )
    return SoftwareCheck(probs, digest, rec.digest)


# --------------------------------------------------------------------------- configuration


def config_values(hw: Any) -> dict[str, str]:
    """The running configuration, flattened to ``"section.key": "value"`` (for the
    console's ``config show`` and for logging changes with old and new values)."""
    out: dict[str, str] = {}

    def walk(obj: Any, prefix: str) -> None:
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                walk(getattr(obj, f.name), f"{prefix}{f.name}.")
        elif isinstance(obj, Mapping):
            for k in sorted(obj, key=str):
                walk(obj[k], f"{prefix}{k}.")
        elif isinstance(obj, (list, tuple)):
            out[prefix[:-1]] = "[" + ", ".join(_scalar(x) for x in obj) + "]"
        else:
            out[prefix[:-1]] = _scalar(obj)

    walk(hw, "")
    return out


def _scalar(v: Any) -> str:
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return json.dumps(config_values(v), sort_keys=True)
    return str(v)


def config_digest(values: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(dict(values), sort_keys=True).encode()).hexdigest()


def check_config(hw: Any) -> list[str]:
    problems: list[str] = []
    prog = getattr(hw.profile, "progressive", None)
    if prog is not None:
        from controller.rules.paytables import get_paytable

        for attr in ("paytable", "envy_paytable"):
            name = getattr(prog, attr, None)
            if name:
                try:
                    get_paytable(name)
                except (KeyError, ValueError) as e:
                    problems.append(f"configuration: paytable {name!r} does not load: {e}")
    sd = Path(hw.state_dir)
    if not sd.is_dir():
        problems.append(f"configuration: state directory {sd} is not a directory")
    elif not os.access(sd, os.W_OK | os.X_OK):
        problems.append(f"configuration: state directory {sd} is not writable")
    return problems


# --------------------------------------------------------------------------- RNG


def _default_rng_test(samples: int) -> list[str]:
    from drivers.rng import self_test

    return list(self_test(samples=samples))


def check_rng(test: Callable[[int], list[str]] | None = None, samples: int = RNG_SAMPLES) -> tuple[str, list[str]]:
    """Run the RNG self-test (``drivers.rng.self_test``: chi-square, runs and serial
    correlation at 99 % on 1..7 and 1..8; a failing statistic is re-run once on a
    fresh sample there, so a sound source fails about 6 start-ups in 10,000)."""
    run = test or _default_rng_test
    try:
        problems = run(samples)
    except ImportError as e:
        return "unavailable", [f"rng: self-test unavailable ({e})"]
    except ValueError as e:
        return "fail", [f"rng: {e}"]
    if problems:
        return "fail", [f"rng: self-test failed: {'; '.join(problems)}"]
    return "pass", []


# --------------------------------------------------------------------------- all of them


@dataclass
class SelfCheckReport:
    results: dict[str, str] = field(default_factory=dict)  # check -> "pass" / "fail" / ...
    problems: list[str] = field(default_factory=list)
    digest: str = ""
    recorded_digest: str | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    config_values: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.problems


def run_all(
    hw: Any,
    ledger: Any,
    *,
    require_digest: bool = False,
    rng_test: Callable[[int], list[str]] | None = None,
    ledger_check: Callable[[], list[str]] | None = None,
) -> SelfCheckReport:
    """Run every start-up check in order; never touches a pin or a port.

    ``require_digest``: a missing software record is itself a problem (on a
    real table, ``tablectl run``); in the simulator and tests a missing record
    only skips the comparison.  ``rng_test(samples) -> problems`` replaces the
    RNG self-test (tests); ``ledger_check() -> problems`` replaces ``ledger.verify()`` (the
    service's: every event, and the witness of the head, controller/books/audit.py)."""
    rep = SelfCheckReport()

    def timed(name: str, fn: Callable[[], list[str]], ok: str = "pass") -> None:
        t0 = time.perf_counter()
        probs = fn()
        rep.seconds[name] = round(time.perf_counter() - t0, 4)
        rep.problems += probs
        rep.results.setdefault(name, "fail" if probs else ok)

    rep.config_values = config_values(hw)
    timed("config", lambda: check_config(hw))
    check_ledger = ledger_check if ledger_check is not None else ledger.verify
    timed("ledger", lambda: [f"ledger: {p}" for p in check_ledger()])

    def software() -> list[str]:
        sw = check_software(software_record_of(hw), require=require_digest)
        rep.digest, rep.recorded_digest = sw.digest, sw.recorded
        if sw.recorded is None and not sw.problems:
            rep.results["software"] = "not recorded"
        return sw.problems

    timed("software", software)

    def rng() -> list[str]:
        outcome, probs = check_rng(rng_test)
        rep.results["rng"] = outcome
        return probs

    timed("rng", rng)
    return rep
