"""The table: one round state machine per table, owned by the reactor thread.

Every device event reaches :meth:`Table.handle` through the reactor queue.  The
table changes its in-memory state at once (so a lock-out freezes the accepted
wagers the moment its event is taken off the queue), submits the ledger records
for the change, and only when the ledger writer reports them durable does it
*show* anything: lights, the sign, the next device command that depends on it.

The machine is a plain ``transitions.Machine`` with ``queued=True``: safe
because only the reactor thread ever triggers it.  The dealing steps live in
controller/dealing.py, bet sensing in controller/betting.py and the meter's
records in controller/progressive.py.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from transitions import Machine

from controller import meters as M
from controller.betting import BetBoard, parse_input, restore_levels
from controller.config import TableProfile
from controller.dealing import DealingMixin
from controller.deciding import DecidingMixin
from controller.floor import FloorMixin
from controller.games import procedure_for
from controller.inputs import Debouncer
from controller.ledger import LedgerWriter, Record, StoredEvent
from controller.log import LogContext
from controller.machine import build
from controller.progressive import LEVEL, ProgressiveSystem, pending_from_events
from controller.reactor import Event, Reactor
from controller.round import RoundData
from controller.rules.settlement import WagerResult
from controller.settling import SettlingMixin
from controller.wagering import WageringMixin

__all__ = ["Devices", "RoundData", "Table"]


@dataclass
class Devices:
    shoe: Any
    shaker: Any | None
    sign: Any
    lights: Any  # drivers.gpio.Lights
    inputs: Any  # drivers.gpio.Inputs
    rng: Any | None = None  # drivers.rng.SecretsRng: the starting position by RNG (§ 670a.5(i)(2))
    keypad: Any | None = None  # drivers.keypad.Keypad: the dealer's entries


class Table(WageringMixin, DealingMixin, DecidingMixin, SettlingMixin, FloorMixin):
    def __init__(
        self,
        profile: TableProfile,
        procedure: Any,
        reactor: Reactor,
        writer: LedgerWriter,
        devices: Devices,
        logctx: LogContext,
        *,
        bounce_s: float = 0.02,
    ):
        self.profile = profile
        self.proc = procedure
        self.reactor = reactor
        self.writer = writer
        self.dev = devices
        self.logctx = logctx
        self.log = logctx.logger("table")
        self.seats = profile.seats
        self.prog = profile.progressive
        self.progressive = ProgressiveSystem(self.prog) if self.prog else None
        self.meters: dict[str, M.Meter] = dict(writer.ledger.meters)
        self.round: RoundData | None = None
        self.round_no = writer.ledger.last_round()
        self.tilts: dict[str, str] = {}
        self.out_of_order: dict[str, str] = {}  # device -> alternative method (§ 670a.13(n))
        self._self_check_problems: list[str] = []
        self.devices_down: dict[str, str] = {}  # device -> lost | disconnected | gave-up
        self.state_before_tilt = "self_test"
        self.board = BetBoard(profile.sensed, self.seats, devices.lights)
        self.states, self.transitions_spec = build(procedure.phases)
        self.deck_ready = False
        self.shuffle_failures = 0
        self.shuffled_once = False
        self.count_shown = False
        self.listeners: list[Callable[[str, Mapping[str, Any]], None]] = []
        self._timer = None
        self._published: Mapping[str, Any] = {}
        self._cv = threading.Condition()
        self.debounce = Debouncer(reactor, bounce_s, self._on_input)
        self.visited: deque[str] = deque(maxlen=256)  # recent states, for tests and the console
        self.perf: dict[str, float] = {}  # perf_counter stamps for bench/ (lockout freeze)
        self.machine = Machine(
            model=self,
            states=self.states,
            transitions=self.transitions_spec,
            initial="self_test",
            queued=True,
            auto_transitions=False,
            after_state_change="_after_state",
        )
        self._publish()

    # ------------------------------------------------------------------ observers
    def _after_state(self, *_: Any) -> None:
        self.visited.append(self.state)
        self.log.info("state", state=self.state)
        self._publish()

    def _publish(self, *_: Any) -> None:
        rnd = self.round
        snap = {
            "state": self.state,
            "round": self.round_no,
            "tilts": dict(self.tilts),
            "meter_cents": self.meters[LEVEL].cents if LEVEL in self.meters else None,
            "count_shown": self.count_shown,
            "deck_ready": self.deck_ready,
            "accepted": dict(rnd.accepted) if rnd else {},
            "pending_hits": len(rnd.pending_hits) if rnd else 0,
            "spots": self.board.snapshot(),
            "out_of_order": dict(self.out_of_order),
            # what the people at the table can see: the wagers, the cards dealt, whose decision it is
            "wagers": {f"{s}:{w}": c for (s, w), c in rnd.wagers.items()} if rnd else {},
            "cards": {k: list(v) for k, v in rnd.cards.items()} if rnd else {},
            "decision": self._decision_view(),
        }
        with self._cv:
            self._published = snap
            self._cv.notify_all()

    def _decision_view(self) -> Mapping[str, Any] | None:
        phase = self.proc.phase(self.state)
        if phase is None or phase.kind != "decide" or self.round is None:
            return None
        ds = self.round.decisions.get(phase.name)
        if ds is None:
            return None
        return {"phase": phase.name, "required": list(ds.required), "answers": dict(ds.answers), "done": ds.done}

    @property
    def status(self) -> Mapping[str, Any]:
        """A snapshot safe to read from any thread."""
        return self._published

    def wait_for(self, pred: Callable[[Mapping[str, Any]], bool], timeout: float) -> Mapping[str, Any]:
        with self.reactor.clock.idle(ready=lambda: pred(self._published)), self._cv:  # idle for the clock
            if not self._cv.wait_for(lambda: pred(self._published), timeout):
                raise TimeoutError(f"table did not reach the expected state; status: {self._published}")
            return self._published

    def _emit(self, what: str, **data: Any) -> None:
        for fn in self.listeners:
            fn(what, data)

    # ------------------------------------------------------------------ ledger helpers
    def commit(self, records: Sequence[Record], then: Callable[[list[StoredEvent]], None] | None = None) -> None:
        """Write records; run ``then`` on the reactor thread once they are durable.
        Meters are updated in memory in the same order as the ledger applies them."""
        for r in records:
            if r.kind.startswith("meter."):
                self.meters = M.apply(self.meters, r.kind, r.data, round_no=r.round)
        self.writer.submit(records, None if then is None else (lambda evs: self._durable(then, evs)))

    def _durable(self, then: Callable[[list[StoredEvent]], None], events: list[StoredEvent]) -> None:
        then(events)
        self._publish()

    def rec(self, kind: str, **data: Any) -> Record:
        return Record(kind, self.round_no, data)

    # ------------------------------------------------------------------ start-up
    def start(self, problems: Sequence[str]) -> None:
        """Called on the reactor thread after the self-checks (ledger, config)."""
        for name in self.dev.inputs.names():
            self.debounce.add(name, self.dev.inputs.is_active(name))
        restore_levels(self.board, self.dev.inputs.is_active)
        recs = [self.rec("power.up", version=_version())]
        if self.progressive:
            recs += self.progressive.init_records(self.meters, self.round_no)
        # ledger problems a technician has already acknowledged (tilt cleared) do not re-tilt
        problems = [p for p in problems if p not in self._acknowledged_problems()]
        recs += self._recover_open_round()
        recs += self._restore_carry()
        self.out_of_order = self._recorded_out_of_order()
        active = self._active_tilts()
        self.commit(recs)
        if problems:
            self._self_check_problems = list(problems)
            self.raise_tilt("self-check", "; ".join(problems))
            return
        if active:
            self.tilts.update(active)
            self.fault()
            self._show_tilt()
            return
        if self.round is not None and self.round.pending_hits:
            self.trigger("resume_validation")
            self._after_settle()
        else:
            self.self_test_passed()

    def _active_tilts(self) -> dict[str, str]:
        """Tilts raised and not cleared survive restarts (SPEC § 5)."""
        active: dict[str, str] = {}
        for ev in self.writer.ledger.events(kinds=("tilt.raised", "tilt.cleared")):
            if ev.kind == "tilt.raised":
                active[ev.data["source"]] = ev.data["reason"]
            else:
                active.clear()
        return active

    def _acknowledged_problems(self) -> set[str]:
        ack: set[str] = set()
        for ev in self.writer.ledger.events(kinds=("ledger.acknowledged",)):
            ack.update(ev.data.get("problems", []))
        return ack

    def _recorded_out_of_order(self) -> dict[str, str]:
        ooo: dict[str, str] = {}
        for ev in self.writer.ledger.events(kinds=("device.out_of_order", "device.in_service")):
            if ev.kind == "device.out_of_order":
                ooo[ev.data["device"]] = ev.data["alternative"]
            else:
                ooo.pop(ev.data["device"], None)
        return ooo

    def _carry_records(self) -> list[Record]:
        """What the game carries into the next round (e.g. the tiles bank rotation,
        § 621a.9), written with the round's close."""
        state = self.proc.carry()
        return [] if state is None else [self.rec("game.carry", game=self.proc.game, state=state)]

    def _restore_carry(self) -> list[Record]:
        """Give the procedure back what it carried before the restart.  A carried state
        this table cannot take (another game, fewer seats) is recorded and the game
        starts afresh, as a new game does."""
        ev = next(self.writer.ledger.events(kinds=("game.carry",), newest_first=True, limit=1), None)
        if ev is None or ev.data.get("game") != self.proc.game:
            return []
        try:
            self.proc.restore(ev.data["state"])
        except (KeyError, TypeError, ValueError) as e:
            self.log.warning("game.carry_refused", seq=ev.seq, error=str(e))
            return [self.rec("game.carry_refused", seq=ev.seq, error=str(e))]
        return []

    def _recover_open_round(self) -> list[Record]:
        """A round interrupted by power loss: void it and return every wager, unless it
        had already been settled and only waits for a validation (then resume that)."""
        last = self.round_no
        if last == 0:
            return []
        evs = list(self.writer.ledger.events(round_no=last))
        kinds = {e.kind for e in evs}
        if kinds & {"round.complete", "round.void"}:
            return []
        self.round = RoundData(last)
        for e in evs:
            if e.kind == "wager.accepted":
                self.round.wagers[(e.data["seat"], e.data.get("spot", "progressive"))] = e.data["cents"]
            elif e.kind == "wager.result":
                self.round.results.append(
                    WagerResult(
                        e.data["seat"],
                        e.data["wager"],
                        e.data["cents"],
                        e.data["outcome"],
                        e.data["net"],
                        e.data.get("hand"),
                    )
                )
        if "round.settled" in kinds:
            self.round.pending_hits = pending_from_events(evs)
            if self.round.pending_hits:
                return [self.rec("round.recovered", pending_hits=len(self.round.pending_hits))]
            self.round = None
            return [self.rec("round.complete", recovered=True)]
        recs = self._void_records(
            "power lost during the round (recovered at start-up)", credited="count.confirmed" in kinds
        )
        self.round = None
        return recs

    # ------------------------------------------------------------------ events
    def handle(self, ev: Event) -> None:
        if ev.kind == "input":
            self.debounce.edge(ev.source, bool(ev.data["active"]), ev.t)
        elif ev.kind == "shoe":
            self._on_shoe(ev)
        elif ev.kind == "shaker":
            self._on_shaker(ev)
        elif ev.kind == "keypad":
            self._on_keypad(ev)  # controller/deciding.py
        elif ev.kind == "sign":
            if ev.data.get("msg") == "ERROR":
                self.raise_tilt("sign", f"sign error {ev.data.get('code')}: {ev.data.get('text')}")
        elif ev.kind == "link":
            self._on_link(ev)
        elif ev.kind == "command":
            self._on_command(ev)
        else:
            self.log.warning("event.unknown", kind=ev.kind, source=ev.source)
        self._publish()

    def _on_link(self, ev: Event) -> None:
        what, detail = ev.data["event"], ev.data.get("detail", "")
        if what in ("lost", "disconnected", "gave-up"):
            self.devices_down[ev.source] = what
        elif what == "restored" or (what == "up" and self.devices_down.get(ev.source) == "disconnected"):
            self.devices_down.pop(ev.source, None)
        if ev.source in self.out_of_order:
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
            self._dealer_void(str(ev.data.get("reason", "dealer void")))
        elif cmd == "validate":
            self.validate_hit(str(ev.data.get("by", "floorperson")))
        elif cmd == "out_of_order":
            try:
                self.mark_out_of_order(
                    str(ev.data.get("device")),
                    str(ev.data.get("by", "technician")),
                    str(ev.data.get("alternative")),
                    str(ev.data.get("reason", "")),
                )
            except ValueError as e:
                self.log.warning("out_of_order.refused", error=str(e))
        elif cmd in ("in_service", "reshuffle", "new_dealer"):
            by = str(ev.data.get("by", "floorperson"))
            try:
                if cmd == "in_service":
                    self.mark_in_service(str(ev.data.get("device")), by)
                elif cmd == "reshuffle":
                    self.floor_reshuffle(by)
                else:
                    self.new_dealer(by)
            except ValueError as e:
                self.log.warning(f"{cmd}.refused", error=str(e))
        else:
            self.log.warning("command.unknown", cmd=cmd)

    # ---- inputs (debounced) -------------------------------------------------
    def _on_input(self, name: str, active: bool, t: float) -> None:
        spot = parse_input(name)
        if spot is not None:
            self._on_sensor(spot[0], spot[1], active, t)
        elif not active:
            return  # buttons act on the press edge
        elif name == self.proc.lockout_button:
            self._on_lockout(t)  # the lock-out; DJ Wild's Start Game plays its role (§ 687a.8(c))
        elif name == "confirm":
            self._on_confirm()
        elif name == "void":
            self._dealer_void("dealer pressed void")
        elif name == "key":
            self.validate_hit("key switch")
        elif name == "door":
            self.raise_tilt("door", "cabinet door opened")

    # ---- phases ----------------------------------------------------------------------
    def _advance(self) -> None:
        """Enter the next phase of the game's procedure (its records before are durable)."""
        if self.round is None or self.state not in ("no_more_bets",) + tuple(p.state for p in self.proc.phases):
            return
        self.advance()
        phase = self.proc.phase(self.state)
        if phase is None:
            return
        self.round.phase = self.proc.phases.index(phase)
        if phase.kind == "start":
            self._phase_start()
        elif phase.kind == "dice_wagers":
            self._phase_dice_wagers()
        elif phase.kind == "deal":
            self._phase_deal(phase.name)
        elif phase.kind == "stub":
            self._phase_stub()
        elif phase.kind == "decide":
            self._phase_decide(phase.name)
        else:
            self._phase_settle()

    # ---- state entry -----------------------------------------------------------------
    def on_enter_open_for_wagers(self) -> None:
        self.round_no += 1
        self.logctx.set_round(self.round_no)
        self.round = RoundData(self.round_no)
        self.count_shown = False
        self.deck_ready = False
        self.commit([self.rec("round.open")], lambda _e: self._show_open())

    def _show_open(self) -> None:
        if self.state != "open_for_wagers":
            return
        self.dev.sign.clear()
        self._show_meters()
        self.dev.sign.message("PLACE YOUR BETS")
        self.board.open()
        if self.out_of_order.get("shoe"):
            self.deck_ready = True  # manual dealing (§ 670a.13(n)): the dealer shuffles by hand
        elif self.proc.needs_shuffle() or not self.shuffled_once:
            self.dev.shoe.shuffle()  # § 670a.5(a): shuffled after each round (automated shuffler)
        else:
            self.deck_ready = True  # a continuous shoe deals on until its cover card (§ 686a.7(d))
        self._emit("open", round=self.round_no)

    def _show_meters(self) -> None:
        if LEVEL in self.meters:
            self.dev.sign.show_meters([(1, self.meters[LEVEL].cents)])

    # ---- faults ------------------------------------------------------------------------
    def raise_tilt(self, source: str, reason: str) -> None:
        """The single latched fault path: record it, stop the round, show it."""
        first = source not in self.tilts
        if self.state != "tilt":
            self.state_before_tilt = self.state
        self.tilts[source] = reason
        self._cancel_timer()
        self.log.error("tilt", source=source, reason=reason)
        if first:
            self.commit([self.rec("tilt.raised", source=source, reason=reason)], lambda _e: self._show_tilt())
        if self.state != "tilt":
            self.fault()

    def _show_tilt(self) -> None:
        try:
            self.dev.sign.message("TILT - CALL TECHNICIAN")
        except Exception:  # noqa: BLE001 - the sign itself may be the fault
            pass
        self._emit("tilt", tilts=dict(self.tilts))

    def clear_tilt(self, reason: str, by: str) -> bool:
        """A technician clears every active tilt, with a reason.  Refused while a device
        the table needs still cannot be reached (a device that gave up is restarted
        once; clear again when it answers) — unless it has been marked out of order
        (§ 670a.13(n)).  A round cut short by the fault is voided and its wagers returned;
        a settled round still owing a hit goes back to the floorperson."""
        if self.state != "tilt":
            return False
        if not reason.strip():
            self.log.warning("clear.refused", why="a reason is required")
            return False
        down = {d: w for d, w in self.devices_down.items() if d not in self.out_of_order}
        if down:
            for d, w in down.items():
                if w == "gave-up":
                    getattr(self.dev, d).restart()
            why = ", ".join(f"{d} {w}" for d, w in sorted(down.items()))
            self.log.warning("clear.refused", why=f"device(s) still down: {why}")
            self.commit(
                [self.rec("tilt.clear_refused", reason=reason, by=by, devices_down=why)],
                lambda _e, why=why: self.dev.sign.message(f"CLEAR REFUSED - {why.upper()}"[:60]),
            )
            return False
        recs = [self.rec("tilt.cleared", reason=reason, by=by, cleared=sorted(self.tilts))]
        if self._self_check_problems:
            # the damaged ledger's problems are acknowledged; the meters stay as the events say
            recs.append(self.rec("ledger.acknowledged", problems=self._self_check_problems))
            self._self_check_problems = []
        rnd = self.round
        self.tilts.clear()
        if rnd is not None and rnd.pending_hits:
            # a settled round still owes a validated hit: go back to the floorperson, never drop it
            self.commit(recs, lambda _e: self._cleared("clear_to_validation"))
            return True
        if rnd is not None and rnd.results:
            recs.append(self.rec("round.complete", after_tilt=True))
        elif rnd is not None and self.state_before_tilt in self.proc.in_round_states():
            recs += self._void_records(f"round voided when tilt cleared: {reason}", rnd.credited)
        elif rnd is not None:
            recs.append(self.rec("round.void", reason=f"round closed when tilt cleared: {reason}"))
        self.commit(recs, lambda _e: self._cleared("clear"))
        return True

    def _cleared(self, trigger: str) -> None:
        """The clearing is durable: only now does the table leave the tilt (and show it)."""
        if self.state != "tilt" or self.tilts:
            return  # a new fault arrived meanwhile: stay in tilt
        for device, alt in sorted(self.out_of_order.items()):
            self.dev.sign.message(f"{device.upper()} OUT OF ORDER - {alt.upper()}")
        if trigger == "clear_to_validation":
            self.trigger(trigger)
            self._next_hit_or_complete()
            return
        self.round = None
        self.trigger(trigger)

    def apply_profile(self, profile: TableProfile) -> dict[str, tuple[Any, Any]]:
        """A changed table profile, between rounds only (SPEC § 5).  What would need
        other pins or another deal (game, seats, positions, sensed spots) needs a
        restart.  A new increment rate applies to later increments; a new seed to
        later reseeds (``meter.adjust``).  Returns what changed, old and new."""
        if self.state not in ("open_for_wagers", "tilt") or (self.round is not None and self.round.accepted):
            raise ValueError(f"the table profile changes only between rounds (state {self.state})")
        old = self.profile
        for attr in ("game", "seats", "positions", "sensed"):
            if getattr(profile, attr) != getattr(old, attr):
                raise ValueError(
                    f"a change of {attr} ({getattr(old, attr)} -> {getattr(profile, attr)}) needs a restart"
                )
        if (old.progressive is None) != (profile.progressive is None):
            raise ValueError("adding or removing the progressive needs a restart")
        proc = procedure_for(profile.game, profile)
        changed: dict[str, tuple[Any, Any]] = {}
        for attr in ("name", "start_method", "options"):
            if getattr(old, attr) != getattr(profile, attr):
                changed[attr] = (getattr(old, attr), getattr(profile, attr))
        recs: list[Record] = []
        if profile.progressive is not None and old.progressive != profile.progressive:
            o, n = old.progressive, profile.progressive
            for attr in (
                "paytable",
                "wager_cents",
                "seed_cents",
                "increment_rate",
                "envy_paytable",
                "envy_min_wager_cents",
                "reserve_rate",
            ):
                if getattr(o, attr) != getattr(n, attr):
                    changed[f"progressive.{attr}"] = (getattr(o, attr), getattr(n, attr))
            if (o.seed_cents, o.increment_rate, o.reserve_rate) != (n.seed_cents, n.increment_rate, n.reserve_rate):
                recs.append(
                    self.rec(
                        "meter.adjust",
                        level=LEVEL,
                        seed=n.seed_cents,
                        rate=str(n.increment_rate),
                        reserve_rate=str(n.reserve_rate),
                    )
                )
        self.profile, self.proc, self.prog = profile, proc, profile.progressive
        self.progressive = ProgressiveSystem(self.prog) if self.prog else None
        if recs:
            self.commit(recs, lambda _e: self._show_meters())
        return changed


def _version() -> str:
    from controller import __version__

    return __version__
