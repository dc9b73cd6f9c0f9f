"""What a release installs and uninstalls, checked fast (the whole release is
tests/integration/test_release.py, slow): the table's distribution holds what a table runs and
the simulators are tablectl-rigs; uninstall.sh keeps the ledger, its witness and its key
together and --purge removes everything install.sh made; the README's command table is the
CLI's; ./bootstrap waits for the dpkg lock and stops on a missing required package."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from controller.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_distribution_leaves_out_the_simulators_and_pyyaml():
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())
    rigs = tomllib.loads((ROOT / "rigs" / "pyproject.toml").read_text())
    assert table["tool"]["setuptools"]["packages"]["find"]["include"] == ["controller*", "drivers*", "config*"]
    assert not any(d.lower().startswith("pyyaml") for d in table["project"]["dependencies"])
    assert rigs["project"]["name"] == "tablectl-rigs" and rigs["project"]["version"] == table["project"]["version"]
    assert rigs["tool"]["setuptools"]["packages"]["find"]["include"] == ["hil*", "bench*"]
    assert any(d.startswith("PyYAML==") for d in rigs["project"]["dependencies"])
    for pkg in ("hil", "bench"):
        link = ROOT / "rigs" / pkg
        assert link.is_symlink() and link.resolve() == (ROOT / pkg).resolve()
    # nothing a table runs imports them (nor setuptools)
    code = (
        "import sys, controller.commands.run, controller.daemon.service, controller.uplink.uplink; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'hil', 'bench', 'yaml', 'setuptools', 'pkg_resources'}))"
    )
    out = subprocess.run([str(ROOT / ".venv/bin/python"), "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _fake_install(root: Path) -> None:
    files = [
        "opt/tablectl/0.1.0/venv/bin/tablectl",
        "etc/systemd/system/tablectl.service",
        "etc/systemd/system/tablectl-console@.service",
        "etc/systemd/system/tablectl-uplink.service",
        "etc/systemd/system/tablectl-lap.service",
        "etc/systemd/system/other.service",
        "etc/udev/rules.d/99-tablectl.rules",
        "etc/systemd/journald.conf.d/tablectl.conf",
        "var/lib/tablectl/ledger.sqlite3",
        "var/lib/tablectl-witness/witness.json",
        "etc/tablectl/ledger.key",
        "etc/tablectl/software.json",
        "etc/tablectl/table.toml",
    ]
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("x")


def uninstall(root: Path, *more: str) -> str:
    r = subprocess.run(
        ["sh", str(ROOT / "systemd/uninstall.sh"), "--root", str(root), *more], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_uninstall_keeps_ledger_witness_and_key_together_and_purge_removes_everything(tmp_path):
    root = tmp_path / "root"
    _fake_install(root)
    out = uninstall(root)
    assert not (root / "opt/tablectl").exists()
    assert sorted(p.name for p in (root / "etc/systemd/system").iterdir()) == ["other.service"]
    for kept in ("var/lib/tablectl/ledger.sqlite3", "var/lib/tablectl-witness/witness.json", "etc/tablectl/ledger.key"):
        assert (root / kept).exists(), kept
    assert "kept, together" in out and "/var/lib/tablectl-witness" in out
    # --purge used to leave the witness (a reinstall then tilted: "the witness says N events")
    _fake_install(root)
    out = uninstall(root, "--purge")
    for gone in ("var/lib/tablectl", "var/lib/tablectl-witness", "etc/tablectl", "opt/tablectl"):
        assert not (root / gone).exists(), gone
    assert "/var/lib/tablectl-witness" in out and "ledger.key" in out and "tablectl-lap.service" in out
    assert (root / "etc/systemd/system/other.service").exists()


def _readme_commands() -> set[str]:
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Commands") :].split("\n## ", 1)[0]
    out: set[str] = set()
    for row in re.findall(r"^\| (.*?) \|", table, re.M):  # the first cell of each row
        out.update(re.findall(r"`tablectl ([a-z-]+)", row))
    return out


def test_the_readme_command_table_lists_every_subcommand():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert sub.choices is not None
    commands = set(sub.choices)
    assert _readme_commands() == commands, (
        sorted(commands - _readme_commands()),
        sorted(_readme_commands() - commands),
    )


def test_bootstrap_waits_for_the_dpkg_lock_and_stops_on_a_missing_required_package(tmp_path):
    text = (ROOT / "bootstrap").read_text()
    assert "DPkg::Lock::Timeout=" in text
    # a machine where apt-get cannot install anything and poppler is missing: the bootstrap fails,
    # naming the package, before it makes a virtualenv
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("apt-get", "sudo"):
        (bin_ / tool).write_text("#!/bin/sh\nexit 100\n")
        (bin_ / tool).chmod(0o755)
    for tool in ("python3", "initdb", "chromium", "sh", "cat", "id", "dirname", "ls", "env"):
        real = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
        if real:
            (bin_ / tool).symlink_to(real)
    copy = tmp_path / "bootstrap"
    copy.write_text(text)
    r = subprocess.run(["sh", str(copy)], capture_output=True, text=True, env={"PATH": str(bin_)}, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "poppler-utils could not be installed" in r.stderr and "FAILED" in r.stderr
    assert not (tmp_path / ".venv").exists()
