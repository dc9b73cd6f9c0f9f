"""One round's data, held by the table while it plays and reconstructable
from the ledger afterwards (§ 670a.11(j); controller/history.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.games.base import DecisionState, Stack
from controller.rules.settlement import WagerResult


@dataclass
class RoundData:
    number: int
    #: every accepted wager: (seat, wager id) -> cents (sensed at the lock-out edge, keyed, or late)
    wagers: dict[tuple[int, str], int] = field(default_factory=dict)
    #: wagers the dealer keyed before the lock-out (accepted at the lock-out edge)
    keyed: dict[tuple[int, str], int] = field(default_factory=dict)
    spots: list[tuple[str, int]] = field(default_factory=list)  # every sensed (wager, seat) accepted
    rejected: list[int] = field(default_factory=list)  # seats whose late chips were rejected
    lockout_t: float | None = None
    #: a linked table: the LAP's rate version when the wagers were accepted (the contribution
    #: carries it: the LAP prices it at that version's rates, docs/linked.md)
    rate_version: int | None = None
    confirmed: bool = False
    credited: bool = False
    phase: int = -1  # index into the procedure's phases
    dice: tuple[int, int, int] | None = None
    red: int | None = None
    rng_value: int | None = None
    start: int | None = None
    no_rolls: int = 0
    #: the stacks of the current deal still to dispense, and everything dispensed so far
    to_dispense: list[Stack] = field(default_factory=list)
    dealt_stacks: list[Stack] = field(default_factory=list)
    stacks: list[list[int]] = field(default_factory=list)
    cards: dict[str, tuple[int, ...]] = field(default_factory=dict)  # recipient -> cards ("seat:3", "dealer")
    face_up: int = 0
    unread: bool = False
    entered: dict[int, tuple[int, ...]] = field(default_factory=dict)  # keypad hands (seat -> cards)
    decisions: dict[str, DecisionState] = field(default_factory=dict)  # decision phase -> answers
    extra: dict[str, Any] = field(default_factory=dict)  # a procedure's own notes
    results: list[WagerResult] = field(default_factory=list)
    pending_hits: list[WagerResult] = field(default_factory=list)
    payouts: list[dict[str, Any]] = field(default_factory=list)
    #: a linked table's hit claims: (seat, hand) -> the claim's ledger seq (the LAP answers by it)
    link_hits: dict[tuple[int, str], int] = field(default_factory=dict)
    #: the floorperson who validated the first pending linked hit while its answer was awaited
    validated_by: str | None = None
    void_reason: str | None = None

    @property
    def start_position(self) -> int:
        """The starting position (§ 670a.5(i)); an error before the dice or the RNG gave it."""
        if self.start is None:
            raise RuntimeError(f"round {self.number}: no starting position yet")
        return self.start

    @property
    def accepted(self) -> dict[int, int]:
        """The accepted Progressive Payout Wagers: seat -> cents."""
        return {s: c for (s, w), c in sorted(self.wagers.items()) if w == "progressive"}

    @property
    def hands(self) -> dict[int, tuple[int, ...]]:
        return {int(k[5:]): v for k, v in self.cards.items() if k.startswith("seat:")}

    @property
    def dealer(self) -> tuple[int, ...]:
        return self.cards.get("dealer", ())

    def unsettled(self) -> dict[tuple[int, str], int]:
        """Accepted wagers without a result yet (a void returns exactly these)."""
        done = {(r.seat, r.wager) for r in self.results}
        return {k: c for k, c in self.wagers.items() if k not in done}
