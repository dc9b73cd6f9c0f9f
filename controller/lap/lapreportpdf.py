"""The PDF of ``tablectl lap --report`` (controller/lap/lapreport.py), laid out as the table's
accounting report is (controller/reports/reportpdf.py: its page frame with "page N of M" and
PROVISIONAL on every page while the day runs, tables sized to their contents, headings kept with
their tables, signature lines).  reportlab is the ``report`` extra; this module is imported only
when a PDF is asked for.
"""

from __future__ import annotations

from typing import Any

from reportlab.platypus import Flowable, Spacer

from controller.lap.lapreport import TABLE_COLUMNS, LapReport, heading, sections, table_row
from controller.reports.reportpdf import (
    Frame,
    block,
    build,
    grid,
    provisional_banner,
    section_flow,
    signatures,
)
from controller.reports.reportpdf import para as _p
from controller.reports.reportpdf import styles as _styles

TITLE = "Linked progressive accounting report"


def _tables(r: LapReport, st: dict[str, Any], width: float) -> list[Flowable]:
    """The member tables' day, one row each (the CSV has each figure in the table report's words)."""
    cells = [_aligned(TABLE_COLUMNS, st["head"], st["headr"])]
    cells += [_aligned([v.shown() for v in table_row(t)], st["cell"], st["cellr"]) for t in r.tables]
    if not r.tables:
        cells.append(_aligned(["none"] + [""] * (len(TABLE_COLUMNS) - 1), st["cell"], st["cellr"]))
    notes = [
        _p(
            "Wagers: progressive wagers less those voided; Coin-in: their amount; Contributions: credited less "
            "voided (to the meter, reserve and overflow); Voided: contributions a void took back; Hits and Won: "
            "meter hits the LAP decided in the day; Paid: meter hits the table recorded paid in the day (its own "
            "report's 'Meter hits, paid by an attendant').",
            st["note"],
        )
    ]
    return block(_p("Tables: the gaming day", st["h2"]), grid(cells, width), notes, len(r.tables))


def _aligned(texts: list[str], left: Any, right: Any) -> list[tuple[str, Any]]:
    """A row of the tables' grid: the table, asset and game left, the figures right-aligned."""
    return [(t, right if i >= 3 else left) for i, t in enumerate(texts)]


def _story(r: LapReport, width: float) -> list[Flowable]:
    st = _styles()
    story: list[Flowable] = [_p(TITLE, st["h1"])]
    if r.provisional:
        story += provisional_banner(st, width, "Today's figures: they change until the gaming day ends.")
    story.append(grid([[(k, st["head"]), (v, st["cell"])] for k, v in heading(r)], width, head=False, shade_col=True))
    secs = sections(r)
    for sec in secs[:-1]:
        story += section_flow(sec, st, width)
    story += _tables(r, st, width)
    story += section_flow(secs[-1], st, width)
    sign = [("Prepared by", "name, title, signature"), ("Reviewed by", "name, title, signature")]
    return [*story, Spacer(1, 14), signatures(st, width, sign)]


def render(r: LapReport) -> bytes:
    """The PDF (US letter, portrait)."""
    made = dict(heading(r))["Generated"]
    frame = Frame(
        title=TITLE,
        top_left=r.casino or "(casino not set)",
        line=f"Linked group {r.group}  |  {len(r.tables)} tables",
        right=f"Gaming day {r.day.isoformat()}",
        footer=f"Generated {made}",
        provisional=r.provisional,
        pdf_title=f"{TITLE} - {r.group} - gaming day {r.day.isoformat()}",
    )
    return build(frame, lambda width: _story(r, width))
