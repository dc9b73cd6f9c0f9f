"""The compliance matrix: docs/compliance.md is what ``python -m tools.compliance``
makes of the regulations' subsections and the § citations in the code and tests; every numbered
subsection of 621a, 659a, 670a, 686a, 687a and 688a has code, tests or a HIL scenario citing it,
or a reviewed entry in docs/compliance-notes.toml naming only what exists.

The regulations are outside the repository (../shared/regs): on a clean clone the vendored list
docs/compliance-subsections.json (with each source file's sha256) stands in for them, and the
one test that compares it with the text is skipped when the text is not found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import compliance as C
from tools import compliance_notes as N
from tools.compliance_cites import Cite, Evidence, cites_in, cites_in_test_name, scan
from tools.compliance_regs import Subsection, parse

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world():
    subs, doc = C.load_subsections(ROOT)
    ev = scan(ROOT)
    notes, errs = N.load(ROOT / C.NOTES, {s.id for s in subs}, ROOT, ev)
    return subs, doc, ev, notes, errs


def test_compliance_md_is_generated_from_the_code_and_tests(world):
    """Adding, removing or renaming a citing test (or code) without `python -m tools.compliance` fails."""
    subs, doc, ev, notes, _errs = world
    assert (ROOT / C.MATRIX).read_text(encoding="utf-8") == C.render(subs, doc, ev, notes), (
        "docs/compliance.md is out of date: run python -m tools.compliance"
    )


def test_every_subsection_is_implemented_tested_or_has_a_reviewed_note(world):
    subs, _doc, ev, notes, _errs = world
    assert len(subs) > 400
    missing = [r.sub.id for r in C.rows(subs, ev, notes) if r.status == "MISSING"]
    assert not missing, f"no code, test, scenario or note for: {missing}"


def test_notes_name_only_what_exists(world):
    """A note citing a test, scenario, file or function that no longer exists fails here."""
    *_rest, errs = world
    assert errs == []


def test_no_citation_names_a_subsection_the_regulations_lack(world):
    subs, _doc, ev, _notes, _errs = world
    assert C.unknown_citations(subs, ev) == []


def test_vendored_subsections_are_the_regulations_text():
    regs = C.find_regs(ROOT)
    if regs is None:
        pytest.skip("../shared/regs not found (a clean clone): docs/compliance-subsections.json stands in")
    _subs, doc = C.load_subsections(ROOT)
    assert C.stale_sources(regs, doc) == [], "the regulations changed: run python -m tools.compliance"
    assert (ROOT / C.SUBSECTIONS).read_text(encoding="utf-8") == C.subsections_json(regs)


def test_the_regs_are_found_from_a_worktree_or_the_environment(tmp_path, monkeypatch):
    (tmp_path / "shared" / "regs").mkdir(parents=True)
    repo = tmp_path / "wt" / "i23"
    repo.mkdir(parents=True)
    monkeypatch.delenv(C.REGS_ENV, raising=False)
    assert C.find_regs(repo) == tmp_path / "shared" / "regs"
    monkeypatch.setenv(C.REGS_ENV, str(tmp_path / "nowhere"))
    assert C.find_regs(repo) is None


# --------------------------------------------------------------------------- the checks can fail


def test_a_removed_test_makes_the_matrix_out_of_date(world):
    subs, doc, ev, notes, _errs = world
    label = sorted(ev.tests["687a.11(e)"])[0]
    fewer = Evidence(ev.code, {k: v - {label} for k, v in ev.tests.items()}, ev.scenarios, ev.test_names)
    assert C.render(subs, doc, fewer, notes) != C.render(subs, doc, ev, notes)


def test_a_subsection_without_evidence_or_note_is_missing():
    sub = Subsection("687a", 99, "a", "Nothing", "text")
    (row,) = C.rows([sub], Evidence(), {})
    assert row.status == "MISSING"
    (row,) = C.rows([sub], Evidence(), {"687a.99(a)": N.Note("not-applicable", "physical")})
    assert row.status == "not applicable"


def test_notes_naming_missing_things_are_errors(tmp_path, world):
    subs, _doc, ev, _notes, _errs = world
    ids = {s.id for s in subs}
    bad = tmp_path / "notes.toml"
    bad.write_text(
        """
[[note]]
subsections = ["687a.8(a)", "687a.99(a)", "687a.8(b)-(a)"]
status = "implemented"
why = "x"
code = ["controller/nowhere.py: f", "controller/games/djwild.py: no_such_function"]
tests = ["test_that_does_not_exist"]
scenarios = ["dj-99"]
same_as = "687a.77(z)"

[[note]]
subsections = ["687a.8(a)"]
status = "maybe"
why = "y"

[[note]]
subsections = ["687a.8(a)"]
status = "not-applicable"
why = "again"
""",
        encoding="utf-8",
    )
    _notes, errs = N.load(bad, ids, ROOT, ev)
    text = "\n".join(errs)
    for want in (
        "controller/nowhere.py does not exist",
        "controller/games/djwild.py defines no no_such_function",
        "test 'test_that_does_not_exist' does not exist",
        "scenario 'dj-99' is not in hil/scenarios/",
        "same_as '687a.77(z)' is not a subsection",
        "§ 687a.99(a) is not a subsection",
        "the run goes backwards",
        "status must be one of",
        "§ 687a.8(a) has another note already",
    ):
        assert want in text, want


# --------------------------------------------------------------------------- citations


@pytest.mark.parametrize(
    "text,ids",
    [
        ("§ 687a.10(d),(e)", ["687a.10(d)", "687a.10(e)"]),
        ("§ 621a.9(o)-(q)", ["621a.9(o)", "621a.9(p)", "621a.9(q)"]),
        (
            "§ 688a.11(e)-(i), § 688a.12",
            ["688a.11(e)", "688a.11(f)", "688a.11(g)", "688a.11(h)", "688a.11(i)", "688a.12"],
        ),
        ("§§ 621a.8, 621a.9", ["621a.8", "621a.9"]),
        ("§ 670a.11(h)(3)(i)(C)", ["670a.11(h)"]),
        ("§ 687a.11(f)(1)–(3)", ["687a.11(f)"]),
        ("§ 670a.11(h)(3)(ii),(iii)", ["670a.11(h)"]),
        ("§ 621a.3(d),(g),(i)", ["621a.3(d)", "621a.3(g)", "621a.3(i)"]),
        ("§ 687a.12(c) and (d)", ["687a.12(c)", "687a.12(d)"]),
        ("§ 601a.2 (relating to Rules Submissions)", []),
    ],
)
def test_citations_are_read_to_the_subsection(text, ids):
    assert sorted({c.id for c in cites_in(text)}) == sorted(ids)


def test_a_test_named_after_its_section_cites_it():
    assert [c.id for c in cites_in_test_name("test_687a_12_d_e_short_names")] == ["687a.12(d)", "687a.12(e)"]
    assert [c.id for c in cites_in_test_name("test_vigorish_examples_621a_11_a")] == ["621a.11(a)"]
    assert list(cites_in_test_name("test_687a_11_settlement_order")) == [Cite("687a", 11, "")]


# --------------------------------------------------------------------------- reading the regulations


def test_subsections_read_from_both_kinds_of_text(tmp_path):
    """The Code's Markdown and a rulemaking's plain text: a chapter's preamble is skipped, a
    wrapped "(d)." is no subsection, "[(d)] (e)" is (e), "* * * * *" skips unprinted subsections,
    and (i) is a subsection before (1) or (j), a subparagraph before (ii) or (A)."""
    (tmp_path / "a.txt").write_text(
        """Preamble: § 687a.3. Cards; number of decks. is cited here.
CHAPTER 687a. DJ WILD STUD POKER
§ 687a.3. Cards; number
of decks.
(a) One deck of cards, see subsection
(d).
(b) Two decks:
(1) Different backs.
(i) Like this.
(ii) And this.
* * * * *
[(d)] (e) Renumbered.
(f) Then:
(1) A list.
(g) G.
(h) H.
(i) Starting position:
(1) A shaker.
(j) J.
§ 687a.4. Opening.
The text of a section without subsections.
""",
        encoding="utf-8",
    )
    subs, warnings = parse([tmp_path / "a.txt"])
    got = [(s.id, s.printed) for s in subs if s.section == 3]
    assert got == [
        ("687a.3(a)", True),
        ("687a.3(b)", True),
        ("687a.3(c)", False),
        ("687a.3(d)", False),
        ("687a.3(e)", True),
        ("687a.3(f)", True),
        ("687a.3(g)", True),
        ("687a.3(h)", True),
        ("687a.3(i)", True),
        ("687a.3(j)", True),
    ]
    assert subs[0].title == "Cards; number of decks" and subs[0].text == "One deck of cards, see subsection (d)."
    assert [s.id for s in subs if s.section == 4] == ["687a.4"]
    assert "chapter 687a: sections 687a.1, 687a.2 not in the regs' text" in warnings


def test_the_vendored_list_has_every_chapter():
    doc = json.loads((ROOT / C.SUBSECTIONS).read_text(encoding="utf-8"))
    chapters = {d["id"].split(".")[0] for d in doc["subsections"]}
    assert chapters == {"621a", "659a", "670a", "686a", "687a", "688a"}
    assert all(len(s["sha256"]) == 64 for s in doc["sources"])
    ids = [d["id"] for d in doc["subsections"]]
    assert "687a.11(e)" in ids and "621a.11(a)" in ids and "687a.7(e)" in ids and "687a.1" in ids
