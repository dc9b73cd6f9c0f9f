"""The vocabulary of the ledger and of a game's procedure, in one place.

:class:`Kind` names every kind of ledger record the controller writes.  Its values
are the strings stored in the ledger (``events.kind``) and hashed into its chain,
so a value must never change: a renamed member keeps its old value.  Being a
``StrEnum``, a member *is* its string: ``Kind.TILT_RAISED == "tilt.raised"``,
records read back from the ledger (plain strings) compare equal to it, and JSON
and SQLite store the bare value.

:class:`PhaseKind` names the kinds of step a game's procedure is made of
(controller/games/base.py ``Phase.kind``); controller/play/machine.py and the table's
components dispatch on it.

Pure vocabulary: no imports beyond the standard library.
"""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """Ledger record kinds (``Record.kind``), grouped by who writes them."""

    # ---- start-up, configuration (controller/play/table.py, controller/daemon/service.py, console)
    POWER_UP = "power.up"
    SELFCHECK = "selfcheck"
    CONFIG_LOADED = "config.loaded"
    CONFIG_APPLIED = "config.applied"
    LEDGER_ACKNOWLEDGED = "ledger.acknowledged"  # a damaged ledger's problems, acknowledged by a clear
    LEDGER_KEYED = "ledger.keyed"  # a schema-1 (SHA-256) ledger keyed from here on (controller/books/ledger.py)
    LEDGER_RESTORED = "ledger.restored"  # `tablectl restore` put a backup in place (controller/books/backup.py)
    GAME_CARRY = "game.carry"  # what a procedure carries to the next round (§ 621a.9)
    GAME_CARRY_REFUSED = "game.carry_refused"

    # ---- the round's frame (table, controller/play/recovery.py)
    ROUND_OPEN = "round.open"
    ROUND_SETTLED = "round.settled"
    ROUND_COMPLETE = "round.complete"
    ROUND_VOID = "round.void"
    ROUND_RECOVERED = "round.recovered"

    # ---- wagers (controller/play/wagering.py, controller/play/deciding.py)
    LOCKOUT = "lockout"
    LOCKOUT_RECOVERED = "lockout.recovered"  # a lock-out's records taken from the journal at start-up
    WAGER_ACCEPTED = "wager.accepted"
    WAGER_REJECTED = "wager.rejected"
    WAGER_REMOVED = "wager.removed"
    WAGER_RETURNED = "wager.returned"
    WAGER_KEYED = "wager.keyed"
    COUNT_CONFIRMED = "count.confirmed"
    COUNT_MISMATCH = "count.mismatch"

    # ---- dealing (controller/play/dealing.py)
    DICE = "dice"
    DICE_NO_ROLL = "dice.no_roll"
    RNG_DRAW = "rng.draw"
    DEAL = "deal"
    DEAL_MANUAL = "deal.manual"
    CARD_BURNED = "card.burned"
    STUB_VERIFIED = "stub.verified"
    STUB_SKIPPED = "stub.skipped"
    SHUFFLE_FAILED = "shuffle.failed"
    SHOE_SHUFFLED = "shoe.shuffled"
    SHOE_COVER = "shoe.cover"
    HANDS_ENTERED = "hands.entered"

    # ---- decisions, keypad (controller/play/deciding.py)
    DECISION = "decision"
    DECISIONS_NONE = "decisions.none"
    KEYPAD_REJECTED = "keypad.rejected"
    KEYPAD_REJECTED_SUMMARY = "keypad.rejected.summary"  # rejected entries only counted (controller/play/flood.py)

    # ---- settlement, hits, the meter (controller/play/settling.py, controller/play/progressive.py)
    WAGER_RESULT = "wager.result"
    PAYOUT = "payout"
    HIT_PENDING = "hit.pending"
    HIT_VALIDATED = "hit.validated"
    # a floorperson validated a linked hit before the LAP answered it: restored at start-up
    # (controller/play/recovery.py), so the validation is not asked for again
    HIT_AWAITING_LAP = "hit.awaiting_lap"
    METER_INIT = "meter.init"
    METER_INCREMENT = "meter.increment"
    METER_VOID = "meter.void"
    METER_FIXED_PAID = "meter.fixed_paid"
    METER_PAYOUT = "meter.payout"
    METER_RESEED = "meter.reseed"
    METER_ADJUST = "meter.adjust"

    # ---- linked progressives (docs/linked.md): the table's outbox to the LAP, read by the
    # uplink (controller/uplink/ledgerseam.py), keyed by the ledger's seq
    LINK_CONTRIBUTION = "link.contribution"
    LINK_VOID = "link.void"
    LINK_HIT = "link.hit"
    LINK_PAID = "link.paid"
    LINK_STATE = "link.state"  # the linked wager opened or closed (controller/play/linked.py)

    # ---- faults (controller/play/table.py)
    TILT_RAISED = "tilt.raised"
    TILT_CLEARED = "tilt.cleared"
    TILT_CLEAR_REFUSED = "tilt.clear_refused"

    # ---- floor actions (controller/play/floor.py)
    DEVICE_OUT_OF_ORDER = "device.out_of_order"
    DEVICE_IN_SERVICE = "device.in_service"
    SHOE_RESHUFFLE_ORDERED = "shoe.reshuffle_ordered"
    DEALER_CHANGED = "dealer.changed"

    # ---- the technician console (controller/console/)
    CONSOLE_LOGIN = "console.login"
    CONSOLE_LOGOUT = "console.logout"
    CONSOLE_LOCKED = "console.locked"
    CONSOLE_UNLOCKED = "console.unlocked"  # a technician lifted a login lock (controller/console/auth.py)
    CONSOLE_COMMAND = "console.command"
    CONSOLE_PINS = "console.pins"

    @property
    def is_meter(self) -> bool:
        """A record the meters apply (controller/books/meters.py)."""
        return self.value.startswith("meter.")


class PhaseKind(StrEnum):
    """What kind of step a procedure's phase is (controller/games/base.py)."""

    START = "start"  # starting position from the shaker or the RNG (§ 670a.5(i), § 621a.6(c))
    DICE_WAGERS = "dice_wagers"  # wagers settled right after the roll (§ 621a.6(b))
    DEAL = "deal"  # the shoe dispenses the stacks of Procedure.plan (§ 670a.10(c))
    STUB = "stub"  # the cards left are counted (§ 670a.10(d)), when Procedure.stub_due
    DECIDE = "decide"  # players' decisions, entered by the dealer on the keypad
    SETTLE = "settle"  # every wager settled (§ 670a.11(d)-(h) and peers)
