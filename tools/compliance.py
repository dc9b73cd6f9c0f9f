"""``python -m tools.compliance``: docs/compliance.md, the compliance matrix a gaming lab asks for.

For every numbered subsection of 58 Pa. Code 621a, 659a, 670a, 686a, 687a and 688a: the code that
implements it and the tests and HIL scenarios that check it (their § citations,
tools/compliance_cites.py), or the reviewed entry of docs/compliance-notes.toml that says why none
is needed ("not applicable: why", "the casino's Rules Submission") or where the evidence is when
the code does not cite the section.

The subsections come from the regulations' text (tools/compliance_regs.py).  The text lives
outside the repository (``../shared/regs``; ``TABLECTL_REGS`` names another place), so the list is
kept in docs/compliance-subsections.json with each source file's sha256: the command refreshes it
when the text is found and uses it as it is otherwise (a clean clone).

    python -m tools.compliance           # rewrite docs/compliance-subsections.json (if the regs are
                                         # found) and docs/compliance.md
    python -m tools.compliance --check   # exit 1 and say what is out of date or missing
    python -m tools.compliance --mutate  # alter each implemented-and-tested row's code, run its tests
                                         # (tools/compliance_mutate.py), record docs/compliance-mutations.json

tests/controller/test_compliance.py runs the same checks.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools import compliance_mutate as M
from tools import compliance_notes as N
from tools.compliance_cites import Evidence, scan
from tools.compliance_regs import CHAPTERS, Subsection, parse, sha256

ROOT = Path(__file__).resolve().parents[1]
SUBSECTIONS = Path("docs/compliance-subsections.json")
NOTES = Path("docs/compliance-notes.toml")
MATRIX = Path("docs/compliance.md")
REGS_ENV = "TABLECTL_REGS"

GAMES = {
    "621a": "Pai Gow (tiles)",
    "659a": "Fortune Asia Poker",
    "670a": "Six-Card Fortune Pai Gow Poker",
    "686a": "Over/Under",
    "687a": "DJ Wild Stud Poker",
    "688a": "Face Up Pai Gow Poker",
}


def find_regs(root: Path = ROOT) -> Path | None:
    """The regulations' directory: ``$TABLECTL_REGS``, else ``shared/regs`` beside the repository
    or beside one of its parent directories (a worktree under /work/wt/ finds /work/shared/regs)."""
    env = os.environ.get(REGS_ENV)
    if env:
        return Path(env) if Path(env).is_dir() else None
    for d in [root, *root.parents]:
        cand = d.parent / "shared" / "regs"
        if cand.is_dir():
            return cand
    return None


# --------------------------------------------------------------------------- the subsections


def subsections_json(regs: Path) -> str:
    """The vendored list, from the regulations' text: sources with sha256, then every subsection."""
    files = sorted(p for p in regs.iterdir() if p.is_file())
    subs, warnings = parse(files)
    doc = {
        "generated_by": "python -m tools.compliance",
        "sources": [{"file": p.name, "sha256": sha256(p)} for p in files],
        "warnings": warnings,
        "subsections": [
            {"id": s.id, "title": s.title, "text": s.text, "printed": s.printed, "source": s.source} for s in subs
        ],
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def load_subsections(root: Path = ROOT) -> tuple[list[Subsection], dict[str, Any]]:
    doc = json.loads((root / SUBSECTIONS).read_text(encoding="utf-8"))
    out = []
    for d in doc["subsections"]:
        head, _, letter = d["id"].partition("(")
        chapter, _, section = head.partition(".")
        out.append(
            Subsection(chapter, int(section), letter.rstrip(")"), d["title"], d["text"], d["printed"], d["source"])
        )
    return out, doc


def stale_sources(regs: Path, doc: dict[str, Any]) -> list[str]:
    """The regulations' files whose sha256 is not the one the vendored list was made from."""
    have = {s["file"]: s["sha256"] for s in doc["sources"]}
    now = {p.name: sha256(p) for p in regs.iterdir() if p.is_file()}
    return sorted(n for n in set(have) | set(now) if have.get(n) != now.get(n))


# --------------------------------------------------------------------------- the matrix


#: a subsection's status by its evidence: (code found, tests or scenarios found)
_EVIDENCE_STATUS = {
    (True, True): "implemented, tested",
    (True, False): "implemented, not tested",
    (False, True): "tested",
    (False, False): "MISSING",
}
#: a subsection's status as its note says, when the note settles it
_NOTED_STATUS = {"not-applicable": "not applicable", "rules-submission": "Rules Submission"}


@dataclass
class Row:
    sub: Subsection
    code: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    scenarios: list[str] = field(default_factory=list)
    note: N.Note | None = None

    @property
    def status(self) -> str:
        label = _NOTED_STATUS.get(self.note.status) if self.note is not None else None
        if label is not None:
            return label + (" (implemented)" if self.code else "") + (" (tested)" if self.tested else "")
        return _EVIDENCE_STATUS[(bool(self.code), self.tested)]

    @property
    def tested(self) -> bool:
        return bool(self.tests or self.scenarios)


def rows(subs: list[Subsection], ev: Evidence, notes: dict[str, N.Note]) -> list[Row]:
    out = []
    for s in subs:
        note = notes.get(s.id)
        r = Row(s, sorted(ev.code.get(s.id, ())), sorted(ev.tests.get(s.id, ())), sorted(ev.scenarios.get(s.id, ())))
        if note is not None:
            _add_note(r, note, ev)
        out.append(r)
    _add_same_as_notes(out)
    return out


def _add_same_as_notes(rs: list[Row]) -> None:
    """A note's ``same_as`` shares that subsection's evidence, its own note's included (a
    subsection whose tests are named by its note, not cited, shares them too)."""
    by = {r.sub.id: r for r in rs}
    for r in rs:
        other = by.get(r.note.same_as) if r.note is not None and r.note.same_as else None
        if other is not None and other.note is not None:
            r.code = sorted(set(r.code) | set(other.note.code))
            r.tests = sorted(set(r.tests) | set(other.note.tests))
            r.scenarios = sorted(set(r.scenarios) | set(other.note.scenarios))


def _add_note(r: Row, note: N.Note, ev: Evidence) -> None:
    """The note's own evidence added to the row's, and that of the subsection it is the same as."""
    r.note = note
    same = [note.same_as] if note.same_as else []
    r.code = _merged(r.code, note.code, same, ev.code)
    r.tests = _merged(r.tests, note.tests, same, ev.tests)
    r.scenarios = _merged(r.scenarios, note.scenarios, same, ev.scenarios)


def _merged(own: list[str], noted: Iterable[str], same: list[str], found: Mapping[str, Iterable[str]]) -> list[str]:
    return sorted(set(own) | set(noted) | {c for x in same for c in found.get(x, ())})


def _cell(items: list[str]) -> str:
    """Labels grouped by file: ``a.py: f, g; b.py: h``."""
    by: dict[str, list[str]] = {}
    for it in items:
        path, sep, name = it.partition("::") if "::" in it else it.partition(": ")
        by.setdefault(path, []).append(name if sep else "")
    parts = [f"`{p}`" + (": " + ", ".join(n for n in names if n) if any(names) else "") for p, names in by.items()]
    return "; ".join(parts).replace("|", "\\|")


#: the summary's columns after "subsections": which rows each counts
SUMMARY_COUNTS: dict[str, Callable[[Row], bool]] = {
    "implemented": lambda r: bool(r.code),
    "tested": lambda r: bool(r.tested),
    "implemented and tested": lambda r: bool(r.code and r.tested),
    "not applicable": lambda r: bool(r.note and r.note.status == "not-applicable"),
    "Rules Submission": lambda r: bool(r.note and r.note.status == "rules-submission"),
    "missing": lambda r: r.status == "MISSING",
}


def summary(rs: list[Row]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for ch in ("all", *CHAPTERS):
        mine = [r for r in rs if ch in ("all", r.sub.chapter)]
        out[ch] = {"subsections": len(mine)}
        out[ch].update({k: sum(1 for r in mine if counts(r)) for k, counts in SUMMARY_COUNTS.items()})
    return out


def render(
    subs: list[Subsection],
    doc: dict[str, Any],
    ev: Evidence,
    notes: dict[str, N.Note],
    mutations: dict[str, dict[str, Any]] | None = None,
) -> str:
    rs = rows(subs, ev, notes)
    muts = M.load(ROOT) if mutations is None else mutations
    lines = [
        "# Compliance matrix: 58 Pa. Code 621a, 659a, 670a, 686a, 687a, 688a",
        "",
        "Generated by `python -m tools.compliance`; do not edit (tests/controller/test_compliance.py fails when it",
        "is out of date).  Every numbered subsection of the six chapters (from the regulations' text in",
        "`../shared/regs`, listed with each file's sha256 in docs/compliance-subsections.json) with the code that",
        "implements it and the tests and HIL scenarios that check it — where they cite it (`§ 687a.11(e)`, or a",
        "test named after it, `test_687a_11_e_...`) — or the reviewed entry of docs/compliance-notes.toml: not",
        "applicable to a table controller and why, left to the casino's Rules Submission (§ 601a.2), or where the",
        "evidence is when the code does not cite the subsection.  A citation of a whole section (`§ 687a.12`)",
        "counts for a section without subsections only.",
        "",
        "The mutation column (`python -m tools.compliance --mutate`, tools/compliance_mutate.py): for a row",
        "implemented and tested, the code it names altered as a broken rule would read it (a comparison turned",
        "round, a constant changed, a branch negated) and only its named tests run: killed (they failed), SURVIVED",
        "(they passed: a missing test or a wrong mapping), or could not be made and why.",
        "",
        "Sources: " + ", ".join(f"`{s['file']}` (sha256 {s['sha256'][:12]}…)" for s in doc["sources"]) + ".",
        "",
    ]
    lines += [f"Note on the text: {w}." for w in doc.get("warnings", [])]
    lines += ["", "## Summary", ""] + _summary_table(rs) + [""] + _mutation_summary(rs, muts)
    head = "| § | text | status | code | tests | HIL | mutation | note |"
    for ch in CHAPTERS:
        lines += ["", f"## {ch} {GAMES[ch]}", "", head, "|---" * 8 + "|"]
        lines += [_row_line(r, muts) for r in rs if r.sub.chapter == ch]
    return "\n".join(lines) + "\n"


def _summary_table(rs: list[Row]) -> list[str]:
    """The counts of each status, per chapter and for all of them."""
    summ = summary(rs)
    keys = list(summ["all"])
    lines = ["| chapter | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for ch, counts in summ.items():
        name = "all" if ch == "all" else f"{ch} {GAMES[ch]}"
        lines.append(f"| {name} | " + " | ".join(str(counts[k]) for k in keys) + " |")
    return lines


def _mutation_summary(rs: list[Row], muts: dict[str, dict[str, Any]]) -> list[str]:
    """How many implemented-and-tested rows' mutants were killed, survived, could not be made."""
    mine = [muts.get(r.sub.id, {}).get("result", "not run") for r in rs if r.code and r.tested]
    kinds = ["killed", "survived", "could not be made", "not run"]
    return [
        "Mutation of the implemented and tested rows: "
        + ", ".join(f"{k} {sum(1 for x in mine if x == k)}" for k in kinds)
        + f" (of {len(mine)})."
    ]


def _row_line(r: Row, muts: dict[str, dict[str, Any]]) -> str:
    """One subsection's row of its chapter's table."""
    text = r.sub.text if r.sub.printed else "(not printed in the rulemaking: unchanged)"
    note = r.note.why if r.note else ""
    mut = M.cell(muts.get(r.sub.id)) if r.code and r.tested else ""
    if r.code and r.tested and not mut:
        mut = "not run"
    cells = [f"{r.sub.id}", text, r.status, _cell(r.code), _cell(r.tests), ", ".join(r.scenarios), mut, note]
    return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


# --------------------------------------------------------------------------- checks


def problems(root: Path = ROOT) -> list[str]:
    """Everything that is wrong: a subsection with neither evidence nor a note, a note that names
    what does not exist, a citation of a subsection the text does not have, stale generated files."""
    subs, doc = load_subsections(root)
    ev = scan(root)
    notes, errs = N.load(root / NOTES, {s.id for s in subs}, root, ev)
    out = list(errs)
    rs = rows(subs, ev, notes)
    out += [
        f"§ {r.sub.id}: no code, test or scenario cites it and docs/compliance-notes.toml has no entry"
        for r in rs
        if r.status == "MISSING"
    ]
    out += unknown_citations(subs, ev)
    muts = M.load(root)
    regs = find_regs(root)
    if regs is not None and stale_sources(regs, doc):
        out.append(
            f"the regulations in {regs} changed ({', '.join(stale_sources(regs, doc))}): run python -m tools.compliance"
        )
    if (root / MATRIX).read_text(encoding="utf-8") != render(subs, doc, ev, notes, muts):
        out.append(f"{MATRIX} is out of date: run python -m tools.compliance")
    return out


def survivors(root: Path = ROOT) -> list[str]:
    """The implemented-and-tested rows whose recorded mutant survived its tests (a missing test or
    a wrong mapping); --check prints them, the fast tests do not fail on them (the mutation run is
    on demand, its record may lag the code)."""
    subs, _doc = load_subsections(root)
    ev = scan(root)
    notes, _errs = N.load(root / NOTES, {s.id for s in subs}, root, ev)
    muts = M.load(root)
    return [
        f"§ {r.sub.id}: a mutation of its code survived its tests ({M.cell(muts[r.sub.id])})"
        for r in rows(subs, ev, notes)
        if r.code and r.tested and muts.get(r.sub.id, {}).get("result") == "survived"
    ]


def unknown_citations(subs: list[Subsection], ev: Evidence) -> list[str]:
    """§ citations in the text of code and tests that name no subsection or section of the text
    (a typo like § 687a.11(z)); a test name like test_687a_200_rounds is not a citation."""
    ids = {s.id for s in subs} | {f"{s.chapter}.{s.section}" for s in subs}
    out = []
    for kind in ("code", "tests", "scenarios"):
        for cid, labels in sorted(getattr(ev, kind).items()):
            if cid not in ids and any(lb not in ev.name_cites.get(cid, set()) for lb in labels):
                out.append(f"§ {cid} is cited ({', '.join(sorted(labels))}) but is not in the regulations' text")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.compliance", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is out of date")
    ap.add_argument("--mutate", action="store_true", help="mutation evidence for the implemented-and-tested rows")
    ap.add_argument(
        "--only",
        nargs="*",
        default=[],
        help="with --mutate: these subsections (a row's id is that row alone; else an id prefix) only",
    )
    ap.add_argument("--jobs", type=int, default=2, help="with --mutate: mutants run at once (default 2)")
    ap.add_argument("--per", type=int, default=3, help="with --mutate: mutants per subsection (default 3)")
    ap.add_argument("--timeout", type=float, default=300, help="with --mutate: seconds per mutant (default 300)")
    ap.add_argument(
        "--no-baseline",
        action="store_true",
        help="with --mutate: skip the run of the named tests unaltered first (when they are known to pass)",
    )
    args = ap.parse_args(argv)
    regs = find_regs()
    if args.mutate:
        return mutate(args.only, args.jobs, args.per, args.timeout, not args.no_baseline)
    if args.check:
        errs = problems()
        for e in errs:
            print(e, file=sys.stderr)
        for w in survivors():
            print("warning: " + w, file=sys.stderr)
        return 1 if errs else 0
    if regs is not None:
        (ROOT / SUBSECTIONS).write_text(subsections_json(regs), encoding="utf-8")
    else:
        print(f"regulations not found (../shared/regs or ${REGS_ENV}): kept {SUBSECTIONS}", file=sys.stderr)
    subs, doc = load_subsections()
    ev = scan(ROOT)
    notes, errs = N.load(ROOT / NOTES, {s.id for s in subs}, ROOT, ev)
    (ROOT / MATRIX).write_text(render(subs, doc, ev, notes), encoding="utf-8")
    for e in errs + problems():
        print(e, file=sys.stderr)
    return 0


def _selected(rs: list[Row], only: list[str]) -> list[Row]:
    """The rows ``--only`` names: a row's id is that row alone ("688a.1" is not also 688a.10(b)...);
    anything else is an id prefix ("687a.11"); nothing named is every row."""
    ids = {r.sub.id for r in rs}
    return [r for r in rs if not only or any(r.sub.id == o or (o not in ids and r.sub.id.startswith(o)) for o in only)]


def mutate(only: list[str], jobs: int, per: int, timeout: float, baseline: bool = True, root: Path = ROOT) -> int:
    """Mutation evidence for the implemented-and-tested rows (``only``: a row's id selects that row,
    anything else is an id prefix), merged into docs/compliance-mutations.json; the matrix rewritten."""
    subs, doc = load_subsections(root)
    ev = scan(root)
    notes, _errs = N.load(root / NOTES, {s.id for s in subs}, root, ev)
    rs = [r for r in rows(subs, ev, notes) if r.code and r.tested]
    rs = _selected(rs, only)
    results = M.load(root)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    # a kill (or Ctrl-C of a background run, where SIGINT is ignored) still saves what was done
    old = signal.signal(signal.SIGTERM, stop)
    try:
        effort = M.Effort(jobs, per, timeout, check_baseline=baseline)
        M.mutate_rows(root, [(r.sub.id, r.code, r.tests, r.scenarios) for r in rs], results, effort)
    finally:
        signal.signal(signal.SIGTERM, old)
        M.save(root, results)
        (root / MATRIX).write_text(render(subs, doc, ev, notes, results), encoding="utf-8")
    alive = [r.sub.id for r in rs if results.get(r.sub.id, {}).get("result") == "survived"]
    for sid in alive:
        print(f"§ {sid}: survived: {M.cell(results[sid])}", file=sys.stderr)
    return 1 if alive else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
