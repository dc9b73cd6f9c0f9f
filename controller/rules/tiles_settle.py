"""Pai Gow tiles settlement: the Pai Gow Wager against the dealer or a player
bank (with co-banking), the vigorish, the Pair Fortunes Wager, and the
selection of a player bank (§§ 621a.8, 621a.9, 621a.11).

Pure: no I/O; integer cents.  Every function returns
:class:`~controller.rules.settlement.WagerResult` records (``net`` is the
player's gain, the vigorish already deducted and shown in ``commission``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from controller.rules.paytables import Paytable, get_paytable, parse_money, parse_percent
from controller.rules.settlement import Outcome, WagerResult, round_up_to, whole_cents
from controller.rules.tiles import Setting, as_tiles, classify_pair_fortunes, resolve, tiles_str
from controller.rules.tiles_deal import SEATS

BASE_PAYTABLE = "Tiles Pai Gow"
PAIR_FORTUNES_PAYTABLE = "Tiles Pair Fortunes"


def _amount(amount: int, what: str = "wager") -> int:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValueError(f"{what} amount {amount!r} must be a positive number of cents")
    return amount


def _base_table(name: str) -> Paytable:
    pt = get_paytable(name)
    if pt.game != "pai-gow-tiles" or pt.wager != "base":
        raise ValueError(f"paytable {name!r} is for {pt.game}/{pt.wager}, not pai-gow-tiles/base")
    return pt


def vigorish(won_cents: int, paytable: str = BASE_PAYTABLE) -> int:
    """The vigorish on ``won_cents`` (§ 621a.11(a)): 5% of the amount won, rounded to 25 cents
    or the next highest multiple of 25 cents — never more than the amount won (reading 621a
    #21: the rounding is the certificate holder's option, "may round off", and a fee that took
    more than was won would make a winning wager a loss).  Where the rounded figure would
    exceed the win (an amount won under 25 cents) the 5% is rounded up to the whole cent only.
    Rate and rounding step are the paytable's ``commission`` and ``commission_round_up``
    options; with no rounding step the exact 5% must be whole cents (otherwise ValueError,
    never a dropped fraction)."""
    if isinstance(won_cents, bool) or not isinstance(won_cents, int) or won_cents < 0:
        raise ValueError(f"amount won {won_cents!r} must be a non-negative number of cents")
    if won_cents == 0:
        return 0
    opts = _base_table(paytable).options
    rate = parse_percent(str(opts.get("commission", "5%")))
    exact = rate * won_cents
    step = opts.get("commission_round_up")
    if step is None:
        return whole_cents(exact, rule="§ 621a.11(a) vigorish without rounding")
    rounded = round_up_to(exact, parse_money(str(step)))
    return rounded if rounded <= won_cents else round_up_to(exact, 1)


def _pai_gow_result(seat: int, amount: int, outcome: str, hand: str, detail: str, pt: Paytable) -> WagerResult:
    win = pt.payout("win")
    assert win is not None
    if outcome == "win":
        won = whole_cents(win.net_win(amount), rule="§ 621a.11(a) 1 to 1")
        vig = vigorish(won, pt.name)
        return WagerResult(
            seat,
            "base",
            amount,
            "win",
            won - vig,
            hand=hand,
            paytable=pt.name,
            pays=win.text,
            commission=vig,
            detail=detail,
        )
    if outcome == "push":
        return WagerResult(seat, "base", amount, "push", 0, hand=hand, paytable=pt.name, detail=detail)
    if outcome == "surrender":
        return WagerResult(seat, "base", amount, "surrender", -amount, hand=hand, paytable=pt.name, detail=detail)
    return WagerResult(seat, "base", amount, "lose", -amount, hand=hand, paytable=pt.name, detail=detail)


def settle_pai_gow(
    seat: int, amount: int, player: Setting | None, banker: Setting, paytable: str = BASE_PAYTABLE
) -> WagerResult:
    """A Pai Gow Wager against the dealer's (or bank's) hands.

    § 621a.8(g)-(i): win when both hands rank higher, lose when neither does,
    tie otherwise; copies and zero-zero ties go to the dealer/bank (§ 621a.3).
    A win pays 1 to 1 less the vigorish (§ 621a.11(a), § 621a.9(q)).
    ``player=None`` is a surrendered wager, collected whole (§ 621a.8(e)).
    """
    _amount(amount)
    pt = _base_table(paytable)
    if player is None:
        return _pai_gow_result(seat, amount, "surrender", "surrendered", "§ 621a.8(e)", pt)
    c = resolve(player, banker)
    hand = f"high {player.high.label} / low {player.low.label}"
    detail = f"vs high {banker.high.label} / low {banker.low.label}"
    if c.copies:
        detail += "; copy: " + ", ".join(c.copies) + " (§ 621a.3(d),(g),(i))"
    return _pai_gow_result(seat, amount, c.outcome, hand, detail, pt)


def settle_pair_fortunes(
    seat: int, amount: int, tiles: Sequence[int] | str, paytable: str = PAIR_FORTUNES_PAYTABLE
) -> WagerResult:
    """Pair Fortunes Wager on the player's four tiles however set (§ 621a.8(j), § 621a.11(b));
    also settled for a player who surrendered the Pai Gow Wager (§ 621a.8(e))."""
    _amount(amount)
    pt = get_paytable(paytable)
    if pt.game != "pai-gow-tiles" or pt.wager != "pair-fortunes":
        raise ValueError(f"paytable {paytable!r} is not a pai-gow-tiles Pair Fortunes paytable")
    ts = as_tiles(tiles, 4)
    h = classify_pair_fortunes(ts)
    p = pt.payout(h)
    if p is None:
        return WagerResult(
            seat, "pair-fortunes", amount, "lose", -amount, hand=h, paytable=pt.name, detail=tiles_str(ts)
        )
    net = whole_cents(p.net_win(amount), rule=f"{pt.section}: {p.text} on {amount} cents")
    return WagerResult(
        seat, "pair-fortunes", amount, "win", net, hand=h, paytable=pt.name, pays=p.text, detail=tiles_str(ts)
    )


# --------------------------------------------------------------------------- player bank, co-bank


class CoBankSplitError(ValueError):
    """A co-bank surplus or shortfall that does not halve into whole cents (§ 621a.9(r))."""


@dataclass(frozen=True)
class PlayerWager:
    seat: int
    amount: int
    setting: Setting | None  # None: surrendered (§ 621a.8(e))


@dataclass(frozen=True)
class DealerWager:
    """The dealer's wager against a player bank, and the dealer's hands (§ 621a.9(h), (n));
    an ``amount`` of 0 is no wager."""

    amount: int
    setting: Setting


@dataclass(frozen=True)
class BankSettlement:
    """The outcome of a player-banked (or co-banked) round.

    ``results`` holds each player's Pai Gow Wager against the bank and the bank's
    own result (wager ``"bank"``, its net after the vigorish on its surplus).
    The house's side: ``dealer_net`` (its wager against the bank, § 621a.9(h),
    (n), (p)), ``house_share`` (its half under co-banking, § 621a.9(r)) and
    ``commission`` (all vigorish, § 621a.9(o), (q), (r)).  Money is conserved:
    ``table_net(results) == dealer_net + house_share + commission``."""

    results: tuple[WagerResult, ...]
    dealer: WagerResult | None
    dealer_net: int
    house_share: int
    commission: int
    surplus: int  # losing less winning wagers in the center (negative: a shortfall)

    @property
    def house_net(self) -> int:
        return self.dealer_net + self.house_share + self.commission


def _half(x: int, what: str) -> int:
    if x % 2:
        raise CoBankSplitError(
            f"the co-bank {what} of {x} cents does not split 1/2 and 1/2 into whole cents (§ 621a.9(r)); "
            "settle it by hand"
        )
    return x // 2


def _center(wagers: Sequence[PlayerWager], results: Sequence[WagerResult]) -> tuple[int, int, int]:
    """(the losing wagers collected in the center, the winning wagers paid 1 to 1 with their
    vigorish, the vigorish taken) of the players' results against the bank."""
    center = paid = commission = 0
    for w, r in zip(wagers, results, strict=True):
        if r.outcome in ("lose", "surrender"):
            center += w.amount
        elif r.outcome == "win":
            paid += r.net + r.commission
            commission += r.commission
    return center, paid, commission


def settle_bank(
    bank_seat: int,
    bank: Setting,
    wagers: Sequence[PlayerWager],
    *,
    dealer: DealerWager | None = None,
    cobank: bool = False,
    paytable: str = BASE_PAYTABLE,
) -> BankSettlement:
    """Settle a round a player banks (§ 621a.9(n)-(q)) or co-banks with the dealer (§ 621a.9(r)).

    Each player's hands are compared with the bank's (copies go to the bank);
    winners pay the vigorish on the amount won (§ 621a.9(q)).  Losing wagers go
    to the center, winners are paid from it; a shortfall is paid by the bank
    (co-bank: half by the bank, half from the table inventory).  A surplus is
    the bank's less a 5% vigorish (co-bank: the house takes half first and the
    vigorish is on the co-bank's half).  Without co-banking the dealer may wager against the
    bank (``dealer``: the amount and the dealer's hands; § 621a.9(h), (n));
    the dealer's win is paid from the center and no vigorish is taken from it.
    """
    pt = _base_table(paytable)
    dealer_wager = dealer.amount if dealer is not None else 0
    _check_bank(bank_seat, wagers, dealer_wager, cobank)
    results = [settle_pai_gow(w.seat, w.amount, w.setting, bank, pt.name) for w in wagers]
    center, paid, commission = _center(wagers, results)
    dealer_result: WagerResult | None = None
    dealer_net = 0
    if dealer is not None and dealer_wager:
        dealer_result = _dealer_vs_bank(dealer_wager, dealer.setting, bank, pt)
        dealer_net = dealer_result.net
        if dealer_net > 0:
            paid += dealer_net
        else:
            center -= dealer_net
    surplus = center - paid
    house_share, bank_gross, bank_vig = _bank_share(surplus, cobank, pt)
    commission += bank_vig
    outcome: Outcome = "win" if bank_gross > 0 else ("lose" if bank_gross < 0 else "push")
    results.append(
        WagerResult(
            bank_seat,
            "bank",
            0,
            outcome,
            bank_gross - bank_vig,
            hand=f"high {bank.high.label} / low {bank.low.label}",
            paytable=pt.name,
            commission=bank_vig,
            detail=("co-bank § 621a.9(r)" if cobank else "player bank § 621a.9(o)")
            + f"; center surplus {surplus} cents",
        )
    )
    return BankSettlement(tuple(results), dealer_result, dealer_net, house_share, commission, surplus)


def _check_bank(bank_seat: int, wagers: Sequence[PlayerWager], dealer_wager: int, cobank: bool) -> None:
    if bank_seat not in SEATS:
        raise ValueError(f"bank seat {bank_seat!r} is not a betting position 1..6")
    if cobank and dealer_wager:
        raise ValueError("the dealer may not wager against the bank when co-banking (§ 621a.9(e), (h))")
    if dealer_wager < 0:
        raise ValueError(f"a dealer wager against the bank needs a positive amount, got {dealer_wager}")
    _check_wager_seats(bank_seat, wagers)


def _check_wager_seats(bank_seat: int, wagers: Sequence[PlayerWager]) -> None:
    """Each wager's amount, at a betting position other than the bank's, once (§ 621a.9(f))."""
    seen: set[int] = set()
    for w in wagers:
        _amount(w.amount)
        if w.seat == bank_seat or w.seat not in SEATS or w.seat in seen:
            raise ValueError(
                f"seat {w.seat!r}: not a betting position other than the bank's, or listed twice "
                "(§ 621a.9(f): the bank wagers on one area only)"
            )
        seen.add(w.seat)


def _dealer_vs_bank(dealer_wager: int, dealer: Setting, bank: Setting, pt: Paytable) -> WagerResult:
    """The dealer's wager against the bank: house money, paid from the center, no vigorish
    (§ 621a.9(h), (n), (p)); its net is +wager (won), -wager (lost) or 0 (a copy: push)."""
    c = resolve(dealer, bank)
    net = dealer_wager if c.outcome == "win" else (-dealer_wager if c.outcome == "lose" else 0)
    return WagerResult(
        0,
        "dealer-vs-bank",
        dealer_wager,
        c.outcome,
        net,
        hand=f"high {dealer.high.label} / low {dealer.low.label}",
        paytable=pt.name,
        detail="house money (§ 621a.9(h), (n), (p))",
    )


def _bank_share(surplus: int, cobank: bool, pt: Paytable) -> tuple[int, int, int]:
    """The house's share (co-bank: half, § 621a.9(r)), the bank's gross and its vigorish
    (§ 621a.9(o), (r): 5% of a surplus)."""
    house_share = 0
    if cobank:
        half = _half(surplus, "surplus" if surplus >= 0 else "shortfall")
        house_share = half
        bank_gross = half
    else:
        bank_gross = surplus
    bank_vig = vigorish(bank_gross, pt.name) if bank_gross > 0 else 0
    return house_share, bank_gross, bank_vig


def dealer_wager_against_bank(
    last_wager: int, *, directed: int | None = None, cobank: bool = False, rules_submission_amount: int | None = None
) -> int:
    """The dealer's wager against a player bank (§ 621a.9(h)): the bank's last wager against the
    dealer (or the Rules Submission's amount); the bank may direct less or none; none when
    co-banking."""
    if cobank:
        return 0
    base = rules_submission_amount if rules_submission_amount is not None else last_wager
    if base < 0:
        raise ValueError("the dealer's wager cannot be negative")
    if directed is None:
        return base
    if not 0 <= directed <= base:
        raise ValueError(f"the bank may direct a lesser amount or none (0..{base} cents), not {directed} (§ 621a.9(h))")
    return directed


def can_bank(*, wagered_last_dealer_round: bool, chips_cents: int, others_wagers_cents: int) -> bool:
    """§ 621a.9(d): the player wagered against the dealer in the last round no player banked,
    and has chips on the table to cover every other player's Pai Gow Wager this round."""
    return bool(wagered_last_dealer_round) and chips_cents >= others_wagers_cents


@dataclass(frozen=True)
class BankSelection:
    bank: int | None  # the seat that banks this round, or None (the dealer banks)
    offered: tuple[int, ...]  # seats offered the bank, in order
    next_first_offer: int | None  # the seat to offer first next round


def _offer_order(occ: list[int], first_offer: int) -> list[int]:
    """The occupied seats ``occ`` counterclockwise (ascending, wrapping) from ``first_offer``, or
    from the next occupied seat after it when it is empty."""
    if first_offer not in occ:
        later = [s for s in occ if s > first_offer]
        first_offer = later[0] if later else occ[0]
    i0 = occ.index(first_offer)
    return occ[i0:] + occ[:i0]


def select_bank(
    first_offer: int,
    seats: Sequence[int],
    accepts: Mapping[int, bool] | Callable[[int], bool],
    *,
    eligible: Sequence[int] | None = None,
    previous_bank: int | None = None,
    start_of_game: bool = False,
) -> BankSelection:
    """Offer the bank around the table (§ 621a.9(b)-(d)).

    ``seats`` are the occupied betting positions; the offer starts at
    ``first_offer`` (the player farthest to the dealer's right on the first
    offer) and goes counterclockwise (ascending seat numbers, wrapping).  The
    previous round's bank is skipped (no two consecutive rounds) and so is any
    player who does not meet § 621a.9(d) (``eligible``).  No bank at the start of
    the game (§ 621a.9(b)).  Next round the offer starts with the player after
    the bank; if nobody accepted, with the player after this round's first
    offer (docs/rules-readings/621a.md).
    """
    occ = sorted(set(seats))
    if not occ:
        return BankSelection(None, (), None)
    if any(s not in SEATS for s in occ):
        raise ValueError(f"seats {occ} must be betting positions 1..6")
    order = _offer_order(occ, first_offer)
    first_offer = order[0]

    def nxt(s: int) -> int:
        return order[(order.index(s) + 1) % len(order)]

    if start_of_game:
        return BankSelection(None, (), first_offer)
    ok = set(occ if eligible is None else eligible)
    ask = accepts if callable(accepts) else (lambda s: bool(accepts.get(s, False)))
    offered: list[int] = []
    for s in order:
        if s == previous_bank or s not in ok:
            continue
        offered.append(s)
        if ask(s):
            return BankSelection(s, tuple(offered), nxt(s))
    return BankSelection(None, tuple(offered), nxt(first_offer))
