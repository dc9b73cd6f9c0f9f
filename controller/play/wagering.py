"""Wagers at the table: the bet sensors, the wagers the dealer keys, the lock-out
edge that freezes them (§ 670a.2(c)(2); § 670a.7(c); § 687a.8(c)), the count
confirmation that credits the meter (§ 670a.10(a)(2)(ii)), and voids that return
every wager (§ 670a.13).

:class:`Wagering` is a component of :class:`controller.play.table.Table`.  It owns what
was wagered in the round (:class:`~controller.games.round.Wagered`, the only writer), the
bet board (controller/play/betting.py: the spots' states and lights), whether the accepted
count is shown, and the lock-out's timing stamps (``perf``, read by bench/lockout.py).
It is given the shared roles (controller/play/bundles.py) and the shoe's deck, which a
void spends (controller/play/dealing.py ``Deck``).  Runs on the reactor thread only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from controller.books.ledger import Record, StoredEvent
from controller.core.records import Kind
from controller.games.base import EntryError, WagerSpec, parse_cents, split_entry
from controller.games.round import Key, Round, Wagered, WageredView, accepted, unsettled
from controller.play.betting import BetBoard, Late, restore_levels
from controller.play.bundles import Shared
from controller.play.context import (
    Journal,
    Link,
    carry_records,
)
from controller.play.machine import TableState
from controller.play.progressive import LEVEL, ProgressiveSystem
from controller.rules.settlement import WagerResult
from drivers.sign import Sign


def void_records(
    round_no: int,
    wagers: Mapping[Key, int],
    results: Sequence[WagerResult],
    reason: str,
    credited: bool,
    progressive: ProgressiveSystem | None,
) -> list[Record]:
    """A void: every wager of the round not yet settled goes back, the progressive
    contributions too, as new entries; nothing is deleted."""
    recs = [Record(Kind.ROUND_VOID, round_no, {"reason": reason})]
    for (seat, wager), cents in sorted(unsettled(wagers, results).items()):
        recs.append(Record(Kind.WAGER_RETURNED, round_no, {"seat": seat, "wager": wager, "cents": cents}))
    if progressive and credited:
        recs += progressive.void_records(accepted(wagers), credited, round_no, returned=False)
    return recs


class DeckView(Protocol):
    """The shoe's deck as wagering sees it (controller/play/dealing.py ``Deck``): whether it is
    ready, and spent by a void."""

    @property
    def ready(self) -> bool: ...

    def spend(self) -> None: ...


class Wagering:
    count_shown: bool  # the accepted count is on the sign (the dealer may confirm it)
    perf: dict[str, float]  # perf_counter stamps of the lock-out, for bench/lockout.py

    def __init__(
        self,
        shared: Shared,
        *,
        board: BetBoard,
        deck: DeckView,
        sign: Sign,
        link: Link,
        journal: Journal | None = None,
    ):
        self.books, self.machine, self.game, self.rounds = shared.books, shared.machine, shared.game, shared.rounds
        self.board = board
        self.deck = deck
        self.sign = sign
        self.timer = shared.timer
        self.raise_tilt, self.emit = shared.raise_tilt, shared.emit
        self.show_meters, self.log = shared.show_meters, shared.log
        self.link = link  # the rate version a linked wager is taken under (NullLink: none)
        #: the lock-out journal (controller/books/lockjournal.py): the service's; None (tests' harness):
        #: the lock-out's count is shown once the ledger has its records
        self.journal = journal
        self.count_shown = False
        self.perf = {}
        self._w = Wagered()

    # ---- the round's record -------------------------------------------------------------
    @property
    def record(self) -> WageredView:
        """What was wagered in the round in play (read-only)."""
        return self._w

    def new_round(self) -> WageredView:
        self._w = Wagered()
        self.count_shown = False
        return self._w

    def restore(self, wagers: Mapping[Key, int]) -> WageredView:
        """The wagers of a round recovered at start-up (controller/play/recovery.py)."""
        self._w = Wagered(wagers=dict(wagers))
        return self._w

    def accept_late(self, seat: int, wager: str, cents: int) -> None:
        """A wager made after "no more bets" where the rules allow it (Double Down,
        § 670a.7(c); DJ Wild's Raise, § 687a.11(b)); controller/play/deciding.py records it."""
        self._w.wagers[(seat, wager)] = cents

    # ---- the bet board ------------------------------------------------------------------
    def restore_levels(self, is_active: Callable[[str], bool]) -> None:
        """The sensors' levels at start-up (before the first round opens)."""
        restore_levels(self.board, is_active)

    def open_board(self) -> None:
        self.board.open()

    def board_snapshot(self) -> dict[str, str]:
        return self.board.snapshot()

    def light_wins(self, results: Sequence[WagerResult]) -> None:
        """The settlement is durable: a winning progressive spot blinks for a hit held for
        validation, and is lit steady for a fixed pay."""
        for r in results:
            if r.outcome == "win" and r.wager == "progressive" and ("progressive", r.seat) in self.board.state:
                (self.board.flash if r.is_meter_pay else self.board.steady)("progressive", r.seat)

    def set_closed(self, wager: str, closed: bool) -> None:
        """A wager not playable now (a linked progressive whose link is lost, controller/play/linking.py)."""
        self.board.set_closed(wager, closed)

    def placed(self, wager: str) -> list[int]:
        """Seats with a chip sensed on ``wager``'s spot now."""
        return [seat for (w, seat), on in sorted(self.board.level.items()) if w == wager and on]

    # ---- sensors ------------------------------------------------------------------------
    def on_sensor(self, wager: str, seat: int, active: bool, t: float) -> None:
        books = self.books
        late = self.board.sensor(wager, seat, active, t)
        state = self.machine.state
        if late is None or self.rounds.round is None or state in (TableState.TILT, TableState.SELF_TEST):
            return
        # after lock-out nothing changes the accepted set (§ 670a.7(c)); record the attempt
        if late.kind == "removed":
            books.commit([books.rec(Kind.WAGER_REMOVED, seat=seat, spot=wager, t=round(t, 6))])
            return
        self._w.rejected.append(seat)
        books.commit(
            [books.rec(Kind.WAGER_REJECTED, seat=seat, spot=wager, reason=late.reason, t=round(t, 6))],
            lambda _e: self._show_rejected(late),
        )

    def _show_rejected(self, late: Late) -> None:
        self.board.reject(late)
        self.emit("rejected", seat=late.seat, wager=late.wager)

    # ---- wagers keyed by the dealer -------------------------------------------------------
    def bet_entry(self, text: str) -> str:
        """``BET <seat> <wager> <amount>`` while wagers are open (0 removes it)."""
        parts = split_entry(text)
        if len(parts) != 4 or parts[0].upper() != "BET":
            raise EntryError("enter BET <seat> <wager> <amount>")
        if not parts[1].isdigit():
            raise EntryError(f"{parts[1]!r} is not a seat number")
        seat, wager, cents = int(parts[1]), parts[2].lower(), parse_cents(parts[3])
        self.game.proc.keyed_wager(seat, wager, cents)
        if cents:
            self._w.keyed[(seat, wager)] = cents
        else:
            self._w.keyed.pop((seat, wager), None)
        return f"SEAT {seat} {wager.upper()} {cents / 100:,.2f}" if cents else f"SEAT {seat} {wager.upper()} REMOVED"

    # ---- the lock-out edge ----------------------------------------------------------------
    def on_lockout(self, t: float) -> None:
        if self.machine.state != TableState.OPEN or self.rounds.round is None:
            self.log.info("lockout.ignored", state=self.machine.state)
            return
        if not self.deck.ready:
            self.log.warning("lockout.before_shuffle")  # the shoe has not reported a shuffled deck yet
        spots = self.board.freeze()  # § 670a.2(c)(2): the accepted set, frozen now
        self.perf.pop("lockout_durable", None)
        self.perf["lockout_frozen"] = time.perf_counter()
        recs = self._freeze(spots, t)
        journaled, failure = self._journaled(recs)
        w, books = self._w, self.books
        if journaled:
            # durable in the journal (controller/books/lockjournal.py): the ledger's copy follows, in its
            # own commit; the count is shown now, after the transition
            self.perf["lockout_durable"] = time.perf_counter()
            books.commit(recs)
            self.machine.trigger("lock_out")
            self.emit("lockout", t=t, accepted=sorted(accepted(w.wagers)))
            self._show_accepted([])
            return
        # the records go to the ledger first, so that the state machine's transition and the status
        # publish run while the disk syncs; nothing is shown before ``_show_accepted``, which runs once
        # they are durable, after this handler (and so after the transition) has returned
        books.commit(recs, self._show_accepted, hand_over=True)
        self.machine.trigger("lock_out")
        self.emit("lockout", t=t, accepted=sorted(accepted(w.wagers)))
        if failure is not None:  # the disk is failing: latched, after the accepted set went to the ledger
            self.raise_tilt("ledger", f"the lock-out journal could not be written: {failure}")

    def _freeze(self, spots: list[tuple[str, int]], t: float) -> list[Record]:
        """The accepted set at the lock-out edge: the sensed spots at their fixed amounts and
        the keyed wagers, less those the game refuses (their chips are not wagers); its records."""
        w, books, proc = self._w, self.books, self.game.proc
        w.spots = spots
        wagers = {**w.keyed, **_sensed_wagers(proc.wagers, spots)}
        refused = proc.reject_unsupported(wagers)
        w.wagers = {k: c for k, c in sorted(wagers.items()) if k not in refused}
        for seat, wager in refused:
            self.board.refuse(wager, seat)  # its light flashes: the chip is not a wager
        w.lockout_t = t
        w.rate_version = self.link.rate_versions.get(LEVEL)  # a linked table: the LAP's rates taken under
        self.count_shown = False
        recs = [books.rec(Kind.LOCKOUT, t=round(t, 6), count=len(accepted(w.wagers)), wagers=len(w.wagers))]
        recs += [books.rec(Kind.WAGER_ACCEPTED, seat=s, spot=x, cents=c) for (s, x), c in w.wagers.items()]
        recs += [books.rec(Kind.WAGER_REJECTED, seat=s, spot=x, reason=why) for (s, x), why in sorted(refused.items())]
        return recs

    def _journaled(self, recs: list[Record]) -> tuple[bool, OSError | None]:
        """The lock-out's records written and synced to the journal: (True, None) once durable
        there.  (False, None) when there is no journal or the records do not fit in one block,
        (False, the error) when the write failed: the ledger's commit is then awaited."""
        if self.journal is None:
            return False, None
        block = self.journal.block(self.books.round_no, recs)
        if block is None:
            return False, None
        try:
            self.journal.write(block)
        except OSError as e:
            self.log.error("lockout.journal_failed", error=str(e))
            return False, e
        return True, None

    def _show_accepted(self, _events: list[StoredEvent]) -> None:
        if self.rounds.round is None or self.machine.state != TableState.NO_MORE_BETS:
            return
        self.perf.setdefault("lockout_durable", time.perf_counter())  # journaled: already stamped
        self.board.show_frozen()
        count = len(accepted(self._w.wagers))
        if self.game.progressive:  # the dealer compares the progressive chips collected (§ 670a.10(a)(2)(ii))
            self.sign.message(f"NO MORE BETS - COUNT {count}")
        else:
            self.sign.message(f"NO MORE BETS - {len(self._w.wagers)} WAGERS")
        self.count_shown = True
        self.perf["lockout_shown"] = time.perf_counter()
        self.emit("count_shown", count=count)

    def on_confirm(self) -> None:
        if self.machine.state != TableState.NO_MORE_BETS or self.rounds.round is None:
            return
        if not self.count_shown:
            self.log.warning("confirm.before_count_shown")
            return
        w, books, progressive = self._w, self.books, self.game.progressive
        w.confirmed = True
        w.credited = True
        recs = [books.rec(Kind.COUNT_CONFIRMED, count=len(accepted(w.wagers)))]
        if progressive:  # increments credited when the count is confirmed (§ 670a.12(d)(2))
            recs += progressive.increment_records(accepted(w.wagers), books.round_no, w.rate_version)
        books.commit(recs, lambda _e: self.machine.advance())

    # ---- voids --------------------------------------------------------------------------
    def void_records(self, rnd: Round, reason: str) -> list[Record]:
        """The records of voiding ``rnd`` now (controller/play/faults.py, a tilt's clearing)."""
        return void_records(self.books.round_no, rnd.wagers, rnd.results, reason, rnd.credited, self.game.progressive)

    def void(self, reason: str) -> None:
        """Void the round in play: every unsettled wager returned (§ 670a.13)."""
        rnd = self.rounds.round
        proc = self.game.proc
        if rnd is None or self.machine.state not in proc.in_round_states():
            return
        self.timer.cancel()
        self._w.void_reason = reason
        self.machine.trigger("void_round")
        self.deck.spend()
        proc.round_ended(rnd, void=True)
        recs = self.void_records(rnd, reason) + carry_records(self.books, proc)
        self.books.commit(recs, lambda _e: self._after_void(rnd))

    def dealer_void(self, reason: str) -> None:
        state = self.machine.state
        if state == TableState.NO_MORE_BETS and self.rounds.round is not None and self._w.wagers:
            # the chips collected do not equal the accepted count: recorded, then void (§ 670a.10(a)(2)(ii))
            count = len(accepted(self._w.wagers))
            self.books.commit([self.books.rec(Kind.COUNT_MISMATCH, count=count, reason=reason)])
        if state in self.game.proc.in_round_states():
            self.void(reason)

    def _after_void(self, rnd: Round) -> None:
        if self.machine.state != TableState.ROUND_VOID:
            return
        self.show_meters()
        self.sign.message("ROUND VOID - WAGERS RETURNED")
        self.emit("void", round=rnd.number, reason=rnd.void_reason, data=rnd)
        self.machine.trigger("next_round")


def _sensed_wagers(specs: Mapping[str, WagerSpec], spots: list[tuple[str, int]]) -> dict[Key, int]:
    """The chips sensed at the lock-out as wagers, each at its fixed amount (a spot whose wager
    has none is not one)."""
    out: dict[Key, int] = {}
    for wager, seat in spots:
        spec = specs.get(wager)
        if spec is not None and spec.fixed_cents:
            out[(seat, wager)] = spec.fixed_cents
    return out
