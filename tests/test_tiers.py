"""The test tiers stay as the README says (the README's test command within 5 minutes
on a 2-core machine): CI runs the README's own command, then the soak tier it leaves out, and
every soak test is slow too, so that the fast loop (``-m "not slow"``) never runs one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_the_readme_opens_with_two_commands_and_ci_runs_the_second_then_the_soak_tier() -> None:
    commands = _readme_commands()
    assert len(commands) == 2 and all(c.startswith("./bootstrap && ") for c in commands)
    assert '-m "not soak"' in commands[1]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if not line.startswith("#")]
    i = ci.index(commands[1])
    assert ci[i + 1] == ".venv/bin/python -m pytest -q -n auto -m soak"


@pytest.mark.slow
@pytest.mark.soak
def test_every_soak_test_is_also_slow() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "soak and not slow", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "deselected" in out, out[-500:]  # the collection ran
    assert "::" not in out, out[-2000:]  # and listed no test
