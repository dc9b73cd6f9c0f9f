"""How the table's components are put together (controller/play/table.py): each is given only
the roles it uses (controller/play/context.py) and explicit references to the others it
talks to.  No component is given the table itself; the round machine's seam
(:class:`RoundMachine`) is the table's ``state``, ``trigger`` and phase advance alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from controller.core.reactor import Reactor
from controller.games.base import Phase, Procedure
from controller.play.betting import BetBoard
from controller.play.context import Books, Emit, Game, Journal, Link, Log, Machine, RaiseTilt, RoundSlot, ShowMeters
from controller.play.dealing import Dealing, Deck
from controller.play.deciding import Deciding
from controller.play.devices import DeviceRegistry, Devices
from controller.play.faults import Faults
from controller.play.floor import Floor, OutOfOrder
from controller.play.linked import Linkage
from controller.play.linking import LinkedWager
from controller.play.machine import Trigger
from controller.play.settling import Settling
from controller.play.timers import DeviceTimer
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
class Shared:
    """The roles most components use."""

    books: Books
    machine: Machine
    game: Game
    rounds: RoundSlot
    timer: DeviceTimer
    raise_tilt: RaiseTilt
    emit: Emit
    show_meters: ShowMeters
    log: Log


@dataclass(frozen=True)
class Wiring:
    """What only one or two components are given."""

    reactor: Reactor
    marks: OutOfOrder
    registry: DeviceRegistry
    link: Link
    lap: Linkage | None
    journal: Journal | None
    drop_round: Callable[[], None]
    publish: Callable[[], None]


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
    wagering = Wagering(
        books=s.books,
        machine=s.machine,
        game=s.game,
        rounds=s.rounds,
        board=board,
        deck=deck,
        sign=dev.sign,
        timer=s.timer,
        raise_tilt=s.raise_tilt,
        emit=s.emit,
        show_meters=s.show_meters,
        log=s.log,
        link=w.link,
        journal=w.journal,
    )
    dealing = Dealing(
        books=s.books,
        machine=s.machine,
        game=s.game,
        rounds=s.rounds,
        deck=deck,
        devices=w.marks,
        shoe=dev.shoe,
        shaker=dev.shaker,
        rng=dev.rng,
        sign=dev.sign,
        keypad=dev.keypad,
        timer=s.timer,
        void=wagering.void,
        raise_tilt=s.raise_tilt,
        emit=s.emit,
        show_meters=s.show_meters,
        log=s.log,
    )
    settling = Settling(
        books=s.books,
        machine=s.machine,
        game=s.game,
        rounds=s.rounds,
        sign=dev.sign,
        lights=wagering,
        devices=w.marks,
        link=w.link,
        linked=w.lap is not None,
        raise_tilt=s.raise_tilt,
        emit=s.emit,
        show_meters=s.show_meters,
        log=s.log,
    )
    deciding = Deciding(
        books=s.books,
        machine=s.machine,
        game=s.game,
        rounds=s.rounds,
        keypad=dev.keypad,
        bets=wagering,
        hands=dealing,
        settle=settling.phase_settle,
        raise_tilt=s.raise_tilt,
        emit=s.emit,
        limits=profile.keypad,
        call_later=w.reactor.call_later,
    )
    floor = Floor(
        books=s.books, machine=s.machine, game=s.game, marks=w.marks, reshuffle=dealing.shuffle_before_next_deal
    )
    faults = Faults(
        books=s.books,
        machine=s.machine,
        game=s.game,
        rounds=s.rounds,
        timer=s.timer,
        sign=dev.sign,
        serial=dev.serial,
        registry=w.registry,
        marks=w.marks,
        voids=wagering,
        hits=settling,
        drop_round=w.drop_round,
        emit=s.emit,
        publish=w.publish,
        log=s.log,
    )
    linked = None
    if w.lap is not None:  # a linked progressive (docs/linked.md)
        linked = LinkedWager(
            books=s.books,
            machine=s.machine,
            rounds=s.rounds,
            spots=wagering,
            answers=settling,
            sign=dev.sign,
            reactor=w.reactor,
            link=w.lap,
            raise_tilt=s.raise_tilt,
            emit=s.emit,
            show_meters=s.show_meters,
            log=s.log,
        )
    return Parts(deck, board, wagering, dealing, deciding, settling, floor, faults, linked)
