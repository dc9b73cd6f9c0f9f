"""The accounting report's PDF (issue 25), laid out with reportlab's page layout engine
(platypus): a header on every page (casino, table, asset, gaming day, and the PROVISIONAL
banner while the day has not ended), a footer with the page number "N of M", real tables
that carry their column headings onto the next page, and signature lines at the end.

The figures and their labels are controller/reports/reportview.py's, the same as the CSV's.
reportlab is the ``report`` extra (README, "Dependencies"); this module is imported only when
a PDF is asked for (``tablectl report --format pdf``), so the service and the CSV never load it.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, tzinfo
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_RIGHT
from reportlab.lib.pagesizes import letter
from reportlab.lib.styles import ParagraphStyle
from reportlab.platypus import Flowable, KeepTogether, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from controller.reports.report import DayReport
from controller.reports.reportview import PROVISIONAL, Row, Section, identity, sections

MARGIN = 42.0  # points
HEADER_H = 58.0
FOOTER_H = 26.0
INK = "#1a1a1a"
RULE = "#8c8c8c"
SHADE = "#eef1f5"
ALERT = "#b00020"


def _styles() -> dict[str, ParagraphStyle]:
    body = ParagraphStyle("body", fontName="Helvetica", fontSize=8.5, leading=10.5, textColor=colors.HexColor(INK))
    bold = ParagraphStyle("bold", parent=body, fontName="Helvetica-Bold", fontSize=8, leading=9.6)
    return {
        "body": body,
        "cell": ParagraphStyle("cell", parent=body, fontSize=8, leading=9.6),
        "cellr": ParagraphStyle("cellr", parent=body, fontSize=8, leading=9.6, alignment=TA_RIGHT),
        "head": bold,
        "headr": ParagraphStyle("headr", parent=bold, alignment=TA_RIGHT),
        "h1": ParagraphStyle("h1", parent=body, fontName="Helvetica-Bold", fontSize=15, leading=19, spaceAfter=4),
        "h2": ParagraphStyle(
            "h2", parent=body, fontName="Helvetica-Bold", fontSize=10.5, leading=13, spaceBefore=10, spaceAfter=4
        ),
        "note": ParagraphStyle(
            "note", parent=body, fontSize=7.5, leading=9, textColor=colors.HexColor("#333333"), spaceBefore=2
        ),
        "banner": ParagraphStyle(
            "banner",
            parent=body,
            fontName="Helvetica-Bold",
            fontSize=11,
            leading=14,
            textColor=colors.white,
            alignment=TA_CENTER,
        ),
    }


#: a text longer than this (a fault's reason, a void's) is cut, saying so: one row taller than a
#: page would stop the layout, and the ledger (``tablectl history``) keeps the whole text
MAX_TEXT = 400


def _p(text: object, style: ParagraphStyle) -> Paragraph:
    """A paragraph of plain text (escaped; leading spaces kept as an indent; cut at MAX_TEXT)."""
    t = str(text)
    if len(t) > MAX_TEXT:
        t = t[:MAX_TEXT] + f"... ({len(t) - MAX_TEXT:,} more characters in the ledger)"
    lead = len(t) - len(t.lstrip(" "))
    return Paragraph("&nbsp;" * (2 * lead) + escape(t.lstrip(" ")), style)


class _Pages:
    """The header and footer drawn on every page; "page N of M" needs the count, so the
    document is built twice (the first build only counts)."""

    def __init__(self, rep: DayReport, generated: datetime, tz: tzinfo | None, provisional: bool):
        i = rep.info
        self.casino = i.get("casino") or "(casino not set)"
        parts = [f"Table {rep.table_id or '(no events)'}", f"Asset {i.get('asset') or '(not set)'}", i.get("location")]
        self.line = "  |  ".join(p for p in parts if p)
        ident = dict(identity(rep, generated, tz))
        self.day = f"Gaming day {rep.day.isoformat()}"
        self.footer = f"Generated {ident['Generated']}"
        self.provisional = provisional
        self.total = 0

    def __call__(self, canvas: Any, doc: Any) -> None:
        w, h = doc.pagesize
        canvas.saveState()
        canvas.setFillColor(INK)
        canvas.setFont("Helvetica-Bold", 11)
        canvas.drawString(MARGIN, h - MARGIN + 8, self.casino[:70])
        canvas.drawRightString(w - MARGIN, h - MARGIN + 8, "Progressive accounting report")
        canvas.setFont("Helvetica", 8.5)
        canvas.drawString(MARGIN, h - MARGIN - 5, self.line[:110])
        canvas.drawRightString(w - MARGIN, h - MARGIN - 5, self.day)
        canvas.setStrokeColor(RULE)
        canvas.setLineWidth(0.6)
        canvas.line(MARGIN, h - MARGIN - 11, w - MARGIN, h - MARGIN - 11)
        if self.provisional and canvas.getPageNumber() > 1:  # page 1 has the large banner
            canvas.setFillColor(ALERT)
            canvas.rect(MARGIN, h - MARGIN - 31, w - 2 * MARGIN, 16, stroke=0, fill=1)
            canvas.setFillColor("#ffffff")
            canvas.setFont("Helvetica-Bold", 10)
            canvas.drawCentredString(w / 2, h - MARGIN - 26.5, PROVISIONAL)
        canvas.setFillColor(INK)
        canvas.line(MARGIN, MARGIN - 6, w - MARGIN, MARGIN - 6)
        canvas.setFont("Helvetica", 7.5)
        canvas.drawString(MARGIN, MARGIN - 16, self.footer[:120])
        n = canvas.getPageNumber()
        canvas.drawRightString(w - MARGIN, MARGIN - 16, f"Page {n} of {self.total or '?'}")
        canvas.restoreState()


def _table(sec: Section, st: dict[str, ParagraphStyle], width: float) -> Table:
    figure_cols = sec.key not in ("hit", "void", "fault")
    refs = figure_cols and any(r.ref for r in sec.rows)
    head = (["Figure"] if figure_cols else []) + (["Rule"] if refs else []) + sec.columns
    data: list[list[Any]] = [_heading(sec, head, st)]
    data += [_row_cells(r, st, figure_cols, refs) for r in sec.rows]
    if len(data) == 1:
        data.append([_p("none", st["cell"])] + [""] * (len(head) - 1))
    t = Table(data, colWidths=_widths(sec, width, figure_cols, refs), repeatRows=1)
    t.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor(SHADE)),
                ("LINEBELOW", (0, 0), (-1, 0), 0.6, colors.HexColor(RULE)),
                ("LINEBELOW", (0, 1), (-1, -1), 0.25, colors.HexColor("#d5d9de")),
                ("BOX", (0, 0), (-1, -1), 0.6, colors.HexColor(RULE)),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 2.5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5),
            ]
        )
    )
    return t


def _heading(sec: Section, head: list[str], st: dict[str, ParagraphStyle]) -> list[Any]:
    """The heading row: the figure and rule columns (where the section has them), then its own,
    right-aligned over numbers."""
    right = _right_columns(sec)
    lead = len(head) - len(sec.columns)
    return [_p(h, st["headr"] if i - lead in right else st["head"]) for i, h in enumerate(head)]


def _row_cells(r: Row, st: dict[str, ParagraphStyle], figure_cols: bool, refs: bool) -> list[Any]:
    """One row of a section: its figure's label and rule (where the section has them), its values."""
    cells = [_p(r.label, st["cell"])] if figure_cols else []
    cells += [_p(r.ref, st["cell"])] if refs else []
    cells += [_p(v.shown(), st["cellr"] if v.unit != "text" else st["cell"]) for v in r.values]
    return cells


def _right_columns(sec: Section) -> set[int]:
    """The value columns that hold numbers (right-aligned, headings too)."""
    if not sec.rows:
        return set()
    return {i for i, v in enumerate(sec.rows[0].values) if v.unit != "text"}


#: the column widths (shares of the page) of the sections laid out by hand
_FIXED_WIDTHS = {
    "hit": [0.14, 0.075, 0.065, 0.13, 0.17, 0.09, 0.10, 0.23],  # Time Round Seat Hand Kind Paid-by Amount Validated-by
    "void": [0.15, 0.08, 0.77],
    "fault": [0.15, 0.10, 0.14, 0.61],
}


def _widths(sec: Section, width: float, figure_cols: bool, refs: bool) -> list[float]:
    n = len(sec.columns)
    if sec.key in _FIXED_WIDTHS:
        parts = _FIXED_WIDTHS[sec.key]
    elif figure_cols:
        first = [0.40, 0.16] if refs else [0.56]
        parts = first + [(1 - sum(first)) / n] * n
    else:
        parts = [1.0 / n] * n
    return [p * width for p in parts]


def _identity_table(
    rep: DayReport, generated: datetime, tz: tzinfo | None, st: dict[str, ParagraphStyle], width: float
) -> Table:
    data = [[_p(k, st["head"]), _p(v, st["cell"])] for k, v in identity(rep, generated, tz)]
    t = Table(data, colWidths=[0.26 * width, 0.74 * width])
    t.setStyle(
        TableStyle(
            [
                ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.HexColor("#d5d9de")),
                ("BOX", (0, 0), (-1, -1), 0.6, colors.HexColor(RULE)),
                ("BACKGROUND", (0, 0), (0, -1), colors.HexColor(SHADE)),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return t


def _signatures(st: dict[str, ParagraphStyle], width: float) -> Flowable:
    rows = []
    for who in ("Prepared by", "Reviewed by"):
        rows.append([_p(f"{who}:", st["head"]), "", _p("Date:", st["head"]), ""])
        rows.append(["", _p("name, title, signature", st["note"]), "", ""])
    t = Table(rows, colWidths=[0.16 * width, 0.50 * width, 0.08 * width, 0.26 * width], rowHeights=[26, 12] * 2)
    t.setStyle(
        TableStyle(
            [
                ("LINEBELOW", (1, 0), (1, 0), 0.6, RULE),
                ("LINEBELOW", (3, 0), (3, 0), 0.6, RULE),
                ("LINEBELOW", (1, 2), (1, 2), 0.6, RULE),
                ("LINEBELOW", (3, 2), (3, 2), 0.6, RULE),
                ("VALIGN", (0, 0), (-1, -1), "BOTTOM"),
            ]
        )
    )
    return KeepTogether([_p("Signatures", st["h2"]), Spacer(1, 4), t])


def _story(rep: DayReport, generated: datetime, tz: tzinfo | None, width: float, provisional: bool) -> list[Flowable]:
    st = _styles()
    story: list[Flowable] = [_p("Progressive accounting report", st["h1"])]
    if provisional:
        banner = Table([[_p(PROVISIONAL, st["banner"])]], colWidths=[width])
        banner.setStyle([("BACKGROUND", (0, 0), (-1, -1), ALERT), ("TOPPADDING", (0, 0), (-1, -1), 5),
                         ("BOTTOMPADDING", (0, 0), (-1, -1), 5)])  # fmt: skip
        story += [banner, _p("Today's or a future day's figures: they change until the day ends.", st["note"])]
        story.append(Spacer(1, 6))
    story.append(_identity_table(rep, generated, tz, st, width))
    if not rep.levels and not rep.coin_in:
        story.append(_p("No progressive meter on this table in the day.", st["note"]))
    for sec in sections(rep, tz):
        block = [_p(sec.title, st["h2"]), _table(sec, st, width)] + [_p(n, st["note"]) for n in sec.notes]
        story += [KeepTogether(block)] if len(sec.rows) < 25 else block  # a long one flows over pages
    head = _p(
        f"Event #{rep.head.count}, MAC {rep.head.mac}. Keep it with this report: a later rewrite of the "
        "ledger would no longer contain this event with this MAC (`tablectl audit`).",
        st["body"],
    )
    story += [Spacer(1, 10), KeepTogether([_p("Chain head", st["h2"]), head])]
    story += [Spacer(1, 14), _signatures(st, width)]
    return story


def render(rep: DayReport, tz: tzinfo | None = None, generated: datetime | None = None) -> bytes:
    """The PDF (US letter, portrait) of the report."""
    gen = generated or datetime.now(UTC)
    provisional = rep.provisional(gen)
    pages = _Pages(rep, gen, tz, provisional)
    size = letter
    width = size[0] - 2 * MARGIN
    top = MARGIN + HEADER_H - 20 + (18 if provisional else 0)  # room for the header (and its banner)

    def build() -> bytes:
        buf = io.BytesIO()
        doc = SimpleDocTemplate(
            buf,
            pagesize=size,
            leftMargin=MARGIN,
            rightMargin=MARGIN,
            topMargin=top,
            bottomMargin=MARGIN + FOOTER_H - 12,
            title=f"Progressive accounting report - table {rep.table_id} - gaming day {rep.day.isoformat()}",
            author="tablectl",
            subject=f"{PROVISIONAL}" if provisional else "gaming day ended",
            invariant=1,
        )
        doc.build(_story(rep, gen, tz, width, provisional), onFirstPage=pages, onLaterPages=pages)
        pages.total = doc.page
        return buf.getvalue()

    build()  # counts the pages
    return build()
