"""The mutation evidence re-run on a sample of the matrix's rules-engine rows (the whole run is
``python -m tools.compliance --mutate``, minutes to an hour on 2 cores): each mutant is killed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tools import compliance as C
from tools import compliance_mutate as M
from tools import compliance_notes as N
from tools.compliance_cites import scan

#: rows whose recorded mutant was killed (docs/compliance-mutations.json), one per chapter family; a row
#: recorded as surviving (687a.6(d): its mutant changes nothing the rule decides) is not evidence to re-run
SAMPLE = ("621a.2(d)", "686a.5(c)", "687a.10(a)", "670a.11(c)")


@pytest.mark.slow
@pytest.mark.soak
def test_a_sample_of_the_matrix_rows_kills_every_mutant():
    subs, _doc = C.load_subsections()
    ev = scan(C.ROOT)
    notes, _errs = N.load(C.ROOT / C.NOTES, {s.id for s in subs}, C.ROOT, ev)
    rows = [r for r in C.rows(subs, ev, notes) if r.sub.id in SAMPLE]
    assert len(rows) == len(SAMPLE) and all(r.code and r.tested for r in rows)
    results: dict[str, dict[str, Any]] = {}
    effort = M.Effort(jobs=2, per=2, timeout=240, check_baseline=False)
    M.mutate_rows(C.ROOT, [(r.sub.id, r.code, r.tests, r.scenarios) for r in rows], results, effort)
    assert {sid: r["result"] for sid, r in results.items()} == dict.fromkeys(SAMPLE, "killed"), results
    recorded = json.loads((C.ROOT / "docs" / "compliance-mutations.json").read_text())["subsections"]
    assert {sid: recorded[sid]["result"] for sid in SAMPLE} == dict.fromkeys(SAMPLE, "killed")  # the record agrees
