"""What a HIL scenario expects to see: its ``expect`` (checked at the end), and its ``check``
and ``eventually`` steps on the way (hil/scenario.py runs them; the format is docs/hil.md).

:func:`check` looks at a running :class:`hil.rig.Rig` and returns every expectation that does
not hold, each a sentence saying what was seen and what was expected: states visited, lights
per seat, the sign, ledger records, wagers returned, meter cents, tilts, the table's emitted
events, device traffic and link statistics.  :func:`compare` and :func:`status_matches` are
also what the scenario's waits match with.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from drivers import protocol as P

if TYPE_CHECKING:
    from hil.devices import SignSim
    from hil.rig import Rig

LIGHT_NAMES = {"off": P.LIGHT_OFF, "on": P.LIGHT_ON, "blink": P.LIGHT_BLINK}
#: what an ``expect`` (or a ``check`` step) may name
EXPECT_KEYS = {
    "state",
    "visited",
    "not_visited",
    "tilt",
    "lights",
    "sign",
    "ledger",
    "returned",
    "meter_cents",
    "events",
    "devices",
    "link",
}


def check(rig: Rig, exp: Mapping[str, Any]) -> list[str]:
    """Every expectation of ``exp`` (keys of :data:`EXPECT_KEYS`) that ``rig`` does not meet."""
    seen = _Seen(rig, rig.table.status, list(rig.table.visited))
    problems: list[str] = []
    for key, checker in _CHECKS.items():  # in this order
        if key in exp:
            problems += checker(seen, exp[key])
    return problems


class _Seen(NamedTuple):
    """What :func:`check` looks at: the rig, the table's status and the states it visited."""

    rig: Rig
    st: Mapping[str, Any]
    visited: list[str]


def _state(seen: _Seen, want: Any) -> list[str]:
    if seen.st.get("state") != want:
        return [f"state is {seen.st.get('state')!r}, expected {want!r}"]
    return []


def _visited(seen: _Seen, want: Any) -> list[str]:
    if not _subsequence(want, seen.visited):
        return [f"states {want} not visited in that order; visited {seen.visited}"]
    return []


def _not_visited(seen: _Seen, want: Any) -> list[str]:
    return [f"state {s!r} visited; it must not be" for s in want if s in seen.visited]


def _tilt(seen: _Seen, want: Any) -> list[str]:
    tilts = dict(seen.st.get("tilts", {}))
    if want is True and not tilts or want is False and tilts:
        return [f"tilts are {tilts}, expected {'some' if want else 'none'}"]
    if isinstance(want, list) and sorted(want) != sorted(tilts):
        return [f"tilt sources are {sorted(tilts)}, expected {sorted(want)}"]
    return []


def _lights(seen: _Seen, want: Mapping[Any, Any]) -> list[str]:
    problems = []
    for seat, mode in want.items():
        mode = _light_word(mode)
        light = seen.rig.light_mode(int(seat))
        if light != mode:
            problems.append(f"seat {seat} light is {light!r}, expected {mode!r}")
    return problems


def _returned(seen: _Seen, want: Mapping[Any, Any]) -> list[str]:
    returned: dict[int, int] = {}
    for _r, _k, d in seen.rig.ledger_events(["wager.returned"]):
        returned[int(d["seat"])] = returned.get(int(d["seat"]), 0) + int(d["cents"])
    want_returned = {int(k): int(v) for k, v in want.items()}
    if returned != want_returned:
        return [f"wagers returned {returned}, expected {want_returned}"]
    return []


def _meter_cents(seen: _Seen, want: Any) -> list[str]:
    if not compare(seen.st.get("meter_cents"), want):
        return [f"meter is {seen.st.get('meter_cents')} cents, expected {want}"]
    return []


def _events(seen: _Seen, want: Mapping[str, Any]) -> list[str]:
    problems = []
    for what, n in want.items():
        emitted = seen.rig.emitted_count(what)
        if not compare(emitted, n):
            problems.append(f"table emitted {what!r} {emitted} time(s), expected {n}")
    return problems


def _devices(seen: _Seen, want: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    for dev, checks in want.items():
        problems += _check_device(dev, seen.rig.sim(dev), checks)
    return problems


def _link(seen: _Seen, want: Mapping[str, Any]) -> list[str]:
    problems = []
    for dev, checks in want.items():
        stats = seen.rig.link_stats(dev)
        for k, n in checks.items():
            if not compare(getattr(stats, k), n):
                problems.append(f"{dev} link {k} is {getattr(stats, k)}, expected {n}")
    return problems


_CHECKS: dict[str, Callable[[_Seen, Any], list[str]]] = {
    "state": _state,
    "visited": _visited,
    "not_visited": _not_visited,
    "tilt": _tilt,
    "lights": _lights,
    "sign": lambda seen, want: _check_sign(seen.rig.sign, want),
    "ledger": lambda seen, want: _check_ledger(seen.rig.ledger_events(), want),
    "returned": _returned,
    "meter_cents": _meter_cents,
    "events": _events,
    "devices": _devices,
    "link": _link,
}


def _check_sign(sign: SignSim, exp: Mapping[str, Any]) -> list[str]:
    problems = []
    if "message" in exp and not sign.message_text.startswith(exp["message"]):
        problems.append(f"sign shows {sign.message_text!r}, expected {exp['message']!r}")
    return problems + _check_sign_history(sign, exp) + _check_sign_lights(sign, exp) + _check_sign_meters(sign, exp)


def _check_sign_history(sign: SignSim, exp: Mapping[str, Any]) -> list[str]:
    """The messages the sign showed at some time (``messages_include``) and never (``messages_exclude``)."""
    problems = []
    for prefix in exp.get("messages_include", []):
        if not any(m.startswith(prefix) for m in sign.messages):
            problems.append(f"sign never showed {prefix!r}; it showed {sign.messages}")
    for prefix in exp.get("messages_exclude", []):
        if any(m.startswith(prefix) for m in sign.messages):
            problems.append(f"sign showed {prefix!r}; it must not")
    return problems


def _check_sign_lights(sign: SignSim, exp: Mapping[str, Any]) -> list[str]:
    problems = []
    for key, attr in (("hand_lights", sign.hand_lights), ("seat_lights", sign.seat_lights)):
        if key in exp:
            want = {int(k): LIGHT_NAMES.get(_light_word(v), v) for k, v in exp[key].items()}
            if dict(attr) != want:
                problems.append(f"sign {key} are {dict(attr)}, expected {want}")
    return problems


def _check_sign_meters(sign: SignSim, exp: Mapping[str, Any]) -> list[str]:
    problems = []
    for lvl, want in exp.get("meters", {}).items():
        got = sign.meters.get(int(lvl))
        if not compare(got, want):
            problems.append(f"sign meter {lvl} shows {got}, expected {want}")
    return problems


def _check_ledger(evs: Sequence[tuple[int, str, Mapping[str, Any]]], exp: Mapping[str, Any]) -> list[str]:
    kinds = [k for _r, k, _d in evs]
    problems = []
    for k in exp.get("present", []):
        if k not in kinds:
            problems.append(f"no {k!r} record in the ledger")
    for k in exp.get("absent", []):
        if k in kinds:
            problems.append(f"{kinds.count(k)} {k!r} record(s) in the ledger; there must be none")
    for k, want in exp.get("count", {}).items():
        if not compare(kinds.count(k), want):
            problems.append(f"{kinds.count(k)} {k!r} record(s), expected {want}")
    return problems + _check_ledger_matches(evs, exp)


def _check_ledger_matches(evs: Sequence[tuple[int, str, Mapping[str, Any]]], exp: Mapping[str, Any]) -> list[str]:
    """Each ``match`` finds a record of its kind with the data given."""
    problems = []
    for m in exp.get("match", []):
        m = dict(m)
        kind = m.pop("kind")
        if not any(k == kind and _data_matches(d, m) for _r, k, d in evs):
            seen = [d for _r, k, d in evs if k == kind]
            problems.append(f"no {kind!r} record with {m}; found {seen}")
    return problems


def _check_device(dev: str, sim: Any, checks: Mapping[str, Any]) -> list[str]:
    problems = []
    for k, want in checks.items():
        if k in ("received", "sent"):
            problems += _check_messages(dev, sim, k, want)
        else:
            problems += _check_attribute(dev, sim, k, want)
    return problems


def _check_messages(dev: str, sim: Any, k: str, want: Mapping[str, Any]) -> list[str]:
    """How many times the device received (or sent) each message."""
    problems = []
    for msg, n in want.items():
        times = sim.count(msg, sent=(k == "sent"))
        if not compare(times, n):
            problems.append(f"{dev} {k} {msg} {times} time(s), expected {n}")
    return problems


def _check_attribute(dev: str, sim: Any, k: str, want: Any) -> list[str]:
    """An attribute of the simulator (dotted, e.g. ``port.corrupted``); a list is compared by its
    length unless a list is expected."""
    val: Any = sim
    for part in k.split("."):
        val = getattr(val, part)
    val = len(val) if isinstance(val, (list, tuple)) and not isinstance(want, list) else val
    if not compare(val, want):
        return [f"{dev} {k} is {val}, expected {want}"]
    return []


_CMP = re.compile(r"^\s*(>=|<=|>|<|==|!=)\s*(-?\d+)\s*$")


def compare(got: Any, want: Any) -> bool:
    """``want`` is a value, or a string like ``">=1"``."""
    if isinstance(want, str):
        m = _CMP.match(want)
        if m and isinstance(got, int):
            op, n = m.group(1), int(m.group(2))
            return {">=": got >= n, "<=": got <= n, ">": got > n, "<": got < n, "==": got == n, "!=": got != n}[op]
    return bool(got == want)


def _data_matches(data: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    for k, v in want.items():
        if k.endswith("~"):  # substring
            if str(v) not in str(data.get(k[:-1], "")):
                return False
        elif not compare(data.get(k), v):
            return False
    return True


def status_matches(st: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    for k, v in want.items():
        if k == "tilt":
            if bool(st.get("tilts")) != bool(v):
                return False
        elif k == "state" and isinstance(v, list):
            if st.get("state") not in v:
                return False
        elif not compare(st.get(k), v):
            return False
    return True


def _light_word(v: Any) -> Any:
    """YAML 1.1 reads unquoted on/off as booleans; a light mode means the word."""
    return {True: "on", False: "off"}.get(v, v) if isinstance(v, bool) else v


def _subsequence(want: Sequence[str], seq: Sequence[str]) -> bool:
    it = iter(seq)
    return all(any(s == w for s in it) for w in want)
