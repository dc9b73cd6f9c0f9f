"""`tablectl backup` while `tablectl sim --state-dir D` runs: the copy
audits clean, the simulator is not disturbed, and `restore` is refused while it runs."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.books.audit import Where, audit
from controller.books.ledger import Ledger
from controller.books.ledgerkey import read_key
from controller.books.witness import Witness
from controller.cli import main
from hil.rig import rig_key_file

pytestmark = pytest.mark.slow


def _events(path: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return int(db.execute("SELECT COUNT(*) FROM events").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
@pytest.mark.soak
def test_backup_while_sim_runs_audits_clean_and_restore_is_refused(tmp_path, capsys):
    state = tmp_path / "state"
    sim = subprocess.Popen(
        [sys.executable, "-m", "controller", "sim", "--rounds", "80", "--state-dir", str(state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while _events(state / "ledger.sqlite3") < 200:  # play under way
            assert sim.poll() is None, sim.communicate()[0]
            assert time.monotonic() < deadline, "the simulator wrote no ledger"
            time.sleep(0.05)
        key = ["--state-dir", str(state), "--key-file", str(rig_key_file(state))]
        copies = []
        for _ in range(3):  # several copies while the writer appends
            assert main(["backup", str(tmp_path / "bk"), "--mkdir", *key]) == 0
            copies.append(capsys.readouterr().out.splitlines()[0])
            time.sleep(0.2)
        running = sim.poll() is None
        if running:
            assert main(["restore", copies[-1], *key]) == 1
            assert "in use" in capsys.readouterr().err
        out, _ = sim.communicate(timeout=120)
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait()
    assert sim.returncode == 0, out
    assert "balance: OK" in out
    assert running, "the simulator finished before the backups: make it play longer"
    counts = [int(Path(c).name.split("-ledger-")[1].split("-")[0]) for c in copies]
    assert counts == sorted(counts) and counts[0] >= 200
    assert counts[-1] < _events(state / "ledger.sqlite3")  # taken while play went on
    keyb = read_key(rig_key_file(state))
    for c in copies:  # each copy audits clean on its own: chain, MACs, checkpoints, meters
        d = tmp_path / ("audit-" + Path(c).stem)
        d.mkdir()
        (d / "ledger.sqlite3").write_bytes(Path(c).read_bytes())
        led = Ledger.open_readonly(d / "ledger.sqlite3")
        Witness(d / "w", "SIM-01", keyb).write(led.head())
        led.close()
        assert audit(Where(d, keyb, d / "w")) == []
    # with the sim stopped, the first copy is older than the witness: refused
    assert main(["restore", copies[0], *key]) == 1
    assert "older copy restored" in capsys.readouterr().err
    assert main(["audit", *key]) == 0
