"""Wagers at the table, as a mixin of :class:`controller.table.Table`: the bet
sensors, the wagers the dealer keys, the lock-out edge that freezes them
(§ 670a.2(c)(2); § 670a.7(c); § 687a.8(c)), the count confirmation that credits
the meter (§ 670a.10(a)(2)(ii)), and voids that return every wager
(§ 670a.13).  Runs on the reactor thread only.
"""

from __future__ import annotations

import time
from typing import Any

from controller.betting import Late
from controller.games.base import EntryError, parse_cents, split_entry
from controller.ledger import Record, StoredEvent


class WageringMixin:
    # provided by Table
    round: Any
    state: str
    proc: Any
    prog: Any
    progressive: Any
    board: Any
    dev: Any

    # ---- sensors ------------------------------------------------------------------------
    def _on_sensor(self, wager: str, seat: int, active: bool, t: float) -> None:
        late = self.board.sensor(wager, seat, active, t)
        if late is None or self.round is None or self.state in ("tilt", "self_test"):
            return
        # after lock-out nothing changes the accepted set (§ 670a.7(c)); record the attempt
        if late.kind == "removed":
            self.commit([self.rec("wager.removed", seat=seat, spot=wager, t=round(t, 6))])
            return
        self.round.rejected.append(seat)
        self.commit(
            [self.rec("wager.rejected", seat=seat, spot=wager, reason=late.reason, t=round(t, 6))],
            lambda _e, late=late: self._show_rejected(late),
        )

    def _show_rejected(self, late: Late) -> None:
        self.board.reject(late)
        self._emit("rejected", seat=late.seat, wager=late.wager)

    # ---- wagers keyed by the dealer -------------------------------------------------------
    def _bet_entry(self, text: str) -> str:
        """``BET <seat> <wager> <amount>`` while wagers are open (0 removes it)."""
        parts = split_entry(text)
        if len(parts) != 4 or parts[0].upper() != "BET":
            raise EntryError("enter BET <seat> <wager> <amount>")
        if not parts[1].isdigit():
            raise EntryError(f"{parts[1]!r} is not a seat number")
        seat, wager, cents = int(parts[1]), parts[2].lower(), parse_cents(parts[3])
        self.proc.keyed_wager(seat, wager, cents)
        if cents:
            self.round.keyed[(seat, wager)] = cents
        else:
            self.round.keyed.pop((seat, wager), None)
        return f"SEAT {seat} {wager.upper()} {cents / 100:,.2f}" if cents else f"SEAT {seat} {wager.upper()} REMOVED"

    # ---- the lock-out edge ----------------------------------------------------------------
    def _on_lockout(self, t: float) -> None:
        if self.state != "open_for_wagers" or self.round is None:
            self.log.info("lockout.ignored", state=self.state)
            return
        if not self.deck_ready:
            self.log.warning("lockout.before_shuffle")  # the shoe has not reported a shuffled deck yet
        spots = self.board.freeze()  # § 670a.2(c)(2): the accepted set, frozen now
        self.perf["lockout_frozen"] = time.perf_counter()
        rnd = self.round
        rnd.spots = spots
        wagers: dict[tuple[int, str], int] = dict(rnd.keyed)
        for wager, seat in spots:
            spec = self.proc.wagers.get(wager)
            if spec is not None and spec.fixed_cents:
                wagers[(seat, wager)] = spec.fixed_cents
        refused = self.proc.reject_unsupported(wagers)
        rnd.wagers = {k: c for k, c in sorted(wagers.items()) if k not in refused}
        for seat, wager in refused:
            self.board.refuse(wager, seat)  # its light flashes: the chip is not a wager
        rnd.lockout_t = t
        self.count_shown = False
        self.lock_out()
        self._emit("lockout", t=t, accepted=sorted(rnd.accepted))
        recs = [self.rec("lockout", t=round(t, 6), count=len(rnd.accepted), wagers=len(rnd.wagers))]
        recs += [self.rec("wager.accepted", seat=s, spot=w, cents=c) for (s, w), c in rnd.wagers.items()]
        recs += [self.rec("wager.rejected", seat=s, spot=w, reason=why) for (s, w), why in sorted(refused.items())]
        self.commit(recs, self._show_accepted)

    def _show_accepted(self, _events: list[StoredEvent]) -> None:
        rnd = self.round
        if rnd is None or self.state != "no_more_bets":
            return
        self.perf["lockout_durable"] = time.perf_counter()
        self.board.show_frozen()
        if self.progressive:  # the dealer compares the progressive chips collected (§ 670a.10(a)(2)(ii))
            self.dev.sign.message(f"NO MORE BETS - COUNT {len(rnd.accepted)}")
        else:
            self.dev.sign.message(f"NO MORE BETS - {len(rnd.wagers)} WAGERS")
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
        if self.progressive:  # increments credited when the count is confirmed (§ 670a.12(d)(2))
            recs += self.progressive.increment_records(rnd.accepted, self.round_no)
        self.commit(recs, lambda _e: self._advance())

    # ---- voids --------------------------------------------------------------------------
    def _void_records(self, reason: str, credited: bool) -> list[Record]:
        """Every wager of the round not yet settled goes back, the progressive
        contributions too, as new entries: nothing is deleted."""
        rnd = self.round
        recs = [self.rec("round.void", reason=reason)]
        for (seat, wager), cents in sorted(rnd.unsettled().items()):
            recs.append(self.rec("wager.returned", seat=seat, wager=wager, cents=cents))
        if self.progressive and credited:
            recs += self.progressive.void_records(rnd.accepted, credited, self.round_no, returned=False)
        return recs

    def _void(self, reason: str) -> None:
        rnd = self.round
        if rnd is None or self.state not in self.proc.in_round_states():
            return
        self._cancel_timer()
        rnd.void_reason = reason
        self.void_round()
        self.deck_ready = False
        self.proc.round_ended(rnd, void=True)
        self.commit(self._void_records(reason, rnd.credited) + self._carry_records(), lambda _e: self._after_void())

    def _dealer_void(self, reason: str) -> None:
        if self.state == "no_more_bets" and self.round is not None and self.round.wagers:
            # the chips collected do not equal the accepted count: recorded, then void (§ 670a.10(a)(2)(ii))
            self.commit([self.rec("count.mismatch", count=len(self.round.accepted), reason=reason)])
        if self.state in self.proc.in_round_states():
            self._void(reason)

    def _after_void(self) -> None:
        if self.state != "round_void":
            return
        self._show_meters()
        self.dev.sign.message("ROUND VOID - WAGERS RETURNED")
        self._emit("void", round=self.round.number, reason=self.round.void_reason, data=self.round)
        self.next_round()
