"""The release bundle (docs/install.md): systemd/build-release.sh builds it
from the tracked files, systemd/install.sh installs it with no network into a
temporary root (--root, no systemd; in a network namespace of its own, `unshare --net`,
where this machine allows it), `tablectl verify` matches the recorded digest;
an upgrade A -> B keeps the ledger (backed up first) and a rollback to A finds the
same ledger: audit clean, meters and events unchanged.

the installed tree holds what a table runs and nothing else (no hil/, bench/,
setuptools or PyYAML; the simulators are the bundle's rigs/, installed beside it only to
play here), `tablectl diagram` leaves it as recorded, and an uninstall keeps the ledger, its
witness and its key together while `--purge` removes all of them: a table installed, played,
purged and installed again opens (no witness of the old ledger is left to tilt it).

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
from typing import Any

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
from controller.books.ledger import Ledger
from controller.books.ledgerkey import read_key
led = Ledger.open_readonly(sys.argv[1], key=read_key(Path(sys.argv[2])))
events = list(led.events())
print(json.dumps({"problems": led.verify(full=True), "events": len(events), "last_round": led.last_round(),
                  "meters": {k: repr(v) for k, v in sorted(led.stored_meter_rows().items())}}))
"""


def _netns() -> list[str]:
    """``unshare --net`` when this machine lets us (root): no network at all, not only closed indexes."""
    try:
        ok = subprocess.run(["unshare", "--net", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return ["unshare", "--net"] if ok else []


NETNS = _netns()


def run(*cmd: str | Path, env: dict[str, str] | None = None, timeout: float = 600, rc: int = 0) -> str:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **(env or {})})  # fmt: skip
    assert r.returncode == rc, f"{cmd}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
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
    return run(*NETNS, "sh", bundle / "systemd/install.sh", "--root", root, *more, env=OFFLINE)


def install_rigs(bundle: Path, root: Path, target: Path) -> dict[str, str]:
    """The bundle's rigs/ (simulators, benchmarks, PyYAML) beside the release, never in it; the
    environment that lets the installed tablectl find them."""
    py = root / "opt/tablectl/current/venv/bin/python"
    run(*NETNS, py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index", "--no-deps",
        "--find-links", bundle / "rigs", "--require-hashes", "-r", bundle / "rigs/requirements.txt",
        "--target", target, env=OFFLINE)  # fmt: skip
    return {"PYTHONPATH": str(target)}


def installed_tree(root: Path) -> set[str]:
    """The top-level names in the installed virtualenv's site-packages."""
    (sp,) = (root / "opt/tablectl/current/venv/lib").glob("python3*/site-packages")
    return {p.name.split("-")[0].lower() for p in sp.iterdir()}


def probe(root: Path) -> dict[str, Any]:
    py = root / "opt/tablectl/current/venv/bin/python"
    found: dict[str, Any] = json.loads(
        run(py, "-c", PROBE, root / "var/lib/tablectl/ledger.sqlite3", root / "etc/tablectl/ledger.key")
    )
    return found


RIGS: dict[str, str] = {}


def sim(root: Path, rounds: int, seed: int) -> None:
    tablectl = root / "opt/tablectl/current/venv/bin/tablectl"
    run(
        tablectl,
        "sim",
        "--rounds",
        str(rounds),
        "--seed",
        str(seed),
        "--state-dir",
        root / "var/lib/tablectl",
        env=RIGS,
    )
    # the sim keys its ledger with a throwaway key beside the state directory (hil/rig.py); on a table
    # the service's key is /etc/tablectl/ledger.key, which an upgrade's `tablectl migrate` reads
    shutil.copyfile(rig_key_file(root / "var/lib/tablectl"), root / "etc/tablectl/ledger.key")


@pytest.mark.soak
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
    compiled = "site-packages/controller/books/__pycache__/ledger."
    assert any(f.startswith(compiled) for f in record["files"]), record["files"]

    # a table's tree: no simulators, benchmarks, PyYAML or setuptools (nothing imports them there)
    tree = installed_tree(root)
    for absent in ("hil", "bench", "yaml", "pyyaml", "setuptools", "_distutils_hack", "distutils"):
        assert absent not in tree, (absent, sorted(tree))
    assert {"controller", "drivers", "config", "gpiozero", "serial"} <= tree
    assert "setuptools" not in (a / "requirements.txt").read_text()
    # without the rigs, `tablectl sim` says what to install
    out = run(tablectl, "sim", "--rounds", "1", rc=2)
    assert "tablectl-rigs" in out and "rigs/" in out and "Traceback" not in out
    # `tablectl diagram` refuses to write into the installed tree, which stays as recorded
    out = run(tablectl, "diagram", rc=2)
    assert "not a checkout" in out and "--out FILE" in out
    assert "result: match" in run(tablectl, "verify", "--record-file", root / "etc/tablectl/software.json")
    # what the unit executes is in the record: the script systemd runs and pyvenv.cfg
    assert {"venv/bin/tablectl", "venv/pyvenv.cfg"} <= set(record["files"])
    RIGS.update(install_rigs(a, root, tmp_path / "rigs"))

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

    # uninstall keeps the ledger, its witness and its key together unless --purge
    units = root / "etc/systemd/system"
    assert {"tablectl.service", "tablectl-lap.service", "tablectl-uplink.service"} <= {p.name for p in units.iterdir()}
    out = run("sh", opt / "current/systemd/uninstall.sh", "--root", root)
    assert not opt.exists() and (root / "var/lib/tablectl/ledger.sqlite3").exists()
    assert (root / "var/lib/tablectl-witness/witness.json").exists() and (root / "etc/tablectl/ledger.key").exists()
    assert "kept, together" in out
    assert not (root / "etc/systemd/journald.conf.d/tablectl.conf").exists()
    assert not list(units.glob("tablectl*")), list(units.iterdir())  # every unit, the LAP's and uplink's too
    out = run("sh", b / "systemd/uninstall.sh", "--root", root, "--purge")
    for gone in ("var/lib/tablectl", "var/lib/tablectl-witness", "etc/tablectl"):
        assert not (root / gone).exists(), gone
        assert f"/{gone}" in out, out
    assert "ledger.key" in out

    # installed again after the purge, the table opens and plays: nothing of the old ledger is left
    # (a witness kept by the purge said "N events were recorded" and tilted the new table at start)
    shutil.rmtree(tmp_path / "rigs")
    install(a, root)
    RIGS.update(install_rigs(a, root, tmp_path / "rigs"))
    sim(root, 1, 3)
    assert probe(root)["problems"] == []
