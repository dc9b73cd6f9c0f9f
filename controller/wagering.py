"""Wagers at the table: the bet sensors, the wagers the dealer keys, the lock-out
edge that freezes them (§ 670a.2(c)(2); § 670a.7(c); § 687a.8(c)), the count
confirmation that credits the meter (§ 670a.10(a)(2)(ii)), and voids that return
every wager (§ 670a.13).

:class:`Wagering` is a component of :class:`controller.table.Table`.  It owns the
bet board (controller/betting.py), whether the accepted count is shown, and the
lock-out's timing stamps (``perf``, read by bench/lockout.py).  It is given the
table's context (controller/context.py) and the shoe's :class:`Deck` (a void
spends it).  Runs on the reactor thread only.
"""

from __future__ import annotations

import time

from controller.betting import BetBoard, Late
from controller.context import TableContext
from controller.dealing import Deck
from controller.games.base import EntryError, parse_cents, split_entry
from controller.ledger import Record, StoredEvent
from controller.progressive import LEVEL, ProgressiveSystem
from controller.records import Kind
from controller.round import RoundData


def void_records(
    rnd: RoundData, reason: str, credited: bool, progressive: ProgressiveSystem | None, round_no: int
) -> list[Record]:
    """A void: every wager of the round not yet settled goes back, the progressive
    contributions too, as new entries; nothing is deleted."""
    recs = [Record(Kind.ROUND_VOID, round_no, {"reason": reason})]
    for (seat, wager), cents in sorted(rnd.unsettled().items()):
        recs.append(Record(Kind.WAGER_RETURNED, round_no, {"seat": seat, "wager": wager, "cents": cents}))
    if progressive and credited:
        recs += progressive.void_records(rnd.accepted, credited, round_no, returned=False)
    return recs


class Wagering:
    count_shown: bool  # the accepted count is on the sign (the dealer may confirm it)
    perf: dict[str, float]  # perf_counter stamps of the lock-out, for bench/lockout.py

    def __init__(self, ctx: TableContext, board: BetBoard, deck: Deck):
        self.ctx = ctx
        self.board = board
        self.deck = deck
        self.count_shown = False
        self.perf = {}

    def new_round(self) -> None:
        self.count_shown = False

    # ---- sensors ------------------------------------------------------------------------
    def on_sensor(self, wager: str, seat: int, active: bool, t: float) -> None:
        ctx = self.ctx
        late = self.board.sensor(wager, seat, active, t)
        if late is None or ctx.round is None or ctx.state in ("tilt", "self_test"):
            return
        # after lock-out nothing changes the accepted set (§ 670a.7(c)); record the attempt
        if late.kind == "removed":
            ctx.commit([ctx.rec(Kind.WAGER_REMOVED, seat=seat, spot=wager, t=round(t, 6))])
            return
        ctx.round.rejected.append(seat)
        ctx.commit(
            [ctx.rec(Kind.WAGER_REJECTED, seat=seat, spot=wager, reason=late.reason, t=round(t, 6))],
            lambda _e: self._show_rejected(late),
        )

    def _show_rejected(self, late: Late) -> None:
        self.board.reject(late)
        self.ctx.emit("rejected", seat=late.seat, wager=late.wager)

    # ---- wagers keyed by the dealer -------------------------------------------------------
    def bet_entry(self, rnd: RoundData, text: str) -> str:
        """``BET <seat> <wager> <amount>`` while wagers are open (0 removes it)."""
        parts = split_entry(text)
        if len(parts) != 4 or parts[0].upper() != "BET":
            raise EntryError("enter BET <seat> <wager> <amount>")
        if not parts[1].isdigit():
            raise EntryError(f"{parts[1]!r} is not a seat number")
        seat, wager, cents = int(parts[1]), parts[2].lower(), parse_cents(parts[3])
        self.ctx.proc.keyed_wager(seat, wager, cents)
        if cents:
            rnd.keyed[(seat, wager)] = cents
        else:
            rnd.keyed.pop((seat, wager), None)
        return f"SEAT {seat} {wager.upper()} {cents / 100:,.2f}" if cents else f"SEAT {seat} {wager.upper()} REMOVED"

    # ---- the lock-out edge ----------------------------------------------------------------
    def on_lockout(self, t: float) -> None:
        ctx = self.ctx
        rnd = ctx.round
        if ctx.state != "open_for_wagers" or rnd is None:
            ctx.log.info("lockout.ignored", state=ctx.state)
            return
        if not self.deck.ready:
            ctx.log.warning("lockout.before_shuffle")  # the shoe has not reported a shuffled deck yet
        spots = self.board.freeze()  # § 670a.2(c)(2): the accepted set, frozen now
        self.perf.pop("lockout_durable", None)
        self.perf["lockout_frozen"] = time.perf_counter()
        rnd.spots = spots
        wagers: dict[tuple[int, str], int] = dict(rnd.keyed)
        for wager, seat in spots:
            spec = ctx.proc.wagers.get(wager)
            if spec is not None and spec.fixed_cents:
                wagers[(seat, wager)] = spec.fixed_cents
        refused = ctx.proc.reject_unsupported(wagers)
        rnd.wagers = {k: c for k, c in sorted(wagers.items()) if k not in refused}
        for seat, wager in refused:
            self.board.refuse(wager, seat)  # its light flashes: the chip is not a wager
        rnd.lockout_t = t
        if ctx.link is not None:  # the rate version the linked wagers are taken under
            rnd.rate_version = ctx.link.rate_versions.get(LEVEL)
        self.count_shown = False
        recs = [ctx.rec(Kind.LOCKOUT, t=round(t, 6), count=len(rnd.accepted), wagers=len(rnd.wagers))]
        recs += [ctx.rec(Kind.WAGER_ACCEPTED, seat=s, spot=w, cents=c) for (s, w), c in rnd.wagers.items()]
        recs += [ctx.rec(Kind.WAGER_REJECTED, seat=s, spot=w, reason=why) for (s, w), why in sorted(refused.items())]
        journaled, failure = self._journaled(recs)
        if journaled:
            # durable in the journal (controller/lockjournal.py): the ledger's copy follows, in its
            # own commit; the count is shown now, after the transition
            self.perf["lockout_durable"] = time.perf_counter()
            ctx.commit(recs)
            ctx.trigger("lock_out")
            ctx.emit("lockout", t=t, accepted=sorted(rnd.accepted))
            self._show_accepted([])
            return
        # the records go to the ledger first, so that the state machine's transition and the status
        # publish run while the disk syncs; nothing is shown before ``_show_accepted``, which runs once
        # they are durable, after this handler (and so after the transition) has returned
        ctx.commit(recs, self._show_accepted, hand_over=True)
        ctx.trigger("lock_out")
        ctx.emit("lockout", t=t, accepted=sorted(rnd.accepted))
        if failure is not None:  # the disk is failing: latched, after the accepted set went to the ledger
            ctx.raise_tilt("ledger", f"the lock-out journal could not be written: {failure}")

    def _journaled(self, recs: list[Record]) -> tuple[bool, OSError | None]:
        """The lock-out's records written and synced to the journal: (True, None) once durable
        there.  (False, None) when there is no journal or the records do not fit in one block,
        (False, the error) when the write failed: the ledger's commit is then awaited."""
        ctx = self.ctx
        if ctx.journal is None:
            return False, None
        block = ctx.journal.block(ctx.round_no, recs)
        if block is None:
            return False, None
        try:
            ctx.journal.write(block)
        except OSError as e:
            ctx.log.error("lockout.journal_failed", error=str(e))
            return False, e
        return True, None

    def _show_accepted(self, _events: list[StoredEvent]) -> None:
        ctx = self.ctx
        rnd = ctx.round
        if rnd is None or ctx.state != "no_more_bets":
            return
        self.perf.setdefault("lockout_durable", time.perf_counter())  # journaled: already stamped
        self.board.show_frozen()
        if ctx.progressive:  # the dealer compares the progressive chips collected (§ 670a.10(a)(2)(ii))
            ctx.dev.sign.message(f"NO MORE BETS - COUNT {len(rnd.accepted)}")
        else:
            ctx.dev.sign.message(f"NO MORE BETS - {len(rnd.wagers)} WAGERS")
        self.count_shown = True
        self.perf["lockout_shown"] = time.perf_counter()
        ctx.emit("count_shown", count=len(rnd.accepted))

    def on_confirm(self) -> None:
        ctx = self.ctx
        rnd = ctx.round
        if ctx.state != "no_more_bets" or rnd is None:
            return
        if not self.count_shown:
            ctx.log.warning("confirm.before_count_shown")
            return
        rnd.confirmed = True
        rnd.credited = True
        recs = [ctx.rec(Kind.COUNT_CONFIRMED, count=len(rnd.accepted))]
        if ctx.progressive:  # increments credited when the count is confirmed (§ 670a.12(d)(2))
            recs += ctx.progressive.increment_records(rnd.accepted, ctx.round_no, rnd.rate_version)
        ctx.commit(recs, lambda _e: ctx.advance())

    # ---- voids --------------------------------------------------------------------------
    def void_records(self, rnd: RoundData, reason: str, credited: bool) -> list[Record]:
        return void_records(rnd, reason, credited, self.ctx.progressive, self.ctx.round_no)

    def void(self, reason: str) -> None:
        """Void the round in play: every unsettled wager returned (§ 670a.13)."""
        ctx = self.ctx
        rnd = ctx.round
        if rnd is None or ctx.state not in ctx.proc.in_round_states():
            return
        ctx.timer.cancel()
        rnd.void_reason = reason
        ctx.trigger("void_round")
        self.deck.ready = False
        ctx.proc.round_ended(rnd, void=True)
        ctx.commit(self.void_records(rnd, reason, rnd.credited) + ctx.carry_records(), lambda _e: self._after_void(rnd))

    def dealer_void(self, reason: str) -> None:
        ctx = self.ctx
        if ctx.state == "no_more_bets" and ctx.round is not None and ctx.round.wagers:
            # the chips collected do not equal the accepted count: recorded, then void (§ 670a.10(a)(2)(ii))
            ctx.commit([ctx.rec(Kind.COUNT_MISMATCH, count=len(ctx.round.accepted), reason=reason)])
        if ctx.state in ctx.proc.in_round_states():
            self.void(reason)

    def _after_void(self, rnd: RoundData) -> None:
        ctx = self.ctx
        if ctx.state != "round_void":
            return
        ctx.show_meters()
        ctx.dev.sign.message("ROUND VOID - WAGERS RETURNED")
        ctx.emit("void", round=rnd.number, reason=rnd.void_reason, data=rnd)
        ctx.trigger("next_round")
