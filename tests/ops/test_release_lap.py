"""The LAP host's release: the bundle carries the floor view's and the sign's web stack (lap/,
hash-locked), `install.sh --lap` installs it offline so that `tablectl lap` with a [floor] runs
(before: the bundle had no aiohttp; `lap --check` said OK and `lap` then asked for the package
index), a table's install leaves it out; the build writes the figures docs/install.md gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_release import NETNS, OFFLINE, ROOT, build, install, run
from tools.releasefigures import parse

pytestmark = [
    pytest.mark.slow,
    pytest.mark.soak,
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="builds from the git checkout's tracked files"),
]


def test_the_lap_hosts_install_carries_the_web_stack_and_a_tables_does_not(tmp_path: Path) -> None:
    bundle = build(ROOT, tmp_path / "dist")
    lock = (bundle / "lap" / "requirements.txt").read_text()
    assert "aiohttp==" in lock and "--hash=sha256:" in lock
    figures = parse((tmp_path / "dist" / f"{bundle.name}.figures.md").read_text())
    assert sum(1 for _ in (bundle / "wheelhouse").glob("*.whl")) == len(figures["wheelhouse"]["pure"]) + sum(
        figures["wheelhouse"]["compiled"].values()
    )
    assert "aiohttp" in figures["lap"]["compiled"] or "aiohttp" in figures["lap"]["pure"]

    table, lap = tmp_path / "table", tmp_path / "lap"
    table.mkdir()
    lap.mkdir()
    install(bundle, table)
    install(bundle, lap, "--lap")
    probe = "import importlib.util, json; print(json.dumps(importlib.util.find_spec('aiohttp') is not None))"
    assert json.loads(run(table / "opt/tablectl/current/venv/bin/python", "-c", probe)) is False
    assert json.loads(run(lap / "opt/tablectl/current/venv/bin/python", "-c", probe)) is True
    # the example lap.toml has a [floor]: --check finds the web stack there (the database is not reachable)
    out = run(
        *NETNS,
        lap / "opt/tablectl/current/venv/bin/tablectl",
        "lap", "--sim", "--db", "postgresql://x@127.0.0.1:9/x",
        "--config", bundle / "config/examples/lap.toml", "--check",
        env=OFFLINE, rc=1,
    )  # fmt: skip
    assert "database unreachable" in out and "web stack" not in out, out
