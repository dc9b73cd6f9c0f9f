"""``python -m tools.complexity``: the cyclomatic complexity of the code we ship and run, by radon.

Scope: the Python files under controller/, drivers/, hil/, bench/ and tools/ (what a table runs, the
simulators and benchmarks, and these tools; tests/ is not measured).  Counted as ``radon cc -a`` counts
them: every function, method and class is a block (a class scores the mean of its methods plus one);
closures are not blocks of their own and their decisions are not added to the enclosing function;
``assert`` statements, boolean operators and comprehensions each add to a function's score (radon's
defaults).  Grades are radon's: A 1-5, B 6-10, C 11-20, D 21-30, E 31-40, F 41 and over.

    python -m tools.complexity            # the grades, the worst functions, the average, the helpers' figures
    python -m tools.complexity --check    # also exit 1 when a function scores over 15, or a function,
                                          # method or constructor takes more than 6 parameters
                                          # (DEVELOPERS.md)

The gate is per function, where complexity hurts: no function over cc 15 (ruff's C901 at 15 in CI too;
mccabe counts a little differently: not boolean operators, comprehensions or asserts), no function,
method or constructor with more than 6 named parameters, public or private (a carved block handed the
whole of its caller's state is no helper; a public function taking a record's fields one by one wants
the record).  The
average is reported, never a gate: a mean falls through its denominator, and a gate on it makes every
new feature split code elsewhere to pass.  For the same reason the share of *single-use private
helpers* is reported: private functions and methods (``_name``) called from exactly one place in the
measured code; mechanical cuts made to pass an average show there.
tests/test_complexity.py runs the check.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from radon.complexity import cc_rank, cc_visit

ROOT = Path(__file__).resolve().parents[1]
DIRS = ("controller", "drivers", "hil", "bench", "tools")
MAX_CC = 15
MAX_PARAMS = 6
GRADES = "ABCDEF"
#: functions the check passes over while work in flight elsewhere reworks them (named here so the
#: check holds for the rest, taken off as each is reworked): none left
PENDING: set[str] = set()


@dataclass(frozen=True)
class Block:
    """One function, method or class as radon scores it."""

    path: str
    line: int
    name: str
    kind: str  # "function", "method" or "class"
    cc: int

    @property
    def grade(self) -> str:
        return str(cc_rank(self.cc))


def _kind(block: object) -> str:
    if hasattr(block, "methods"):
        return "class"
    return "method" if getattr(block, "is_method", False) else "function"


def _name(block: object) -> str:
    classname = getattr(block, "classname", None)
    name = str(getattr(block, "name", "?"))
    return f"{classname}.{name}" if classname else name


def blocks_of(path: Path, root: Path = ROOT) -> Iterator[Block]:
    """The blocks of one source file, as ``radon cc`` lists them."""
    rel = path.relative_to(root).as_posix()
    for block in cc_visit(path.read_text(encoding="utf-8")):
        yield Block(rel, block.lineno, _name(block), _kind(block), int(block.complexity))


def measure(root: Path = ROOT, dirs: Sequence[str] = DIRS) -> list[Block]:
    """Every block of every ``*.py`` file under ``dirs`` of ``root``."""
    found: list[Block] = []
    for d in dirs:
        for path in sorted((root / d).rglob("*.py")):
            found.extend(blocks_of(path, root))
    return found


def average(blocks: Sequence[Block]) -> float:
    return sum(b.cc for b in blocks) / len(blocks) if blocks else 0.0


@dataclass(frozen=True)
class Function:
    """One function or method (closures included), its parameters and how often its name is used."""

    path: str
    line: int
    name: str
    params: int  # named parameters, ``self``/``cls``, ``*args`` and ``**kwargs`` not counted
    uses: int  # references to the name (calls, attributes, callbacks passed) anywhere measured

    @property
    def private(self) -> bool:
        return self.name.startswith("_") and not self.name.endswith("__")

    @property
    def single_use(self) -> bool:
        return self.private and self.uses == 1


def functions(root: Path = ROOT, dirs: Sequence[str] = DIRS) -> list[Function]:
    """Every function and method under ``dirs`` of ``root``, with the uses of its name."""
    defs: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    uses: Counter[str] = Counter()
    for d in dirs:
        for path in sorted((root / d).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                    defs.append((rel, n))
                elif isinstance(n, ast.Name):
                    uses[n.id] += 1
                elif isinstance(n, ast.Attribute):
                    uses[n.attr] += 1
    out = []
    for rel, n in defs:
        a = n.args
        named = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs) if p.arg not in ("self", "cls")]
        out.append(Function(rel, n.lineno, n.name, len(named), uses[n.name]))
    return out


def single_use_share(funcs: Sequence[Function]) -> float:
    """Single-use private helpers as a share of every function and method."""
    return sum(f.single_use for f in funcs) / len(funcs) if funcs else 0.0


def report(
    blocks: Sequence[Block], worst: int, dirs: Sequence[str] = DIRS, funcs: Sequence[Function] = ()
) -> list[str]:
    """The lines printed: scope, average (reported, not a gate), grades, the ``worst`` functions
    and methods, and the helpers' figures."""
    lines = [
        f"scope: {', '.join(d + '/' for d in dirs)} ({len(blocks)} blocks: functions, methods, classes)",
        f"average cc: {average(blocks):.2f} (reported, not a gate)",
        f"functions and methods over cc {MAX_CC}: {sum(b.cc > MAX_CC for b in blocks if b.kind != 'class')}",
        *_helper_lines(funcs),
        "grade  blocks  share",
    ]
    grades = Counter(b.grade for b in blocks)
    total = len(blocks) or 1
    lines += [f"{g:>5}  {grades[g]:>6}  {100 * grades[g] / total:5.1f} %" for g in GRADES]
    ranked = sorted((b for b in blocks if b.kind != "class"), key=lambda b: (-b.cc, b.path, b.line))
    lines.append(f"worst {min(worst, len(ranked))} functions:")
    lines += [f"  {b.cc:>3} {b.grade}  {b.path}:{b.line} {b.name}" for b in ranked[:worst]]
    return lines


def _helper_lines(funcs: Sequence[Function]) -> list[str]:
    if not funcs:
        return []
    single = sum(f.single_use for f in funcs)
    return [
        f"functions and methods: {len(funcs)}; private helpers: {sum(f.private for f in funcs)}; "
        f"single-use private helpers: {single} ({100 * single_use_share(funcs):.1f} %)",
        f"parameters: most {max(f.params for f in funcs)}; over {MAX_PARAMS}: "
        f"{sum(f.params > MAX_PARAMS for f in funcs if f.private)} private helpers, "
        f"{sum(f.params > MAX_PARAMS for f in funcs if not f.private)} public functions and constructors",
    ]


def problems(
    blocks: Sequence[Block],
    funcs: Sequence[Function] = (),
    max_cc: int = MAX_CC,
    pending: frozenset[str] | set[str] = frozenset(),
) -> list[str]:
    """What ``--check`` fails on: each function or method over ``max_cc``, each function, method
    or constructor (public or private) with more than :data:`MAX_PARAMS` parameters (``pending``:
    ``"path name"`` left to their owners)."""
    found = [
        f"{b.path}:{b.line} {b.name}: cc {b.cc} > {max_cc}"
        for b in blocks
        if b.kind != "class" and b.cc > max_cc and f"{b.path} {b.name}" not in pending
    ]
    found += [
        f"{f.path}:{f.line} {f.name}: {f.params} parameters > {MAX_PARAMS}"
        for f in funcs
        if f.params > MAX_PARAMS and f"{f.path} {f.name}" not in pending
    ]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.complexity", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 when a function is over cc {MAX_CC} or a function, method or constructor takes over "
        f"{MAX_PARAMS} parameters",
    )
    parser.add_argument(
        "--worst", type=int, default=15, metavar="N", help="how many of the worst functions to list (15)"
    )
    args = parser.parse_args(argv)
    if args.worst < 0:
        parser.error("--worst: a count of functions, 0 or more")
    blocks, funcs = measure(), functions()
    print("\n".join(report(blocks, args.worst, funcs=funcs)))
    if not args.check:
        return 0
    found = problems(blocks, funcs, pending=PENDING)
    for line in found:
        print(f"complexity: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
