"""The table: one round state machine per table, owned by the reactor thread.

Every device event reaches :meth:`Table.handle` through the reactor queue.  The
table changes its in-memory state at once (so a lock-out freezes the accepted
wagers the moment its event is taken off the queue), submits the ledger records
for the change, and only when the ledger writer reports them durable does it
*show* anything: lights, the sign, the next device command that depends on it.

The machine is a plain ``transitions.Machine`` with ``queued=True``: safe
because only the reactor thread ever triggers it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from transitions import Machine

from controller import meters as M
from controller.config import TableProfile
from controller.inputs import Debouncer
from controller.ledger import LedgerWriter, Record, StoredEvent
from controller.log import LogContext
from controller.machine import IN_ROUND, STATES, TRANSITIONS
from controller.reactor import Event, Reactor
from controller.rules.cards import cards_str
from controller.rules.positions import delivery_order, position_to_seat, start_position
from controller.rules.settlement import WagerResult
from drivers import protocol as P
from drivers.gpio import BLINK_FAST, OFF, ON

LEVEL = "primary"      # the progressive level (one level for 670a, § 670a.12(d)(2))
SHAKE_MIN_S = 5.0      # § 621a.2(f)(2): shaken for at least five seconds
DEVICE_TIMEOUT_S = 30.0


@dataclass
class RoundData:
    number: int
    accepted: dict[int, int] = field(default_factory=dict)     # seat -> cents (progressive spot)
    rejected: list[int] = field(default_factory=list)          # seats whose late chips were rejected
    lockout_t: float | None = None
    confirmed: bool = False
    credited: bool = False
    dice: tuple[int, int, int] | None = None
    red: int | None = None
    start: int | None = None
    stacks: list[list[int]] = field(default_factory=list)
    hands: dict[int, tuple[int, ...]] = field(default_factory=dict)   # seat -> cards
    results: list[WagerResult] = field(default_factory=list)
    pending_hits: list[WagerResult] = field(default_factory=list)
    payouts: list[dict[str, Any]] = field(default_factory=list)
    no_rolls: int = 0
    face_up: int = 0
    void_reason: str | None = None


@dataclass
class Devices:
    shoe: Any
    shaker: Any | None
    sign: Any
    lights: Any            # drivers.gpio.Lights
    inputs: Any            # drivers.gpio.Inputs


class Table:
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
        self.meters: dict[str, M.Meter] = dict(writer.ledger.meters)
        self.round: RoundData | None = None
        self.round_no = writer.ledger.last_round()
        self.tilts: dict[str, str] = {}
        self.sensors: dict[int, bool] = {}
        self.deck_ready = False
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
        snap = {
            "state": self.state, "round": self.round_no, "tilts": dict(self.tilts),
            "meter_cents": self.meters[LEVEL].cents if LEVEL in self.meters else None,
            "count_shown": self.count_shown, "deck_ready": self.deck_ready,
            "accepted": dict(self.round.accepted) if self.round else {},
            "pending_hits": len(self.round.pending_hits) if self.round else 0,
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
            active = self.dev.inputs.is_active(name)
            self.debounce.add(name, active)
            if name.startswith("bet"):
                self.sensors[int(name[3:])] = active
        recs = [self.rec("power.up", version=_version())]
        if self.prog and LEVEL not in self.meters:
            recs.append(self.rec("meter.init", level=LEVEL, seed=self.prog.seed_cents, rate=str(self.prog.increment_rate)))
        recs += self._recover_open_round()
        active = self._active_tilts()
        self.commit(recs)
        if problems:
            for p in problems:
                self.raise_tilt("self-check", p)
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
                self.round.accepted[e.data["seat"]] = e.data["cents"]
        if "round.settled" in kinds:
            paid = {(e.data["seat"], e.data["hand"]) for e in evs if e.kind == "meter.payout"}
            for e in evs:
                if e.kind == "hit.pending" and (e.data["seat"], e.data["hand"]) not in paid:
                    self.round.pending_hits.append(WagerResult(
                        e.data["seat"], "progressive", e.data["cents"], "win", 0, e.data["hand"],
                        e.data.get("paytable"), e.data.get("pays"), meter_fraction=Fraction(e.data["fraction"])))
            if self.round.pending_hits:
                return [self.rec("round.recovered", pending_hits=len(self.round.pending_hits))]
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
        if what in ("fault", "lost", "gave-up", "disconnected"):
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
        else:
            self.log.warning("command.unknown", cmd=cmd)

    # ---- inputs (debounced) -------------------------------------------------
    def _on_input(self, name: str, active: bool, t: float) -> None:
        if name.startswith("bet"):
            self._on_sensor(int(name[3:]), active, t)
        elif not active:
            return                       # buttons act on the press edge
        elif name == "lockout":
            self._on_lockout(t)
        elif name == "confirm":
            self._on_confirm()
        elif name == "void":
            self._dealer_void("dealer pressed void")
        elif name == "key":
            self._on_key()
        elif name == "door":
            self.raise_tilt("door", "cabinet door opened")

    def _on_sensor(self, seat: int, active: bool, t: float) -> None:
        self.sensors[seat] = active
        if self.state == "open_for_wagers":
            # until lock-out the light follows the (debounced) sensor: placed / awaiting
            self.dev.lights.set(f"light{seat}", ON if active else OFF)
            return
        rnd = self.round
        if rnd is None or self.state == "tilt" or self.state == "self_test":
            return
        # after lock-out nothing changes the accepted set (§ 670a.7(c)); record the attempt
        if active and seat not in rnd.accepted:
            rnd.rejected.append(seat)
            self.commit([self.rec("wager.rejected", seat=seat, reason="placed after lock-out", t=round(t, 6))],
                        lambda _e, s=seat: self._show_rejected(s))
        elif not active and seat in rnd.accepted:
            # chips being collected by the dealer (§ 670a.10(a)(2)(ii)): recorded, light stays accepted
            self.commit([self.rec("wager.removed", seat=seat, t=round(t, 6))])
        elif active and seat in rnd.accepted:
            self.commit([self.rec("wager.rejected", seat=seat, reason="chips added to an accepted wager", t=round(t, 6))],
                        lambda _e, s=seat: self._show_rejected(s))

    def _show_rejected(self, seat: int) -> None:
        if self.round and seat not in self.round.accepted or self.state != "open_for_wagers":
            self.dev.lights.set(f"light{seat}", BLINK_FAST)

    # ---- lock-out and count --------------------------------------------------
    def _on_lockout(self, t: float) -> None:
        if self.state != "open_for_wagers":
            self.log.info("lockout.ignored", state=self.state)
            return
        if self.prog is None:
            return
        if not self.deck_ready:
            self.log.warning("lockout.before_shuffle")   # the shoe has not reported a shuffled deck yet
        accepted = {seat: self.prog.wager_cents for seat, on in sorted(self.sensors.items()) if on}
        self.round.accepted = accepted
        self.perf["lockout_frozen"] = time.perf_counter()
        self.round.lockout_t = t
        self.count_shown = False
        self.lock_out()
        self._emit("lockout", t=t, accepted=sorted(accepted))
        recs = [self.rec("lockout", t=round(t, 6), count=len(accepted))]
        recs += [self.rec("wager.accepted", seat=s, spot="progressive", cents=c) for s, c in accepted.items()]
        self.commit(recs, self._show_accepted)

    def _show_accepted(self, _events: list[StoredEvent]) -> None:
        rnd = self.round
        if rnd is None or self.state != "no_more_bets":
            return
        for seat in range(1, self.seats + 1):
            if seat in rnd.accepted:
                self.dev.lights.set(f"light{seat}", ON)
            elif seat not in rnd.rejected:
                self.dev.lights.set(f"light{seat}", OFF)
        self.perf["lockout_durable"] = time.perf_counter()
        self.dev.sign.message(f"NO MORE BETS - COUNT {len(rnd.accepted)}")
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
        # increments credited when the count is confirmed (issue 4; § 670a.12(d)(2))
        recs += [self.rec("meter.increment", level=LEVEL, wager=c, rate=str(self.prog.increment_rate), seat=s)
                 for s, c in rnd.accepted.items()]
        self.count_confirmed()
        self.commit(recs, lambda _e: self._begin_start_position())

    def _begin_start_position(self) -> None:
        if self.state != "starting_position":
            return
        self._show_meters()
        if self.profile.start_method == "shaker":
            self.dev.shaker.arm(P.DEALER)
            self.dev.shaker.activate(P.DEALER)
            self._set_timer(DEVICE_TIMEOUT_S, "shaker", "no dice result")
        else:  # pragma: no cover - RNG start arrives with the devices issue
            raise NotImplementedError("RNG starting position")

    # ---- shaker ---------------------------------------------------------------
    def _on_shaker(self, ev: Event) -> None:
        msg = ev.data["msg"]
        rnd = self.round
        if msg == "ERROR":
            self.raise_tilt("shaker", f"shaker error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg in ("STATUS", "SHAKING", "LID") or self.state != "starting_position" or rnd is None:
            return
        if msg == "NO_ROLL" or (msg == "RESULT" and ev.data["shake_ms"] < SHAKE_MIN_S * 1000):
            # § 670a.13(a),(b); § 621a.10(a): no roll -> reshake
            reason = ev.data.get("reason", P.NO_ROLL_SHORT_SHAKE) if msg == "NO_ROLL" else P.NO_ROLL_SHORT_SHAKE
            rnd.no_rolls += 1
            self.no_roll()
            self.commit([self.rec("dice.no_roll", reason=reason, shake_ms=ev.data.get("shake_ms"))],
                        lambda _e: self._begin_start_position())
            return
        dice = (ev.data["d1"], ev.data["d2"], ev.data["d3"])
        if not all(1 <= d <= 6 for d in dice) or ev.data["red"] > 2:
            self.raise_tilt("shaker", f"impossible dice result {dice} red={ev.data['red']}")
            return
        self._cancel_timer()
        rnd.dice, rnd.red = dice, ev.data["red"]
        rnd.start = start_position(sum(dice), self.profile.positions)   # § 670a.5(i)(1)(iii)
        self.start_determined()
        self.commit([self.rec("dice", dice=list(dice), red=rnd.red, total=sum(dice), start=rnd.start,
                              shake_ms=ev.data["shake_ms"])], lambda _e: self._begin_dispense())

    def _begin_dispense(self) -> None:
        rnd = self.round
        if self.state != "dispensing" or rnd is None:
            return
        self.dev.sign.seat_light(rnd.start, P.LIGHT_ON)
        self.dev.sign.message(f"START POSITION {rnd.start}")
        self._emit("start", position=rnd.start, dice=rnd.dice)
        self._dispense_next()

    def _dispense_next(self) -> None:
        rnd = self.round
        n = len(rnd.stacks) + 1
        self.dev.shoe.dispense(n, self.proc.plan.cards_per_stack)
        self._set_timer(DEVICE_TIMEOUT_S, "shoe", f"stack {n} not dispensed")

    # ---- shoe -------------------------------------------------------------------
    def _on_shoe(self, ev: Event) -> None:
        msg = ev.data["msg"]
        rnd = self.round
        if msg == "SHUFFLED":
            self.deck_ready = ev.data["cards"] == self.proc.plan.deck
            if not self.deck_ready:
                self.raise_tilt("shoe", f"shoe reports {ev.data['cards']} cards after shuffle, "
                                        f"expected {self.proc.plan.deck}")
            return
        if msg == "ERROR":
            self.raise_tilt("shoe", f"shoe error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg == "STATUS":
            return
        if rnd is None or self.state not in ("dispensing", "stub_check"):
            self.log.warning("shoe.unexpected", msg=msg, state=self.state)
            return
        if msg == "JAM":
            # § 670a.13(m): jam / failure to deal all cards -> void, return wagers, reshuffle
            self._void(f"shoe jammed at stack {ev.data['stack']} (§ 670a.13(m))")
        elif msg == "FACE_UP":
            rnd.face_up += 1
            if rnd.face_up > 1:   # § 670a.13(f): more than one face-up card -> void, reshuffle
                self._void(f"{rnd.face_up} cards found face up while dealing (§ 670a.13(f))")
            else:                 # § 670a.13(f): one face-up card is not used (burned)
                self.commit([self.rec("card.burned", stack=ev.data["stack"], card=ev.data["card"])])
        elif msg == "STACK" and self.state == "dispensing":
            self._on_stack(ev.data)
        elif msg == "REMAINING" and self.state == "stub_check":
            self._cancel_timer()
            plan = self.proc.plan
            want = plan.remaining - rnd.face_up    # a burned face-up card left the deck (§ 670a.13(f))
            if ev.data["remaining"] != want or ev.data["stacks"] != plan.stacks:
                # § 670a.10(e), § 670a.13(h),(k): wrong count -> misdeal, all hands void
                self._void(f"misdeal: {ev.data['stacks']} stacks dispensed and {ev.data['remaining']} cards left, "
                           f"expected {plan.stacks} and {want} (§ 670a.10(e))")
                return
            self.stub_verified()
            self.commit([self.rec("stub.verified", remaining=ev.data["remaining"])], lambda _e: self._settle())

    def _on_stack(self, d: Mapping[str, Any]) -> None:
        rnd = self.round
        n = len(rnd.stacks) + 1
        plan = self.proc.plan
        if d["stack"] != n or d["count"] != plan.cards_per_stack or len(d["cards"]) != d["count"]:
            self._void(f"misdeal: stack {d['stack']} with {d['count']} cards, expected stack {n} of "
                       f"{plan.cards_per_stack} (§ 670a.13(h),(k))")
            return
        cards = list(d["cards"])
        if any(c == P.CARD_UNREAD for c in cards):
            self.raise_tilt("shoe", "shoe did not read the cards; keypad entry not configured")
            return
        if any(not 0 <= c <= 52 for c in cards):
            self.raise_tilt("shoe", f"shoe reported impossible card bytes {cards}")
            return
        rnd.stacks.append(cards)
        self._cancel_timer()
        if len(rnd.stacks) < plan.stacks:
            self._dispense_next()
            return
        seen = [c for s in rnd.stacks for c in s]
        if len(set(seen)) != len(seen):
            self.raise_tilt("shoe", "the shoe reported the same card twice in one deal")
            return
        order = delivery_order(rnd.start, self.profile.positions)   # § 670a.10(c)
        for position, stack in zip(order, rnd.stacks):
            seat = position_to_seat(position, self.seats)
            if seat is not None:
                rnd.hands[seat] = tuple(stack)
        self.stacks_dispensed()
        recs = [self.rec("deal", stacks=[cards_str(s) for s in rnd.stacks], start=rnd.start,
                         hands={str(s): cards_str(h) for s, h in sorted(rnd.hands.items())})]
        self.commit(recs, lambda _e: self._stub_check())

    def _stub_check(self) -> None:
        if self.state != "stub_check":
            return
        self.dev.shoe.request_count()                        # § 670a.10(d)
        self._set_timer(DEVICE_TIMEOUT_S, "shoe", "no remaining-card count")

    # ---- settlement ---------------------------------------------------------------
    def _settle(self) -> None:
        rnd = self.round
        if self.state != "settlement" or rnd is None:
            return
        in_play = {s: rnd.hands[s] for s in rnd.accepted}
        results = self.proc.settle_progressive(in_play, rnd.accepted)
        rnd.results = results
        rnd.pending_hits = [r for r in results if r.is_meter_pay]
        recs = [self.rec("wager.result", seat=r.seat, wager=r.wager, cents=r.amount, outcome=r.outcome,
                         net=r.net, hand=r.hand, pays=r.pays, detail=r.detail) for r in results]
        for r in results:
            if r.net > 0:
                recs.append(self.rec("payout", seat=r.seat, wager=r.wager, cents=r.net, paid_by="table", hand=r.hand))
        recs += [self.rec("hit.pending", seat=r.seat, hand=r.hand, fraction=str(r.meter_fraction), cents=r.amount,
                          paytable=r.paytable, pays=r.pays) for r in rnd.pending_hits]
        recs.append(self.rec("round.settled", results=len(results), pending_hits=len(rnd.pending_hits)))
        self.commit(recs, lambda _e: self._after_settle())

    def _after_settle(self) -> None:
        rnd = self.round
        for r in rnd.results:
            if r.outcome == "win" and r.wager == "progressive":
                self.dev.lights.set(f"light{r.seat}", BLINK_FAST if r.is_meter_pay else ON)
        self._next_hit_or_complete()

    def _next_hit_or_complete(self) -> None:
        rnd = self.round
        if rnd.pending_hits:
            hit = rnd.pending_hits[0]
            # § 670a.11(h)(3)(i)(B)(II): the appropriate light illuminated; (III) floor validates
            self.hit_needs_validation()
            self.dev.sign.hand_light(_HANDS.get(hit.hand, 0), P.LIGHT_BLINK)
            self.dev.sign.seat_light(_seat_position(hit.seat, self.seats), P.LIGHT_BLINK)
            self.dev.sign.message(f"HIT SEAT {hit.seat} {hit.hand.upper()} - CALL FLOOR")
            self._emit("hit", seat=hit.seat, hand=hit.hand)
            return
        self.settled()
        self.commit([self.rec("round.complete", meter=str(self.meters[LEVEL].value) if LEVEL in self.meters else None)],
                    lambda _e: self._round_done())

    def _on_key(self) -> None:
        """The floorperson's key switch validates the pending hit (§ 670a.11(h)(3)(i)(B)(III))."""
        rnd = self.round
        if self.state != "floor_validation" or rnd is None or not rnd.pending_hits:
            self.log.info("key.ignored", state=self.state)
            return
        hit = rnd.pending_hits.pop(0)
        m = self.meters[LEVEL]
        cents = M.percent_payout(m, hit.meter_fraction)     # § 670a.12(d)(3): the meter as it now stands
        recs = [self.rec("hit.validated", seat=hit.seat, hand=hit.hand, by="key"),
                self.rec("meter.payout", level=LEVEL, cents=cents, seat=hit.seat, hand=hit.hand, paid_by="attendant")]
        rnd.payouts.append({"seat": hit.seat, "hand": hit.hand, "cents": cents})
        if hit.meter_fraction >= 1:
            recs.append(self.rec("meter.reseed", level=LEVEL, cents=self.prog.seed_cents))   # reset after a 100% hit
        self.hit_validated()
        self.commit(recs, lambda _e: self._after_hit_paid())

    def _after_hit_paid(self) -> None:
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
        for seat, cents in sorted(rnd.accepted.items()):
            recs.append(self.rec("wager.returned", seat=seat, cents=cents))
            if credited:   # the contribution goes back out of the meter as a recorded void
                recs.append(self.rec("meter.void", level=LEVEL, wager=cents, rate=str(self.prog.increment_rate), seat=seat))
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
        for seat in range(1, self.seats + 1):
            self.dev.lights.set(f"light{seat}", ON if self.sensors.get(seat) else OFF)
        self.dev.shoe.shuffle()     # § 670a.5(a): shuffled after each round (automated shuffler)
        self._emit("open", round=self.round_no)

    def _show_meters(self) -> None:
        if LEVEL in self.meters:
            self.dev.sign.show_meters([(1, self.meters[LEVEL].cents)])

    # ---- faults ------------------------------------------------------------------------
    def raise_tilt(self, source: str, reason: str) -> None:
        """The single latched fault path: record it, stop the round, show it."""
        first = source not in self.tilts
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

    def clear_tilt(self, reason: str, by: str) -> None:
        if self.state != "tilt":
            return
        if not reason:
            self.log.warning("clear.refused", why="a reason is required")
            return
        recs = [self.rec("tilt.cleared", reason=reason, by=by, cleared=sorted(self.tilts))]
        if self.round is not None and (self.round.accepted and not self.round.results):
            recs += self._void_records(f"round voided when tilt cleared: {reason}", self.round.credited)
        self.tilts.clear()
        self.round = None
        self.commit(recs)
        self.clear()

    # ---- device deadlines --------------------------------------------------------------
    def _set_timer(self, seconds: float, device: str, what: str) -> None:
        self._cancel_timer()
        self._timer = self.reactor.call_later(seconds, self._timeout, device, what)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timeout(self, device: str, what: str) -> None:
        self._timer = None
        if device == "shoe" and self.state in ("dispensing", "stub_check"):
            # § 670a.13(m): the shoe stops dealing -> void; and the device is suspect -> tilt
            self._void(f"shoe stopped dealing: {what} (§ 670a.13(m))")
        self.raise_tilt(device, f"{device} timed out: {what}")


_HANDS = {"five-aces": 1, "royal-flush": 2, "straight-flush": 3, "four-of-a-kind": 4, "full-house": 5,
          "flush": 6, "straight": 7}


def _seat_position(seat: int, seats: int) -> int:
    from controller.rules.positions import seat_to_position

    return seat_to_position(seat, seats)


def _version() -> str:
    from controller import __version__

    return __version__
