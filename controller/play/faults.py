"""The table's latched faults (tilts): raised, latched again after a restart, shown, cleared.

Every fault — a device's link, a device error, a timeout, a failed self-check, an audit
finding, an internal exception, a failed ledger write — goes through the one path,
:meth:`Faults.raise_tilt` (the table's ``raise_tilt``, and the context's): it is written to
the ledger (``tilt.raised``), stops the round, survives a restart (controller/play/recovery.py
finds it, :meth:`Faults.relatch`) and blocks new rounds until a technician clears it with a
reason (:meth:`Faults.clear`, § 670a.13(n) for a device out of order).

:class:`Faults` is a component of :class:`controller.play.table.Table`.  It owns the active tilts,
the damaged ledger's problems a clear acknowledges, and the state the table was in when the
fault came.  It voids a round cut short through wagering (controller/play/wagering.py), hands a
settled round still owing a hit back to settling (controller/play/settling.py), and asks the
table to drop the round once the clearing is durable (only the table writes the round).
Runs on the reactor thread only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from controller.books.ledger import Record
from controller.core.records import Kind
from controller.games.round import Round
from controller.play.bundles import Shared, Wiring
from controller.play.devices import Devices
from controller.play.machine import TableState, Trigger


class Voids(Protocol):
    """The records of a void (controller/play/wagering.py)."""

    def void_records(self, rnd: Round, reason: str) -> list[Record]: ...


class Hits(Protocol):
    """A settled round's next hit, or its close (controller/play/settling.py)."""

    def next_hit_or_complete(self, rnd: Round) -> None: ...


class Faults:
    def __init__(self, shared: Shared, *, devices: Devices, wiring: Wiring, voids: Voids, hits: Hits):
        """``devices``: the sign it shows a tilt on, the serial devices a clear restarts;
        ``wiring``: which links are down and which devices out of order, the table's round
        dropped once a clear is durable, its status published."""
        self.books, self.machine, self.game, self.rounds = shared.books, shared.machine, shared.game, shared.rounds
        self.timer, self.sign, self.serial = shared.timer, devices.sign, devices.serial
        self.registry, self.marks = wiring.registry, wiring.marks
        self.voids, self.hits = voids, hits
        self.drop_round = wiring.drop_round
        self.emit, self.publish, self.log = shared.emit, wiring.publish, shared.log
        self.tilts: dict[str, str] = {}  # source -> reason, while latched
        #: the damaged ledger's problems: a clear acknowledges them (``ledger.acknowledged``)
        self.ledger_problems: list[str] = []
        self.state_before_tilt: str = TableState.SELF_TEST

    def raise_tilt(self, source: str, reason: str, *, durable: bool = True) -> None:
        """The single latched fault path: record it, stop the round, show it.

        ``durable=False`` is for a fault of the ledger itself: its ``tilt.raised``
        record can never become durable (the writer has stopped), so the tilt is
        latched and shown at once instead of after a durable callback that would
        never come; it is logged, and the ledger's self-check at the next start
        finds what went wrong."""
        state = self.machine.state
        first = source not in self.tilts
        if state != TableState.TILT:
            self.state_before_tilt = state
        self.tilts[source] = reason
        self.timer.cancel()
        self.log.error("tilt", source=source, reason=reason, recorded=durable)
        if first and durable:
            rec = self.books.rec(Kind.TILT_RAISED, source=source, reason=reason)
            self.books.commit([rec], lambda _e: self._show())
        if self.machine.state != TableState.TILT:
            self.machine.trigger("fault")
        if first and not durable:
            self._show()
            self.publish()

    def self_check_failed(self, problems: list[str]) -> None:
        """Start-up self-checks failed: one latched tilt whose clear acknowledges the
        ledger's problems among them."""
        self.ledger_problems = list(problems)
        self.raise_tilt("self-check", "; ".join(problems))

    def ledger_damaged(self, source: str, problems: list[str]) -> None:
        """Damage found in the ledger while running (the periodic audit): a latched tilt
        whose clear acknowledges these problems, so they do not re-tilt at the next audit."""
        new = [p for p in problems if p not in self.ledger_problems]
        self.ledger_problems += new
        self.raise_tilt(source, "; ".join(problems[:5]))

    def relatch(self, tilts: Mapping[str, str]) -> None:
        """Tilts raised before a restart and never cleared (controller/play/recovery.py) latch
        again as recorded: the table starts in tilt and shows it, with no new
        ``tilt.raised`` (they are in the ledger already)."""
        self.tilts.update(tilts)
        self.log.error("tilt.restored", tilts=dict(tilts))
        self.machine.trigger("fault")
        self._show()

    def _show(self) -> None:
        try:
            self.sign.message("TILT - CALL TECHNICIAN")
        except Exception:  # noqa: BLE001 - the sign itself may be the fault
            pass
        self.emit("tilt", tilts=dict(self.tilts))

    def clear(self, reason: str, by: str) -> bool:
        """A technician clears every active tilt, with a reason.  Refused while a device
        the table needs still cannot be reached (a device that gave up is restarted
        once; clear again when it answers) — unless it has been marked out of order
        (§ 670a.13(n)).  A round cut short by the fault is voided and its wagers returned;
        a settled round still owing a hit goes back to the floorperson."""
        if self.machine.state != TableState.TILT:
            return False
        if not reason.strip():
            self.log.warning("clear.refused", why="a reason is required")
            return False
        down = self.registry.blocking(self.marks.marks)
        if down:
            self._refuse(reason, by, down)
            return False
        books = self.books
        recs = [books.rec(Kind.TILT_CLEARED, reason=reason, by=by, cleared=sorted(self.tilts))]
        if self.ledger_problems:
            # the damaged ledger's problems are acknowledged; the meters stay as the events say
            recs.append(books.rec(Kind.LEDGER_ACKNOWLEDGED, problems=self.ledger_problems))
            self.ledger_problems = []
        rnd = self.rounds.round
        self.tilts.clear()
        if rnd is not None and rnd.pending_hits:
            # a settled round still owes a validated hit: go back to the floorperson, never drop it
            books.commit(recs, lambda _e: self._cleared("clear_to_validation"))
            return True
        if rnd is not None:
            recs += self._round_closed(rnd, reason)
        books.commit(recs, lambda _e: self._cleared("clear"))
        return True

    def _refuse(self, reason: str, by: str, down: Mapping[str, str]) -> None:
        """A clear refused while a needed device is down: a device that gave up is restarted once."""
        for d, w in down.items():
            dev = self.serial(d)
            if w == "gave-up" and dev is not None:
                dev.restart()
        why = ", ".join(f"{d} {w}" for d, w in sorted(down.items()))
        self.log.warning("clear.refused", why=f"device(s) still down: {why}")
        self.books.commit(
            [self.books.rec(Kind.TILT_CLEAR_REFUSED, reason=reason, by=by, devices_down=why)],
            lambda _e: self.sign.message(f"CLEAR REFUSED - {why.upper()}"[:60]),
        )

    def _round_closed(self, rnd: Round, reason: str) -> list[Record]:
        """How a round the fault cut short ends when the tilt is cleared."""
        if rnd.void_reason is not None:
            return []  # voided already (a device timed out: void, then tilt) — never voided twice
        if rnd.results:
            return [self.books.rec(Kind.ROUND_COMPLETE, after_tilt=True)]
        if self.state_before_tilt in self.game.proc.in_round_states():
            return self.voids.void_records(rnd, f"round voided when tilt cleared: {reason}")
        return [self.books.rec(Kind.ROUND_VOID, reason=f"round closed when tilt cleared: {reason}")]

    def _cleared(self, trigger: Trigger) -> None:
        """The clearing is durable: only now does the table leave the tilt (and show it)."""
        if self.machine.state != TableState.TILT or self.tilts:
            return  # a new fault arrived meanwhile: stay in tilt
        for device, alt in sorted(self.marks.marks.items()):
            self.sign.message(f"{device.upper()} OUT OF ORDER - {alt.upper()}")
        rnd = self.rounds.round
        if trigger == "clear_to_validation" and rnd is not None:
            self.machine.trigger(trigger)
            self.hits.next_hit_or_complete(rnd)
            return
        self.drop_round()
        self.machine.trigger(trigger)
