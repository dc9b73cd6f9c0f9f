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
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIRS = ("controller", "drivers", "hil", "bench", "tools", "tests")
HASH_COMMENTED = (".sh", ".toml", ".yaml", ".yml", ".cfg")
COMMENT = re.compile(r"(?:^|\s)(#.*)")  # a `#` that starts a comment, not one inside a word (`a#b`)
SELF = Path(__file__).resolve()  # its own examples of what it looks for

TICKET = re.compile(
    r"\bissues? #?\d+(?:\s*#\d+)?(?:(?:,|\s+and|\s+or)\s+#?\d+)*"  # issue 27, issues 24 and 26, issue 12 #4
    r"|\(#\d+\)|\bsee #\d+|\bgh-\d+",  # (#27), see #27, gh-27
    re.IGNORECASE,
)


def _python_texts(path: Path, source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring (a module's, a class's, a function's) in a Python file."""
    yield from _comments(source)
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                yield from ((node.body[0].lineno + i, line) for i, line in enumerate(doc.splitlines()))


def _comments(source: str) -> Iterator[tuple[int, str]]:
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.string
    except (tokenize.TokenError, SyntaxError):
        return


def _hash_texts(_path: Path, source: str) -> Iterator[tuple[int, str]]:
    for n, line in enumerate(source.splitlines(), 1):
        m = COMMENT.search(line)
        if m:
            yield n, m.group(1)


def references(root: Path = ROOT, dirs: tuple[str, ...] = DIRS) -> list[tuple[Path, int, str]]:
    """Every (file, line, text) whose comment or docstring refers to a ticket number (a line once)."""
    found: dict[tuple[Path, int], str] = {}
    for path in sorted(p for d in dirs for p in (root / d).rglob("*") if p.suffix in READ and p != SELF):
        for line, text in READ[path.suffix](path, _read(path)):
            if TICKET.search(text):
                found.setdefault((path, line), text.strip())
    return [(path, line, text) for (path, line), text in sorted(found.items())]


#: how the comments of a file are read, by its suffix
READ: dict[str, Callable[[Path, str], Iterator[tuple[int, str]]]] = {
    ".py": _python_texts,
    **dict.fromkeys(HASH_COMMENTED, _hash_texts),
}


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.ticketrefs", description=__doc__.split("\n\n")[0])
    p.add_argument("--fix", action="store_true", help="rewrites nothing (a reason has to be written by hand): lists")
    a = p.parse_args(argv)
    refs = references()
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
