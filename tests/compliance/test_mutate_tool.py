"""tools/compliance_mutate.py: the mutants it makes, the tests it selects, and that it never
leaves the tree altered."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from tools import compliance_mutate as M

SRC = textwrap.dedent(
    '''
    LIMIT = 6


    def pays(total: int, wager: int) -> int:
        """§ 686a.8(b): the Bonus pays on the totals named."""
        if total >= 24 and wager > 0:
            return wager * 2
        return -wager


    class Seat:
        """§ 687a.2(a)."""

        def ok(self, n: int) -> bool:
            return 1 <= n <= LIMIT
    '''
)


def test_mutants_of_a_function_each_kind_and_they_compile():
    ms = M.mutants_of(SRC, "m.py", "pays")
    kinds = {m.kind for m in ms}
    assert {"comparison", "branch", "boolean", "arithmetic"} <= kinds
    for m in ms:
        out = M.apply(SRC, m)
        assert out != SRC
        compile(out, "m.py", "exec")
    cmp = next(m for m in ms if m.kind == "comparison")
    assert cmp.before == "total >= 24" and cmp.after == "(total < 24)"
    assert "(total < 24)" in M.apply(SRC, cmp)


def test_docstrings_and_other_functions_are_not_altered():
    ms = M.mutants_of(SRC, "m.py", "Seat.ok")
    assert ms and all(m.line == SRC.splitlines().index("        return 1 <= n <= LIMIT") + 1 for m in ms)
    assert M.mutants_of(SRC, "m.py", "nothing") == []


def test_the_code_nearest_the_citation_is_altered_first():
    near = M.cite_lines(SRC, "686a.8(b)")
    assert near == [SRC.splitlines().index('    """§ 686a.8(b): the Bonus pays on the totals named."""') + 1]
    (m,) = M.mutants_of(SRC, "m.py", "pays", per=1, near=near)
    assert m.line == near[0] + 1  # the `if` right below the docstring
    assert M.cite_lines(SRC, "687a.2(a)") and not M.cite_lines(SRC, "687a.2(b)")


def test_pytest_args_select_the_named_tests_or_the_whole_module():
    assert M.pytest_args(["tests/a.py::test_x", "tests/a.py::test_y", "tests/b.py::test_z"]) == [
        "tests/a.py::test_x",
        "tests/a.py::test_y",
        "tests/b.py::test_z",
    ]
    assert M.pytest_args(["tests/a.py (module)"]) == ["tests/a.py"]
    assert M.pytest_args([], ["ou-01"]) == ["tests/hil/test_scenarios.py::test_scenario[ou-01]"]
    # a whole module beside named tests and scenarios: the scenarios stay the named ones
    assert M.pytest_args(["tests/a.py (module)", "tests/a.py::test_x", "tests/b.py::test_z"], ["ou-01"]) == [
        "tests/a.py",
        "tests/b.py::test_z",
        "tests/hil/test_scenarios.py::test_scenario[ou-01]",
    ]


def test_union_args_keeps_each_rows_selection():
    rows = [
        ["tests/a.py", "tests/hil/test_scenarios.py::test_scenario[ou-01]"],
        ["tests/a.py::test_x", "tests/b.py::test_z"],
    ]
    assert M.union_args(rows) == [
        "tests/a.py",
        "tests/b.py::test_z",
        "tests/hil/test_scenarios.py::test_scenario[ou-01]",
    ]


def test_verdict_and_cell():
    out = [M.Outcome("a", "killed", 1.0), M.Outcome("b", "timeout", 9.0)]
    assert M.verdict(out) == "killed"
    assert M.verdict([*out, M.Outcome("c", "survived", 1.0)]) == "survived"
    assert M.verdict([M.Outcome("d", "error", 1.0)]) == "could not be made"
    assert M.cell({"result": "killed", "mutants": [{"result": "killed"}]}) == "killed (1/1)"
    assert M.cell({"result": "survived", "mutants": [{"mutant": "x.py:3 a -> b", "result": "survived"}]}) == (
        "SURVIVED: x.py:3 a -> b"
    )


@pytest.mark.slow
def test_a_mutant_runs_in_a_copy_and_the_copy_is_restored(tmp_path: Path):
    """The worktree is never written; the copy's file is put back after each mutant, even one
    that does not compile; the temporary tree is removed."""
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "m.py").write_text(SRC)
    (root / "test_m.py").write_text(
        "from pkg.m import pays\n\ndef test_pays():\n    assert pays(24, 5) == 10 and pays(23, 5) == -5\n"
    )
    ms = M.mutants_of(SRC, "pkg/m.py", "pays")
    trees = M.Trees(root, 1)
    copy = Path(trees.tmp.name)
    try:
        killed = M.run_mutant(trees, next(m for m in ms if m.kind == "comparison"), ["test_m.py"], 120)
        assert killed.result == "killed", killed
        bad = M.Mutant("pkg/m.py", 7, "branch", "i", "(", (7, 4), (7, 5))  # "if" -> "(f": a syntax error
        broken = M.run_mutant(trees, bad, ["test_m.py"], 120)
        assert broken.result == "error" and "does not compile" in broken.detail
        assert (copy / "w0" / "pkg" / "m.py").read_text() == SRC
    finally:
        trees.close()
    assert (root / "pkg" / "m.py").read_text() == SRC
    assert not copy.exists()


def test_a_bare_test_name_is_found_under_tests(tmp_path: Path):
    (tmp_path / "tests" / "x").mkdir(parents=True)
    (tmp_path / "tests" / "x" / "test_a.py").write_text("def test_named_in_a_note(tmp_path):\n    pass\n")
    assert M._with_paths(tmp_path, ["test_named_in_a_note", "test_nowhere", "tests/b.py (module)"]) == [
        "tests/x/test_a.py::test_named_in_a_note",
        "test_nowhere",
        "tests/b.py (module)",
    ]


def test_only_takes_a_rows_id_as_that_row_and_anything_else_as_a_prefix():
    from types import SimpleNamespace

    import tools.compliance as C

    rs: Any = [SimpleNamespace(sub=SimpleNamespace(id=i)) for i in ("688a.1", "688a.10(b)", "687a.11(b)", "687a.11(e)")]
    assert [r.sub.id for r in C._selected(rs, ["688a.1"])] == ["688a.1"]
    assert [r.sub.id for r in C._selected(rs, ["687a.11"])] == ["687a.11(b)", "687a.11(e)"]
    assert C._selected(rs, []) == rs
