"""A minimal PDF writer for text reports (issue 15): monospaced lines on landscape
US-letter pages, PDF 1.4, the standard Courier font (every PDF reader has it: nothing
embedded), WinAnsi encoding (so ``§`` prints), an exact cross-reference table.

Written here rather than taken from a library: a report is lines of text, and these
~80 lines have nothing to keep up to date.  Characters outside Latin-1 are replaced by
``?`` (the reports are ASCII but for ``§``)."""

from __future__ import annotations

from collections.abc import Sequence

PAGE_W, PAGE_H = 792, 612  # US letter, landscape, in points
MARGIN = 36
FONT_SIZE = 8.0
LEADING = 10.0
LINES_PER_PAGE = int((PAGE_H - 2 * MARGIN) // LEADING) - 1  # the last one for the page number


def _escape(text: str) -> bytes:
    out = bytearray()
    for b in text.encode("latin-1", "replace"):
        if b in (0x28, 0x29, 0x5C):  # ( ) backslash
            out += b"\\" + bytes([b])
        elif b < 0x20 or b > 0x7E:
            out += f"\\{b:03o}".encode("ascii")
        else:
            out.append(b)
    return bytes(out)


def render(lines: Sequence[str], title: str = "") -> bytes:
    """The PDF of ``lines`` (split over as many pages as they need)."""
    pages = [list(lines[i : i + LINES_PER_PAGE]) for i in range(0, max(len(lines), 1), LINES_PER_PAGE)] or [[]]
    n = len(pages)
    # objects: 1 catalog, 2 pages, 3 font, 4 info, then per page: page, content
    objs: list[bytes] = [b"", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>"]
    objs.append(b"<< /Title (" + _escape(title) + b") /Producer (tablectl) >>")
    kids = []
    for i, page in enumerate(pages):
        page_obj, content_obj = len(objs) + 1, len(objs) + 2
        kids.append(f"{page_obj} 0 R")
        body = bytearray(f"BT /F1 {FONT_SIZE:g} Tf {LEADING:g} TL {MARGIN} {PAGE_H - MARGIN} Td\n".encode("ascii"))
        for line in page:
            body += b"(" + _escape(line) + b") '\n"
        body += b"ET\n"
        footer = f"page {i + 1} of {n}" + (f" - {title}" if title else "")
        body += b"BT /F1 7 Tf " + f"{MARGIN} {MARGIN / 2:g} Td (".encode("ascii") + _escape(footer) + b") Tj ET\n"
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_W} {PAGE_H}] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_obj} 0 R >>".encode("ascii")
        )
        objs.append(f"<< /Length {len(body)} >>\nstream\n".encode("ascii") + bytes(body) + b"endstream")
    objs[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {n} >>".encode("ascii")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, obj in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode("ascii") + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode("ascii")
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode("ascii")
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R /Info 4 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode("ascii")
    return bytes(out)
