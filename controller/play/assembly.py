"""How the table's components are put together (controller/play/table.py): each is given the
roles the components share (controller/play/bundles.py ``Shared``), its own devices, and
explicit references to the others it talks to.  No component is given the table itself; the round machine's seam
(:class:`RoundMachine`) is the table's ``state``, ``trigger`` and phase advance alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from controller.games.base import Phase, Procedure
from controller.play.betting import BetBoard
from controller.play.bundles import Shared, Wiring
from controller.play.dealing import Dealing, Deck
from controller.play.deciding import Deciding
from controller.play.devices import Devices
from controller.play.faults import Faults
from controller.play.floor import Floor
from controller.play.linking import LinkedWager
from controller.play.machine import Trigger
from controller.play.settling import Settling
from controller.play.wagering import Wagering
from controller.settings.config import TableProfile


class MachineModel(Protocol):
    """The table as the model of its ``transitions.Machine``."""

    @property
    def state(self) -> str: ...

    @property
    def proc(self) -> Procedure: ...

    def trigger(self, name: str) -> bool: ...

    def _advance(self) -> None: ...


class RoundMachine:
    """The table's machine as its components drive it (controller/play/context.py ``Machine``)."""

    def __init__(self, model: MachineModel):
        self._model = model

    @property
    def state(self) -> str:
        return self._model.state

    def phase(self) -> Phase | None:
        return self._model.proc.phase(self._model.state)

    def trigger(self, name: Trigger) -> bool:
        return self._model.trigger(name)

    def advance(self) -> None:
        self._model._advance()


@dataclass(frozen=True)
class Parts:
    deck: Deck
    board: BetBoard
    wagering: Wagering
    dealing: Dealing
    deciding: Deciding
    settling: Settling
    floor: Floor
    faults: Faults
    linked: LinkedWager | None


def assemble(s: Shared, profile: TableProfile, dev: Devices, w: Wiring) -> Parts:
    deck = Deck()
    board = BetBoard(profile.sensed, profile.seats, dev.lights)
    wagering = Wagering(s, board=board, deck=deck, sign=dev.sign, link=w.link, journal=w.journal)
    dealing = Dealing(s, deck=deck, devices=dev, marks=w.marks, void=wagering.void)
    settling = Settling(s, sign=dev.sign, lights=wagering, devices=w.marks, link=w.link, linked=w.lap is not None)
    deciding = Deciding(
        s,
        keypad=dev.keypad,
        bets=wagering,
        hands=dealing,
        settle=settling.phase_settle,
        call_later=w.reactor.call_later,
    )
    floor = Floor(
        books=s.books, machine=s.machine, game=s.game, marks=w.marks, reshuffle=dealing.shuffle_before_next_deal
    )
    faults = Faults(s, devices=dev, wiring=w, voids=wagering, hits=settling)
    linked = None
    if w.lap is not None:  # a linked progressive (docs/linked.md)
        linked = LinkedWager(s, spots=wagering, answers=settling, sign=dev.sign, reactor=w.reactor, link=w.lap)
    return Parts(deck, board, wagering, dealing, deciding, settling, floor, faults, linked)
