"""A small simulator ledger shared by the operations tests: `tablectl sim
--state-dir D` made it, with its key in ``D-key/`` and its witness in ``D-witness/``."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def sim_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hil.simrun import SimSettings, run_sim

    base = tmp_path_factory.mktemp("sim")
    state = base / "D"
    assert run_sim(SimSettings(game="six-card-fortune", rounds=2, seed=3, state_dir=state), out=io.StringIO()) == 0
    return state


@pytest.fixture
def ledger_copy(sim_ledger: Path, tmp_path: Path) -> Path:
    """A copy of the simulator's ledger with its key and witness beside it, to change freely."""
    state = tmp_path / "D"
    for suffix in ("", "-key", "-witness"):
        shutil.copytree(sim_ledger.parent / f"{sim_ledger.name}{suffix}", tmp_path / f"D{suffix}")
    return state
