"""One round, owned by its parts, and reconstructable from the ledger afterwards
(§ 670a.11(j); controller/books/history.py).

Each component of the table keeps its own record of the round in play and is the only
one that writes it (tests/controller/test_ownership.py reads every module to keep it so):

==================  ===============================  ==========================================
record              written by                       what it holds
==================  ===============================  ==========================================
:class:`Wagered`    controller/play/wagering.py           the wagers: keyed, sensed, late; the count
:class:`Dealt`      controller/play/dealing.py            the starting position, the stacks, the cards
:class:`Decided`    controller/play/deciding.py           the players' decisions, phase by phase
:class:`Settled`    controller/play/settling.py           the results, the hits, what was paid
==================  ===============================  ==========================================

A game's own notes on the round are its procedure's (controller/games/base.py
``GameRound``).  Everyone else reads a round through :class:`Round`: read-only views
(``Mapping``, ``Sequence``, properties) of the four records, and the procedure's phase the
round is in, which only the table writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from controller.games.base import DecisionState, Stack
from controller.rules.settlement import WagerResult

Key = tuple[int, str]  # (seat, wager id)


# ---- the records: each written by its component only ----------------------------------------
@dataclass
class Wagered:
    """What was wagered (controller/play/wagering.py)."""

    #: every accepted wager: (seat, wager id) -> cents (sensed at the lock-out edge, keyed, or late)
    wagers: dict[Key, int] = field(default_factory=dict)
    #: wagers the dealer keyed before the lock-out (accepted at the lock-out edge)
    keyed: dict[Key, int] = field(default_factory=dict)
    spots: list[tuple[str, int]] = field(default_factory=list)  # every sensed (wager, seat) accepted
    rejected: list[int] = field(default_factory=list)  # seats whose late chips were rejected
    lockout_t: float | None = None
    #: a linked table: the LAP's rate version when the wagers were accepted (the contribution
    #: carries it: the LAP prices it at that version's rates, docs/linked.md)
    rate_version: int | None = None
    confirmed: bool = False
    credited: bool = False
    void_reason: str | None = None


@dataclass
class Dealt:
    """What was dealt (controller/play/dealing.py)."""

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


@dataclass
class Decided:
    """What the players decided (controller/play/deciding.py): decision phase -> answers."""

    decisions: dict[str, DecisionState] = field(default_factory=dict)


@dataclass
class Settled:
    """What was settled (controller/play/settling.py)."""

    results: list[WagerResult] = field(default_factory=list)
    pending_hits: list[WagerResult] = field(default_factory=list)
    payouts: list[Payout] = field(default_factory=list)
    #: a linked table's hit claims: (seat, hand) -> the claim's ledger seq (the LAP answers by it)
    link_hits: dict[tuple[int, str], int] = field(default_factory=dict)
    #: the floorperson who validated the first pending linked hit while its answer was awaited
    validated_by: str | None = None


@dataclass(frozen=True)
class Payout:
    """A percentage-of-meter hit paid (in settlement order, § 670a.12(d)(3))."""

    seat: int
    hand: str | None
    cents: int
    order: int

    def as_dict(self) -> dict[str, object]:
        return {"seat": self.seat, "hand": self.hand, "cents": self.cents, "order": self.order}


# ---- the read-only views the others are given ------------------------------------------------
class WageredView(Protocol):
    @property
    def wagers(self) -> Mapping[Key, int]: ...
    @property
    def keyed(self) -> Mapping[Key, int]: ...
    @property
    def spots(self) -> Sequence[tuple[str, int]]: ...
    @property
    def rejected(self) -> Sequence[int]: ...
    @property
    def lockout_t(self) -> float | None: ...
    @property
    def confirmed(self) -> bool: ...
    @property
    def credited(self) -> bool: ...
    @property
    def void_reason(self) -> str | None: ...


class DealtView(Protocol):
    @property
    def dice(self) -> tuple[int, int, int] | None: ...
    @property
    def red(self) -> int | None: ...
    @property
    def rng_value(self) -> int | None: ...
    @property
    def start(self) -> int | None: ...
    @property
    def no_rolls(self) -> int: ...
    @property
    def to_dispense(self) -> Sequence[Stack]: ...
    @property
    def dealt_stacks(self) -> Sequence[Stack]: ...
    @property
    def stacks(self) -> Sequence[Sequence[int]]: ...
    @property
    def cards(self) -> Mapping[str, tuple[int, ...]]: ...
    @property
    def face_up(self) -> int: ...
    @property
    def unread(self) -> bool: ...
    @property
    def entered(self) -> Mapping[int, tuple[int, ...]]: ...


class DecidedView(Protocol):
    @property
    def decisions(self) -> Mapping[str, DecisionState]: ...


class SettledView(Protocol):
    @property
    def results(self) -> Sequence[WagerResult]: ...
    @property
    def pending_hits(self) -> Sequence[WagerResult]: ...
    @property
    def payouts(self) -> Sequence[Payout]: ...
    @property
    def link_hits(self) -> Mapping[tuple[int, str], int]: ...
    @property
    def validated_by(self) -> str | None: ...


class Round:
    """One round as every part of the table reads it: the four records, read-only.  ``phase``
    (the index of the procedure's phase the round last entered, -1 before the first) is the
    table's to write (controller/play/table.py)."""

    def __init__(
        self,
        number: int,
        wagered: WageredView | None = None,
        dealt: DealtView | None = None,
        decided: DecidedView | None = None,
        settled: SettledView | None = None,
    ):
        self.number = number
        self.phase = -1
        self.wagered: WageredView = wagered if wagered is not None else Wagered()
        self.dealt: DealtView = dealt if dealt is not None else Dealt()
        self.decided: DecidedView = decided if decided is not None else Decided()
        self.settled: SettledView = settled if settled is not None else Settled()

    # ---- wagered ---------------------------------------------------------------------
    @property
    def wagers(self) -> Mapping[Key, int]:
        return self.wagered.wagers

    @property
    def keyed(self) -> Mapping[Key, int]:
        return self.wagered.keyed

    @property
    def spots(self) -> Sequence[tuple[str, int]]:
        return self.wagered.spots

    @property
    def rejected(self) -> Sequence[int]:
        return self.wagered.rejected

    @property
    def lockout_t(self) -> float | None:
        return self.wagered.lockout_t

    @property
    def confirmed(self) -> bool:
        return self.wagered.confirmed

    @property
    def credited(self) -> bool:
        return self.wagered.credited

    @property
    def void_reason(self) -> str | None:
        return self.wagered.void_reason

    @property
    def accepted(self) -> dict[int, int]:
        """The accepted Progressive Payout Wagers: seat -> cents."""
        return accepted(self.wagered.wagers)

    # ---- dealt -----------------------------------------------------------------------
    @property
    def dice(self) -> tuple[int, int, int] | None:
        return self.dealt.dice

    @property
    def red(self) -> int | None:
        return self.dealt.red

    @property
    def rng_value(self) -> int | None:
        return self.dealt.rng_value

    @property
    def start(self) -> int | None:
        return self.dealt.start

    @property
    def start_position(self) -> int:
        """The starting position (§ 670a.5(i)); an error before the dice or the RNG gave it."""
        if self.dealt.start is None:
            raise RuntimeError(f"round {self.number}: no starting position yet")
        return self.dealt.start

    @property
    def no_rolls(self) -> int:
        return self.dealt.no_rolls

    @property
    def to_dispense(self) -> Sequence[Stack]:
        return self.dealt.to_dispense

    @property
    def dealt_stacks(self) -> Sequence[Stack]:
        return self.dealt.dealt_stacks

    @property
    def stacks(self) -> Sequence[Sequence[int]]:
        return self.dealt.stacks

    @property
    def cards(self) -> Mapping[str, tuple[int, ...]]:
        return self.dealt.cards

    @property
    def face_up(self) -> int:
        return self.dealt.face_up

    @property
    def unread(self) -> bool:
        return self.dealt.unread

    @property
    def entered(self) -> Mapping[int, tuple[int, ...]]:
        return self.dealt.entered

    @property
    def hands(self) -> dict[int, tuple[int, ...]]:
        return {int(k[5:]): v for k, v in self.dealt.cards.items() if k.startswith("seat:")}

    @property
    def dealer(self) -> tuple[int, ...]:
        return self.dealt.cards.get("dealer", ())

    # ---- decided ---------------------------------------------------------------------
    @property
    def decisions(self) -> Mapping[str, DecisionState]:
        return self.decided.decisions

    # ---- settled ---------------------------------------------------------------------
    @property
    def results(self) -> Sequence[WagerResult]:
        return self.settled.results

    @property
    def pending_hits(self) -> Sequence[WagerResult]:
        return self.settled.pending_hits

    @property
    def payouts(self) -> list[dict[str, object]]:
        """The meter hits paid, as dicts (seat, hand, cents, order), for the listeners."""
        return [p.as_dict() for p in self.settled.payouts]

    @property
    def link_hits(self) -> Mapping[tuple[int, str], int]:
        return self.settled.link_hits

    @property
    def validated_by(self) -> str | None:
        return self.settled.validated_by

    def unsettled(self) -> dict[Key, int]:
        """Accepted wagers without a result yet (a void returns exactly these)."""
        return unsettled(self.wagered.wagers, self.settled.results)


def accepted(wagers: Mapping[Key, int]) -> dict[int, int]:
    """The accepted Progressive Payout Wagers among ``wagers``: seat -> cents."""
    return {s: c for (s, w), c in sorted(wagers.items()) if w == "progressive"}


def unsettled(wagers: Mapping[Key, int], results: Sequence[WagerResult]) -> dict[Key, int]:
    """The wagers without a result among ``results`` (a void returns exactly these)."""
    done = {(r.seat, r.wager) for r in results}
    return {k: c for k, c in wagers.items() if k not in done}
