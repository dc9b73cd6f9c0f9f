"""Table geometry: betting positions, the starting position and dealing order.

Pure.  Conventions used throughout tablectl:

* **Seats** are numbered 1..N from the dealer's far left ("first base") to the
  dealer's far right, the way the layout's betting positions are labelled — the one
  numbering of every game, rules modules included (docs/rules-readings/670a.md #20).
* **Positions** are counted for the starting position "beginning with the
  dealer as number one and continuing around the table in a counterclockwise
  manner" (§ 670a.5(i)(1)(iii); same in §§ 659a.5, 688a.5, 621a.6(c)).  Seen from
  above with the dealer facing the players, counterclockwise from the dealer
  goes first to the player on the dealer's right.  So with N seats, position 1
  is the dealer, position 2 is seat N (the dealer's far right) ... position N+1
  is seat 1.
* Stacks are delivered "moving clockwise around the table" from the starting
  position (§ 670a.10(c)), i.e. position p, p-1, ..., 1 (dealer), N+1, ...
* Hands are revealed and settled "beginning with the player farthest to the
  dealer's right and continuing around the table in a counterclockwise
  direction" (§ 670a.11(e), § 688a.11(e)): seat N, N-1, ..., 1.  The %-of-meter
  progressive pays are paid in this order (§ 670a.12(d)(3)), so it decides money.
  DJ Wild settles "beginning with the player farthest to the dealer's left" (§ 687a.11(e),
  reading 687a-8) and Over/Under in the dealing order (§ 686a.7(j)): seat 1 upward (their
  procedures' ``settlement_order``).
"""

from __future__ import annotations

DEALER = 1  # position number of the dealer


def start_position(total: int, positions: int) -> int:
    """Position (1 = dealer) reached by counting ``total`` counterclockwise
    from the dealer as one (§ 670a.5(i)(1)(iii), § 670a.5(i)(2))."""
    if positions < 2:
        raise ValueError(f"a table has at least 2 positions, got {positions}")
    if total < 1:
        raise ValueError(f"a count must be at least 1, got {total}")
    return (total - 1) % positions + 1


def position_to_seat(position: int, seats: int) -> int | None:
    """The seat at a position, or None for the dealer (position 1)."""
    if not 1 <= position <= seats + 1:
        raise ValueError(f"position {position} is not on a table with {seats} seats")
    return None if position == DEALER else seats + 2 - position


def seat_to_position(seat: int, seats: int) -> int:
    if not 1 <= seat <= seats:
        raise ValueError(f"seat {seat} is not on a table with {seats} seats")
    return seats + 2 - seat


def delivery_order(start: int, positions: int) -> list[int]:
    """Positions in the order stacks are delivered: clockwise from ``start`` (§ 670a.10(c))."""
    if not 1 <= start <= positions:
        raise ValueError(f"start position {start} is not in 1..{positions}")
    return [((start - 1 - k) % positions) + 1 for k in range(positions)]


def settlement_order(seats: int) -> list[int]:
    """Seats in the order hands are revealed and settled: from the dealer's far
    right, counterclockwise (§ 670a.11(e), § 670a.11(h)(3))."""
    return list(range(seats, 0, -1))
