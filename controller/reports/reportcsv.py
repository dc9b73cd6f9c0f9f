"""The accounting reports' CSV: one layout for the table's report (controller/reports/reportview.py)
and the LAP's (controller/lap/lapreport.py), so that a clerk ties a table's figures to the LAP's in
one spreadsheet.

One row per figure, with the PDF's label and the rule it answers to: ``section``, ``table``,
``gaming_day``, ``level``, ``item`` (a stable name), ``label``, ``regulation``, ``unit``, then
``start``/``end`` for the meters at each end of the day or ``value``, and the columns of a hit, a
void or a fault (``time_local``, ``round``, ``seat``, ``hand``, ``paid_by``, ``validated_by``,
``note``).  Money is dollars with two decimals and no ``$`` (a spreadsheet reads a number), a
fraction of a cent exact text (``501.00 + 1/3 cent``).  A cell a spreadsheet would take for a
formula (``=``, ``+``, ``@``, a ``-`` that does not start a number) is quoted with ``'``: some
texts come from a table (a hand, a reason).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, tzinfo
from typing import Any

from controller.reports.report import DayReport
from controller.reports.reportview import PROVISIONAL, TEXT, USD, Row, Section, identity, sections

CSV_COLUMNS = ["section", "table", "gaming_day", "level", "item", "label", "regulation", "unit", "start", "end",
               "value", "time_local", "round", "seat", "hand", "paid_by", "validated_by", "note"]  # fmt: skip

#: a hit's column (as the PDF heads it) -> its CSV column; the others go to ``note``
HIT_FIELDS = {
    "Time": "time_local",
    "Round": "round",
    "Seat": "seat",
    "Hand": "hand",
    "Paid by": "paid_by",
    "Amount": "value",
    "Validated by": "validated_by",
    "Table": "table",
    "Level": "level",
}


def cell(v: Any) -> str:
    """A CSV cell; text a spreadsheet would take for a formula is quoted with a leading ``'``."""
    s = "" if v is None else str(v)
    if s[:1] in ("=", "+", "@", "\t", "\r") or (s[:1] == "-" and not s[1:2].isdigit()):
        return "'" + s
    return s


def item_of(label: str) -> str:
    return label.lower().replace(" ", "_").replace("'", "")


def identity_rows(pairs: Iterable[tuple[str, str]], provisional: bool) -> Iterator[dict[str, Any]]:
    """The header's (label, value) pairs, and the PROVISIONAL row while the day runs."""
    for label, value in pairs:
        yield {"section": "report", "item": item_of(label), "label": label, "unit": TEXT, "value": value}
    if provisional:
        yield {"section": "report", "item": "provisional", "label": PROVISIONAL, "unit": TEXT, "value": "yes"}


def _meter_csv(sec: Section, r: Row, base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield {**base, "unit": r.values[1].unit, "start": r.values[0].plain(), "end": r.values[1].plain()}


def _hit_csv(sec: Section, r: Row, base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A hit: each column to its CSV column (:data:`HIT_FIELDS`), the others said in ``note``."""
    row: dict[str, Any] = {**base, "unit": USD}
    notes = []
    for col, v in zip(sec.columns, r.values):
        field = HIT_FIELDS.get(col)
        if field is not None:
            row[field] = v.plain()
        elif v.plain():
            notes.append(f"{col}: {v.plain()}")
    if notes:
        row["note"] = "; ".join(notes)
    yield row


def _event_csv(sec: Section, r: Row, base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A void or a fault: its time, its round, what it says."""
    yield {**base, "unit": TEXT, "time_local": r.values[0].plain(), "round": r.values[1].plain(),
           "value": " ".join(v.plain() for v in r.values[2:])}  # fmt: skip


def _figure_csv(sec: Section, r: Row, base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A figure: one CSV row per value given (an empty text is left out), named by its column."""
    for col, v in zip(sec.columns, r.values):
        if v.unit != TEXT or v.raw != "":
            item = r.item if len(r.values) == 1 else f"{r.item}_{col.lower()}"
            yield {**base, "item": item, "unit": v.unit, "value": v.plain()}


#: the CSV rows of a section's row, by the section's key (any other: :func:`_figure_csv`)
_CSV_ROWS: dict[str, Callable[[Section, Row, dict[str, Any]], Iterator[dict[str, Any]]]] = {
    "meter": _meter_csv,
    "hit": _hit_csv,
    "void": _event_csv,
    "fault": _event_csv,
}


def section_rows(sec: Section) -> Iterator[dict[str, Any]]:
    rows_of = _CSV_ROWS.get(sec.key, _figure_csv)
    own = {"table": sec.table} if sec.table else {}
    for r in sec.rows:
        base = {"section": sec.key, "level": sec.level, "item": r.item, "label": r.label, "regulation": r.ref, **own}
        yield from rows_of(sec, r, base)
    for n in sec.notes:
        yield {"section": sec.key, "level": sec.level, "item": "note", "unit": TEXT, "note": n, **own}


def write(base: dict[str, Any], rows: Iterable[dict[str, Any]]) -> str:
    """The CSV text of ``rows``, each over ``base`` (the report's table and gaming day; a row's
    own table wins)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: cell(v) for k, v in {**base, **row}.items()})
    return buf.getvalue()


def all_rows(secs: Iterable[Section]) -> Iterator[dict[str, Any]]:
    for sec in secs:
        yield from section_rows(sec)


def day_csv(rep: DayReport, tz: tzinfo | None = None, generated: datetime | None = None) -> str:
    """The table's report of a gaming day as CSV."""
    gen = generated or datetime.now(UTC)
    head = {"section": "head", "item": "chain_head", "label": "Chain head at the day's end", "unit": TEXT,
            "value": rep.head.mac, "note": f"event #{rep.head.count}"}  # fmt: skip
    base = {"table": rep.table_id, "gaming_day": rep.day.isoformat()}
    ident = identity_rows(identity(rep, gen, tz), rep.provisional(gen))
    return write(base, [*ident, *all_rows(sections(rep, tz)), head])
