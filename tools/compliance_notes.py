"""docs/compliance-notes.toml: the reviewed entries of the compliance matrix.

Each ``[[note]]`` names subsections (``"687a.8(a)"``, or a run within one section,
``"687a.8(d)-(h)"``) and says one of:

* ``status = "not-applicable"`` — nothing for a table controller to do, and ``why``;
* ``status = "rules-submission"`` — the casino's Rules Submission (§ 601a.2) or its own
  procedures decide it, and ``why``;
* ``status = "implemented"`` — the code does it without citing the subsection: ``why`` and the
  evidence, ``code`` (``"path: Name"``, a function or class defined in that file), ``tests``
  (``test_`` functions under tests/), ``scenarios`` (hil/scenarios/ file names, without .yaml)
  and/or ``same_as`` (a subsection whose evidence is this one's, e.g. a sibling chapter's).

Every name is checked: a note that names a missing file, function, test or scenario, or a
subsection the regulations do not have, is an error, as is a subsection named by two notes.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.compliance_cites import Evidence

STATUSES = ("not-applicable", "rules-submission", "implemented")
KEYS = {"subsections", "status", "why", "code", "tests", "scenarios", "same_as"}
_RANGE = re.compile(r"^(6\d\da\.\d+)\(([a-z])\)(?:-\(([a-z])\))?$|^(6\d\da\.\d+)$")


@dataclass(frozen=True)
class Note:
    status: str
    why: str
    code: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    same_as: str = ""


def expand(spec: str) -> list[str]:
    """``"687a.8(d)-(h)"`` -> 687a.8(d) ... 687a.8(h); ``"687a.1"``; a ValueError otherwise."""
    m = _RANGE.match(spec.strip())
    if not m:
        raise ValueError(f"{spec!r} is not a subsection like 687a.8(d), a run like 687a.8(d)-(h), or 687a.1")
    if m.group(4):
        return [m.group(4)]
    head, first, last = m.group(1), m.group(2), m.group(3) or m.group(2)
    if last < first:
        raise ValueError(f"{spec!r}: the run goes backwards")
    return [f"{head}({chr(c)})" for c in range(ord(first), ord(last) + 1)]


def _code_ok(root: Path, item: str) -> str:
    path, _, name = item.partition(": ")
    p = root / path
    if not p.is_file():
        return f"code {item!r}: {path} does not exist"
    if name:
        last = name.rsplit(".", 1)[-1]
        if not re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(last)}\b", p.read_text(), re.M):
            return f"code {item!r}: {path} defines no {last}"
    return ""


def _evidence_errors(where: str, note: Note, root: Path, ev: Evidence, ids: set[str]) -> list[str]:
    errs = [f"{where}: {e}" for e in (_code_ok(root, c) for c in note.code) if e]
    errs += [f"{where}: test {t!r} does not exist under tests/" for t in note.tests if t not in ev.test_names]
    stems = {p.stem for p in (root / "hil" / "scenarios").glob("*.yaml")}
    errs += [f"{where}: scenario {s!r} is not in hil/scenarios/" for s in note.scenarios if s not in stems]
    return errs + _claim_errors(where, note, ids)


def _claim_errors(where: str, note: Note, ids: set[str]) -> list[str]:
    """``same_as`` names a subsection; an implemented note names its evidence."""
    errs = []
    if note.same_as and note.same_as not in ids:
        errs.append(f"{where}: same_as {note.same_as!r} is not a subsection of the regulations")
    if note.status == "implemented" and not (note.code or note.tests or note.scenarios or note.same_as):
        errs.append(f"{where}: an implemented note names its evidence (code, tests, scenarios or same_as)")
    return errs


def _note(i: int, body: dict[str, Any]) -> tuple[Note | None, list[str]]:
    where = f"docs/compliance-notes.toml note {i + 1}"
    unknown = set(body) - KEYS
    if unknown:
        return None, [f"{where}: unknown key(s) {', '.join(sorted(unknown))} (keys: {', '.join(sorted(KEYS))})"]
    if body.get("status") not in STATUSES:
        return None, [f"{where}: status must be one of {', '.join(STATUSES)}, got {body.get('status')!r}"]
    if not str(body.get("why", "")).strip():
        return None, [f'{where}: says why (why = "...")']
    note = Note(
        body["status"],
        " ".join(str(body["why"]).split()),
        tuple(body.get("code", ())),
        tuple(body.get("tests", ())),
        tuple(body.get("scenarios", ())),
        str(body.get("same_as", "")),
    )
    return note, []


def load(path: Path, ids: set[str], root: Path, ev: Evidence) -> tuple[dict[str, Note], list[str]]:
    """Subsection id -> its note, and every error found (nothing raised)."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        return {}, [f"{path.name}: {e}"]
    out: dict[str, Note] = {}
    errs: list[str] = []
    for i, body in enumerate(doc.get("note", [])):
        note, bad = _note(i, body)
        errs += bad
        if note is None:
            continue
        where = f"docs/compliance-notes.toml note {i + 1} ({', '.join(body.get('subsections', []))})"
        errs += _evidence_errors(where, note, root, ev, ids)
        for spec in body.get("subsections", []):
            errs += _attach(out, note, spec, where, ids)
    return out, errs


def _attach(out: dict[str, Note], note: Note, spec: str, where: str, ids: set[str]) -> list[str]:
    """The note given to each subsection ``spec`` names (a range expanded); what is wrong with them."""
    try:
        names = expand(spec)
    except ValueError as ex:
        return [f"{where}: {ex}"]
    errs = []
    for sid in names:
        if sid not in ids:
            errs.append(f"{where}: § {sid} is not a subsection of the regulations' text")
        elif sid in out:
            errs.append(f"{where}: § {sid} has another note already")
        else:
            out[sid] = note
    return errs
