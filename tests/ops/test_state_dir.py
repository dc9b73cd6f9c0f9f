"""A simulator's ledger can be looked at as the README says, with ``--state-dir D``
alone (its key in ``D-key/``, its witness in ``D-witness/``); a command that needs a
configuration and finds none says how to point it at one; bare ``verify`` prints the digest.

Each of these failed at the branch's start: history, audit, backup, report and restore read
/etc/tablectl/ledger.key ("cannot read the ledger key"), and the configuration error named no
way out."""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from controller.cli import main
from tests.ops import FAULT


def _first_day(state: Path) -> date:
    import sqlite3

    from controller.reports import report as R

    db = sqlite3.connect(f"file:{state / 'ledger.sqlite3'}?mode=ro", uri=True)
    try:
        (ts,) = db.execute("SELECT MIN(ts) FROM events").fetchone()
    finally:
        db.close()
    return R.gaming_day_of(ts)


@pytest.mark.parametrize(
    "cmd",
    [["history"], ["history", "1"], ["history", "--hits"], ["status"], ["meters"], ["audit"], ["report", "--day"]],
)
def test_every_ledger_command_finds_the_sims_key_and_witness_beside_the_state_dir(cmd, ledger_copy, capsys):
    args = [*cmd, _first_day(ledger_copy).isoformat()] if cmd[-1] == "--day" else cmd
    rc = main([*args, "--state-dir", str(ledger_copy)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "ledger.key" not in err
    assert out.strip() or cmd == ["history", "--hits"]  # two rounds: no hit to list


def test_backup_and_restore_with_the_state_dir_alone(ledger_copy, tmp_path, capsys):
    assert main(["backup", str(tmp_path / "copies"), "--mkdir", "--state-dir", str(ledger_copy)]) == 0
    (copy,) = (tmp_path / "copies").glob("SIM-01-ledger-*.sqlite3")
    assert main(["restore", str(copy), "--state-dir", str(ledger_copy)]) == 0, capsys.readouterr().err
    assert "restored: table SIM-01" in capsys.readouterr().out
    assert main(["audit", "--state-dir", str(ledger_copy)]) == 0


def test_a_state_dir_without_a_key_beside_it_says_where_it_looked(ledger_copy, capsys):
    import shutil

    shutil.rmtree(ledger_copy.parent / "D-key")
    assert main(["audit", "--state-dir", str(ledger_copy)]) == 2
    err = capsys.readouterr().err
    assert "D-key/ledger.key" in err and "--key-file" in err


@pytest.mark.parametrize("cmd", [["history"], ["status"], ["audit"], ["meters"], ["backup", "x"], ["pin", "list"]])
def test_without_a_configuration_a_command_says_how_to_point_it_at_one(cmd, tmp_path, capsys):
    rc = main([*cmd, "--config", str(tmp_path / "table.toml")])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "--state-dir D" in err and "--config FILE" in err and FAULT not in err


def test_bare_verify_prints_the_digest_and_says_what_is_missing(tmp_path, capsys):
    rc = main(["verify", "--config", str(tmp_path / "table.toml")])
    out = capsys.readouterr().out
    assert rc == 2 and "digest: " in out and "recorded: none" in out and "--record-file" in out


def test_the_sim_says_where_its_ledger_key_and_witness_are(tmp_path):
    state = tmp_path / "D"
    r = subprocess.run(
        [sys.executable, "-m", "controller", "sim", "--rounds", "1", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert f"key {tmp_path}/D-key/ledger.key" in last and f"witness {tmp_path}/D-witness/" in last
    assert f"--state-dir {state}" in last
    # and the README says so
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "D-key/" in readme and "D-witness/" in readme
