"""The payout slip's PDF (controller/reports/slip.py): one page, the amount large, the hit's
particulars, and signature lines for the dealer and the floorperson who validated it (and the
cashier or cage where the casino's controls want a third).  reportlab is the ``report`` extra;
imported only when a slip is printed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from reportlab.lib.enums import TA_CENTER
from reportlab.lib.styles import ParagraphStyle
from reportlab.platypus import Flowable, Spacer, Table, TableStyle

from controller.reports.reportpdf import ALERT, Frame, build, grid, para, signatures, styles
from controller.reports.reportview import local_time
from controller.reports.slip import Slip

TITLE = "Progressive payout slip"


def _amount(slip: Slip, st: dict[str, ParagraphStyle], width: float) -> Flowable:
    big = ParagraphStyle("amount", parent=st["h1"], fontSize=30, leading=36, alignment=TA_CENTER)
    sub = ParagraphStyle("sub", parent=st["body"], fontSize=11, leading=14, alignment=TA_CENTER)
    amount = dict(slip.lines())["Amount"]
    head = f"Table {slip.table}  ·  seat {slip.seat}  ·  {slip.hand}  ·  round {slip.round_no}"
    t = Table([[para(amount, big)], [para(head, sub)]], colWidths=[width])
    t.setStyle(TableStyle([("BOX", (0, 0), (-1, -1), 1.2, "#1a1a1a"), ("TOPPADDING", (0, 0), (-1, -1), 6),
                           ("BOTTOMPADDING", (0, 0), (-1, -1), 8)]))  # fmt: skip
    return t


def _pending(st: dict[str, ParagraphStyle], width: float) -> Flowable:
    t = Table([[para("NOT YET VALIDATED: complete when the floorperson validates the hit", st["banner"])]],
              colWidths=[width])  # fmt: skip
    t.setStyle([("BACKGROUND", (0, 0), (-1, -1), ALERT)])
    return t


def _story(slip: Slip, width: float) -> list[Flowable]:
    st = styles()
    story: list[Flowable] = [para(TITLE, st["h1"])]
    if slip.pending:
        story += [_pending(st, width), Spacer(1, 6)]
    story += [_amount(slip, st, width), Spacer(1, 10)]
    body = [(k, v) for k, v in slip.lines() if k != "Amount"]
    story.append(grid([[(k, st["head"]), (v, st["cell"])] for k, v in body], width, head=False, shade_col=True))
    story += [Spacer(1, 16), signatures(st, width, _signers(), "Signatures")]
    story.append(
        para(
            "The dealer and the floorperson who validated the hit sign when the amount is paid; the casino's "
            "internal controls say where this slip is filed.",
            st["note"],
        )
    )
    return story


def _signers() -> list[tuple[str, str]]:
    return [
        ("Dealer", "name, badge, signature"),
        ("Floorperson (validated)", "name, badge, signature"),
        ("Player (optional)", "name, signature"),
    ]


def render(slip: Slip, generated: datetime | None = None, tz: Any = None) -> bytes:
    """The slip's PDF (US letter, portrait: one page)."""
    gen = generated or datetime.now(UTC)
    frame = Frame(
        title=TITLE,
        top_left=slip.casino or "(casino not set)",
        line=f"Table {slip.table}" + (f"  |  Asset {slip.asset}" if slip.asset else ""),
        right=f"Round {slip.round_no}, seat {slip.seat}",
        footer=f"Printed {local_time(gen.isoformat(), tz)} by tablectl",
        provisional=False,
        pdf_title=f"{TITLE} - table {slip.table} - round {slip.round_no} seat {slip.seat}",
        subject="progressive payout slip",
    )
    return build(frame, lambda width: _story(slip, width))
