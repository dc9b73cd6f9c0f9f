"""A leading underscore means "this package's own": no package imports another's private module or
private name (docs/architecture.md "Layers").  A helper two packages need is made public where it
lives, or moved to the package both may import (the PIN hashing in controller/core/pinhash.py)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREES = ("controller", "drivers", "hil", "bench", "tools")
#: known and owned elsewhere: the HIL pair borrows the LAP's throwaway cluster's port finder
#: (controller/lap/pgtemp.py), which is being reworked with the LAP itself
KNOWN: set[str] = set()


def package(mod: str) -> str:
    """``controller.reports.reportpdf`` -> ``controller.reports``; ``hil.players.base`` -> ``hil``."""
    parts = mod.split(".")
    return ".".join(parts[:2]) if parts[0] == "controller" and len(parts) > 1 else parts[0]


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def crossings(rel: str, source: str) -> list[str]:
    """The private modules and names of other packages that the file ``rel`` imports."""
    mod = ".".join(Path(rel).with_suffix("").parts)
    out = []
    for n in ast.walk(ast.parse(source, rel)):
        if not isinstance(n, ast.ImportFrom) or n.level or not n.module or n.module == "__future__":
            continue
        if package(n.module) == package(mod):
            continue
        if any(private(p) for p in n.module.split(".")):
            out.append(f"{rel}: {n.module}")
        out += [f"{rel}: {n.module}.{a.name}" for a in n.names if private(a.name)]
    return out


def test_the_scan_sees_a_private_import():
    """The check itself: a private name and a private module of another package are both seen,
    a package's own are not."""
    source = (
        "from controller.reports.reportpdf import _p\n"
        "from controller.rules._poker_batch import x\n"
        "from controller.lap.pgtemp import _free_port\n"
        "from controller import __version__\n"
    )
    assert crossings("controller/lap/probe.py", source) == [
        "controller/lap/probe.py: controller.reports.reportpdf._p",
        "controller/lap/probe.py: controller.rules._poker_batch",
    ]


def test_no_package_imports_another_packages_private_parts():
    found = [
        c
        for t in TREES
        for p in sorted((ROOT / t).rglob("*.py"))
        for c in crossings(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
        if c not in KNOWN
    ]
    assert not found, "\n".join(found)
