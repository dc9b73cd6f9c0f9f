"""The progressive meter's side of a round: which ledger records each step
writes (§ 670a.12(d); § 688a.12(d); § 687a.12(c); cf. § 605a.7(a)).

Pure record-building: the table (reactor thread) calls these and commits the
records; controller/books/meters.py applies them, identically live and at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from controller.books import meters as M
from controller.books.ledger import Record
from controller.core.records import Kind
from controller.rules.settlement import WagerResult
from controller.settings.config import ProgressiveConfig

LEVEL = "primary"


@dataclass(frozen=True, slots=True)
class LapAnswer:
    """The LAP's answer to a linked hit's claim (docs/linked.md): the claim's ledger seq, the
    LAP's own order of the hit, the amount it decided, and its proof of that amount (None: none
    came)."""

    hit_seq: int
    lap_order: int
    cents: int
    proof: str | None = None


class ProgressiveSystem:
    """One progressive level per table (every chapter's paytables pay from one meter)."""

    def __init__(self, cfg: ProgressiveConfig):
        self.cfg = cfg
        self.level = LEVEL

    def _inc_data(self, seat: int, cents: int) -> dict[str, Any]:
        d: dict[str, Any] = {"level": self.level, "wager": cents, "rate": str(self.cfg.increment_rate), "seat": seat}
        if self.cfg.reserve_rate:
            d["reserve_rate"] = str(self.cfg.reserve_rate)
        return d

    @property
    def linked(self) -> bool:
        """The meter is the LAP's (docs/linked.md): contributions, voids, hit claims and
        payments are link records (the outbox), never local meter records."""
        return self.cfg.linked is not None

    def init_records(self, meters: Mapping[str, M.Meter], round_no: int) -> list[Record]:
        if self.level in meters or self.linked:
            return []
        d: dict[str, Any] = {"level": self.level, "seed": self.cfg.seed_cents, "rate": str(self.cfg.increment_rate)}
        if self.cfg.reserve_rate:
            d["reserve_rate"] = str(self.cfg.reserve_rate)
        return [Record(Kind.METER_INIT, round_no, d)]

    def increment_records(
        self, accepted: Mapping[int, int], round_no: int, rate_version: int | None = None
    ) -> list[Record]:
        """Credited when the dealer confirms the accepted count (§ 670a.10(a)(2)(ii)); a linked
        contribution carries the LAP's ``rate_version`` the wager was taken under."""
        if self.linked:
            extra = {} if rate_version is None else {"rate_version": rate_version}
            return [
                Record(Kind.LINK_CONTRIBUTION, round_no, {"level": self.level, "wager": c, "seat": s, **extra})
                for s, c in sorted(accepted.items())
            ]
        return [Record(Kind.METER_INCREMENT, round_no, self._inc_data(s, c)) for s, c in sorted(accepted.items())]

    def void_records(
        self, accepted: Mapping[int, int], credited: bool, round_no: int, returned: bool = True
    ) -> list[Record]:
        """A void returns every wager (``wager.returned``, unless the caller writes those),
        and its meter contribution as a recorded void."""
        recs = []
        for seat, cents in sorted(accepted.items()):
            if returned:
                recs.append(
                    Record(Kind.WAGER_RETURNED, round_no, {"seat": seat, "wager": "progressive", "cents": cents})
                )
            if credited and self.linked:
                recs.append(Record(Kind.LINK_VOID, round_no, {"level": self.level, "seat": seat, "wager": cents}))
            elif credited:
                recs.append(Record(Kind.METER_VOID, round_no, self._inc_data(seat, cents)))
        return recs

    def fixed_records(self, results: Sequence[WagerResult], round_no: int) -> list[Record]:
        """Fixed progressive pays come from the table inventory: table-paid for the level
        (a linked table's are its ``payout`` records only: the LAP's meter is not the table's)."""
        if self.linked:
            return []
        return [
            Record(
                Kind.METER_FIXED_PAID,
                round_no,
                {"level": self.level, "cents": r.amount + r.net, "seat": r.seat, "hand": r.hand},
            )
            for r in results
            if r.wager == "progressive" and r.outcome == "win" and not r.is_meter_pay
        ]

    def hit_payment(
        self, meter: M.Meter, hit: WagerResult, order: int, by: str, round_no: int
    ) -> tuple[list[Record], int]:
        """Pay one percentage-of-meter hit from the meter *as it now stands*
        (§ 670a.12(d)(3)), after a floorperson's validation (§ 670a.11(h)(3)(i)(B)(III));
        a 100 % hit resets the meter to its reseed value (§ 670a.12(d)(2))."""
        assert hit.meter_fraction is not None
        cents = M.percent_payout(meter, hit.meter_fraction)
        recs = [
            Record(Kind.HIT_VALIDATED, round_no, {"seat": hit.seat, "hand": hit.hand, "by": by, "order": order}),
            Record(
                Kind.METER_PAYOUT,
                round_no,
                {
                    "level": self.level,
                    "cents": cents,
                    "seat": hit.seat,
                    "hand": hit.hand,
                    "order": order,
                    "fraction": str(hit.meter_fraction),
                },
            ),
        ]
        if hit.meter_fraction >= 1:
            recs.append(Record(Kind.METER_RESEED, round_no, {"level": self.level, "cents": self.cfg.seed_cents}))
        return recs, cents

    def hit_claims(self, hits: Sequence[WagerResult], round_no: int) -> list[Record]:
        """A linked table's claims for its percentage-of-meter hits: the LAP orders them and
        decides each amount (docs/linked.md)."""
        return [
            Record(
                Kind.LINK_HIT,
                round_no,
                {"level": self.level, "fraction": str(h.meter_fraction), "seat": h.seat, "hand": h.hand},
            )
            for h in hits
        ]

    def linked_payment(self, hit: WagerResult, order: int, by: str, answer: LapAnswer, round_no: int) -> list[Record]:
        """Pay a linked hit the amount the LAP answered, after a floorperson's validation
        (§ 670a.11(h)(3)(i)(B)(III)); the LAP's own order is recorded beside the table's, and its
        proof of the amount (a LAP that lost the hit takes it back at this amount only with it)."""
        extra = {} if answer.proof is None else {"proof": answer.proof}
        return [
            Record(Kind.HIT_VALIDATED, round_no, {"seat": hit.seat, "hand": hit.hand, "by": by, "order": order}),
            Record(
                Kind.LINK_PAID,
                round_no,
                {
                    "level": self.level,
                    "hit_seq": answer.hit_seq,
                    "cents": answer.cents,
                    "seat": hit.seat,
                    "hand": hit.hand,
                    "order": order,
                    "lap_order": answer.lap_order,
                    "by": by,  # who validated (the floor view shows it)
                    **extra,
                },
            ),
        ]


def pending_from_events(events: Sequence[Any]) -> list[WagerResult]:
    """Hits recorded as pending in a round and not yet paid (for recovery at start-up)."""
    paid = {(e.data["seat"], e.data["hand"]) for e in events if e.kind in (Kind.METER_PAYOUT, Kind.LINK_PAID)}
    out = []
    for e in events:
        if e.kind == Kind.HIT_PENDING and (e.data["seat"], e.data["hand"]) not in paid:
            out.append(
                WagerResult(
                    e.data["seat"],
                    "progressive",
                    e.data["cents"],
                    "win",
                    -e.data["cents"],
                    e.data["hand"],
                    e.data.get("paytable"),
                    e.data.get("pays"),
                    meter_fraction=Fraction(e.data["fraction"]),
                )
            )
    return out
