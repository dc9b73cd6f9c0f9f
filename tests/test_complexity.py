"""tools/complexity.py: radon's figures over the shipped code, and its ``--check`` (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import complexity


def _branchy(name: str, branches: int) -> str:
    """A function whose cyclomatic complexity is ``branches + 1``."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(branches))
    return f"def {name}(x):\n{body}    return -1\n"


def _tree(tmp_path: Path, source: str) -> list[complexity.Block]:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(source)
    return complexity.measure(tmp_path, ("pkg",))


def test_counts_as_radon_does(tmp_path: Path) -> None:
    source = (
        _branchy("f", 4) + "class C:\n    def a(self):\n        return 1\n    def b(self, x):\n        return x or 2\n"
    )
    blocks = {b.name: b for b in _tree(tmp_path, source)}
    assert {n: (b.kind, b.cc) for n, b in blocks.items()} == {
        "f": ("function", 5),
        "C": ("class", 3),  # radon: a class scores about the mean of its methods, plus one
        "C.a": ("method", 1),
        "C.b": ("method", 2),
    }
    assert complexity.average(list(blocks.values())) == (5 + 3 + 1 + 2) / 4


def test_check_names_a_function_over_20(tmp_path: Path) -> None:
    blocks = _tree(tmp_path, _branchy("big", 20) + _branchy("ok", 19))
    found = complexity.problems(blocks, max_average=100)
    assert found == ["pkg/m.py:1 big: cc 21 > 20"]


def test_check_fails_on_the_average(tmp_path: Path) -> None:
    blocks = _tree(tmp_path, _branchy("a", 3) + _branchy("b", 2))  # cc 4 and 3
    assert complexity.problems(blocks, max_average=3.5) == []
    assert complexity.problems(blocks, max_average=3.4) == ["average cc 3.50 > 3.4"]


def test_report_lists_grades_and_the_worst(tmp_path: Path) -> None:
    blocks = _tree(tmp_path, _branchy("big", 25) + _branchy("small", 1))
    lines = complexity.report(blocks, worst=1, dirs=("pkg",))
    assert lines[0].startswith("scope: pkg/ (2 blocks")
    assert "    A       1   50.0 %" in lines
    assert "    D       1   50.0 %" in lines
    assert lines[-1] == "   26 D  pkg/m.py:1 big"


#: functions over cc 20 left to split (none now: issue 27 brought the last ones under 15).  None may be added.
PENDING_OVER_20: set[tuple[str, str]] = set()
#: radon's average when this test was written (3.70 before issue 27's work); lowered as the work lands,
#: down to tools.complexity.MAX_AVERAGE (3.2): reached (3.199), so holding this ground is ``--check``'s limit
AVERAGE_NOW = 3.20


def test_the_repository_holds_its_ground() -> None:
    """No function of controller/ drivers/ hil/ bench/ tools/ over cc 20 but those pending, and the
    average no higher than it was (a ratchet towards ``--check``'s 3.2)."""
    blocks = complexity.measure()
    over = {(b.path, b.name) for b in blocks if b.cc > complexity.MAX_CC}
    assert over <= PENDING_OVER_20, f"over cc {complexity.MAX_CC}: {sorted(over - PENDING_OVER_20)}"
    assert complexity.average(blocks) <= AVERAGE_NOW


def test_check_prints_and_exits_by_what_it_finds(capsys: pytest.CaptureFixture[str]) -> None:
    code = complexity.main(["--check", "--worst", "3"])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[1].startswith("average cc:") and lines[-4] == "worst 3 functions:"
    found = complexity.problems(complexity.measure())
    assert code == (1 if found else 0)
    assert err.splitlines() == [f"complexity: {p}" for p in found]
