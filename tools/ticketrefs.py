"""List the comments and docstrings that refer to issue (ticket) numbers.

A reader of the repository cannot follow ``issue 27: ...``: a comment says why, not which
ticket.  This lists every such reference in the code's comments and docstrings (Python's
``#`` comments and docstrings; the ``#`` comments of shell, TOML and YAML files) under
controller/, drivers/, hil/, bench/, tools/ and tests/, one ``path:line: text`` per line, so
that they can be rewritten by hand — each into the reason it stood for, which no tool can
write.  ``--fix`` therefore rewrites nothing: it lists, and says so.  Exit 1 when any is
found, 0 when none (tests/ops/test_no_ticket_refs.py).

What counts: ``issue 27``, ``issues 24 and 26``, ``(issue 24)``, ``issue 12 #4``, and a bare
``#27`` written as a ticket (``(#27)``, ``see #27``, ``gh-27``).  A numbered reading of a
document (``670a.md #20``, ``621a #35``), a CSS colour or a seat number is not a ticket.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIRS = ("controller", "drivers", "hil", "bench", "tools", "tests")
HASH_COMMENTED = (".sh", ".toml", ".yaml", ".yml", ".cfg")
SELF = Path(__file__).resolve()  # its own examples of what it looks for

TICKET = re.compile(
    r"\bissues? #?\d+(?:\s*#\d+)?(?:(?:,|\s+and|\s+or)\s+#?\d+)*"  # issue 27, issues 24 and 26, issue 12 #4
    r"|\(#\d+\)|\bsee #\d+|\bgh-\d+",  # (#27), see #27, gh-27
    re.IGNORECASE,
)


def _python_texts(path: Path, source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring in a Python file."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.string
    except (tokenize.TokenError, SyntaxError):
        pass
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                for i, line in enumerate(first.value.value.splitlines()):
                    yield first.lineno + i, line
        # a ``#:`` attribute docstring's string form (a bare string after an assignment)
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for prev, stmt in zip(body, body[1:]):
                if (
                    isinstance(prev, ast.Assign | ast.AnnAssign)
                    and isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)
                ):
                    for i, line in enumerate(stmt.value.value.splitlines()):
                        yield stmt.lineno + i, line


def _hash_texts(source: str) -> Iterator[tuple[int, str]]:
    for n, line in enumerate(source.splitlines(), 1):
        i = line.find("#")
        if i >= 0 and (i == 0 or line[i - 1].isspace()):
            yield n, line[i:]


def references(root: Path = ROOT, dirs: tuple[str, ...] = DIRS) -> list[tuple[Path, int, str]]:
    """Every (file, line, text) whose comment or docstring refers to a ticket number."""
    found: list[tuple[Path, int, str]] = []
    for d in dirs:
        for path in sorted((root / d).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path == SELF:
                continue
            if path.suffix == ".py":
                texts: Iterator[tuple[int, str]] = _python_texts(path, _read(path))
            elif path.suffix in HASH_COMMENTED:
                texts = _hash_texts(_read(path))
            else:
                continue
            seen: set[int] = set()
            for line, text in texts:
                if line not in seen and TICKET.search(text):
                    seen.add(line)
                    found.append((path, line, text.strip()))
    return sorted(found)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.ticketrefs", description=__doc__.split("\n\n")[0])
    p.add_argument("--fix", action="store_true", help="rewrites nothing (a reason has to be written by hand): lists")
    p.add_argument("--count", action="store_true", help="print only how many, per directory")
    a = p.parse_args(argv)
    refs = references()
    if a.count:
        for d in DIRS:
            n = sum(1 for f, _l, _t in refs if f.relative_to(ROOT).parts[0] == d)
            print(f"{d}: {n}")
    else:
        for f, line, text in refs:
            print(f"{f.relative_to(ROOT)}:{line}: {text}")
    if a.fix:
        print(
            "ticketrefs: --fix rewrites nothing: each reference is to be replaced by the reason it stands for",
            file=sys.stderr,
        )
    print(f"ticketrefs: {len(refs)} references to issue numbers in comments and docstrings", file=sys.stderr)
    return 1 if refs else 0


if __name__ == "__main__":
    sys.exit(main())
