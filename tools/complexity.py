"""``python -m tools.complexity``: the cyclomatic complexity of the code we ship and run, by radon.

Scope: the Python files under controller/, drivers/, hil/, bench/ and tools/ (what a table runs, the
simulators and benchmarks, and these tools; tests/ is not measured).  Counted as ``radon cc -a`` counts
them: every function, method and class is a block (a class scores the mean of its methods plus one);
closures are not blocks of their own and their decisions are not added to the enclosing function;
``assert`` statements, boolean operators and comprehensions each add to a function's score (radon's
defaults).  Grades are radon's: A 1-5, B 6-10, C 11-20, D 21-30, E 31-40, F 41 and over.

    python -m tools.complexity            # the average, the count and share per grade, the worst functions
    python -m tools.complexity --check    # also exit 1 when a block scores over 20 (grade D or worse)
                                          # or the average is over 3.2 (DEVELOPERS.md: functions small)

ruff's C901 (pyproject.toml, max-complexity 15) is the per-function gate in CI; mccabe counts a little
differently (not boolean operators, comprehensions or asserts), so the two figures differ by design.
tests/test_complexity.py runs the check.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from radon.complexity import cc_rank, cc_visit

ROOT = Path(__file__).resolve().parents[1]
DIRS = ("controller", "drivers", "hil", "bench", "tools")
MAX_CC = 20
MAX_AVERAGE = 3.2
GRADES = "ABCDEF"


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


def report(blocks: Sequence[Block], worst: int, dirs: Sequence[str] = DIRS) -> list[str]:
    """The lines printed: scope, average, grades, the ``worst`` functions and methods."""
    lines = [
        f"scope: {', '.join(d + '/' for d in dirs)} ({len(blocks)} blocks: functions, methods, classes)",
        f"average cc: {average(blocks):.2f} (limit {MAX_AVERAGE})",
        f"functions and methods over cc 15: {sum(b.cc > 15 for b in blocks if b.kind != 'class')}; "
        f"over cc {MAX_CC}: {sum(b.cc > MAX_CC for b in blocks)}",
        "grade  blocks  share",
    ]
    grades = Counter(b.grade for b in blocks)
    total = len(blocks) or 1
    lines += [f"{g:>5}  {grades[g]:>6}  {100 * grades[g] / total:5.1f} %" for g in GRADES]
    funcs = sorted((b for b in blocks if b.kind != "class"), key=lambda b: (-b.cc, b.path, b.line))
    lines.append(f"worst {min(worst, len(funcs))} functions:")
    lines += [f"  {b.cc:>3} {b.grade}  {b.path}:{b.line} {b.name}" for b in funcs[:worst]]
    return lines


def problems(blocks: Sequence[Block], max_cc: int = MAX_CC, max_average: float = MAX_AVERAGE) -> list[str]:
    """What ``--check`` fails on: each block over ``max_cc``, and an average over ``max_average``."""
    found = [f"{b.path}:{b.line} {b.name}: cc {b.cc} > {max_cc}" for b in blocks if b.cc > max_cc]
    if average(blocks) > max_average:
        found.append(f"average cc {average(blocks):.2f} > {max_average}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.complexity", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 when a block is over cc {MAX_CC} or the average over {MAX_AVERAGE}",
    )
    parser.add_argument(
        "--worst", type=int, default=15, metavar="N", help="how many of the worst functions to list (15)"
    )
    args = parser.parse_args(argv)
    if args.worst < 0:
        parser.error("--worst: a count of functions, 0 or more")
    blocks = measure()
    print("\n".join(report(blocks, args.worst)))
    if not args.check:
        return 0
    found = problems(blocks)
    for line in found:
        print(f"complexity: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
