"""The table: one round state machine per table, owned by the reactor thread.

Every device event reaches :meth:`Table.handle` through the reactor queue.  The
table changes its in-memory state at once (so a lock-out freezes the accepted
wagers the moment its event is taken off the queue), submits the ledger records
for the change, and only when the ledger writer reports them durable does it
*show* anything: lights, the sign, the next device command that depends on it.

The machine is a plain ``transitions.Machine`` with ``queued=True``: safe
because only the reactor thread ever triggers it.  :class:`Table` keeps the
machine, event dispatch, the procedure's phases, the round in play, start-up and
profile changes; the work of a round, and its faults, are done by components that
each own their state and their part of the round (controller/games/round.py), each given
the shared roles (controller/play/bundles.py) and explicit references to one another:

================================  ===============================================
:class:`~controller.play.wagering.Wagering`   bet sensors, keyed wagers, the lock-out, the count, voids
:class:`~controller.play.dealing.Dealing`     the deck, starting position, the shoe's deals, stub, hand entry
:class:`~controller.play.deciding.Deciding`   the keypad: players' decisions, keyed hands done
:class:`~controller.play.settling.Settling`   settlement, meter hits and validation, the round's close
:class:`~controller.play.floor.Floor`         out of order / in service, ordered reshuffle, new dealer
:class:`~controller.play.faults.Faults`       the latched tilts: raised, latched again at start-up, shown, cleared
:class:`~controller.play.linking.LinkedWager`  a linked progressive opened and closed by its LAP
================================  ===============================================

Start-up recovery from the ledger is controller/play/recovery.py; the published
status is controller/play/status.py; the device deadline is controller/play/timers.py.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from transitions import Machine

from controller.books import meters as M
from controller.books.ledger import Record
from controller.core.log import LogContext
from controller.core.reactor import Event, Reactor
from controller.core.records import Kind, PhaseKind
from controller.games import procedure_for
from controller.games.base import Procedure
from controller.games.round import Round
from controller.play.assembly import RoundMachine, assemble
from controller.play.betting import parse_input
from controller.play.bundles import Shared, Wiring
from controller.play.context import (
    LINK_RECORDS,
    Journal,
    LedgerWriterLike,
    Link,
    MeterSign,
    NullLink,
    RoundSlot,
    TableBooks,
    TableGame,
    Then,
)
from controller.play.devices import DeviceRegistry, Devices, SignLine
from controller.play.floor import OutOfOrder
from controller.play.inputs import Debouncer
from controller.play.linked import Linkage, last_outbox_seq
from controller.play.linking import LinkedWager
from controller.play.machine import TableState, between_rounds, build
from controller.play.profilechange import profile_change
from controller.play.progressive import LEVEL, ProgressiveSystem
from controller.play.recovery import Recovered, RecoveredRound, recover
from controller.play.status import StatusBoard
from controller.play.timers import DeviceTimer
from controller.settings.config import TableProfile

__all__ = ["Devices", "Round", "Table", "TableOptions"]

S = TableState


@dataclass(frozen=True, slots=True)
class TableOptions:
    """What a service gives a table beyond its devices and ledger (the tests' harness: the defaults)."""

    bounce_s: float = 0.02  # the inputs' debounce ([gpio] bounce_ms)
    #: the lock-out journal (controller/books/lockjournal.py); None: the count is shown once the ledger has it
    journal: Journal | None = None
    #: how messages reach a linked progressive's LAP (controller/play/linked.py); None: not linked
    link_send: Callable[[dict[str, Any]], None] | None = None


class Table:
    # set on the model by transitions' Machine
    state: str
    trigger: Callable[..., bool]

    def __init__(
        self,
        profile: TableProfile,
        reactor: Reactor,
        writer: LedgerWriterLike,
        devices: Devices,
        logctx: LogContext,
        options: TableOptions = TableOptions(),
    ):
        """The game's procedure is the profile's (as :meth:`apply_profile` finds it too)."""
        procedure = procedure_for(profile.game, profile)
        self.reactor = reactor
        self.writer = writer
        if not isinstance(devices.sign, SignLine):  # the sign's line remembered (a linked hit beside it)
            devices.sign = SignLine(devices.sign)
        self.dev = devices
        self.logctx = logctx
        self.log = logctx.logger("table")
        self.listeners: list[Callable[[str, Mapping[str, Any]], None]] = []
        self.visited: deque[str] = deque(maxlen=256)  # recent states, for tests and the console
        self._handling = False  # ``handle`` is running: it publishes the status itself when done
        self.registry = DeviceRegistry()
        self.marks = OutOfOrder()
        self._slot = RoundSlot()
        self._game = TableGame(
            profile, procedure, ProgressiveSystem(profile.progressive) if profile.progressive else None
        )
        lap = self._make_link(profile, options.link_send)
        self.link: Link = lap if lap is not None else NullLink()  # the one place linked or not
        self.books = TableBooks(writer, writer.ledger.meters, writer.ledger.last_round(), self.link, self._publish)
        self._build_components(profile, options.journal, RoundMachine(self), DeviceTimer(reactor, self._timed_out))
        states, transitions_spec = build(procedure.phases)
        self.debounce = Debouncer(reactor, options.bounce_s, self._on_input)
        self._status = StatusBoard(self._snapshot, reactor.clock)
        self.machine = Machine(
            model=self,
            states=states,
            transitions=transitions_spec,
            initial=S.SELF_TEST.value,
            queued=True,
            auto_transitions=False,
            after_state_change="_after_state",
        )
        self._publish()

    def _make_link(self, profile: TableProfile, send: Callable[[dict[str, Any]], None] | None) -> Linkage | None:
        """A linked progressive's view of its LAP (controller/play/linked.py), or None."""
        prog = profile.progressive
        if prog is None or prog.linked is None:
            return None
        last = last_outbox_seq(self.writer.ledger.events(kinds=LINK_RECORDS))
        return LinkedWager.make(prog.linked, prog.link_timeout_s, last, send=send, status_source=self._link_status)

    def _meter_cents(self) -> int | None:
        """The meter the sign shows: the LAP's as it last pushed it, or the table's own."""
        if self.lap is not None:
            return self.lap.meters.get(LEVEL)
        meter = self.books.meter
        return meter.cents if meter is not None else None

    def show_meters(self) -> None:
        """The meter on the sign: the LAP's as it last pushed it, or the table's own."""
        MeterSign(self.dev.sign, self._meter_cents).show()

    def _build_components(
        self, profile: TableProfile, journal: Journal | None, machine: RoundMachine, timer: DeviceTimer
    ) -> None:
        parts = assemble(
            Shared(
                books=self.books,
                machine=machine,
                game=self._game,
                rounds=self._slot,
                timer=timer,
                raise_tilt=self.raise_tilt,
                emit=self._emit,
                show_meters=self.show_meters,
                log=self.log,
            ),
            profile,
            self.dev,
            Wiring(
                reactor=self.reactor,
                marks=self.marks,
                registry=self.registry,
                link=self.link,
                lap=self.lap,
                journal=journal,
                drop_round=self._drop_round,
                publish=self._publish,
            ),
        )
        #: the components (controller/play/assembly.py), each owning its state
        self.parts = parts

    # ------------------------------------------------------------------ facades
    # what the console, the HIL rig, the simulator, bench/ and the tests look at
    @property
    def profile(self) -> TableProfile:
        return self._game.profile

    @property
    def seats(self) -> int:
        """The table's seats (another number needs a restart: controller/play/profilechange.py)."""
        return self._game.profile.seats

    @property
    def lap(self) -> Linkage | None:
        """A linked table's view of its LAP (controller/play/linked.py); None: not linked."""
        return self.link if isinstance(self.link, Linkage) else None

    @property
    def proc(self) -> Procedure:
        return self._game.proc

    @property
    def progressive(self) -> ProgressiveSystem | None:
        return self._game.progressive

    @property
    def round(self) -> Round | None:
        return self._slot.round

    @property
    def round_no(self) -> int:
        return self.books.round_no

    @property
    def meters(self) -> dict[str, M.Meter]:
        return self.books.meters

    @property
    def tilts(self) -> dict[str, str]:
        """The latched tilts, source -> reason (controller/play/faults.py)."""
        return self.parts.faults.tilts

    @property
    def out_of_order(self) -> Mapping[str, str]:
        return self.marks.marks

    @property
    def deck_ready(self) -> bool:
        return self.parts.deck.ready

    @property
    def shuffle_failures(self) -> int:
        return self.parts.deck.shuffle_failures

    @property
    def perf(self) -> dict[str, float]:
        """perf_counter stamps of the lock-out (bench/lockout.py)."""
        return self.parts.wagering.perf

    @property
    def status(self) -> Mapping[str, Any]:
        """A snapshot safe to read from any thread."""
        return self._status.status

    def wait_for(self, pred: Callable[[Mapping[str, Any]], bool], timeout: float) -> Mapping[str, Any]:
        return self._status.wait_for(pred, timeout)

    def commit(self, records: list[Record], then: Then | None = None) -> None:
        """Write records; run ``then`` on the reactor thread once they are durable."""
        self.books.commit(records, then)

    def rec(self, kind: Kind, **data: Any) -> Record:
        return self.books.rec(kind, **data)

    def validate_hit(self, by: str) -> bool:
        return self.parts.settling.validate_hit(by)

    def mark_out_of_order(self, device: str, by: str, alternative: str, reason: str = "") -> None:
        self.parts.floor.mark_out_of_order(device, by, alternative, reason)

    def mark_in_service(self, device: str, by: str) -> None:
        self.parts.floor.mark_in_service(device, by)

    def floor_reshuffle(self, by: str) -> None:
        self.parts.floor.floor_reshuffle(by)

    def new_dealer(self, by: str) -> str | None:
        return self.parts.floor.new_dealer(by)

    def same_player(self, a: int, b: int, by: str) -> str:
        return self.parts.deciding.same_player(a, b, by)

    # ------------------------------------------------------------------ observers
    def _after_state(self, *_: Any) -> None:
        self.visited.append(self.state)
        phase = self.proc.phase(self.state)
        rnd = self._slot.round
        if phase is not None and rnd is not None:  # the round entered the procedure's phase
            rnd.phase = self.proc.phases.index(phase)
        self.parts.deciding.state_entered()
        self.log.info("state", state=self.state)
        if not self._handling:  # inside ``handle`` the status is published once, when the event is done
            self._publish()

    def _publish(self) -> None:
        self._status.publish()
        self.link.report()  # the floor view's line for this table (docs/linked.md)

    def _link_status(self) -> dict[str, Any]:
        # ``sign``: the message line the sign shows (its meters are the LAP's), for the floor view
        # (SignLine remembers the line; the Sign protocol itself has no such member)
        line = self.dev.sign
        sign = line.text if isinstance(line, SignLine) else ""
        return {
            "state": self.state,
            "round": self.round_no,
            "tilts": {str(k): str(v) for k, v in self.tilts.items()},
            "sign": sign,
        }

    def _snapshot(self) -> Mapping[str, Any]:
        meter = self.books.meter
        return {
            "state": self.state,
            "round": self.round_no,
            "tilts": dict(self.tilts),
            "meter_cents": meter.cents if meter is not None else None,
            "count_shown": self.parts.wagering.count_shown,
            "deck_ready": self.parts.deck.ready,
            **_round_view(self.round),
            "spots": self.parts.wagering.board_snapshot(),
            "out_of_order": dict(self.marks.marks),
            "decision": self._decision_view(),
            "link": self.link.snapshot(),
            # the number of the keypad's latest prompt (an entry answers one prompt, deciding.py)
            "prompt": self.dev.keypad.prompt_id if self.dev.keypad is not None else 0,
        }

    def _decision_view(self) -> Mapping[str, Any] | None:
        phase = self.proc.phase(self.state)
        if phase is None or phase.kind != PhaseKind.DECIDE or self.round is None:
            return None
        ds = self.round.decisions.get(phase.name)
        if ds is None:
            return None
        return {"phase": phase.name, "required": list(ds.required), "answers": dict(ds.answers), "done": ds.done}

    def _emit(self, what: str, /, **data: Any) -> None:
        for fn in self.listeners:
            fn(what, data)

    # ------------------------------------------------------------------ start-up
    def start(
        self, problems: list[str], records: list[Record] | None = None, then: Callable[[], None] | None = None
    ) -> None:
        """Called on the reactor thread after the self-checks (ledger, config), with the
        service's own start-up records (self-check results, configuration).

        Nothing is shown before the start-up records are durable: the table opens for
        wagers (or resumes a validation) only in their durable callback.  A damaged
        ledger (a ``ledger:`` problem) is a latched tilt, and then the interrupted round
        is *not* voided: after a cut tail or a rollback the ledger no longer says
        whether it was settled and paid — a technician decides.  ``then()`` runs
        once the start-up records are durable and the table has opened (or latched)."""
        self._restore_inputs()
        recs = self._power_up_records(records or [])
        found = self._recover()
        # ledger problems a technician has already acknowledged (tilt cleared) do not re-tilt
        problems = [p for p in problems if p not in found.acknowledged]
        recs += self._take_back(found, damaged=any(p.startswith("ledger: ") for p in problems))
        self.parts.floor.restore(found.out_of_order)
        self.commit(recs, lambda _e: self._start_durable(found, then))
        if self.parts.linked is not None:
            self.parts.linked.start()
        self._latch_at_start(problems, found.tilts)

    def _recover(self) -> Recovered:
        """What the ledger says of the round in play (controller/play/recovery.py); a game's
        carried state it refused is logged."""
        found = recover(self.writer.ledger, self.round_no, self.proc, self.progressive)
        for r in found.records:
            if r.kind == Kind.GAME_CARRY_REFUSED:
                self.log.warning("game.carry_refused", **r.data)
        return found

    def _latch_at_start(self, problems: list[str], tilts: Mapping[str, str]) -> None:
        """The start-up's self-check problems latched as a tilt, else the tilts the ledger held."""
        if problems:
            self.parts.faults.self_check_failed(problems)
        elif tilts:
            self.parts.faults.relatch(tilts)

    def _restore_inputs(self) -> None:
        """The debouncers and the wager spots start from the inputs as they are now."""
        for name in self.dev.inputs.names():
            self.debounce.add(name, self.dev.inputs.is_active(name))
        self.parts.wagering.restore_levels(self.dev.inputs.is_active)

    def _power_up_records(self, records: list[Record]) -> list[Record]:
        """POWER_UP, the service's own start-up ``records``, the progressive's initial meters."""
        recs = [self.rec(Kind.POWER_UP, version=_version()), *records]
        if self.progressive:
            recs += self.progressive.init_records(self.books.meters, self.round_no)
        return recs

    def _take_back(self, found: Recovered, *, damaged: bool) -> list[Record]:
        """What recovery found, taken back unless the ledger is damaged: its records to
        write, and the settled round still owing hits."""
        if damaged:
            if found.records:
                self.log.error("recovery.withheld", records=[r.kind for r in found.records], why="ledger damaged")
            return []
        if found.round is not None:
            self._resume_round(found.round)
        return found.records

    def _resume_round(self, got: RecoveredRound) -> None:
        """A settled round still owing validated hits, rebuilt in its parts."""
        self._slot.round = Round(
            got.number,
            self.parts.wagering.restore(got.wagers),
            self.parts.dealing.restore(),
            self.parts.deciding.new_round(),
            self.parts.settling.restore(got.results, got.pending_hits, got.validated_by),
        )
        if self.parts.linked is not None:
            self.parts.settling.note_claims(list(self.writer.ledger.events(kinds=[Kind.LINK_HIT], round_no=got.number)))

    def _start_durable(self, found: Recovered, then: Callable[[], None] | None) -> None:
        """The start-up records are durable: only now may the table open (or resume)."""
        rnd = self._slot.round
        if self.tilts or self.state == S.TILT:
            pass
        elif found.round is not None and rnd is not None and rnd.pending_hits:
            self.trigger("resume_validation")
            self.parts.settling.after_settle(rnd)
        else:
            self.trigger("self_test_passed")
        if then is not None:
            then()

    def ledger_damaged(self, source: str, problems: list[str]) -> None:
        """Damage found in the ledger while running (the periodic audit): a latched tilt
        whose clear acknowledges these problems, so they do not re-tilt at the next audit."""
        self.parts.faults.ledger_damaged(source, problems)

    # ------------------------------------------------------------------ events
    def handle(self, ev: Event) -> None:
        self._handling = True
        try:
            self._dispatch(ev)
        finally:
            self._handling = False
            self._publish()

    def _dispatch(self, ev: Event) -> None:
        handler = {
            "shoe": self.parts.dealing.on_shoe,
            "shaker": self.parts.dealing.on_shaker,
            "keypad": self.parts.deciding.on_keypad,
            "sign": self._on_sign,
            "link": self._on_link,
            "lap": self._on_lap,
            "command": self._on_command,
        }.get(ev.kind)
        if ev.kind == "input":
            self.debounce.edge(ev.source, bool(ev.data["active"]), ev.t)
        elif handler is not None:
            handler(ev)
        else:
            self.log.warning("event.unknown", kind=ev.kind, source=ev.source)

    def _on_sign(self, ev: Event) -> None:
        if ev.data.get("msg") == "ERROR":
            self.raise_tilt("sign", f"sign error {ev.data.get('code')}: {ev.data.get('text')}")

    def _on_lap(self, ev: Event) -> None:
        if self.parts.linked is None:
            self.log.warning("event.unknown", kind=ev.kind, source=ev.source)
            return
        self.parts.linked.on_message(dict(ev.data))

    def _on_link(self, ev: Event) -> None:
        what, detail = ev.data["event"], ev.data.get("detail", "")
        self.registry.link_event(ev.source, what)
        if ev.source in self.marks.marks:
            self.log.info("link.out_of_order_device", device=ev.source, link_event=what)
        elif what in ("fault", "lost", "gave-up", "disconnected"):
            self.raise_tilt(ev.source, f"{ev.source} link {what}: {detail}")
        elif what == "protocol-error":
            self.log.warning("link.protocol_error", device=ev.source, detail=detail, **ev.ctx)
        else:
            self.log.info(f"link.{what}", device=ev.source, detail=detail, **ev.ctx)

    def _on_command(self, ev: Event) -> None:
        cmd = ev.data.get("cmd")
        if cmd == "clear":
            self.clear_tilt(str(ev.data.get("reason", "")), str(ev.data.get("by", "technician")))
        elif cmd == "void":
            self.parts.wagering.dealer_void(str(ev.data.get("reason", "dealer void")))
        elif cmd == "validate":
            self.parts.settling.validate_hit(str(ev.data.get("by", "floorperson")))
        elif cmd in ("out_of_order", "in_service", "reshuffle", "new_dealer"):
            self._floor_command(str(cmd), ev.data)
        else:
            self.log.warning("command.unknown", cmd=cmd)

    def _floor_command(self, cmd: str, data: Mapping[str, Any]) -> None:
        """A floor action from the console: refused (logged), changing nothing, when not allowed now."""
        try:
            if cmd == "out_of_order":
                by = str(data.get("by", "technician"))
                self.parts.floor.mark_out_of_order(
                    str(data.get("device")), by, str(data.get("alternative")), str(data.get("reason", ""))
                )
                return
            by = str(data.get("by", "floorperson"))
            if cmd == "in_service":
                self.parts.floor.mark_in_service(str(data.get("device")), by)
            elif cmd == "reshuffle":
                self.parts.floor.floor_reshuffle(by)
            else:
                self.parts.floor.new_dealer(by)
        except ValueError as e:
            self.log.warning(f"{cmd}.refused", error=str(e))

    # ---- inputs (debounced) -------------------------------------------------
    def _on_input(self, name: str, active: bool, t: float) -> None:
        spot = parse_input(name)
        if spot is not None:
            self.parts.wagering.on_sensor(spot[0], spot[1], active, t)
        elif active:  # buttons act on the press edge
            self._on_press(name, t)

    def _on_press(self, name: str, t: float) -> None:
        if name == self.proc.lockout_button:
            self.parts.wagering.on_lockout(t)  # the lock-out; DJ Wild's Start Game plays its role (§ 687a.8(c))
            return
        buttons: dict[str, Callable[[], object]] = {
            "confirm": self.parts.wagering.on_confirm,
            "void": lambda: self.parts.wagering.dealer_void("dealer pressed void"),
            "key": lambda: self.parts.settling.validate_hit("key switch"),
            "door": lambda: self.raise_tilt("door", "cabinet door opened"),
        }
        action = buttons.get(name)
        if action is not None:
            action()

    # ---- phases ----------------------------------------------------------------------
    def _advance(self) -> None:
        """Enter the next phase of the game's procedure (its records before are durable);
        entering its state sets the round's phase (``_after_state``)."""
        rnd = self.round
        if rnd is None or self.state not in (S.NO_MORE_BETS, *(p.state for p in self.proc.phases)):
            return
        self.trigger("advance")
        phase = self.proc.phase(self.state)
        if phase is None:
            return
        enter: dict[PhaseKind, Callable[[], None]] = {
            PhaseKind.START: lambda: self.parts.dealing.phase_start(rnd),
            PhaseKind.DICE_WAGERS: lambda: self.parts.settling.phase_dice_wagers(rnd),
            PhaseKind.DEAL: lambda: self.parts.dealing.phase_deal(rnd, phase.name),
            PhaseKind.STUB: lambda: self.parts.dealing.phase_stub(rnd),
            PhaseKind.DECIDE: lambda: self.parts.deciding.phase_decide(rnd, phase.name),
        }
        enter.get(phase.kind, self.parts.settling.phase_settle)()

    def _timed_out(self, device: str, what: str) -> None:
        self.parts.dealing.timed_out(device, what)

    # ---- state entry -----------------------------------------------------------------
    def on_enter_open_for_wagers(self) -> None:
        number = self.books.open_round()
        self.logctx.set_round(number)
        self.proc.begin_round()
        self._slot.round = Round(
            number,
            self.parts.wagering.new_round(),
            self.parts.dealing.new_round(),
            self.parts.deciding.new_round(),
            self.parts.settling.new_round(),
        )
        self.commit([self.rec(Kind.ROUND_OPEN)], lambda _e: self._show_open())

    def _show_open(self) -> None:
        if self.state != S.OPEN:
            return
        self.dev.sign.clear()
        self.show_meters()
        self.dev.sign.message("PLACE YOUR BETS")
        if not self.link.open:
            self.dev.sign.message(self.link.closed_text())  # the players told (docs/linked.md)
        self.parts.wagering.open_board()
        self.parts.dealing.prepare_deck()
        self._emit("open", round=self.round_no)

    # ---- faults (controller/play/faults.py) ---------------------------------------------------
    def raise_tilt(self, source: str, reason: str, *, durable: bool = True) -> None:
        """The single latched fault path: record it, stop the round, show it
        (``durable=False``: a fault of the ledger itself, shown at once; ``Faults.raise_tilt``)."""
        self.parts.faults.raise_tilt(source, reason, durable=durable)

    def clear_tilt(self, reason: str, by: str) -> bool:
        """A technician clears every active tilt, with a reason (``Faults.clear``)."""
        return self.parts.faults.clear(reason, by)

    def _drop_round(self) -> None:
        """A tilt's clearing is durable: the round it cut short is over."""
        self._slot.round = None

    # ---- a changed profile ---------------------------------------------------------------
    def apply_profile(self, profile: TableProfile) -> dict[str, tuple[Any, Any]]:
        """A changed table profile, between rounds only (SPEC § 5).  What would need
        other pins or another deal (game, seats, positions, sensed spots) needs a
        restart.  A new increment rate applies to later increments; a new seed to
        later reseeds (``meter.adjust``).  Returns what changed, old and new."""
        between_rounds(
            self.state, "the table profile changes", wagers_taken=self.round is not None and bool(self.round.accepted)
        )
        changed, recs = profile_change(self.profile, profile, self.books)
        proc = procedure_for(profile.game, profile)
        game = self._game
        game.profile, game.proc = profile, proc
        game.progressive = ProgressiveSystem(profile.progressive) if profile.progressive else None
        if recs:
            self.commit(recs, lambda _e: self.show_meters())
        return changed


def _version() -> str:
    from controller import __version__

    return __version__


def _round_view(rnd: Round | None) -> dict[str, Any]:
    """The round's part of the status: the wagers accepted, the hits pending, and what the people
    at the table can see: the wagers, the cards dealt (none between rounds)."""
    if rnd is None:
        return {"accepted": {}, "pending_hits": 0, "wagers": {}, "cards": {}}
    return {
        "accepted": dict(rnd.accepted),
        "pending_hits": len(rnd.pending_hits),
        "wagers": {f"{s}:{w}": c for (s, w), c in rnd.wagers.items()},
        "cards": {k: list(v) for k, v in rnd.cards.items()},
    }
