"""Start-up self-checks (SPEC § 5; issue 6 item 2), run before any pin is claimed
or any serial link is opened:

1. **configuration** — the hardware file and table profile were parsed and
   range-checked already (controller/config.py); here: the profile's paytables
   load, the state directory is a writable directory;
2. **ledger integrity** — the hash chain and the meters recomputed from the
   events (:meth:`controller.ledger.Ledger.verify`);
3. **software digest** — SHA-256 over the installed package files, compared
   with the value recorded at installation (``tablectl verify --record``);
4. **RNG self-test** — ``drivers.rng.self_test`` (chi-square, runs and serial
   correlation at 99 %).

Every problem becomes a latched tilt through the table (``Table.start(problems)``),
is written to the ledger, and survives restarts until a technician clears it.

The software digest is reproducible with standard tools: it is the SHA-256 of
the ``sha256sum``-style listing (``<sha256>  <path>`` lines, sorted by path) of
the shipped files (``*.py``, ``*.toml``, ``*.yaml``, ``*.yml``, ``*.json``
under the packages in :data:`PACKAGES`, without ``__pycache__``), i.e. from the
directory holding the packages::

    find controller drivers hil bench config -type f \\( -name '*.py' -o -name '*.toml' \\
        -o -name '*.yaml' -o -name '*.yml' -o -name '*.json' \\) -not -path '*/__pycache__/*' \\
        | LC_ALL=C sort | xargs sha256sum | sha256sum
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

PACKAGES = ("controller", "drivers", "hil", "bench", "config")
SUFFIXES = (".py", ".toml", ".yaml", ".yml", ".json")
RECORD_FILE = "software.json"
RNG_SAMPLES = 20_000


# --------------------------------------------------------------------------- software digest


def package_roots() -> dict[str, Path]:
    """Where each shipped package is installed (found without importing it)."""
    roots: dict[str, Path] = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        roots[name] = Path(list(spec.submodule_search_locations)[0])
    return roots


def manifest() -> dict[str, str]:
    """``{"controller/service.py": sha256, ...}`` over every shipped file."""
    out: dict[str, str] = {}
    for name, root in package_roots().items():
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in filenames:
                if f.endswith(SUFFIXES):
                    p = Path(dirpath) / f
                    rel = f"{name}/{p.relative_to(root).as_posix()}"
                    out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return dict(sorted(out.items(), key=lambda kv: kv[0].encode()))


def digest_of(files: Mapping[str, str]) -> str:
    listing = "".join(f"{h}  {p}\n" for p, h in sorted(files.items(), key=lambda kv: kv[0].encode()))
    return hashlib.sha256(listing.encode()).hexdigest()


@dataclass(frozen=True)
class SoftwareRecord:
    version: str
    digest: str
    files: dict[str, str]
    recorded: str = ""


def record_path(state_dir: Path) -> Path:
    return Path(state_dir) / RECORD_FILE


def record_digest(state_dir: Path) -> SoftwareRecord:
    """Record the digest of the installed files (at installation: ``tablectl verify --record``)."""
    from controller import __version__

    files = manifest()
    rec = SoftwareRecord(__version__, digest_of(files), files, datetime.now(UTC).isoformat(timespec="seconds"))
    path = record_path(state_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".software-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(dataclasses.asdict(rec), f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return rec


def load_record(state_dir: Path) -> SoftwareRecord | None:
    path = record_path(state_dir)
    if not path.exists():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    return SoftwareRecord(str(doc["version"]), str(doc["digest"]), dict(doc["files"]), str(doc.get("recorded", "")))


def compare(recorded: Mapping[str, str], now: Mapping[str, str]) -> dict[str, list[str]]:
    """Files changed, missing and added since the record."""
    return {
        "changed": sorted(p for p in now if p in recorded and recorded[p] != now[p]),
        "missing": sorted(p for p in recorded if p not in now),
        "added": sorted(p for p in now if p not in recorded),
    }


def describe_mismatch(diff: Mapping[str, list[str]], limit: int = 3) -> str:
    parts = []
    for what in ("changed", "missing", "added"):
        files = diff[what]
        if files:
            shown = ", ".join(files[:limit]) + (f" and {len(files) - limit} more" if len(files) > limit else "")
            parts.append(f"{what}: {shown}")
    return "; ".join(parts) or "digest differs"


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
    service's: every event, and the witness of the head, controller/audit.py)."""
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
        files = manifest()
        rep.digest = digest_of(files)
        rec = load_record(Path(hw.state_dir))
        if rec is None:
            rep.results["software"] = "not recorded"
            return (
                ["software: no recorded digest (run `tablectl verify --record` at installation)"]
                if require_digest
                else []
            )
        rep.recorded_digest = rec.digest
        if rec.digest != rep.digest:
            return [
                f"software: digest {rep.digest[:16]}... does not match the recorded {rec.digest[:16]}... "
                f"({describe_mismatch(compare(rec.files, files))})"
            ]
        return []

    timed("software", software)

    def rng() -> list[str]:
        outcome, probs = check_rng(rng_test)
        rep.results["rng"] = outcome
        return probs

    timed("rng", rng)
    return rep
