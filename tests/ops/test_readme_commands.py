"""The README's command table matches the commands' ``--help``: every option a row's synopsis
names is one the command takes, and every option a command takes is in its row — but for the
ledger's location options, which the ``history`` row explains once for every command reading
a ledger.  (Before: `lap --sim`, `backup`'s options, `console --socket` and others were in no
row, and a row could name an option that did not exist.)"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from controller.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]

#: where a ledger is: explained once, in the history row, for every command that reads one
LEDGER_OPTIONS = {"--config", "--state-dir", "--key-file", "--witness-dir"}


def _rows() -> dict[str, list[tuple[str, str]]]:
    """Per command, its rows as (synopsis, the whole row)."""
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Commands") :].split("\n## ", 1)[0]
    rows: dict[str, list[tuple[str, str]]] = {}
    for row in table.splitlines():
        m = re.match(r"^\| (.*?) \| ", row)
        if m is None or "`tablectl " not in m.group(1):
            continue
        for cmd in set(re.findall(r"`tablectl ([a-z-]+)", m.group(1))):
            rows.setdefault(cmd, []).append((m.group(1), row))
    return rows


def _options(p: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """A parser's long options and its positionals' choices (sub-commands' too)."""
    opts: set[str] = set()
    words: set[str] = set()
    for a in p._actions:
        opts.update(o for o in a.option_strings if o.startswith("--") and o != "--help")
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                words.add(name)
                o, w = _options(sp)
                opts |= o
                words |= w
        elif not a.option_strings and a.choices:
            words.update(str(c) for c in a.choices)
    return opts, words


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert isinstance(sub, argparse._SubParsersAction)
    return dict(sub.choices)


@pytest.mark.parametrize("command", sorted(_commands()))
def test_the_readme_row_and_the_help_name_the_same_options(command):
    rows = _rows()
    assert command in rows, f"no README row for `tablectl {command}`"
    opts, words = _options(_commands()[command])
    # a row of two commands (`status` / `meters`): each one's part of the synopsis
    parts = [part for s, _ in rows[command] for part in re.split(r"(?=`tablectl )", s)]
    synopsis = " ".join(part for part in parts if part.startswith(f"`tablectl {command}"))
    whole = " ".join(r for _, r in rows[command])
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", synopsis))
    assert named <= opts, f"the README names options `tablectl {command}` does not take: {sorted(named - opts)}"
    mentioned = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", whole))
    missing = opts - mentioned - LEDGER_OPTIONS
    assert not missing, f"`tablectl {command} --help` has options its README row does not: {sorted(missing)}"
    if command not in ("eval", "analyze", "lap"):  # their choices are values, listed elsewhere (--list, docs)
        absent = {w for w in words if not re.search(rf"\b{re.escape(w)}\b", whole)}
        assert not absent, f"`tablectl {command}`'s sub-commands missing from its row: {sorted(absent)}"


def test_the_history_row_explains_the_ledger_options():
    (_synopsis, row), *_ = _rows()["history"]
    for opt in LEDGER_OPTIONS:
        assert f"`{opt}" in row, opt
