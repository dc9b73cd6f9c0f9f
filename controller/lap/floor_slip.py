"""The payout slip of a linked hit, from the LAP's records (the floor view's hit row links to it:
``/slip/<level>/<order>.pdf``): the same slip as ``tablectl slip`` prints from a table's ledger
(controller/reports/slip.py), with what only the LAP knows — the meter before the hit and after it
(as shown: the whole cents; a 100 % hit resets it, the hidden reserve moved in) and the order of
the hit on the link.  The table's location is not the LAP's to know, and no one records the
dealer's name: the slip leaves lines to write them.
"""

from __future__ import annotations

import math
from datetime import datetime
from fractions import Fraction
from typing import Any

from controller.lap.floor import FloorData
from controller.reports.reportview import percent
from controller.reports.slip import Slip, SlipError, SlipMeter
from controller.reports.words import game_title, hand_name

_SLIP_SQL = """
SELECT h.level, h.order_no, h.table_id, m.asset, m.game, h.round_no, h.seat, h.hand, h.fraction_num,
  h.fraction_den, h.meter_cents_before, h.amount_cents, h.decided_at, p.at AS paid_at, p.cents AS paid_cents,
  e.data->>'by' AS validated_by, r.reset_cents, r.reserve_moved, r.den,
  (SELECT left(group_name, 40) FROM {s}.link) AS group_name
FROM {s}.hits h LEFT JOIN {s}.members m ON m.table_id = h.table_id
LEFT JOIN {s}.payouts p ON p.table_id = h.table_id AND p.hit_seq = h.seq
LEFT JOIN {s}.events e ON e.table_id = p.table_id AND e.seq = p.seq
LEFT JOIN {s}.reseeds r ON r.level = h.level AND r.order_no = h.order_no
WHERE h.level = %s AND h.order_no = %s
"""


def _when(t: datetime | None) -> str:
    return "" if t is None else t.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def slip_of(data: FloorData, level: str, order: int, casino: str = "", group: str = "") -> Slip:
    """The slip of hit ``order`` of ``level``; SlipError when the LAP holds no such hit."""
    with data.conn() as c:
        rows = data.rows(c, _SLIP_SQL, (level, order))
    if not rows:
        raise SlipError(f"no hit #{order} of level {level!r}")
    return _slip(rows[0], casino, group or str(rows[0]["group_name"] or ""))


def _slip(r: dict[str, Any], casino: str, group: str) -> Slip:
    before = int(r["meter_cents_before"])
    amount = int(r["amount_cents"])
    share = Fraction(int(r["fraction_num"]), int(r["fraction_den"]))
    if r["reset_cents"] is not None:  # a 100 % hit: the meter reset, the reserve moved in
        after = int(r["reset_cents"]) + math.floor(Fraction(int(r["reserve_moved"]), int(r["den"])))
        note = "as shown on the sign, in whole cents; after a 100% hit the meter resets (its hidden reserve moved in)"
    else:
        after = before - amount
        note = "as shown on the sign, in whole cents (the fraction of a cent carried stays in the meter)"
    pending = r["paid_at"] is None
    return Slip(
        casino=casino,
        table=str(r["table_id"]),
        asset=str(r["asset"] or ""),
        location="not known to the LAP: write it here",
        game=game_title(str(r["game"])) if r["game"] else "not recorded",
        level=str(r["level"]),
        round_no=int(r["round_no"]),
        seat=int(r["seat"]),
        hand=hand_name(r["hand"]),
        kind=f"meter hit, {percent(share)} of the meter, paid by an attendant",
        amount_cents=amount,
        meter=SlipMeter(before, after, note),
        validated_by=str(r["validated_by"] or ""),
        dealer="write the name below (the LAP records no dealer's name)",
        decided_at=_when(r["decided_at"]),
        paid_at=_when(r["paid_at"]),
        source=f"the LAP's records (linked group {group or '?'})",
        order=f"the LAP's hit #{int(r['order_no'])}",
        pending=pending,
    )
