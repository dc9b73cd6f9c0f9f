"""``python -m tools.attributes``: how many instance attributes each class of controller/ holds.

A class's attributes are counted from its source: the names its methods assign on ``self``
(``self.x = ...``, ``self.x: T = ...``, ``self.x += ...``, ``self.a, self.b = ...``), its dataclass
or NamedTuple fields (class-level annotations but ``ClassVar``) and its ``__slots__``; a name counted
once however often it is assigned.  A class's own only: what it inherits is its base's count.

    python -m tools.attributes            # the classes with the most attributes
    python -m tools.attributes --check    # also exit 1 when a class holds more than 20

A class holding more than :data:`MAX_ATTRS` is doing several things (the uplink held 42 before it
was split into its connection, batching, the LAP's memory and status).  tests/test_attributes.py
runs the check.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIRS = ("controller",)
MAX_ATTRS = 20
#: classes the check passes over until they are split (``"path Name"``, taken off as each is): none
PENDING: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ClassAttrs:
    path: str
    line: int
    name: str
    attrs: frozenset[str]

    @property
    def count(self) -> int:
        return len(self.attrs)


def _targets(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.Assign):
        for t in node.targets:
            yield from _flatten(t)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        yield node.target


def _flatten(t: ast.expr) -> Iterator[ast.expr]:
    if isinstance(t, ast.Tuple | ast.List):
        for e in t.elts:
            yield from _flatten(e)
    elif isinstance(t, ast.Starred):
        yield from _flatten(t.value)
    else:
        yield t


def _self_attrs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names ``fn`` assigns on its first parameter (``self``), closures included; a nested class,
    or a nested function whose own parameter shadows the name, assigns on something else."""
    params = [*fn.args.posonlyargs, *fn.args.args]
    if not params or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        return set()
    me = params[0].arg
    found: set[str] = set()
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.ClassDef):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            if me in {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}:
                continue
        for t in _targets(node):
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                found.add(t.attr)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _slots(value: ast.expr) -> set[str]:
    if isinstance(value, ast.Tuple | ast.List | ast.Set):
        return {e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return {value.value}
    return set()


def _is_classvar(ann: ast.expr) -> bool:
    text = ast.unparse(ann)
    return text.startswith(("ClassVar", "typing.ClassVar")) or "ClassVar[" in text


def attrs_of(cls: ast.ClassDef) -> set[str]:
    """The instance attributes one class declares or assigns itself."""
    found: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and not _is_classvar(stmt.annotation):
            found.add(stmt.target.id)
        elif isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in stmt.targets
        ):
            found |= _slots(stmt.value)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and not any(
            isinstance(d, ast.Name) and d.id == "classmethod" for d in stmt.decorator_list
        ):
            found |= _self_attrs(stmt)
    return found


def measure(root: Path = ROOT, dirs: Sequence[str] = DIRS) -> list[ClassAttrs]:
    """Every class (nested ones too) of every ``*.py`` file under ``dirs`` of ``root``."""
    out = []
    for d in dirs:
        for path in sorted((root / d).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
                if isinstance(node, ast.ClassDef):
                    out.append(ClassAttrs(rel, node.lineno, node.name, frozenset(attrs_of(node))))
    return out


def problems(classes: Sequence[ClassAttrs], limit: int = MAX_ATTRS, pending: frozenset[str] = frozenset()) -> list[str]:
    """Each class holding more than ``limit`` attributes (but those ``pending``)."""
    return [
        f"{c.path}:{c.line} {c.name}: {c.count} attributes > {limit}"
        for c in classes
        if c.count > limit and f"{c.path} {c.name}" not in pending
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.attributes", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help=f"exit 1 when a class holds over {MAX_ATTRS}")
    parser.add_argument("--top", type=int, default=10, metavar="N", help="how many classes to list (10)")
    args = parser.parse_args(argv)
    classes = measure()
    ranked = sorted(classes, key=lambda c: (-c.count, c.path, c.line))
    print(f"classes: {len(classes)} in {', '.join(d + '/' for d in DIRS)}; most attributes: {ranked[0].count}")
    for c in ranked[: max(0, args.top)]:
        print(f"  {c.count:>3}  {c.path}:{c.line} {c.name}")
    if not args.check:
        return 0
    found = problems(classes, pending=PENDING)
    gone = PENDING - {f"{c.path} {c.name}" for c in classes if c.count > MAX_ATTRS}
    found += [f"{p}: pending but not over {MAX_ATTRS} (take it off PENDING)" for p in sorted(gone)]
    for line in found:
        print(f"attributes: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
