"""The accounting report's PDF, laid out with reportlab's page layout engine
(platypus): a header on every page (casino, table, asset, gaming day, and the PROVISIONAL
banner while the day has not ended), a footer with the page number "N of M", real tables
that carry their column headings onto the next page, and signature lines at the end.

The figures and their labels are controller/reports/reportview.py's, the same as the CSV's.
reportlab is the ``report`` extra (README, "Dependencies"); this module is imported only when
a PDF is asked for (``tablectl report --format pdf``), so the service and the CSV never load it.

The page frame (:class:`Frame`, :func:`build`), the tables sized to their contents
(:func:`fit_widths`: a column is never narrower than its longest word, so no heading breaks
mid-word) and the signature block are shared with the LAP's report (controller/lap/lapreportpdf.py)
and the payout slip (controller/reports/slippdf.py).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_RIGHT
from reportlab.lib.pagesizes import letter
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import (
    CondPageBreak,
    Flowable,
    KeepTogether,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from controller.reports.report import DayReport
from controller.reports.reportview import PROVISIONAL, Row, Section, identity, sections

MARGIN = 42.0  # points
HEADER_H = 58.0
FOOTER_H = 26.0
INK = "#1a1a1a"
RULE = "#8c8c8c"
SHADE = "#eef1f5"
ALERT = "#b00020"
#: a cell's padding left and right (reportlab's default), points
PAD = 6.0
#: room kept below a section's heading for its table's heading row and first rows: less than
#: this left on the page, the heading starts the next page (never stranded at a page's foot)
KEEP_WITH_HEADING = 110.0


def styles() -> dict[str, ParagraphStyle]:
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


def _cut(text: object) -> str:
    t = str(text)
    if len(t) > MAX_TEXT:
        t = t[:MAX_TEXT] + f"... ({len(t) - MAX_TEXT:,} more characters in the ledger)"
    return t


def para(text: object, style: ParagraphStyle) -> Paragraph:
    """A paragraph of plain text (escaped; leading spaces kept as an indent; cut at MAX_TEXT)."""
    t = _cut(text)
    lead = len(t) - len(t.lstrip(" "))
    return Paragraph("&nbsp;" * (2 * lead) + escape(t.lstrip(" ")), style)


# ------------------------------------------------------------------------------ column widths
def _text_width(text: str, style: ParagraphStyle) -> tuple[float, float]:
    """(the whole text's width on one line, its longest word's width) in ``style``, points."""
    t = _cut(text)
    lead = (len(t) - len(t.lstrip(" "))) * 2 * stringWidth(" ", style.fontName, style.fontSize)
    words = t.split() or [""]
    whole = lead + stringWidth(" ".join(words), style.fontName, style.fontSize)
    longest = max(stringWidth(w, style.fontName, style.fontSize) for w in words)
    return whole, lead + longest


def fit_widths(cells: Sequence[Sequence[tuple[str, ParagraphStyle]]], width: float) -> list[float]:
    """Column widths that fit their contents in ``width`` points: a column whose text fits on one
    line in its share gets just that; the columns whose text wraps share the rest in proportion
    to their text, none narrower than its longest word (a heading never breaks mid-word: "Sea t");
    room left when everything fits is spread in proportion."""
    nat, low = _measure(cells)
    if sum(low) > width:
        return _squeezed(low, width)
    out, left, todo = _one_line(nat, low, width)
    if not todo:
        return [w + left * w / sum(out) for w in out]
    return _wrapping(nat, low, out, left, todo)


def _wrapping(nat: list[float], low: list[float], out: list[float], left: float, todo: list[int]) -> list[float]:
    """The columns whose text wraps share ``left`` in proportion to their text, none below its
    longest word (one held at its word gives the rest back to the others)."""
    while True:
        total = sum(nat[i] for i in todo)
        short = [i for i in todo if left * nat[i] / total < low[i]]
        if not short:
            break
        for i in short:
            out[i], left = low[i], left - low[i]
            todo.remove(i)
    total = sum(nat[i] for i in todo)
    for i in todo:
        out[i] = left * nat[i] / total
    return out


def _measure(cells: Sequence[Sequence[tuple[str, ParagraphStyle]]]) -> tuple[list[float], list[float]]:
    """Per column: the widest text on one line, and the widest word (padding included)."""
    n = max(len(r) for r in cells)
    nat, low = [2 * PAD] * n, [2 * PAD] * n
    for row in cells:
        for i, (text, style) in enumerate(row):
            whole, word = _text_width(text, style)
            nat[i] = max(nat[i], whole + 2 * PAD + 1)
            low[i] = max(low[i], word + 2 * PAD + 1)
    return nat, low


def _one_line(nat: list[float], low: list[float], width: float) -> tuple[list[float], float, list[int]]:
    """The columns whose text fits on one line in their share of what is left (and leaves the
    others their longest words): (widths so far, the room left, the columns still to size)."""
    out, left, todo = [0.0] * len(nat), width, list(range(len(nat)))
    changed = True
    while todo and changed:
        changed = False
        for i in list(todo):
            others = sum(low[j] for j in todo if j != i)
            if nat[i] <= left / len(todo) and left - nat[i] >= others:
                out[i], left = nat[i], left - nat[i]
                todo.remove(i)
                changed = True
    return out, left, todo


def _squeezed(low: list[float], width: float) -> list[float]:
    """A word wider than the page (a hostile text from the ledger): every column whose longest word
    fits in its share keeps it whole; the rest share what is left (their words break)."""
    out = [0.0] * len(low)
    left, todo = width, sorted(range(len(low)), key=lambda i: low[i])
    while todo and low[todo[0]] <= left / len(todo):
        i = todo.pop(0)
        out[i] = low[i]
        left -= low[i]
    for i in todo:
        out[i] = left / len(todo)
    return out


def grid(
    cells: Sequence[Sequence[tuple[str, ParagraphStyle]]], width: float, *, head: bool = True, shade_col: bool = False
) -> Table:
    """A table of plain-text cells ((text, style) each), sized by :func:`fit_widths`, its heading
    row (``head``) shaded and repeated on every page it runs onto."""
    widths = fit_widths(cells, width)
    data = [[para(text, style) for text, style in row] for row in cells]
    t = Table(data, colWidths=widths, repeatRows=1 if head else 0)
    style: list[Any] = [
        ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.HexColor("#d5d9de")),
        ("BOX", (0, 0), (-1, -1), 0.6, colors.HexColor(RULE)),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 2.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5),
    ]
    if head:
        style += [
            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor(SHADE)),
            ("LINEBELOW", (0, 0), (-1, 0), 0.6, colors.HexColor(RULE)),
        ]
    if shade_col:
        style.append(("BACKGROUND", (0, 0), (0, -1), colors.HexColor(SHADE)))
    t.setStyle(TableStyle(style))
    return t


def block(heading: Flowable, table: Flowable, notes: Sequence[Flowable] = (), rows: int = 0) -> list[Flowable]:
    """A section's heading, its table and notes, kept together when short; a long table flows over
    pages, its heading kept with its first rows."""
    parts = [heading, table, *notes]
    if rows < 25:
        return [KeepTogether(parts)]
    return [CondPageBreak(KEEP_WITH_HEADING), *parts]


# ------------------------------------------------------------------------------ pages
@dataclass
class Frame:
    """What every page of a document carries: its header (``top_left`` bold, ``title`` on the
    right; ``line`` and ``right`` below), the PROVISIONAL band while the day runs (every page
    after the first, which has the large banner), and the footer (``footer``, "Page N of M")."""

    title: str
    top_left: str
    line: str
    right: str
    footer: str
    provisional: bool
    pdf_title: str
    subject: str = ""


class _Pages:
    """The header and footer drawn on every page; "page N of M" needs the count, so the
    document is built twice (the first build only counts)."""

    def __init__(self, frame: Frame):
        self.f = frame
        self.total = 0

    def __call__(self, canvas: Any, doc: Any) -> None:
        f = self.f
        w, h = doc.pagesize
        canvas.saveState()
        canvas.setFillColor(INK)
        canvas.setFont("Helvetica-Bold", 11)
        canvas.drawString(MARGIN, h - MARGIN + 8, f.top_left[:70])
        canvas.drawRightString(w - MARGIN, h - MARGIN + 8, f.title)
        canvas.setFont("Helvetica", 8.5)
        canvas.drawString(MARGIN, h - MARGIN - 5, f.line[:110])
        canvas.drawRightString(w - MARGIN, h - MARGIN - 5, f.right)
        canvas.setStrokeColor(RULE)
        canvas.setLineWidth(0.6)
        canvas.line(MARGIN, h - MARGIN - 11, w - MARGIN, h - MARGIN - 11)
        if f.provisional and canvas.getPageNumber() > 1:  # page 1 has the large banner
            canvas.setFillColor(ALERT)
            canvas.rect(MARGIN, h - MARGIN - 31, w - 2 * MARGIN, 16, stroke=0, fill=1)
            canvas.setFillColor("#ffffff")
            canvas.setFont("Helvetica-Bold", 10)
            canvas.drawCentredString(w / 2, h - MARGIN - 26.5, PROVISIONAL)
        canvas.setFillColor(INK)
        canvas.line(MARGIN, MARGIN - 6, w - MARGIN, MARGIN - 6)
        canvas.setFont("Helvetica", 7.5)
        canvas.drawString(MARGIN, MARGIN - 16, f.footer[:120])
        n = canvas.getPageNumber()
        canvas.drawRightString(w - MARGIN, MARGIN - 16, f"Page {n} of {self.total or '?'}")
        canvas.restoreState()


def build(frame: Frame, story: Callable[[float], list[Flowable]], pagesize: tuple[float, float] = letter) -> bytes:
    """The PDF of ``story(width)`` in ``frame`` (built twice: the first build counts the pages)."""
    pages = _Pages(frame)
    width = pagesize[0] - 2 * MARGIN
    top = MARGIN + HEADER_H - 20 + (18 if frame.provisional else 0)  # room for the header (and its banner)

    def once() -> bytes:
        buf = io.BytesIO()
        doc = SimpleDocTemplate(
            buf,
            pagesize=pagesize,
            leftMargin=MARGIN,
            rightMargin=MARGIN,
            topMargin=top,
            bottomMargin=MARGIN + FOOTER_H - 12,
            title=frame.pdf_title,
            author="tablectl",
            subject=frame.subject or (PROVISIONAL if frame.provisional else "gaming day ended"),
            invariant=1,
        )
        doc.build(story(width), onFirstPage=pages, onLaterPages=pages)
        pages.total = doc.page
        return buf.getvalue()

    once()
    return once()


def provisional_banner(st: dict[str, ParagraphStyle], width: float, note: str) -> list[Flowable]:
    banner = Table([[para(PROVISIONAL, st["banner"])]], colWidths=[width])
    banner.setStyle([("BACKGROUND", (0, 0), (-1, -1), ALERT), ("TOPPADDING", (0, 0), (-1, -1), 5),
                     ("BOTTOMPADDING", (0, 0), (-1, -1), 5)])  # fmt: skip
    return [banner, para(note, st["note"]), Spacer(1, 6)]


def signatures(
    st: dict[str, ParagraphStyle], width: float, who: Sequence[tuple[str, str]], title: str = "Signatures"
) -> Flowable:
    """Signature lines, one per (role, what to write) pair: the role, a line to sign on, a date."""
    rows: list[list[Any]] = []
    for role, hint in who:
        rows.append([para(f"{role}:", st["head"]), "", para("Date:", st["head"]), ""])
        rows.append(["", para(hint, st["note"]), "", ""])
    t = Table(rows, colWidths=[0.25 * width, 0.43 * width, 0.07 * width, 0.25 * width], rowHeights=[26, 12] * len(who))
    style: list[Any] = [("VALIGN", (0, 0), (-1, -1), "BOTTOM")]
    for i in range(len(who)):
        style += [("LINEBELOW", (1, 2 * i), (1, 2 * i), 0.6, RULE), ("LINEBELOW", (3, 2 * i), (3, 2 * i), 0.6, RULE)]
    t.setStyle(TableStyle(style))
    return KeepTogether([para(title, st["h2"]), Spacer(1, 4), t])


# ------------------------------------------------------------------------------ the report
def section_cells(sec: Section, st: dict[str, ParagraphStyle]) -> list[list[tuple[str, ParagraphStyle]]]:
    """A section as (text, style) cells: its heading row, then a row per figure (the figure's
    label and rule where the section has them, then its values, numbers right-aligned)."""
    figure_cols, refs = _lead_columns(sec)
    head = (["Figure"] if figure_cols else []) + (["Rule"] if refs else []) + sec.columns
    right = _right_columns(sec)
    lead = len(head) - len(sec.columns)
    cells = [[(h, st["headr"] if i - lead in right else st["head"]) for i, h in enumerate(head)]]
    cells += [_row_cells(r, st, figure_cols, refs, right) for r in sec.rows]
    if len(cells) == 1:
        cells.append([("none", st["cell"])] + [("", st["cell"])] * (len(head) - 1))
    return cells


def _lead_columns(sec: Section) -> tuple[bool, bool]:
    """Whether the section's rows lead with their figure's label, and with its rule."""
    figure_cols = sec.key not in ("hit", "void", "fault")
    return figure_cols, figure_cols and any(r.ref for r in sec.rows)


def _row_cells(
    r: Row, st: dict[str, ParagraphStyle], figure_cols: bool, refs: bool, right: set[int]
) -> list[tuple[str, Any]]:
    """One row of a section: its figure's label and rule (where the section has them), its values
    (right-aligned in a column of numbers, a text there too: "agrees, exactly" under the amounts)."""
    cells = [(r.label, st["cell"])] if figure_cols else []
    cells += [(r.ref, st["cell"])] if refs else []
    cells += [(v.shown(), st["cellr"] if i in right else st["cell"]) for i, v in enumerate(r.values)]
    return cells


def _right_columns(sec: Section) -> set[int]:
    """The value columns that hold numbers (right-aligned, headings too)."""
    if not sec.rows:
        return set()
    return {i for i, v in enumerate(sec.rows[0].values) if v.unit != "text"}


def section_flow(sec: Section, st: dict[str, ParagraphStyle], width: float) -> list[Flowable]:
    """A section as printed: its heading, its table, its notes (see :func:`block`)."""
    table = grid(section_cells(sec, st), width)
    return block(para(sec.title, st["h2"]), table, [para(n, st["note"]) for n in sec.notes], len(sec.rows))


def _identity_table(
    rep: DayReport, generated: datetime, tz: tzinfo | None, st: dict[str, ParagraphStyle], width: float
) -> Table:
    cells = [[(k, st["head"]), (v, st["cell"])] for k, v in identity(rep, generated, tz)]
    return grid(cells, width, head=False, shade_col=True)


def _story(rep: DayReport, generated: datetime, tz: tzinfo | None, width: float, provisional: bool) -> list[Flowable]:
    st = styles()
    story: list[Flowable] = [para("Progressive accounting report", st["h1"])]
    if provisional:
        story += provisional_banner(st, width, "Today's or a future day's figures: they change until the day ends.")
    story.append(_identity_table(rep, generated, tz, st, width))
    if not rep.levels and not rep.coin_in:
        story.append(para("No progressive meter on this table in the day.", st["note"]))
    for sec in sections(rep, tz):
        story += section_flow(sec, st, width)
    head = para(
        f"Event #{rep.head.count}, MAC {rep.head.mac}. Keep it with this report: a later rewrite of the "
        "ledger would no longer contain this event with this MAC (`tablectl audit`).",
        st["body"],
    )
    story += [Spacer(1, 10), KeepTogether([para("Chain head", st["h2"]), head])]
    sign = [("Prepared by", "name, title, signature"), ("Reviewed by", "name, title, signature")]
    story += [Spacer(1, 14), signatures(st, width, sign)]
    return story


def frame_of(rep: DayReport, generated: datetime, tz: tzinfo | None, provisional: bool) -> Frame:
    i = rep.info
    parts = [f"Table {rep.table_id or '(no events)'}", f"Asset {i.get('asset') or '(not set)'}", i.get("location")]
    ident = dict(identity(rep, generated, tz))
    return Frame(
        title="Progressive accounting report",
        top_left=i.get("casino") or "(casino not set)",
        line="  |  ".join(p for p in parts if p),
        right=f"Gaming day {rep.day.isoformat()}",
        footer=f"Generated {ident['Generated']}",
        provisional=provisional,
        pdf_title=f"Progressive accounting report - table {rep.table_id} - gaming day {rep.day.isoformat()}",
    )


def render(rep: DayReport, tz: tzinfo | None = None, generated: datetime | None = None) -> bytes:
    """The PDF (US letter, portrait) of the report."""
    gen = generated or datetime.now(UTC)
    provisional = rep.provisional(gen)
    return build(frame_of(rep, gen, tz, provisional), lambda width: _story(rep, gen, tz, width, provisional))
