"""The numbered subsections of the chapters tablectl implements, read from the regulations'
text in ``../shared/regs`` (58 Pa. Code 621a, 659a, 670a, 686a, 687a, 688a).

A subsection is a section's lettered subdivision, ``§ 687a.11(e)``; a section with none
(the definitions) is one entry, ``§ 687a.1``.  The texts are the Pennsylvania Code's (Markdown
from the Code's pages) and the Bulletin's rulemakings (plain text with hard line breaks,
hyphenated words, the amended text in brackets); the parser reads all of them the same way:

* a section starts at ``§ 687a.11. Title`` after the chapter's ``CHAPTER 687a`` line (the
  rulemakings' preambles cite sections too);
* a subsection starts at a line ``(e) ...`` (or ``[(d)] (e) ...``, a renumbered one) whose
  letter is the next one expected; ``(i)``, ``(v)`` and ``(x)`` are subsections only when the
  next marker after them is the next subsection letter rather than ``(ii)``, ``(vi)``, ``(xi)``;
* ``* * * * *`` (text the rulemaking leaves unchanged and does not print) lets the letters skip;
  the skipped subsections are listed with ``printed = False``.

Pure apart from reading the files handed to it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

CHAPTERS = ("621a", "659a", "670a", "686a", "687a", "688a")
EXCERPT = 110  # characters of a subsection's text kept for the matrix

_HEADER = re.compile(r"^§\s*(6\d\da)\.(\d+)\.\s+(\S.*)$")
_CHAPTER = re.compile(r"^CHAPTER\s+(6\d\da)\b", re.I)
#: "(e) Text" -- the text opens with a capital (a wrapped "(d)." or "(d) of this section" is no marker)
_MARKER = re.compile(r"^(?:\[\([a-z]+\)\]\s*)?\(([a-z]{1,4}|\d{1,2}|[A-Z])\)\s*([A-Z\[“‘\"'].*)$")
_STARS = re.compile(r"^\*(\s*\*){2,}\s*$")
_ROMAN_NEXT = {"i": "ii", "v": "vi", "x": "xi"}
_TRAILER = re.compile(r"^(Authority|Source|Cross References|Notes?)\b")


@dataclass
class Subsection:
    chapter: str
    section: int
    letter: str  # "" for a section without subsections
    title: str  # the section's title
    text: str = ""  # the start of the subsection's text
    printed: bool = True  # False: skipped by the rulemaking ("* * * * *"), text not in the regs
    source: str = ""

    @property
    def id(self) -> str:
        return f"{self.chapter}.{self.section}" + (f"({self.letter})" if self.letter else "")


@dataclass
class _Section:
    chapter: str
    number: int
    title: str
    source: str
    lines: list[str] = field(default_factory=list)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _clean(line: str) -> str:
    """A line without Markdown decoration (headings, bullets, bold) and surrounding blanks."""
    s = line.strip().replace("**", "")
    s = re.sub(r"^#+\s*", "", s)
    s = re.sub(r"^[-*]\s+(?=[(§\[])", "", s)
    return s.strip()


def _sections(text: str, source: str) -> list[_Section]:
    """The sections of every chapter in ``text`` (after its CHAPTER line), with their lines."""
    out: list[_Section] = []
    chapter = None
    cur: _Section | None = None
    for raw in text.splitlines():
        line = _clean(raw)
        opened = _chapter_opened(line)
        if opened is not None:
            chapter, cur = opened, None
            continue
        h = _HEADER.match(line)
        if h and chapter is not None and h.group(1) == chapter:
            cur = _Section(chapter, int(h.group(2)), h.group(3).strip(), source)
            out.append(cur)
            continue
        if cur is not None and line:
            cur.lines.append(line)
    for s in out:
        s.title = _title(s)
    return out


def _chapter_opened(line: str) -> str | None:
    """The chapter of :data:`CHAPTERS` whose CHAPTER line ``line`` is, or None."""
    m = _CHAPTER.match(line)
    return m.group(1) if m and m.group(1) in CHAPTERS else None


def _title(s: _Section) -> str:
    """A title broken over lines ("physical char-" / "acteristics.") joined again."""
    title = s.title
    while not title.endswith(".") and s.lines and not _MARKER.match(s.lines[0]):
        nxt = s.lines.pop(0)
        title = title[:-1] + nxt if title.endswith("-") else f"{title} {nxt}"
    return title.rstrip(".")


def _markers(lines: Sequence[str]) -> list[tuple[int, str]]:
    return [(i, m.group(1)) for i, line in enumerate(lines) if (m := _MARKER.match(line))]


def _is_subsection(markers: list[tuple[int, str]], k: int, expected: str) -> bool:
    """Whether marker ``k`` (the expected letter, one of i, v, x) opens a subsection rather than a
    roman subparagraph: a subsection is followed by its paragraph (1) or by the next subsection;
    a subparagraph by (ii), its clauses (A) or the paragraph it belongs to continuing."""
    nxt = markers[k + 1][1] if k + 1 < len(markers) else ""
    if nxt in ("1", chr(ord(expected) + 1)):
        return True
    if nxt:
        return False
    prev = markers[k - 1][1] if k else ""
    return len(prev) == 1 and prev.islower() and ord(prev) == ord(expected) - 1


def _subsections(sec: _Section) -> list[Subsection]:
    markers = _markers(sec.lines)
    found: list[Subsection] = []
    expected, stars_at = "a", -1
    stars = [i for i, line in enumerate(sec.lines) if _STARS.match(line)]
    for k, (i, m) in enumerate(markers):
        gap = any(stars_at < s < i for s in stars)
        if not _opens_subsection(markers, k, expected, gap):
            continue
        for skipped in range(ord(expected), ord(m)):  # "* * * * *": unchanged, not printed
            found.append(Subsection(sec.chapter, sec.number, chr(skipped), sec.title, printed=False))
        found.append(Subsection(sec.chapter, sec.number, m, sec.title, _excerpt(sec.lines, i)))
        expected, stars_at = chr(ord(m) + 1), i
    if not found:
        return [Subsection(sec.chapter, sec.number, "", sec.title, _excerpt(sec.lines, -1))]
    return found


def _opens_subsection(markers: list[tuple[int, str]], k: int, expected: str, gap: bool) -> bool:
    """Whether marker ``k`` opens the next subsection: a lower-case letter, the one expected (or a
    later one after a "* * * * *" gap), and not a roman numeral that only looks like the next letter."""
    m = markers[k][1]
    if len(m) != 1 or not m.islower():
        return False
    if m != expected and not (gap and m > expected):
        return False
    return not (m == expected and m in _ROMAN_NEXT and not _is_subsection(markers, k, expected))


def _excerpt(lines: Sequence[str], start: int) -> str:
    """The first words of the subsection opening at line ``start`` (the section's text at -1)."""
    parts: list[str] = []
    if start >= 0:
        m = _MARKER.match(lines[start])
        parts.append(m.group(2) if m else "")
    for line in lines[start + 1 :]:
        if _ends_excerpt(line) or sum(map(len, parts)) > EXCERPT:
            break
        parts.append(line)
    text = re.sub(r"\s+", " ", _join_lines(parts)).strip()
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1].rsplit(" ", 1)[0] + " …"


def _ends_excerpt(line: str) -> bool:
    """The next subdivision, a "* * * * *" gap or the trailer: the end of a subsection's opening words."""
    return bool(_MARKER.match(line) or _STARS.match(line) or _TRAILER.match(line))


def _join_lines(parts: Sequence[str]) -> str:
    """Lines joined by spaces; a word broken with a hyphen at a line's end joined again."""
    text = ""
    for part in parts:
        text = text[:-1] + part if text.endswith("-") else f"{text} {part}"
    return text


def parse(paths: Iterable[Path]) -> tuple[list[Subsection], list[str]]:
    """Every subsection of :data:`CHAPTERS` in the files, and warnings (a section found twice
    with different subsections, a chapter or section missing)."""
    by_id: dict[str, Subsection] = {}
    warnings: list[str] = []
    for path in sorted(paths):
        for sec in _sections(path.read_text(encoding="utf-8", errors="replace"), path.name):
            subs = _subsections(sec)
            for s in subs:
                s.source = path.name
                old = by_id.get(s.id)
                if old is None or (not old.printed and s.printed):
                    by_id[s.id] = s
    out = sorted(by_id.values(), key=lambda s: (CHAPTERS.index(s.chapter), s.section, s.letter))
    return out, warnings + _gaps(out)


def _gaps(out: list[Subsection]) -> list[str]:
    """A chapter with no text, or sections of a chapter missing below its last one."""
    warnings = []
    for ch in CHAPTERS:
        numbers = sorted({s.section for s in out if s.chapter == ch})
        if not numbers:
            warnings.append(f"chapter {ch}: no text found")
            continue
        missing = sorted(set(range(1, numbers[-1] + 1)) - set(numbers))
        if missing:
            warnings.append(f"chapter {ch}: sections {', '.join(f'{ch}.{n}' for n in missing)} not in the regs' text")
    return warnings
