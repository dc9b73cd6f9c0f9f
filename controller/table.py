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
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from transitions import Machine

from controller import meters as M
from controller.betting import BetBoard, Late, parse_input, restore_levels
from controller.config import TableProfile
from controller.dealing import DealingMixin
from controller.games import procedure_for
from controller.inputs import Debouncer
from controller.ledger import LedgerWriter, Record, StoredEvent
from controller.log import LogContext
from controller.machine import IN_ROUND, STATES, TRANSITIONS
from controller.progressive import LEVEL, ProgressiveSystem, pending_from_events
from controller.reactor import Event, Reactor
from controller.rules.positions import seat_to_position
from controller.rules.settlement import WagerResult
from drivers import protocol as P
from drivers.gpio import BLINK_FAST, ON

HAND_LIGHTS = {"five-aces": 1, "royal-flush": 2, "straight-flush": 3, "four-of-a-kind": 4, "full-house": 5,
               "flush": 6, "straight": 7}


@dataclass
class RoundData:
    number: int
    accepted: dict[int, int] = field(default_factory=dict)     # seat -> cents (progressive spot)
    spots: list[tuple[str, int]] = field(default_factory=list)  # every accepted (wager, seat)
    rejected: list[int] = field(default_factory=list)          # seats whose late chips were rejected
    lockout_t: float | None = None
    confirmed: bool = False
    credited: bool = False
    dice: tuple[int, int, int] | None = None
    red: int | None = None
    start: int | None = None
    stacks: list[list[int]] = field(default_factory=list)
    dealer: tuple[int, ...] = ()
    hands: dict[int, tuple[int, ...]] = field(default_factory=dict)   # seat -> cards
    results: list[WagerResult] = field(default_factory=list)
    pending_hits: list[WagerResult] = field(default_factory=list)
    payouts: list[dict[str, Any]] = field(default_factory=list)
    no_rolls: int = 0
    face_up: int = 0
    void_reason: str | None = None
    rng_value: int | None = None
    unread: bool = False                                    # the shoe did not read the cards
    entered: dict[int, tuple[int, ...]] = field(default_factory=dict)   # keypad hands (seat -> cards)


@dataclass
class Devices:
    shoe: Any
    shaker: Any | None
    sign: Any
    lights: Any            # drivers.gpio.Lights
    inputs: Any            # drivers.gpio.Inputs
    rng: Any | None = None     # drivers.rng.SecretsRng: the starting position by RNG (§ 670a.5(i)(2))
    keypad: Any | None = None  # drivers.keypad.Keypad: the dealer's entries


class Table(DealingMixin):
    def __init__(self, profile: TableProfile, procedure: Any, reactor: Reactor, writer: LedgerWriter,
                 devices: Devices, logctx: LogContext, *, bounce_s: float = 0.02):
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
        self.out_of_order: dict[str, str] = {}      # device -> alternative method (§ 670a.13(n))
        self._self_check_problems: list[str] = []
        self.devices_down: dict[str, str] = {}      # device -> lost | disconnected | gave-up
        self.state_before_tilt = "self_test"
        self.board = BetBoard(profile.sensed, self.seats, devices.lights)
        self.deck_ready = False
        self.shuffle_failures = 0
        self.count_shown = False
        self.listeners: list[Callable[[str, Mapping[str, Any]], None]] = []
        self._timer = None
        self._published: Mapping[str, Any] = {}
        self._cv = threading.Condition()
        self.debounce = Debouncer(reactor, bounce_s, self._on_input)
        self.visited: deque[str] = deque(maxlen=256)       # recent states, for tests and the console
        self.perf: dict[str, float] = {}                    # perf_counter stamps for bench/ (lockout freeze)
        self.machine = Machine(model=self, states=STATES, transitions=TRANSITIONS, initial="self_test",
                               queued=True, auto_transitions=False, after_state_change="_after_state")
        self._publish()

    # ------------------------------------------------------------------ observers
    def _after_state(self, *_: Any) -> None:
        self.visited.append(self.state)
        self.log.info("state", state=self.state)
        self._publish()

    def _publish(self, *_: Any) -> None:
        rnd = self.round
        snap = {
            "state": self.state, "round": self.round_no, "tilts": dict(self.tilts),
            "meter_cents": self.meters[LEVEL].cents if LEVEL in self.meters else None,
            "count_shown": self.count_shown, "deck_ready": self.deck_ready,
            "accepted": dict(rnd.accepted) if rnd else {},
            "pending_hits": len(rnd.pending_hits) if rnd else 0,
            "spots": self.board.snapshot(), "out_of_order": dict(self.out_of_order),
        }
        with self._cv:
            self._published = snap
            self._cv.notify_all()

    @property
    def status(self) -> Mapping[str, Any]:
        """A snapshot safe to read from any thread."""
        return self._published

    def wait_for(self, pred: Callable[[Mapping[str, Any]], bool], timeout: float) -> Mapping[str, Any]:
        with self._cv:
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
            if e.kind == "wager.accepted" and e.data.get("spot", "progressive") == "progressive":
                self.round.accepted[e.data["seat"]] = e.data["cents"]
        if "round.settled" in kinds:
            self.round.pending_hits = pending_from_events(evs)
            if self.round.pending_hits:
                return [self.rec("round.recovered", pending_hits=len(self.round.pending_hits))]
            self.round = None
            return [self.rec("round.complete", recovered=True)]
        recs = self._void_records("power lost during the round (recovered at start-up)",
                                  credited="count.confirmed" in kinds)
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
            self._on_keypad(ev)
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
                self.mark_out_of_order(str(ev.data.get("device")), str(ev.data.get("by", "technician")),
                                       str(ev.data.get("alternative")), str(ev.data.get("reason", "")))
            except ValueError as e:
                self.log.warning("out_of_order.refused", error=str(e))
        else:
            self.log.warning("command.unknown", cmd=cmd)

    # ---- inputs (debounced) -------------------------------------------------
    def _on_input(self, name: str, active: bool, t: float) -> None:
        spot = parse_input(name)
        if spot is not None:
            self._on_sensor(spot[0], spot[1], active, t)
        elif not active:
            return                       # buttons act on the press edge
        elif name == "lockout" or (name == "start_game" and self.profile.game == "dj-wild"):
            self._on_lockout(t)          # § 687a.8(c): DJ Wild's Start Game plays the lock-out's role
        elif name == "confirm":
            self._on_confirm()
        elif name == "void":
            self._dealer_void("dealer pressed void")
        elif name == "key":
            self.validate_hit("key switch")
        elif name == "door":
            self.raise_tilt("door", "cabinet door opened")

    def _on_sensor(self, wager: str, seat: int, active: bool, t: float) -> None:
        late = self.board.sensor(wager, seat, active, t)
        if late is None or self.round is None or self.state in ("tilt", "self_test"):
            return
        # after lock-out nothing changes the accepted set (§ 670a.7(c)); record the attempt
        if late.kind == "removed":
            self.commit([self.rec("wager.removed", seat=seat, spot=wager, t=round(t, 6))])
            return
        self.round.rejected.append(seat)
        self.commit([self.rec("wager.rejected", seat=seat, spot=wager, reason=late.reason, t=round(t, 6))],
                    lambda _e, late=late: self._show_rejected(late))

    def _show_rejected(self, late: Late) -> None:
        self.board.reject(late)
        self._emit("rejected", seat=late.seat, wager=late.wager)

    # ---- lock-out and count --------------------------------------------------
    def _on_lockout(self, t: float) -> None:
        if self.state != "open_for_wagers" or self.round is None:
            self.log.info("lockout.ignored", state=self.state)
            return
        if not self.deck_ready:
            self.log.warning("lockout.before_shuffle")   # the shoe has not reported a shuffled deck yet
        spots = self.board.freeze()                      # § 670a.2(c)(2): the accepted set, frozen now
        self.perf["lockout_frozen"] = time.perf_counter()
        rnd = self.round
        rnd.spots = spots
        rnd.accepted = {seat: self.prog.wager_cents for wager, seat in spots if wager == "progressive"} \
            if self.prog else {}
        rnd.lockout_t = t
        self.count_shown = False
        self.lock_out()
        self._emit("lockout", t=t, accepted=sorted(rnd.accepted))
        recs = [self.rec("lockout", t=round(t, 6), count=len(rnd.accepted))]
        recs += [self.rec("wager.accepted", seat=s, spot=w,
                          cents=rnd.accepted.get(s) if w == "progressive" else None) for w, s in spots]
        self.commit(recs, self._show_accepted)

    def _show_accepted(self, _events: list[StoredEvent]) -> None:
        rnd = self.round
        if rnd is None or self.state != "no_more_bets":
            return
        self.perf["lockout_durable"] = time.perf_counter()
        self.board.show_frozen()
        self.dev.sign.message(f"NO MORE BETS - COUNT {len(rnd.accepted)}")   # § 670a.10(a)(2)(ii)
        self.count_shown = True
        self._emit("count_shown", count=len(rnd.accepted))

    def _on_confirm(self) -> None:
        rnd = self.round
        if self.state != "no_more_bets" or rnd is None:
            return
        if not self.count_shown:
            self.log.warning("confirm.before_count_shown")
            return
        rnd.confirmed = True
        rnd.credited = True
        recs = [self.rec("count.confirmed", count=len(rnd.accepted))]
        if self.progressive:   # increments credited when the count is confirmed (§ 670a.12(d)(2))
            recs += self.progressive.increment_records(rnd.accepted, self.round_no)
        self.count_confirmed()
        self.commit(recs, lambda _e: self._begin_start_position())

    # ---- settlement ---------------------------------------------------------------
    def _settle(self) -> None:
        rnd = self.round
        if self.state != "settlement" or rnd is None:
            return
        if rnd.entered or rnd.unread or self.out_of_order.get("shoe"):
            in_play = {s: rnd.entered.get(s) for s in rnd.accepted}   # not entered: no winning hand
        else:
            in_play = {s: rnd.hands[s] for s in rnd.accepted}
        results = self.proc.settle_progressive(in_play, rnd.accepted)
        rnd.results = results
        rnd.pending_hits = [r for r in results if r.is_meter_pay]
        recs = [self.rec("wager.result", seat=r.seat, wager=r.wager, cents=r.amount, outcome=r.outcome,
                         net=r.net, hand=r.hand, pays=r.pays, detail=r.detail) for r in results]
        recs += [self.rec("payout", seat=r.seat, wager=r.wager, cents=r.amount + r.net, hand=r.hand, paid_by="table")
                 for r in results if r.outcome == "win" and not r.is_meter_pay]
        if self.progressive:
            recs += self.progressive.fixed_records(results, self.round_no)
        recs += [self.rec("hit.pending", seat=r.seat, hand=r.hand, fraction=str(r.meter_fraction), cents=r.amount,
                          paytable=r.paytable, pays=r.pays, order=i + 1) for i, r in enumerate(rnd.pending_hits)]
        recs.append(self.rec("round.settled", results=len(results), pending_hits=len(rnd.pending_hits)))
        self.commit(recs, lambda _e: self._after_settle())

    def _after_settle(self) -> None:
        rnd = self.round
        for r in rnd.results:
            if r.outcome == "win" and r.wager == "progressive":
                (self.board.flash if r.is_meter_pay else self.board.steady)("progressive", r.seat)
        self._next_hit_or_complete()

    def _next_hit_or_complete(self) -> None:
        rnd = self.round
        if rnd.pending_hits:
            hit = rnd.pending_hits[0]
            # § 670a.11(h)(3)(i)(B)(II): the appropriate light illuminated; (III) floor validates
            if self.state != "floor_validation":
                self.hit_needs_validation()
            self.dev.sign.hand_light(HAND_LIGHTS.get(hit.hand, 0), P.LIGHT_BLINK)
            self.dev.sign.seat_light(seat_to_position(hit.seat, self.seats), P.LIGHT_BLINK)
            self.dev.sign.message(f"HIT SEAT {hit.seat} {hit.hand.upper()} - CALL FLOOR")
            self._emit("hit", seat=hit.seat, hand=hit.hand)
            return
        self.settled()
        self.commit([self.rec("round.complete", meter=str(self.meters[LEVEL].value) if LEVEL in self.meters else None)],
                    lambda _e: self._round_done())

    def validate_hit(self, by: str) -> bool:
        """A floorperson validates the pending hit (key switch, or PIN at the console),
        § 670a.11(h)(3)(i)(B)(III).  Hits are paid one at a time in settlement order,
        each from the meter as it then stands (§ 670a.12(d)(3)); the order is recorded."""
        rnd = self.round
        if self.state != "floor_validation" or rnd is None or not rnd.pending_hits:
            self.log.info("validate.ignored", state=self.state, by=by)
            return False
        hit = rnd.pending_hits.pop(0)
        order = len(rnd.payouts) + 1
        recs, cents = self.progressive.hit_payment(self.meters[LEVEL], hit, order, by, self.round_no)
        rnd.payouts.append({"seat": hit.seat, "hand": hit.hand, "cents": cents, "order": order})
        self.hit_validated()
        self.commit(recs, lambda _e: self._after_hit_paid())
        return True

    def _after_hit_paid(self) -> None:
        paid = self.round.payouts[-1] if self.round and self.round.payouts else None
        if paid is not None:
            self._emit("hit_paid", round=self.round_no, **paid)
        self._show_meters()
        self.dev.sign.hand_light(0, P.LIGHT_OFF)
        self._next_hit_or_complete()

    def _round_done(self) -> None:
        if self.state != "round_complete":
            return
        rnd = self.round
        self._emit("round", round=rnd.number, data=rnd, meter=self.meters.get(LEVEL))
        self.next_round()

    # ---- voids ---------------------------------------------------------------------
    def _void_records(self, reason: str, credited: bool) -> list[Record]:
        rnd = self.round
        recs = [self.rec("round.void", reason=reason)]
        if self.progressive:
            recs += self.progressive.void_records(rnd.accepted, credited, self.round_no)
        return recs

    def _void(self, reason: str) -> None:
        rnd = self.round
        if rnd is None or self.state not in IN_ROUND:
            return
        self._cancel_timer()
        rnd.void_reason = reason
        self.void_round()
        self.deck_ready = False
        self.commit(self._void_records(reason, rnd.credited), lambda _e: self._after_void())

    def _dealer_void(self, reason: str) -> None:
        if self.state == "no_more_bets" and self.round is not None and self.round.accepted:
            # the chips collected do not equal the accepted count: recorded, then void (§ 670a.10(a)(2)(ii))
            self.commit([self.rec("count.mismatch", count=len(self.round.accepted), reason=reason)])
        if self.state in IN_ROUND:
            self._void(reason)

    def _after_void(self) -> None:
        if self.state != "round_void":
            return
        self._show_meters()
        self.dev.sign.message("ROUND VOID - WAGERS RETURNED")
        self._emit("void", round=self.round.number, reason=self.round.void_reason, data=self.round)
        self.next_round()

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
            self.deck_ready = True      # manual dealing (§ 670a.13(n)): the dealer shuffles by hand
        else:
            self.dev.shoe.shuffle()     # § 670a.5(a): shuffled after each round (automated shuffler)
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
            self.commit([self.rec("tilt.clear_refused", reason=reason, by=by, devices_down=why)],
                        lambda _e, why=why: self.dev.sign.message(f"CLEAR REFUSED - {why.upper()}"[:60]))
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
        elif rnd is not None and self.state_before_tilt in IN_ROUND:
            recs += self._void_records(f"round voided when tilt cleared: {reason}", rnd.credited)
        elif rnd is not None:
            recs.append(self.rec("round.void", reason=f"round closed when tilt cleared: {reason}"))
        self.commit(recs, lambda _e: self._cleared("clear"))
        return True

    def _cleared(self, trigger: str) -> None:
        """The clearing is durable: only now does the table leave the tilt (and show it)."""
        if self.state != "tilt" or self.tilts:
            return                      # a new fault arrived meanwhile: stay in tilt
        for device, alt in sorted(self.out_of_order.items()):
            self.dev.sign.message(f"{device.upper()} OUT OF ORDER - {alt.upper()}")
        if trigger == "clear_to_validation":
            self.trigger(trigger)
            self._next_hit_or_complete()
            return
        self.round = None
        self.trigger(trigger)

    def mark_out_of_order(self, device: str, by: str, alternative: str, reason: str = "") -> None:
        """§ 670a.13(n): a device that cannot be used is marked out of order before any
        other method is used; the alternative is recorded (e.g. the RNG for the shaker,
        § 670a.5(i)(2))."""
        allowed = {"shaker": ("rng",), "shoe": ("manual",), "sign": ("none",)}
        if device not in allowed:
            raise ValueError(f"{device!r} is not a device that can be marked out of order "
                             f"({', '.join(allowed)})")
        if alternative not in allowed[device]:
            raise ValueError(f"{alternative!r} is not an alternative for the {device} "
                             f"({', '.join(allowed[device])})")
        if self.state in IN_ROUND or self.state in ("settlement", "floor_validation"):
            raise ValueError("a device can be marked out of order only between rounds")
        self.out_of_order[device] = alternative
        self.commit([self.rec("device.out_of_order", device=device, alternative=alternative, by=by,
                              reason=reason)])


    def mark_in_service(self, device: str, by: str) -> None:
        """A repaired device is put back in service (recorded); its alternative ends."""
        if device not in self.out_of_order:
            raise ValueError(f"the {device} is not out of order")
        if self.state in IN_ROUND or self.state in ("settlement", "floor_validation"):
            raise ValueError("a device can be put back in service only between rounds")
        del self.out_of_order[device]
        self.commit([self.rec("device.in_service", device=device, by=by)])

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
                raise ValueError(f"a change of {attr} ({getattr(old, attr)} -> {getattr(profile, attr)}) "
                                 "needs a restart")
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
            for attr in ("paytable", "wager_cents", "seed_cents", "increment_rate", "envy_paytable",
                         "envy_min_wager_cents", "reserve_rate"):
                if getattr(o, attr) != getattr(n, attr):
                    changed[f"progressive.{attr}"] = (getattr(o, attr), getattr(n, attr))
            if (o.seed_cents, o.increment_rate, o.reserve_rate) != (n.seed_cents, n.increment_rate, n.reserve_rate):
                recs.append(self.rec("meter.adjust", level=LEVEL, seed=n.seed_cents, rate=str(n.increment_rate),
                                     reserve_rate=str(n.reserve_rate)))
        self.profile, self.proc, self.prog = profile, proc, profile.progressive
        self.progressive = ProgressiveSystem(self.prog) if self.prog else None
        if recs:
            self.commit(recs, lambda _e: self._show_meters())
        return changed


def _version() -> str:
    from controller import __version__

    return __version__
