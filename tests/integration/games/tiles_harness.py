"""A synchronous Pai Gow (tiles) table (tests/integration/harness.py with the tiles profile):
keyed entries, the player-activated shaker's result, the shoe's eight stacks of four."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from controller.rules.tiles import FULL_SET, parse_tiles
from tests.integration.harness import Harness

PROFILE = Path(__file__).resolve().parents[3] / "config" / "tables" / "pai-gow-tiles.toml"


def tiles_doc(**options: Any) -> dict[str, Any]:
    """The shipped profile, with ``options`` replacing its [game.options] entries (None removes one)."""
    doc = tomllib.loads(PROFILE.read_text())
    opts = doc["game"]["options"]
    for k, v in options.items():
        if v is None:
            opts.pop(k, None)
        else:
            opts[k] = v
    return doc


def ids_for(stacks: Sequence[str]) -> list[list[int]]:
    """Eight stacks given as tile text (top tile first) -> tile ids 0..31 (the shoe's card bytes)."""
    free = list(range(32))
    out = []
    for s in stacks:
        row = []
        for k in parse_tiles(s, count=4):
            i = next(i for i in free if FULL_SET[i] == k)
            free.remove(i)
            row.append(i)
        out.append(row)
    assert not free, "the eight stacks must hold the whole set of 32 tiles"
    return out


class TilesHarness(Harness):
    def __init__(self, path: Path, doc: Mapping[str, Any] | None = None, rng: Any = None):
        super().__init__(path, doc or tiles_doc(), rng=rng)
        self.shuffled()

    def shuffled(self) -> None:
        self.post("shoe", "shoe", msg="SHUFFLED", cards=32)

    def key(self, text: str) -> str:
        """A keypad entry; returns the keypad's last prompt (the reply or ``ERROR: ...``)."""
        self.post("keypad", "keypad", msg="ENTRY", text=text)
        prompts = [c[1][0] for c in self.keypad.calls if c[0] == "prompt"]
        return prompts[-1] if prompts else ""

    def open_round(self, bets: Sequence[str]) -> None:
        assert self.state == "open_for_wagers", self.state
        for b in bets:
            reply = self.key(f"BET {b}")
            assert not reply.startswith("ERROR"), reply
        self.press("lockout")
        self.press("confirm")

    def armed_for(self) -> int:
        return int([c[1][0] for c in self.shaker.calls if c[0] == "arm"][-1])

    def roll(self, d: tuple[int, int, int], red: int) -> None:
        self.dice(d, red=red)

    def deal_tiles(self, stacks: Sequence[Sequence[int]], remaining: int = 0) -> None:
        left = 32
        for i, s in enumerate(stacks, 1):
            left -= len(s)
            self.post("shoe", "shoe", msg="STACK", stack=i, count=len(s), remaining=left, cards=list(s))
        self.post("shoe", "shoe", msg="REMAINING", remaining=remaining, stacks=len(stacks))

    def results(self, number: int | None = None) -> list[dict[str, Any]]:
        evs = self.ledger.events(kinds=["wager.result"])
        return [e.data for e in evs if number is None or e.round == number]
