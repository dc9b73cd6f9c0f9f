"""Comments and docstrings say why, not which ticket: no reference to an issue number in the
code (tools/ticketrefs.py lists them), since a reader of the repository cannot follow one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.ticketrefs import ROOT, main, references


@pytest.mark.slow  # reads every file of the repository's code (about 3 s of CPU)
def test_no_comment_or_docstring_names_an_issue_number():
    refs = references()
    listed = "\n".join(f"{f.relative_to(ROOT)}:{line}: {text}" for f, line, text in refs[:40])
    assert not refs, f"{len(refs)} references to issue numbers in comments and docstrings:\n{listed}"


def test_ticketrefs_finds_tickets_and_leaves_readings_alone(tmp_path: Path):
    d = tmp_path / "controller"
    d.mkdir()
    (d / "a.py").write_text(
        '"""A module (issue 27): why."""\n'
        "X = 1  # issues 24 and 26: kept\n"
        "Y = 2  # a reading: 670a.md #20, 621a #35; colour '#333333'; seat #3\n"
        "def f():\n"
        '    """See #41 for the story."""\n'
        "    return '(issue 9) in a string is data, not a comment'\n"
        "#: gh-12\n"
        "Z = 3\n"
    )
    (d / "b.sh").write_text("echo 'issue 5'  # (issue 6)\n# plain comment\n")
    got = [(f.name, line) for f, line, _t in references(tmp_path, ("controller",))]
    assert got == [("a.py", 1), ("a.py", 2), ("a.py", 5), ("a.py", 7), ("b.sh", 1)]


@pytest.mark.slow
def test_ticketrefs_fix_rewrites_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    before = {p: p.read_bytes() for p in (ROOT / "controller").rglob("*.py")}
    rc = main(["--fix"])
    out, err = capsys.readouterr()
    assert rc in (0, 1) and "rewrites nothing" in err
    assert {p: p.read_bytes() for p in (ROOT / "controller").rglob("*.py")} == before
    assert rc == (1 if out.strip() else 0)
