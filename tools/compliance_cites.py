"""§ citations in the code, the tests and the HIL scenarios, by subsection (``687a.11(e)``).

A citation is ``§ 687a.11(e)`` and what continues it: ``§ 687a.10(d),(e)``, ``§ 621a.9(o)-(q)``,
``§§ 621a.8, 621a.9``, ``§ 670a.11(h)(3)(i)(C)`` (subsection h); a test named after its section
(``test_687a_7_e_...``, ``..._621a_11_a``) cites it too.  Each citation is attributed to where it
stands: code to its file and innermost function or class (a paytable to its name), a test to its
``test_`` function (decorators included) or else its module, a scenario to its file.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tools.compliance_regs import CHAPTERS

_REF = re.compile(r"(6\d\da)\.(\d+)((?:\([A-Za-z0-9]{1,4}\))*)")
_GROUPS = re.compile(r"\(([A-Za-z0-9]{1,4})\)")
_SEP = re.compile(r"\s*(?:,|;|-|–|—|\band\b|\bor\b|\bto\b|through)\s*(?:§§?\s*)?")
_TEST_NAME = re.compile(r"(?:^|_)(6\d\da)_(\d+)((?:_[a-z](?=_|$))*)")
_ROMAN = {"i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x"}

CODE_DIRS = ("controller", "drivers")
CONFIG_DIR = "config"
TEST_DIR = "tests"
SCENARIO_DIR = "hil/scenarios"
#: files whose citations are examples for the citation reader, not evidence
NOT_EVIDENCE = {"tests/controller/test_compliance.py"}


@dataclass(frozen=True)
class Cite:
    chapter: str
    section: int
    letter: str  # "" = the whole section

    @property
    def id(self) -> str:
        return f"{self.chapter}.{self.section}" + (f"({self.letter})" if self.letter else "")


def _letters(first: str, last: str) -> list[str]:
    return [chr(c) for c in range(ord(first), ord(last) + 1)] if first <= last else [first]


def _is_letter(g: str) -> bool:
    return len(g) == 1 and g.islower()


def cites_in(text: str) -> Iterator[Cite]:
    """Every subsection (or whole section) a text cites after a ``§``."""
    for m in re.finditer(r"§§?\s*", text):
        yield from _chain(text, m.end())


def _chain(text: str, pos: int) -> Iterator[Cite]:
    """The references starting at ``pos``: ``687a.10(d),(e)``, ``621a.9(o)-(q), (s)``, ``621a.8, 621a.9``."""
    ref = _REF.match(text, pos)
    if not ref or ref.group(1) not in CHAPTERS:
        return
    chapter, section, last, tail = _ref_parts(ref)
    yield Cite(chapter, section, last)
    pos = ref.end()
    while True:
        sep = _SEP.match(text, pos)
        if not sep:
            return
        nxt = pos = sep.end()
        more = _REF.match(text, nxt)
        if more:
            if more.group(1) not in CHAPTERS:
                return
            chapter, section, last, tail = _ref_parts(more)
            yield Cite(chapter, section, last)
            pos = more.end()
            continue
        g = re.match(r"((?:\([A-Za-z0-9]{1,4}\))+)", text[nxt:])
        if not g:
            return
        pos = nxt + g.end()
        letters, last, tail = _continuation(_GROUPS.findall(g.group(1)), sep.group(0), last, tail)
        for letter in letters:
            yield Cite(chapter, section, letter)


def _ref_parts(ref: re.Match[str]) -> tuple[str, int, str, str]:
    """Chapter, section, the subsection cited ("" for none) and the deepest level cited
    (a continuation "(ii)" is its sibling)."""
    groups = _GROUPS.findall(ref.group(3))
    last = groups[0] if groups and _is_letter(groups[0]) else ""
    tail = groups[-1] if groups else ""
    return ref.group(1), int(ref.group(2)), last, tail


def _continuation(cont: list[str], sep: str, last: str, tail: str) -> tuple[list[str], str, str]:
    """A continuation ``(e)`` or ``-(q)`` after a reference: the subsections it cites, and the new
    last subsection and deepest level."""
    first = cont[0]
    deep = first in _ROMAN and (not last or (tail in _ROMAN and tail != last))
    if not _is_letter(first) or deep:
        return [], last, cont[-1]  # a paragraph, subparagraph or clause of the subsection already cited
    is_range = sep.strip() in ("-", "–", "—", "to", "through")
    letters = _letters(last, first)[1:] if is_range and last else [first]
    return letters, first, cont[-1]


def cites_in_test_name(name: str) -> Iterator[Cite]:
    """``test_687a_12_d_e_...`` -> 687a.12(d), 687a.12(e); ``test_687a_11_settlement`` -> 687a.11."""
    for m in _TEST_NAME.finditer(name):
        if m.group(1) not in CHAPTERS:
            continue
        letters = [x for x in m.group(3).split("_") if x]
        for letter in letters or [""]:
            yield Cite(m.group(1), int(m.group(2)), letter)


@dataclass
class Evidence:
    """Where each subsection (id) is cited: code, tests, scenarios (labels)."""

    code: dict[str, set[str]] = field(default_factory=dict)
    tests: dict[str, set[str]] = field(default_factory=dict)
    scenarios: dict[str, set[str]] = field(default_factory=dict)
    test_names: set[str] = field(default_factory=set)  # every test_ function under tests/
    name_cites: dict[str, set[str]] = field(default_factory=dict)  # cited only by a test's name

    def add(self, kind: str, cite: Cite, label: str) -> None:
        getattr(self, kind).setdefault(cite.id, set()).add(label)


def _scopes(tree: ast.AST) -> list[tuple[int, int, str, bool]]:
    """(first line, last line, qualified name, is a test) of every function and class."""
    out: list[tuple[int, int, str, bool]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                name = f"{prefix}{child.name}"
                is_test = not isinstance(child, ast.ClassDef) and child.name.startswith("test_")
                out.append((first, child.end_lineno or child.lineno, name, is_test))
                visit(child, name + ".")

    visit(tree, "")
    return out


_TEST_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test_\w+)", re.M)


def _label(rel: str, scopes: list[tuple[int, int, str, bool]], line: int, tests: bool) -> str:
    inner = [s for s in scopes if s[0] <= line <= s[1] and (s[3] or not tests)]
    if not inner:
        return f"{rel} (module)" if tests else rel
    first, _last, name, _t = max(inner, key=lambda s: s[0])
    return f"{rel}::{name.rsplit('.', 1)[-1]}" if tests else f"{rel}: {name}"


def _scan_python(ev: Evidence, root: Path, path: Path, kind: str) -> None:
    rel = path.relative_to(root).as_posix()
    text = path.read_text(encoding="utf-8")
    tests = kind == "tests"
    if "§" not in text:  # only test names to read: no need to parse the file
        _add_test_names(ev, rel, text, tests)
        return
    scopes = _scopes(ast.parse(text, rel))
    starts = _line_starts(text)
    for m in re.finditer(r"§§?\s*", text):
        line = _line_of(starts, m.start())
        for c in _chain(text, m.end()):
            ev.add(kind, c, _label(rel, scopes, line, tests))
    if tests:
        for first, _last, name, is_test in scopes:
            if is_test:
                _add_test(ev, name.rsplit(".", 1)[-1], _label(rel, scopes, first, tests))


def _add_test_names(ev: Evidence, rel: str, text: str, tests: bool) -> None:
    """The tests of a file that cites no section in its text: their names may cite."""
    if tests:
        for name in _TEST_DEF.findall(text):
            _add_test(ev, name, f"{rel}::{name}")


def _add_test(ev: Evidence, name: str, label: str) -> None:
    ev.test_names.add(name)
    for c in cites_in_test_name(name):
        ev.add("tests", c, label)
        ev.name_cites.setdefault(c.id, set()).add(label)


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _line_of(starts: list[int], offset: int) -> int:
    import bisect

    return bisect.bisect_right(starts, offset)


def _scan_toml(ev: Evidence, root: Path, path: Path) -> None:
    rel = path.relative_to(root).as_posix()
    table = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        h = re.match(r'^\s*\[paytables\."([^"]+)"\]', line)
        if h:
            table = h.group(1)
        for c in cites_in(line):
            ev.add("code", c, f"{rel}: {table}" if table else rel)


def scan(root: Path) -> Evidence:
    """Every citation under controller/, drivers/, config/, tests/ and hil/scenarios/."""
    ev = Evidence()
    for d in CODE_DIRS:
        for p in sorted((root / d).rglob("*.py")):
            _scan_python(ev, root, p, "code")
    for p in sorted((root / CONFIG_DIR).rglob("*.toml")):
        _scan_toml(ev, root, p)
    for p in sorted((root / TEST_DIR).rglob("*.py")):
        if p.relative_to(root).as_posix() not in NOT_EVIDENCE:
            _scan_python(ev, root, p, "tests")
    for p in sorted((root / SCENARIO_DIR).glob("*.yaml")):
        for c in cites_in(p.read_text(encoding="utf-8")):
            ev.add("scenarios", c, p.stem)
    return ev
