"""The release bundle (issue 15; docs/install.md): systemd/build-release.sh builds it
from the tracked files, systemd/install.sh installs it with no network into a
temporary root (--root, no systemd), `tablectl verify` matches the recorded digest;
an upgrade A -> B keeps the ledger (backed up first) and a rollback to A finds the
same ledger: audit clean, meters and events unchanged.

Slow (two builds: the wheels come from the package index, the one network step; and
two virtualenvs).  Only the build machine's wheels are built here (--no-pi): the
aarch64 wheelhouse is proved by systemd/check-arm64.sh."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from hil.rig import rig_key_file

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="builds from the git checkout's tracked files"),
]

#: every way pip could reach an index, shut: install.sh must not need one
OFFLINE = {
    "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
    "PIP_EXTRA_INDEX_URL": "",
    "PIP_FIND_LINKS": "",
    "PIP_CONFIG_FILE": os.devnull,
    "http_proxy": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
}

PROBE = """
import json, sys
from pathlib import Path
from controller.ledger import Ledger
from controller.ledgerkey import read_key
led = Ledger.open_readonly(sys.argv[1], key=read_key(Path(sys.argv[2])))
events = list(led.events())
print(json.dumps({"problems": led.verify(full=True), "events": len(events), "last_round": led.last_round(),
                  "meters": {k: repr(v) for k, v in sorted(led.stored_meter_rows().items())}}))
"""


def run(*cmd: str | Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **(env or {})})  # fmt: skip
    assert r.returncode == 0, f"{cmd}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout + r.stderr


def build(src: Path, out: Path) -> Path:
    text = run("sh", src / "systemd/build-release.sh", "--out", out, "--no-pi")
    (bundle,) = out.glob("tablectl-*.tar.gz")
    digest = (out / f"{bundle.name}.sha256").read_text().split()[0]
    assert digest in text
    run("sh", "-c", f"cd {out} && sha256sum -c {bundle.name}.sha256")
    with tarfile.open(bundle) as t:
        t.extractall(out, filter="data")
    return out / bundle.name.removesuffix(".tar.gz")


def install(bundle: Path, root: Path, *more: str) -> str:
    return run("sh", bundle / "systemd/install.sh", "--root", root, *more, env=OFFLINE)


def probe(root: Path) -> dict[str, object]:
    py = root / "opt/tablectl/current/venv/bin/python"
    return json.loads(run(py, "-c", PROBE, root / "var/lib/tablectl/ledger.sqlite3", root / "etc/tablectl/ledger.key"))


def sim(root: Path, rounds: int, seed: int) -> None:
    tablectl = root / "opt/tablectl/current/venv/bin/tablectl"
    run(tablectl, "sim", "--rounds", rounds, "--seed", seed, "--state-dir", root / "var/lib/tablectl")
    # the sim keys its ledger with a throwaway key beside the state directory (hil/rig.py); on a table
    # the service's key is /etc/tablectl/ledger.key, which an upgrade's `tablectl migrate` reads
    shutil.copyfile(rig_key_file(root / "var/lib/tablectl"), root / "etc/tablectl/ledger.key")


def test_bundle_installs_offline_verifies_upgrades_and_rolls_back(tmp_path: Path) -> None:
    a = build(ROOT, tmp_path / "a")
    version_a = (a / "VERSION").read_text().strip()
    reqs = (a / "requirements.txt").read_text()
    assert "--hash=sha256:" in reqs and f"tablectl[pi,report]=={version_a}" in reqs
    assert "reportlab==" in reqs  # the accounting report's PDF (`report` extra) is in the release
    for runtime_only in ("pytest", "hypothesis", "pexpect", "mypy", "ruff"):
        assert runtime_only not in reqs  # the test extra is not in a release

    root = tmp_path / "root"
    root.mkdir()
    out = install(a, root)
    assert "offline, hash-checked wheels" in out
    assert "The service is NOT running. Left to do:" in out and "set the console PINs" in out
    opt = root / "opt/tablectl"
    assert os.readlink(opt / "current") == version_a
    # code and virtualenv read-only to anyone but root
    for p in (opt / version_a, opt / version_a / "venv/bin/tablectl", next((opt / version_a).rglob("ledger.py"))):
        assert p.lstat().st_mode & 0o022 == 0, p
    assert (root / "etc/systemd/journald.conf.d/tablectl.conf").read_text().count("SystemMaxUse=") == 1
    tablectl = opt / "current/venv/bin/tablectl"
    verified = run(tablectl, "verify", "--record-file", root / "etc/tablectl/software.json")
    assert "result: match" in verified
    # compiled at installation, the compiled files in the record (a swapped .pyc runs unread sources)
    record = json.loads((root / "etc/tablectl/software.json").read_text())
    assert record["bytecode"] is True
    assert any(f.startswith("site-packages/controller/__pycache__/ledger.") for f in record["files"]), record["files"]

    # version A plays
    sim(root, 3, 1)
    before = probe(root)
    assert before["problems"] == [] and before["last_round"] >= 3  # 3 rounds played (the next may have opened)
    # playing wrote no compiled file: the digest still matches
    assert "result: match" in run(tablectl, "verify", "--record-file", root / "etc/tablectl/software.json")

    # version B: the same tree with another version number
    src_b = tmp_path / "src-b"
    src_b.mkdir()
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    tar = subprocess.run(
        ["tar", "-cf", "-", "--null", "-T", "-"], cwd=ROOT, input=files, capture_output=True, check=True
    )
    subprocess.run(["tar", "-xf", "-"], cwd=src_b, input=tar.stdout, check=True)
    pyproject = src_b / "pyproject.toml"
    version_b = version_a + ".post1"
    pyproject.write_text(pyproject.read_text().replace(f'version = "{version_a}"', f'version = "{version_b}"', 1))
    b = build(src_b, tmp_path / "b")
    out = install(b, root)
    assert os.readlink(opt / "current") == version_b and os.readlink(opt / "previous") == version_a
    (backup,) = (root / "var/lib/tablectl/backups").glob(f"before-{version_b}-*/ledger.sqlite3")
    assert "integrity ok" in out
    assert "result: match" in run(tablectl, "verify", "--record-file", root / "etc/tablectl/software.json")
    assert probe(root) == before  # the upgrade itself changed nothing in the ledger

    # version B plays on the same ledger
    sim(root, 2, 2)
    after_b = probe(root)
    assert after_b["problems"] == [] and after_b["events"] > before["events"]

    # roll back to A: A reads what B wrote, nothing lost, audit clean, meters the same
    run("sh", opt / "current/systemd/install.sh", "--root", root, "--rollback", env=OFFLINE)
    assert os.readlink(opt / "current") == version_a
    assert probe(root) == after_b
    assert "result: match" in run(tablectl, "verify", "--record-file", root / "etc/tablectl/software.json")
    # the backup taken before the upgrade holds A's ledger as it was
    py = opt / "current/venv/bin/python"
    assert json.loads(run(py, "-c", PROBE, backup, root / "etc/tablectl/ledger.key")) == before

    # uninstall keeps the ledger unless --purge
    run("sh", opt / "current/systemd/uninstall.sh", "--root", root)
    assert not opt.exists() and (root / "var/lib/tablectl/ledger.sqlite3").exists()
    assert not (root / "etc/systemd/journald.conf.d/tablectl.conf").exists()
    run("sh", b / "systemd/uninstall.sh", "--root", root, "--purge")
    assert not (root / "var/lib/tablectl").exists()
