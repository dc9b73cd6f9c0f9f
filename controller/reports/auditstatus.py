"""What the service's periodic ledger audit last found, kept for ``tablectl status``.

After each run the service writes ``audit-status.json`` in its state directory: when it ran
(UTC), how many problems it found (and the first few), what it covered.  ``status`` reads it
to say the audit's last result and its age; a run that never came (a stopped service, a
thread that died) shows as an old age, never as a fresh "OK".  The file is a report, not a
proof: whoever can write the state directory can write it, so ``status`` also checks the
ledger itself (every event since the last seal by its MAC) and trusts the ledger's latched
tilts over this file."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FILE = "audit-status.json"

#: the problems kept in the file (the ledger's tilt and `tablectl audit` say the rest)
KEEP = 5


@dataclass(frozen=True)
class AuditStatus:
    at: datetime  # UTC
    problems: list[str]
    covered: str  # e.g. "seals 1-4, 2,000 sealed events"


def record(state_dir: Path, problems: list[str], covered: str, now: datetime | None = None) -> None:
    """Write the run's result (atomically: a reader sees the old or the new, never half)."""
    at = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    doc = {"at": at, "problems": len(problems), "first": [p[:300] for p in problems[:KEEP]], "covered": covered}
    tmp = state_dir / f".{FILE}.tmp"
    tmp.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    os.replace(tmp, state_dir / FILE)


def read(state_dir: Path) -> AuditStatus | str | None:
    """The last run's result; None when the service has written none; a string saying what is
    wrong with the file otherwise (never an exception)."""
    from controller.core.safefile import read_text_bounded

    path = state_dir / FILE
    if not path.exists() and not path.is_symlink():
        return None
    try:
        doc: Any = json.loads(read_text_bounded(path, 64 * 1024))
        at = datetime.fromisoformat(doc["at"]).astimezone(UTC)  # a time without a zone: this machine's
        first = [str(p) for p in doc["first"]]
        n = int(doc["problems"])
        covered = str(doc.get("covered", ""))
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"{path} cannot be read: {e}"
    return AuditStatus(at, first + [f"... {n - len(first)} more"] * (n > len(first)), covered)


def line(state_dir: Path) -> str:
    """``service's audit: ...``: the last run's result and how long ago it ran."""
    st = read(state_dir)
    if st is None:
        return "service's audit: no run recorded (the service audits a minute after it starts, then every 2 min)"
    if isinstance(st, str):
        return f"service's audit: {st}"
    age = (datetime.now(UTC) - st.at).total_seconds()
    ago = f"{age:.0f} s ago" if age < 120 else f"{age / 60:.0f} min ago"
    result = f"FAILED, {st.covered}: {st.problems[0]}" if st.problems else f"OK, {st.covered}"
    return f"service's audit: last run {st.at.astimezone():%Y-%m-%d %H:%M:%S %Z} ({ago}): {result}"
