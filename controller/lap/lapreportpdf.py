"""The PDF of ``tablectl lap --report`` (controller/lap/lapreport.py), in the accounting report's
style (controller/reports/reportpdf.py: its styles, header rule and shaded tables).  reportlab is the
``report`` extra; this module is imported only when a PDF is asked for.
"""

from __future__ import annotations

import io
from typing import Any

from reportlab.lib import colors
from reportlab.lib.pagesizes import landscape, letter
from reportlab.platypus import Flowable, KeepTogether, SimpleDocTemplate, Spacer, Table, TableStyle

from controller.lap.lapreport import HIT_COLUMNS, LAST_HITS, LapReport, heading, hit_row, level_rows
from controller.reports.reportpdf import ALERT, INK, MARGIN, RULE, SHADE, _p, _styles

TITLE = "Linked progressive controller: meters and last hits"


def _grid(data: list[list[Any]], widths: list[float], head: bool = True) -> Table:
    t = Table(data, colWidths=widths, repeatRows=1 if head else 0)
    style: list[Any] = [
        ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.HexColor("#d5d9de")),
        ("BOX", (0, 0), (-1, -1), 0.6, colors.HexColor(RULE)),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 2.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5),
    ]
    style.append(("BACKGROUND", (0, 0), (-1, 0) if head else (0, -1), colors.HexColor(SHADE)))
    t.setStyle(TableStyle(style))
    return t


def _story(r: LapReport, width: float) -> list[Flowable]:
    st = _styles()
    story: list[Flowable] = [_p(TITLE, st["h1"])]
    if r.provisional:
        banner = Table([[_p("PROVISIONAL: the gaming day has not ended", st["banner"])]], colWidths=[width])
        banner.setStyle([("BACKGROUND", (0, 0), (-1, -1), ALERT)])
        story += [banner, Spacer(1, 6)]
    story.append(
        _grid([[_p(k, st["head"]), _p(v, st["cell"])] for k, v in heading(r)], [0.2 * width, 0.8 * width], False)
    )
    for lv in r.levels:
        rows = [[_p("Meter", st["head"]), _p("Value", st["headr"])]]
        rows += [[_p(k, st["cell"]), _p(v, st["cellr"])] for k, v in level_rows(lv)]
        story.append(KeepTogether([_p(f"Level {lv.level}", st["h2"]), _grid(rows, [0.6 * width, 0.4 * width])]))
    parts = [0.12, 0.07, 0.05, 0.06, 0.07, 0.04, 0.05, 0.09, 0.09, 0.36]
    hits: list[list[Any]] = [[_p(c, st["head"]) for c in HIT_COLUMNS]]
    hits += [[_p(c, st["cell"]) for c in hit_row(h)] for h in r.hits]
    if not r.hits:
        hits.append([_p("none", st["cell"])] + [""] * (len(HIT_COLUMNS) - 1))
    story += [
        _p(f"Last {LAST_HITS} hits (up to the end of the day)", st["h2"]),
        _grid(hits, [p * width for p in parts]),
    ]
    return story


def render(r: LapReport) -> bytes:
    """The PDF (US letter, landscape: the hits' ten columns)."""
    size = landscape(letter)
    width = size[0] - 2 * MARGIN
    buf = io.BytesIO()

    def page(canvas: Any, doc: Any) -> None:
        w, h = doc.pagesize
        canvas.saveState()
        canvas.setFillColor(INK)
        canvas.setFont("Helvetica-Bold", 11)
        canvas.drawString(MARGIN, h - MARGIN + 8, f"Linked group {r.group}"[:70])
        canvas.drawRightString(w - MARGIN, h - MARGIN + 8, f"Gaming day {r.day.isoformat()}")
        canvas.setStrokeColor(RULE)
        canvas.line(MARGIN, h - MARGIN - 2, w - MARGIN, h - MARGIN - 2)
        canvas.setFont("Helvetica", 7.5)
        canvas.drawRightString(w - MARGIN, MARGIN - 16, f"Page {canvas.getPageNumber()}")
        canvas.restoreState()

    doc = SimpleDocTemplate(
        buf,
        pagesize=size,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN + 14,
        bottomMargin=MARGIN,
        title=f"{TITLE} - {r.group} - gaming day {r.day.isoformat()}",
        author="tablectl",
        invariant=1,
    )
    doc.build(_story(r, width), onFirstPage=page, onLaterPages=page)
    return buf.getvalue()
