"""The service is composed of parts: ``Service`` keeps at most 15 attributes of its
own — the ledger stack, the device set, the self-checks, the consoles and background checks,
readiness each own theirs (controller/daemon/ledgerstack.py, controller/daemon/deviceset.py,
controller/boot/startchecks.py, controller/daemon/background.py, controller/daemon/readiness.py) — and nothing in
``controller/daemon/`` (the service and its parts) is typed ``Any``.  Read from the source (AST), not by running it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVICE_MODULES = sorted((ROOT / "controller" / "daemon").glob("*.py"))
MAX_ATTRIBUTES = 15


def _class(path: Path, name: str) -> ast.ClassDef:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise AssertionError(f"{path} defines no class {name}")


def attributes_set_on_self(cls: ast.ClassDef) -> set[str]:
    """Every ``self.<name>`` assigned anywhere in the class (plain, annotated, augmented,
    tuple targets; ``setattr(self, "<name>", ...)`` too), and every instance field declared
    in its body (``name: T``)."""
    names: set[str] = set()
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == "self"
            and isinstance(node.args[1], ast.Constant)
        ):
            names.add(str(node.args[1].value))
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                    names.add(sub.attr)
    for item in cls.body:  # dataclass-style fields (annotated, no ClassVar)
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            if "ClassVar" not in ast.unparse(item.annotation):
                names.add(item.target.id)
    return names


def any_uses(path: Path) -> list[str]:
    """Where a module names ``typing.Any`` (a name or an attribute ``typing.Any``/``t.Any``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Name) and node.id == "Any":
            found.append(f"{path.name}:{node.lineno}")
        elif isinstance(node, ast.Attribute) and node.attr == "Any":
            found.append(f"{path.name}:{node.lineno}")
        elif isinstance(node, ast.ImportFrom) and any(a.name == "Any" for a in node.names):
            found.append(f"{path.name}:{node.lineno} (import)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "Any" in node.value.split("[")[0:1]:
            found.append(f"{path.name}:{node.lineno} (string annotation)")
    return found


def test_the_counter_sees_what_it_is_meant_to() -> None:
    cls = ast.parse(
        "class S:\n"
        "    f: int\n"
        "    K: ClassVar[int] = 1\n"
        "    def __init__(self):\n"
        "        self.a = 1\n"
        "        self.b: int = 2\n"
        "        self.c, (self.d, x) = 3, (4, 5)\n"
        "    def later(self):\n"
        "        self.a += 1\n"
        "        self.e = [1]\n"
        "        setattr(self, 'g', 1)\n"
        "        other.h = 1\n"
    ).body[0]
    assert isinstance(cls, ast.ClassDef)
    assert attributes_set_on_self(cls) == {"f", "a", "b", "c", "d", "e", "g"}


def test_service_keeps_at_most_15_attributes() -> None:
    attrs = attributes_set_on_self(_class(ROOT / "controller" / "daemon" / "service.py", "Service"))
    assert len(attrs) <= MAX_ATTRIBUTES, f"Service sets {len(attrs)} attributes: {sorted(attrs)}"


def test_no_any_in_the_service_modules() -> None:
    assert SERVICE_MODULES, "controller/daemon/*.py not found"
    found = [where for path in SERVICE_MODULES for where in any_uses(path)]
    assert not found, f"typing.Any in the service modules: {found}"


def test_the_any_finder_finds_any(tmp_path: Path) -> None:
    p = tmp_path / "m.py"
    p.write_text("from typing import Any\nx: Any = 1\ndef f(y: 'Any') -> None: ...\nimport typing\nz: typing.Any\n")
    assert len(any_uses(p)) == 4
