"""The folders show the house (docs/architecture.md "Layers"): ``controller/`` is a
stack of packages, each importing only from the packages below it.  The imports are read from
the source (every ``import`` and ``from``, lazy ones inside functions and ``if TYPE_CHECKING``
ones included: a type named from a higher package is still a lower layer knowing a higher one),
as the drivers' test does (tests/drivers/test_seams.py).  No import runs upward, none between
two packages of one layer, so no circle between packages either."""

from __future__ import annotations

import ast
import functools
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTROLLER = ROOT / "controller"

#: bottom to top; the packages of one layer import nothing of each other
LAYERS: list[tuple[str, ...]] = [
    ("controller.gamedefs",),  # the games declared, data only (ids, chapters, dotted names)
    ("controller.rules",),  # pure: cards, tiles, dice, evaluators, settlement, paytables passed in
    ("controller.analysis", "controller.core"),  # exact analyses | records, money, clock, reactor, log
    ("controller.settings",),  # the profile, the hardware file, pins, the paytable files
    ("controller.books",),  # the ledger and its trust, the meters, what stands, round recall
    ("controller.games",),  # one procedure per game, and the round its hooks are given
    ("controller.play",),  # the table and its components
    ("controller.reports",),  # the accounting report, tablectl status / meters
    ("controller.boot",),  # start-up: configuration, preflight, self-checks
    ("controller.console",),  # the technician console
    ("controller.lap",),  # the LAP controller (server side, PostgreSQL)
    ("controller.daemon", "controller.uplink"),  # the table service | the uplink beside it
    ("controller.commands",),  # tablectl's commands
    ("controller.cli",),  # the entry point (tablectl)
    ("controller.__main__",),  # python -m controller
]
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
#: what the root package (controller/__init__.py) may import: it passes the shipped paytables to the rules
ROOT_IMPORTS = {"controller.rules", "controller.settings"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(CONTROLLER.rglob("*.py"))}


def package_of(mod: str) -> str | None:
    """The layer's package a module belongs to (``controller.books.ledger`` -> ``controller.books``)."""
    if mod == "controller":
        return None
    return ".".join(mod.split(".")[:2])


def imports(mod: str) -> list[tuple[str, int]]:
    """Every controller module ``mod`` imports (its dotted name; for ``from pkg import name`` the
    submodule when ``name`` is one), with the line."""
    path = MODULES[mod]
    here = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = here.split(".")[: len(here.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub if sub in MODULES else base, node.lineno))
    return [(m, line) for m, line in out if m == "controller" or m.startswith("controller.")]


def test_every_module_is_in_a_layer():
    """No module lies loose beside the packages: each is in a package of the declared order."""
    loose = [m for m in MODULES if m != "controller" and package_of(m) not in RANK]
    assert not loose, f"modules in no declared package (add them to a package, and to LAYERS if new): {loose}"
    assert set(RANK) <= {package_of(m) for m in MODULES}, "a declared package that does not exist"


@functools.cache
def _edges() -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> where"""
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for mod in MODULES:
        src = package_of(mod)
        for target, line in imports(mod):
            dst = package_of(target)
            if src and dst and src != dst:
                out[(src, dst)].append(f"{MODULES[mod].relative_to(ROOT)}:{line} imports {target}")
    return out


def test_no_import_runs_upward_or_sideways():
    bad = [
        f"{w}  ({src} is below {dst})" if RANK[src] < RANK[dst] else f"{w}  ({src} and {dst} are one layer)"
        for (src, dst), where in _edges().items()
        if src in RANK and dst in RANK and RANK[src] <= RANK[dst]
        for w in where
    ]
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_no_circle_between_packages():
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dst in _edges():
        graph[src].add(dst)

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    circles = sorted(p for p in list(graph) if p in reach(p))
    assert not circles, f"packages in an import circle: {circles}"


def test_the_root_package_only_passes_the_paytables():
    found = {package_of(m) for m, _ in imports("controller")} - {None}
    assert found <= ROOT_IMPORTS, f"controller/__init__.py imports {found - ROOT_IMPORTS}"


#: what a rules module may import: the standard library's pure parts, numpy (the batch evaluator)
RULES_MAY_IMPORT = {
    "__future__",
    "collections",
    "dataclasses",
    "enum",
    "fractions",
    "functools",
    "itertools",
    "math",
    "re",
    "typing",
    "bisect",
    "operator",
    "difflib",
    "numpy",
    "controller",
}


@pytest.mark.parametrize("mod", [m for m in MODULES if m.startswith("controller.rules")])
def test_rules_stay_pure(mod):
    """The rules engine does no I/O (docs/architecture.md): no file, OS, socket or TOML module,
    no ``open``; the paytables are loaded outside it (controller/settings/paytablefiles.py) and
    passed in (``use_paytables``)."""
    path = MODULES[mod]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level}
    bad = sorted(names - RULES_MAY_IMPORT)
    assert not bad, f"{path.name} imports {bad}"
    opens = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "open"]
    assert not opens, f"{path.name} opens a file at lines {opens}"
    assert all(m == "controller" or m.startswith(("controller.rules", "controller.gamedefs")) for m, _ in imports(mod))


def test_the_table_service_never_loads_the_link_processes():
    """The table service runs without psycopg (docs/linked.md): importing it loads neither the
    LAP nor the uplink."""
    import subprocess

    code = (
        "import sys, controller.daemon.service\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('controller.lap', 'controller.uplink', 'psycopg')))\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
