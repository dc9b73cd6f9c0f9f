"""``python -m tools.compliance --mutate``: does each "implemented and tested" row's test fail when
the rule is broken?

For every subsection the matrix shows as implemented and tested, the code it names (``path: Name``,
a function or class) is altered the way a wrong rule would read — a comparison turned round, a
constant changed by one, a branch's condition negated, ``and``/``or`` swapped, ``+``/``-`` swapped —
and only the tests the matrix names for that subsection are run.  A mutant is *killed* when they
fail (or hang past the timeout), *survived* when they pass: a missing test or a wrong mapping.  A
row whose code names nothing that can be altered (a module, a paytable in TOML, only HIL
scenarios as evidence) is "could not be made", saying why.

A small mutator of our own rather than mutmut or cosmic-ray: they mutate whole files or packages
and run a whole test command per mutant, while the matrix needs one subsection's code altered and
one subsection's tests run, a few mutants each, and the answer recorded per subsection.

Nothing is altered in the working tree: each worker copies the tree (without .git, .venv and
caches) into a temporary directory, alters its copy, runs pytest there (its ``controller`` is the
copy's: the current directory comes first on sys.path, before the editable install) and puts the
file back before the next mutant; the temporary directory is removed on exit, Ctrl-C included.
Results go to docs/compliance-mutations.json, which the matrix's "mutation" column is made from.
"""

from __future__ import annotations

import ast
import bisect
import concurrent.futures as cf
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tools.compliance_cites import _chain

MUTATIONS = Path("docs/compliance-mutations.json")
_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "*.pyc"
)
_SWAP_CMP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_SWAP_BIN: dict[type[ast.operator], type[ast.operator]] = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv}


@dataclass(frozen=True)
class Mutant:
    path: str  # relative to the tree
    line: int
    kind: str  # "comparison", "constant", "branch", "boolean", "arithmetic"
    before: str
    after: str
    start: tuple[int, int]  # (line, column) of the altered text
    end: tuple[int, int]

    @property
    def label(self) -> str:
        return f"{self.path}:{self.line} {self.before} -> {self.after}"


# --------------------------------------------------------------------------- where to alter


def _find(tree: ast.AST, qualname: str) -> ast.AST | None:
    node: ast.AST | None = tree
    for part in qualname.split("."):
        found = None
        for child in ast.iter_child_nodes(node) if node is not None else ():
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and child.name == part:
                found = child
        node = found
    return node


def _docstrings(node: ast.AST) -> set[int]:
    out = set()
    for n in ast.walk(node):
        body = getattr(n, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def _annotations(node: ast.AST) -> set[int]:
    """Nodes inside annotations and decorators: altering them changes no behaviour."""
    out: set[int] = set()
    for n in ast.walk(node):
        parts: list[ast.AST | None] = []
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts = [n.returns, *n.decorator_list]
        elif isinstance(n, ast.arg):
            parts = [n.annotation]
        elif isinstance(n, ast.AnnAssign):
            parts = [n.annotation]
        for p in parts:
            if p is not None:
                out |= {id(x) for x in ast.walk(p)}
    return out


def _seg(src: str, node: ast.AST) -> str:
    return ast.get_source_segment(src, node) or ast.unparse(node)


def _kind(node: ast.AST) -> str:
    """What kind of mutant a node gives ("" for none)."""
    if isinstance(node, ast.Compare) and type(node.ops[0]) in _SWAP_CMP:
        return "comparison"
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return "branch"
    if isinstance(node, ast.BoolOp):
        return "boolean"
    if isinstance(node, ast.BinOp) and type(node.op) in _SWAP_BIN:
        return "arithmetic"
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return "constant"
    return ""


def _mutant(src: str, path: str, node: ast.AST, kind: str) -> Mutant:
    """The mutant of one node of the given kind."""
    at: Any = node.test if kind == "branch" else node  # type: ignore[attr-defined]
    before = _seg(src, at)
    if isinstance(node, ast.Compare):
        ops = [_SWAP_CMP[type(node.ops[0])](), *node.ops[1:]]
        after = f"({ast.unparse(ast.Compare(node.left, ops, node.comparators))})"
    elif kind == "branch":
        after = f"(not ({before}))"
    elif isinstance(node, ast.BoolOp):
        after = f"({ast.unparse(ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values))})"
    elif isinstance(node, ast.BinOp):
        after = f"({ast.unparse(ast.BinOp(node.left, _SWAP_BIN[type(node.op)](), node.right))})"
    else:
        after = f"({node.value + 1})"  # type: ignore[attr-defined]
    return Mutant(path, at.lineno, kind, before, after, (at.lineno, at.col_offset), (at.end_lineno, at.end_col_offset))


_PARSED: dict[str, ast.Module] = {}


def _distance(node: ast.AST, line: int) -> int:
    """Lines from a citation to a node's code; code after the citation (the comment above it, the
    docstring before the body) first."""
    first: int = node.lineno  # type: ignore[attr-defined]
    last: int = node.end_lineno or first  # type: ignore[attr-defined]
    if first <= line <= last:
        return 0
    return 2 * (first - line) if first > line else 2 * (line - last) + 1


def cite_lines(src: str, sid: str) -> list[int]:
    """The lines of a source that cite the subsection ``sid``."""
    starts = [0] + [m.end() for m in re.finditer("\n", src)]
    out = []
    for m in re.finditer(r"§§?\s*", src):
        if any(c.id == sid for c in _chain(src, m.end())):
            out.append(bisect.bisect_right(starts, m.start()))
    return out


def mutants_of(src: str, path: str, qualname: str, per: int | None = None, near: Sequence[int] = ()) -> list[Mutant]:
    """The mutants of the function or class ``qualname`` of a Python source, in source order
    (``per``: only those :func:`pick` would take, built without building the rest; ``near``:
    the lines citing the subsection, whose nearest code is altered first)."""
    tree = _PARSED.get(src)
    if tree is None:
        tree = _PARSED[src] = ast.parse(src)
    target = _find(tree, qualname)
    if target is None:
        return []
    skip = _docstrings(target) | _annotations(target)
    found = [(n, k) for n in ast.walk(target) if id(n) not in skip and hasattr(n, "lineno") for k in [_kind(n)] if k]
    found.sort(key=lambda nk: (nk[0].lineno, nk[0].col_offset))  # type: ignore[attr-defined]
    if near:
        found.sort(key=lambda nk: min(_distance(nk[0], line) for line in near))
        found = found[:per] if per is not None else found
    elif per is not None:
        found = _pick_nodes(found, per)
    return [_mutant(src, path, n, k) for n, k in found]


def apply(src: str, m: Mutant) -> str:
    """The source with the mutant's text put in; a ValueError when it does not compile."""
    lines = src.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln.encode("utf-8")))
    raw = src.encode("utf-8")
    a = offs[m.start[0] - 1] + m.start[1]
    b = offs[m.end[0] - 1] + m.end[1]
    out = (raw[:a] + m.after.encode("utf-8") + raw[b:]).decode("utf-8")
    try:
        compile(out, m.path, "exec")
    except SyntaxError as e:
        raise ValueError(f"{m.label}: does not compile ({e.msg})") from e
    return out


_ORDER = ["comparison", "branch", "boolean", "arithmetic", "constant"]


def _pick_nodes(found: list[tuple[ast.AST, str]], per: int) -> list[tuple[ast.AST, str]]:
    """Up to ``per`` nodes, the first of each kind first (comparison, branch, ...), then the rest."""
    chosen: list[tuple[ast.AST, str]] = []
    for kind in _ORDER:
        chosen += [nk for nk in found if nk[1] == kind][:1]
    ids = {id(n) for n, _ in chosen}
    chosen += [nk for nk in found if id(nk[0]) not in ids]
    return chosen[:per]


def pick(mutants: list[Mutant], per: int) -> list[Mutant]:
    """Up to ``per`` mutants, one of each kind first (comparison, branch, constant, ...), then the rest."""
    chosen: list[Mutant] = []
    for kind in _ORDER:
        chosen += [m for m in mutants if m.kind == kind][:1]
    chosen += [m for m in mutants if m not in chosen][: max(0, per - len(chosen))]
    return chosen[:per]


# --------------------------------------------------------------------------- which tests


SCENARIO_TEST = "tests/hil/test_scenarios.py"


def pytest_args(tests: list[str], scenarios: list[str] | None = None) -> list[str]:
    """The pytest arguments that select the matrix's tests: ``path::name`` labels are node ids,
    ``path (module)`` labels the whole file, a HIL scenario its parameter of the test that runs
    every scenario (``test_scenario[stem]``).  Node ids, not a ``-k`` of the names: a ``-k`` cannot
    be combined with a whole module (the scenarios' file then ran every scenario, so one failing
    elsewhere "killed" every mutant) and matches longer names that contain a name."""
    whole = sorted({t.removesuffix(" (module)") for t in tests if t.endswith(" (module)")})
    nodes = {f"{SCENARIO_TEST}::test_scenario[{s}]" for s in scenarios or ()}
    nodes |= {t for t in tests if "::" in t and t.partition("::")[0] not in whole}
    # a bare test name (a reviewed note's) is passed as it is: pytest refuses it, the row "could
    # not be made" — never an empty selection, which would run every test of the tree
    nodes |= {t for t in tests if "::" not in t and not t.endswith(" (module)")}
    return whole + sorted(nodes)


# --------------------------------------------------------------------------- running


@dataclass
class Outcome:
    mutant: str
    result: str  # "killed", "survived", "timeout", "error"
    seconds: float
    detail: str = ""


class Trees:
    """Copies of the tree for the workers, each used by one mutant at a time."""

    def __init__(self, root: Path, n: int):
        self.tmp = tempfile.TemporaryDirectory(prefix="tablectl-mutate-")
        self.free: queue.Queue[Path] = queue.Queue()
        for i in range(n):
            dest = Path(self.tmp.name) / f"w{i}"
            shutil.copytree(root, dest, ignore=_IGNORE, symlinks=True)
            self.free.put(dest)

    def close(self) -> None:
        self.tmp.cleanup()


#: set on Ctrl-C (or any error of the main thread): the running pytest processes are killed
STOP = threading.Event()


def _run(tree: Path, args: list[str], timeout: float) -> tuple[str, str]:
    """pytest in ``tree`` on the selection; soak tests left out (minutes each: the soak tier's own)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    opts = ["-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-m", "not soak"]
    cmd = [sys.executable, "-m", "pytest", *opts, *args]
    if not any(".py" in a for a in args):
        return "error", "no test selected"  # pytest without a test file would run the whole tree
    if STOP.is_set():
        return "error", "stopped"
    proc = subprocess.Popen(
        cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    deadline = time.monotonic() + timeout
    try:
        out = _wait(proc, deadline)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    if out is None:
        return ("error", "stopped") if STOP.is_set() else ("timeout", f"no answer within {timeout:.0f} s")
    tail = out.strip().splitlines()[-1] if out.strip() else ""
    code = {0: "survived", 1: "killed"}.get(proc.returncode, "error")
    if proc.returncode == 5:
        tail = "no test selected: " + " ".join(args)
    return code, tail


def _wait(proc: subprocess.Popen[str], deadline: float) -> str | None:
    """pytest's output, or None when stopped or past the deadline."""
    while not STOP.is_set():
        try:
            out, _ = proc.communicate(timeout=min(1.0, max(0.0, deadline - time.monotonic())))
            return out
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                return None
    return None


def run_mutant(trees: Trees, m: Mutant, args: list[str], timeout: float) -> Outcome:
    tree = trees.free.get()
    path = tree / m.path
    orig = path.read_bytes()
    t0 = time.monotonic()
    try:
        path.write_text(apply(orig.decode("utf-8"), m), encoding="utf-8")
        result, detail = _run(tree, args, timeout)
    except ValueError as e:
        result, detail = "error", str(e)
    finally:
        path.write_bytes(orig)
        trees.free.put(tree)
    return Outcome(m.label, result, round(time.monotonic() - t0, 1), detail)


def baseline(trees: Trees, args: list[str], timeout: float) -> Outcome:
    tree = trees.free.get()
    t0 = time.monotonic()
    try:
        result, detail = _run(tree, args, timeout)
    finally:
        trees.free.put(tree)
    return Outcome("(unaltered)", "passed" if result == "survived" else result, round(time.monotonic() - t0, 1), detail)


# --------------------------------------------------------------------------- a row


@dataclass
class Plan:
    sid: str
    mutants: list[Mutant]
    args: list[str]
    why_not: str = ""


def plan_row(root: Path, sid: str, code: list[str], tests: list[str], scenarios: list[str], per: int) -> Plan:
    """The mutants of a row's named code and the pytest arguments of its named tests and scenarios."""
    per_ref: list[list[Mutant]] = []
    for ref in sorted(code, key=_specific):
        path, sep, name = ref.partition(": ")
        if sep and path.endswith(".py"):
            src = (root / path).read_text(encoding="utf-8")
            ms = mutants_of(src, path, name, per, cite_lines(src, sid))
            if ms:
                per_ref.append(ms)
    if not per_ref:
        return Plan(sid, [], [], "the named code has nothing to alter (a module, a paytable or a declaration)")
    return Plan(sid, _interleave(per_ref, per), pytest_args(_with_paths(root, tests), scenarios))


def _with_paths(root: Path, tests: list[str]) -> list[str]:
    """A bare test name (a reviewed note names its tests so) as ``path::name``, found under tests/
    (the first file defining it); a name no file defines stays bare, and pytest refuses it."""
    out = []
    for t in tests:
        if "::" not in t and not t.endswith(" (module)"):
            where = sorted(p for p in (root / "tests").rglob("test_*.py") if f"def {t}(" in p.read_text("utf-8"))
            t = f"{where[0].relative_to(root).as_posix()}::{t}" if where else t
        out.append(t)
    return out


def _specific(ref: str) -> tuple[int, str]:
    """The most specific code first: a function of the rules engine, then one of the games, the
    state machine and the drivers, then a class; the analysis (house edge) code last."""
    path, _, name = ref.partition(": ")
    kind = 0 if name.lstrip("_")[:1].islower() or "." in name else 2
    return (kind + (0 if path.startswith("controller/rules/") else 1) + (4 if "/analysis/" in path else 0), ref)


def _interleave(lists: list[list[Mutant]], per: int) -> list[Mutant]:
    """``per`` mutants taken in turn from each named function (so each is altered at least once
    when ``per`` allows), without repeating one a class and its method both yield."""
    out: list[Mutant] = []
    for i in range(max(len(x) for x in lists)):
        for ms in lists:
            if i < len(ms) and ms[i] not in out:
                out.append(ms[i])
    return out[:per]


def verdict(outcomes: list[Outcome]) -> str:
    if any(o.result == "survived" for o in outcomes):
        return "survived"
    if outcomes and all(o.result in ("killed", "timeout") for o in outcomes):
        return "killed"
    if any(o.result in ("killed", "timeout") for o in outcomes):
        return "killed"
    return "could not be made"


@dataclass(frozen=True)
class Effort:
    """How a mutation run runs: ``jobs`` test runs at once (each in a tree of its own), up to
    ``per`` mutants a row, ``timeout`` seconds a mutant's tests (past it: killed, a hang), and
    whether the rows' tests are first run unaltered (``check_baseline``: they must pass)."""

    jobs: int
    per: int
    timeout: float
    check_baseline: bool = True


def mutate_rows(
    root: Path,
    rows: list[tuple[str, list[str], list[str], list[str]]],
    results: dict[str, dict[str, Any]],
    effort: Effort,
) -> None:
    """Each row (subsection, code, tests, scenarios) mutated and its tests run as ``effort`` says;
    ``results`` (by subsection) filled in as each row is done, so an interrupted run keeps what it
    finished."""
    jobs, per, timeout = effort.jobs, effort.per, effort.timeout
    plans = [plan_row(root, sid, code, tests, scns, per) for sid, code, tests, scns in rows]
    for p in plans:
        if not p.mutants:
            results[p.sid] = {"result": "could not be made", "why": p.why_not, "mutants": []}
    # the rows whose tests are quick first (the rules engine's), those of the whole table after
    work = sorted((p for p in plans if p.mutants), key=lambda p: (sum(_cost(a) for a in p.args), p.sid))
    if not work:
        return
    trees = Trees(root, jobs)
    pool = cf.ThreadPoolExecutor(jobs)
    try:
        base = (
            baseline(trees, ["-n", str(jobs), *union_args([p.args for p in work])], timeout * 4)
            if effort.check_baseline
            else None
        )
        if base is not None and base.result != "passed":
            why = f"the named tests do not pass unaltered ({base.result}: {base.detail})"
            for p in work:
                results[p.sid] = {"result": "could not be made", "why": why, "mutants": []}
            return
        for fut in cf.as_completed([pool.submit(_row, trees, p, timeout, results) for p in work]):
            fut.result()
    finally:
        STOP.set()
        pool.shutdown(wait=True, cancel_futures=True)
        STOP.clear()
        trees.close()


def _cost(arg: str) -> int:
    """A rough weight of a test file: the table's and the rig's tests start a whole table."""
    return (
        3
        if arg.startswith(("tests/integration", "tests/hil", "tests/link", "tests/ops"))
        else 1
        if arg.endswith(".py")
        else 0
    )


def union_args(all_args: list[list[str]]) -> list[str]:
    """One pytest selection holding every row's: the baseline, run once before any mutant."""
    every = {a for args in all_args for a in args}
    whole = sorted(a for a in every if "::" not in a)
    return whole + sorted(a for a in every if "::" in a and a.partition("::")[0] not in whole)


def _row(trees: Trees, p: Plan, timeout: float, results: dict[str, Any]) -> None:
    """One row: its mutants, one after the other (rows run ``jobs`` at a time)."""
    outs = [run_mutant(trees, m, p.args, timeout) for m in p.mutants]
    results[p.sid] = {"result": verdict(outs), "why": "", "mutants": [asdict(o) for o in outs]}
    print(f"§ {p.sid}: {results[p.sid]['result']}", file=sys.stderr, flush=True)


def load(root: Path) -> dict[str, dict[str, Any]]:
    p = root / MUTATIONS
    if not p.is_file():
        return {}
    data: dict[str, dict[str, Any]] = json.loads(p.read_text(encoding="utf-8")).get("subsections", {})
    return data


def save(root: Path, results: dict[str, dict[str, Any]]) -> None:
    doc = {
        "generated_by": "python -m tools.compliance --mutate",
        "subsections": dict(sorted(results.items())),
    }
    (root / MUTATIONS).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def cell(res: dict[str, Any] | None) -> str:
    """The matrix's mutation column for one row."""
    if res is None:
        return ""
    outs = res.get("mutants", [])
    if res["result"] == "killed":
        return f"killed ({sum(o['result'] in ('killed', 'timeout') for o in outs)}/{len(outs)})"
    if res["result"] == "survived":
        alive = [o["mutant"] for o in outs if o["result"] == "survived"]
        return "SURVIVED: " + "; ".join(alive)
    return f"could not be made: {res.get('why', '')}"
