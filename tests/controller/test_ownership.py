"""The round is owned by its parts: each record of the round, the deck, the bet
board, the devices out of order, the round's phase and the game's own notes are written by
their owner's module only.  The test reads every module under controller/ (as
tests/drivers/test_seams.py reads the drivers' imports) and fails on a write — an
assignment, an augmented assignment, a ``del``, an item assignment or a mutating call
(``append``, ``pop``, ``update`` ...) — to an owned field through anything but ``self``
in a module that does not own it."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path

from controller.games.base import GameRound
from controller.games.djwild import DJWildRound
from controller.games.faceup import FaceUpRound
from controller.games.fortune_asia import FortuneAsiaRound
from controller.games.overunder import OverUnderRound
from controller.games.round import Dealt, Decided, Settled, Wagered
from controller.games.sixcard import SixCardRound
from controller.games.tiles_rotation import TilesRound

ROOT = Path(__file__).resolve().parents[2]
CONTROLLER = ROOT / "controller"

#: record -> the modules that may write its fields
RECORDS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "Wagered": ([f.name for f in dataclasses.fields(Wagered)], ("controller/play/wagering.py",)),
    "Dealt": ([f.name for f in dataclasses.fields(Dealt)], ("controller/play/dealing.py",)),
    "Decided": ([f.name for f in dataclasses.fields(Decided)], ("controller/play/deciding.py",)),
    "Settled": ([f.name for f in dataclasses.fields(Settled)], ("controller/play/settling.py",)),
    "Deck": (["ready", "shuffle_failures", "shuffled_once"], ("controller/play/dealing.py",)),
    "BetBoard": (["level", "state", "frozen", "closed"], ("controller/play/betting.py",)),
    "OutOfOrder": (["_marks"], ("controller/play/floor.py",)),
    "Round.phase": (["phase"], ("controller/play/table.py",)),
    "RoundSlot.round": (["round"], ("controller/play/table.py",)),
    "TableGame": (["profile", "proc", "progressive"], ("controller/play/table.py",)),
    "DeviceRegistry.down": (["down"], ("controller/play/devices.py",)),
}
GAMES: dict[type[GameRound], tuple[str, ...]] = {
    GameRound: ("controller/games/base.py", "controller/games/djwild.py"),  # SAME <seat> <seat>
    SixCardRound: ("controller/games/sixcard.py",),
    FortuneAsiaRound: ("controller/games/fortune_asia.py",),
    FaceUpRound: ("controller/games/faceup.py",),
    DJWildRound: ("controller/games/djwild.py",),
    OverUnderRound: ("controller/games/overunder.py",),
    TilesRound: ("controller/games/tiles.py", "controller/games/tiles_rotation.py"),
}
#: fields of other objects that share an owned field's name: (module, field) -> whose field it is
NOT_THE_ROUND = {
    ("controller/play/recovery.py", "round"): "recovery.Recovered.round, what recovery returns",
    ("controller/boot/selfcheck.py", "results"): "selfcheck's report of each check",
    ("controller/reports/tablestatus.py", "pending_hits"): "tablestatus.RoundView, read from the ledger",
    ("controller/reports/tablestatus.py", "start"): "tablestatus.RoundView, read from the ledger",
    ("controller/reports/tablestatus.py", "rng_value"): "tablestatus.RoundView, read from the ledger",
    ("controller/reports/report.py", "voided"): "report.Activity, the day's figures read from the ledger",
    ("controller/reports/report.py", "level"): "report.HitLine, the day's figures read from the ledger",
    ("controller/reports/report.py", "wagers"): "report.CoinIn / the table's play, read from the ledger",
    ("controller/reports/report.py", "start"): "report.LevelReport, the meter at the day's start",
    ("controller/reports/slip.py", "validated_by"): "slip.Slip, a payout slip read from the ledger",
    ("controller/reports/slip.py", "level"): "slip.Slip, a payout slip read from the ledger",
}
MUTATORS = {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "sort"}


def owners() -> dict[str, set[str]]:
    """Field name -> the modules that may write a field of that name."""
    out: dict[str, set[str]] = {}
    for fields, modules in RECORDS.values():
        for f in fields:
            out.setdefault(f, set()).update(modules)
    for cls, modules in GAMES.items():
        own = {f.name for f in dataclasses.fields(cls)} - (
            set() if cls is GameRound else {f.name for f in dataclasses.fields(GameRound)}
        )
        for f in own:
            out.setdefault(f, set()).update(modules)
    return out


def _written(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            yield from _written(t)
        return
    while isinstance(target, (ast.Subscript, ast.Starred)):
        target = target.value
    yield target


def writes(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, field) of every write to ``<something>.<field>`` other than ``self.<field>``."""
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            targets = [node.func.value]
        if not targets:
            continue
        assert isinstance(node, ast.stmt | ast.expr)  # an assignment, a deletion or a call
        for t in (w for tt in targets for w in _written(tt)):
            if isinstance(t, ast.Attribute) and not (isinstance(t.value, ast.Name) and t.value.id in ("self", "cls")):
                yield node.lineno, t.attr


def violations(source: str, module: str, own: dict[str, set[str]]) -> list[str]:
    return [
        f"{module}:{line}: writes {field!r}, owned by {', '.join(sorted(own[field]))}"
        for line, field in sorted(writes(ast.parse(source)))
        if field in own and module not in own[field] and (module, field) not in NOT_THE_ROUND
    ]


def test_no_module_writes_a_round_field_it_does_not_own() -> None:
    own = owners()
    found = []
    for path in sorted(CONTROLLER.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        found += violations(path.read_text(), module, own)
    assert found == []


def test_the_ownership_check_finds_a_foreign_write() -> None:
    """The check can fail: settling writing a wager, the table readying the deck, deciding
    noting a game's low card, a game answering for the deciding component."""
    own = owners()
    bad = """
def f(rnd, t, proc, x):
    rnd.wagered.wagers[(1, "base")] = 500
    t.parts.deck.ready = True
    proc.play.low.update({1: 3})
    x.decisions["settings"] = None
    del t.marks._marks["shoe"]
    rnd.settled.results += []
"""
    got = violations(bad, "controller/play/settling.py", own)
    assert [g.split(": ", 1)[1].split(",")[0] for g in got] == [
        "writes 'wagers'",
        "writes 'ready'",
        "writes 'low'",
        "writes 'decisions'",
        "writes '_marks'",
    ]
    assert violations("def g(self):\n    self.wagers = {}\n    self.ready = True\n", "controller/x.py", own) == []
    assert violations("def h(w):\n    w.wagers[(1, 'x')] = 1\n", "controller/play/wagering.py", own) == []


def test_every_round_field_has_an_owner() -> None:
    """A field added to a record is covered by the check (its name is in the owners' map)."""
    own = owners()
    for cls in (Wagered, Dealt, Decided, Settled, *GAMES):
        assert {f.name for f in dataclasses.fields(cls)} <= set(own), cls.__name__
