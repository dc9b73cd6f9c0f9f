"""Six-Card Fortune Pai Gow Poker (58 Pa. Code chapter 670a): settlement of a round.

Pure: no I/O beyond the shared paytable lookup, no hardware imports.  Money is
integer cents; a percentage-of-meter progressive pay is returned as
``WagerResult.meter_fraction`` with ``net == -wager`` (the wager was collected at
lock-out and the meter amount is the whole pay; the meters layer pays it from the
meter when it is the seat's turn, § 670a.12(d)(3)).

Seats are numbered 1..6 (§ 670a.2(a): at most six players) as everywhere in tablectl
(controller/rules/positions.py): seat 1 is the dealer's far left, seat 6 the player
"farthest to the dealer's right", betting position 2 of the § 670a.5(i) count.
Settlement runs 6, 5, ... 1 ("beginning with the player farthest to the dealer's right
and continuing around the table in a counterclockwise direction", § 670a.11(e)); the
%-of-meter pays follow it (§ 670a.12(d)(3)).  ``SixCardOptions.seat_order`` gives the
order explicitly (the table passes ``Procedure.settlement_order``).

A player on two adjacent betting areas (§ 670a.7(f)) has the same ``SeatWagers.player``
on both: neither is paid an Envy Bonus for the other's hand ("not entitled to an Envy
Bonus for his own hand", § 670a.11(h)(1)(ii)).

Order of the results (§ 670a.11(e)-(h)): for each seat in turn the Six-Card
Fortune Pai Gow Poker Wager and its Double Down Wager; then every Fortune Bonus
Wager, then the Fortune Envy Bonuses ("After all Fortune Bonus Wagers have been
settled", (h)(1)(ii)); then every Insurance Wager; then every Progressive Payout
Wager, then the progressive Envy Bonuses ((h)(3)(ii)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from controller.rules.cards import JOKER, card_str
from controller.rules.paytables import Paytable, get_paytable, parse_money
from controller.rules.positions import settlement_order
from controller.rules.settlement import EvenMoney, Stake, WagerResult, paytable_result, wager_cents
from controller.rules.sixcard import (
    RANK_WORDS,
    Setting,
    SettingError,
    SixCardError,
    check_six,
    compare_hands,
    dealer_qualifies_double_down,
    hand_key,
    high_rank,
    house_way_detail,
    low_rank,
    make_setting,
    six_card_rank,
)

MAX_SEATS = 6  # § 670a.2(a)


@dataclass(frozen=True)
class SeatWagers:
    """One seat's six cards and wagers (cents).  Every optional wager needs the
    Six-Card Fortune Pai Gow Poker Wager (§ 670a.7(d)-(e))."""

    cards: tuple[int, ...]  # the six cards dealt to the seat
    base: int  # Six-Card Fortune Pai Gow Poker Wager, § 670a.7(d)
    double_down: int = 0  # § 670a.7(e)(1): equal to the base wager, or 0
    fortune: int = 0  # Fortune Bonus Wager, § 670a.7(e)(2)
    insurance: int = 0  # Insurance Wager, § 670a.7(e)(3)
    progressive: int = 0  # Progressive Payout Wager, § 670a.7(e)(4)
    #: § 670a.7(f): the same value on two adjacent seats = one player (no envy on his own hand)
    player: str | None = None


@dataclass(frozen=True)
class SixCardOptions:
    """Which paytables the table runs (names in config/paytables/670a.toml) and its flags."""

    base_paytable: str = "Six-Card Fortune Base"
    fortune_paytable: str = "Six-Card Fortune Bonus"
    fortune_envy_paytables: tuple[str, ...] = ("Six-Card Fortune Envy $1", "Six-Card Fortune Envy $5")
    insurance_paytable: str = "Six-Card Fortune Insurance"
    progressive_paytable: str = "Six-Card Fortune Progressive"
    progressive_envy_paytables: tuple[str, ...] = (
        "Six-Card Fortune Progressive Envy $1",
        "Six-Card Fortune Progressive Envy $5",
    )
    #: § 670a.1 "Qualifying Fortune Bonus Wager": at least $5
    qualifying_fortune_cents: int = 500
    #: the Progressive Payout Wager offered (§ 670a.12(d)(2)); None = the progressive
    #: paytable's ``options.wager`` ($1); 0 = accept any amount
    progressive_wager_cents: int | None = None
    #: settlement order of the seats; None = positions.settlement_order (§ 670a.11(e))
    seat_order: tuple[int, ...] | None = None
    #: the paytables to read (default: those passed in, controller/rules/paytables.py)
    paytables: Mapping[str, Paytable] | None = field(default=None, compare=False)

    def table(self, name: str) -> Paytable:
        return get_paytable(name, self.paytables)


# --------------------------------------------------------------------------- helpers


def _check_amount(seat: int, what: str, v: object) -> int:
    return wager_cents(seat, what, v, SixCardError)


def _rank_word(card: int) -> str:
    return "joker" if card == JOKER else RANK_WORDS[low_rank(card)]


def _pay(seat: int, wager: str, amount: int, key: str, pt: Paytable, rule: str) -> WagerResult:
    """Settle ``amount`` on hand ``key`` by paytable ``pt``: a hand the table does not
    list loses.  A meter pay: the wager was collected at lock-out (§ 670a.10(a)(2)(ii))
    and the meter amount is the whole pay, like an "N for 1" pay."""
    return paytable_result(
        Stake(seat, wager, amount), key, pt, pt.payout(key), rule, meter_note="paid from the meter, § 670a.12(d)(3)"
    )


def envy_table(tables: Sequence[Paytable], wager_cents: int) -> Paytable | None:
    """The Envy Bonus table for a wager: the one printed for the largest wager not
    above it (a $7 wager is paid the $5 amounts; § 670a.1 calls an Envy Bonus a
    *fixed sum*, so amounts are never scaled); None below the smallest.
    See docs/rules-readings/670a.md."""
    fit = [t for t in tables if t.per_wager_cents is not None and t.per_wager_cents <= wager_cents]
    return max(fit, key=lambda t: t.per_wager_cents or 0) if fit else None


def _envy(
    wager: str,
    receivers: Sequence[tuple[int, int]],
    holders: Sequence[tuple[int, str]],
    tables: Sequence[Paytable],
    rule: str,
    players: Mapping[int, str] | None = None,
) -> list[WagerResult]:
    """Every receiver is paid for every other player's qualifying hand; never for his own
    hand — his seat or his other adjacent betting area (§ 670a.7(f), § 670a.11(h)(1)(ii)) —
    nor the dealer's (not a holder)."""
    who = dict(players or {})
    out: list[WagerResult] = []
    for seat, amount in receivers:
        pt = envy_table(tables, amount)
        if pt is None:
            continue
        for holder, key in holders:
            if who.get(holder, f"seat {holder}") == who.get(seat, f"seat {seat}"):
                continue
            payout = pt.payout(key)
            if payout is None:
                continue
            if payout.kind != "fixed":
                raise SixCardError(f"{pt.name}: an Envy Bonus is a fixed sum (§ 670a.1), got {payout.text!r}")
            out.append(
                WagerResult(
                    seat,
                    wager,
                    0,
                    "win",
                    payout.cents,
                    key,
                    pt.name,
                    payout.text,
                    detail=f"Envy Bonus for seat {holder}'s {key} ({rule})",
                )
            )
    return out


def _envy_holders(tables: Sequence[Paytable], keys: Mapping[int, str], order: Sequence[int]) -> list[tuple[int, str]]:
    # § 670a.1 "Envy Bonus Qualifying Hand": full house or better (Fortune), four of a
    # kind or better (Progressive) -- exactly the hands the envy paytables list.
    listed = {h for t in tables for h in t.hands}
    return [(s, keys[s]) for s in order if keys[s] in listed]


# --------------------------------------------------------------------------- round


def settle_round(
    dealer_cards: Sequence[int] | str,
    seats: Mapping[int, SeatWagers],
    player_settings: Mapping[int, Setting | tuple[Sequence[int], int]],
    options: SixCardOptions | None = None,
) -> list[WagerResult]:
    """Settle every wager of one round, § 670a.11(d)-(h), § 670a.12.

    ``dealer_cards`` are the dealer's six cards, set here by the house way
    (§ 670a.11(d); a wrong dealer setting is reset this way, § 670a.13(i)).
    ``player_settings[seat]`` is the player's ``Setting`` or ``(high5, low1)``.
    Raises :class:`SixCardError` (a ``ValueError``) for bad input: wrong card counts,
    a card dealt twice, a setting that is not a split of the seat's six cards, a seat
    outside 1..6, a negative or non-integer wager, a Double Down Wager not equal to
    the wager (§ 670a.7(e)(1)), a progressive wager of another amount than the one
    offered (§ 670a.12(d)(2)).
    """
    opt = options or SixCardOptions()
    dealer = check_six(dealer_cards, "dealer's hand")
    order = _validate(dealer, seats, player_settings, opt)
    players: dict[int, str] = {s: p for s in order if (p := seats[s].player) is not None}
    settings = {s: _setting(s, seats[s], player_settings[s]) for s in order}
    dealer_set = house_way_detail(dealer).setting

    base_pt = opt.table(opt.base_paytable)
    win = base_pt.payout("win")
    if win is None:
        raise SixCardError(f"{base_pt.name}: no 'win' payout (§ 670a.12(a))")
    dd_live = dealer_qualifies_double_down(dealer_set)
    out: list[WagerResult] = []
    # § 670a.11(e)-(g): the Six-Card Fortune Pai Gow Poker Wager, then the Double Down
    for s in order:
        out += _base_results(s, seats[s], settings[s], dealer_set, dd_live, EvenMoney(base_pt, win, "§ 670a.12(a)"))
    # § 670a.11(h): the six cards rearranged to the highest ranking hand
    keys = {s: hand_key(six_card_rank(seats[s].cards)) for s in order}
    out += _fortune_results(order, seats, keys, opt, players)
    out += _insurance_results(order, seats, keys, opt)
    out += _progressive_results(order, seats, keys, opt, players)
    return out


def _base_results(
    s: int, w: SeatWagers, setting: Setting, dealer_set: Setting, dd_live: bool, pay: EvenMoney
) -> list[WagerResult]:
    """§ 670a.11(e)-(g): one seat's wager, then its Double Down."""
    res = compare_hands(setting, dealer_set)
    hand = f"{hand_key(high_rank(setting.high))}/{_rank_word(setting.low)}"
    detail = f"{setting} vs dealer {dealer_set}: " + (
        "foul" if res.foul else f"high {'won' if res.high > 0 else 'lost'}, low {'won' if res.low > 0 else 'lost'}"
    )
    out = [pay.result(s, "base", w.base, res.outcome, hand, f"{res.section}; {detail}")]
    if not w.double_down:
        return out
    if dd_live:
        rule = f"§ 670a.11(g)(1), {res.section}"
        out.append(pay.result(s, "double-down", w.double_down, res.outcome, hand, rule))
    else:
        out.append(
            WagerResult(
                s,
                "double-down",
                w.double_down,
                "returned",
                0,
                hand,
                detail="§ 670a.11(g)(2): dealer's hand has no pair of eights or better",
            )
        )
    return out


def _fortune_results(
    order: Sequence[int],
    seats: Mapping[int, SeatWagers],
    keys: Mapping[int, str],
    opt: SixCardOptions,
    players: Mapping[int, str],
) -> list[WagerResult]:
    """§ 670a.11(h)(1), § 670a.12(b): the Fortune Bonus Wagers and their envy."""
    if not any(seats[s].fortune for s in order):
        return []
    pt = opt.table(opt.fortune_paytable)
    out = [
        _pay(s, "fortune", seats[s].fortune, keys[s], pt, "§ 670a.11(h)(1)(i), § 670a.12(b)(1)")
        for s in order
        if seats[s].fortune
    ]
    tables = [opt.table(n) for n in opt.fortune_envy_paytables]
    receivers = [(s, seats[s].fortune) for s in order if seats[s].fortune >= opt.qualifying_fortune_cents]
    out += _envy(
        "fortune-envy",
        receivers,
        _envy_holders(tables, keys, order),
        tables,
        "§ 670a.11(h)(1)(ii), § 670a.12(b)(2)",
        players,
    )
    return out


def _insurance_results(
    order: Sequence[int], seats: Mapping[int, SeatWagers], keys: Mapping[int, str], opt: SixCardOptions
) -> list[WagerResult]:
    """§ 670a.11(h)(2), § 670a.12(c): the Insurance Wagers."""
    if not any(seats[s].insurance for s in order):
        return []
    pt = opt.table(opt.insurance_paytable)
    return [
        _pay(s, "insurance", seats[s].insurance, keys[s], pt, "§ 670a.11(h)(2), § 670a.12(c)")
        for s in order
        if seats[s].insurance
    ]


def _progressive_results(
    order: Sequence[int],
    seats: Mapping[int, SeatWagers],
    keys: Mapping[int, str],
    opt: SixCardOptions,
    players: Mapping[int, str],
) -> list[WagerResult]:
    """§ 670a.11(h)(3): the Progressive Payout Wagers made this round and their envy."""
    wagers = {s: seats[s].progressive for s in order if seats[s].progressive}
    return settle_progressive(keys, wagers, opt, order, players) if wagers else []


def settle_progressive(
    keys: Mapping[int, str],
    wagers: Mapping[int, int],
    options: SixCardOptions | None = None,
    order: Sequence[int] | None = None,
    players: Mapping[int, str] | None = None,
) -> list[WagerResult]:
    """The Progressive Payout Wagers alone, as the progressive table game system
    settles them (§ 670a.11(h)(3)): ``keys[seat]`` is the category of the best five
    of each player's six cards (every player in the round, for envy), ``wagers[seat]``
    the accepted Progressive Payout Wagers.  Results in ``order`` (default: the
    options' seat order, else § 670a.11(e)'s), then the Envy Bonuses ((h)(3)(ii),
    § 670a.12(d)(4)); ``players`` names the player of each seat (§ 670a.7(f))."""
    opt = options or SixCardOptions()
    order = list(order if order is not None else (opt.seat_order or _default_order(keys)))
    _check_hands(wagers, keys)
    pt = opt.table(opt.progressive_paytable)
    out = [
        _pay(s, "progressive", wagers[s], keys[s], pt, "§ 670a.11(h)(3)(i), § 670a.12(d)(1)")
        for s in order
        if s in wagers
    ]
    tables = [opt.table(n) for n in opt.progressive_envy_paytables]
    receivers = [(s, wagers[s]) for s in order if s in wagers]
    out += _envy(
        "progressive-envy",
        receivers,
        _envy_holders(tables, keys, [s for s in order if s in keys]),
        tables,
        "§ 670a.11(h)(3)(ii), § 670a.12(d)(4)",
        players,
    )
    return out


def _check_hands(wagers: Mapping[int, int], keys: Mapping[int, str]) -> None:
    """Every seat with a Progressive Payout Wager has a hand."""
    for s in wagers:
        if s not in keys:
            raise SixCardError(f"seat {s}: a Progressive Payout Wager but no hand")


def _setting(seat: int, w: SeatWagers, given: Setting | tuple[Sequence[int], int]) -> Setting:
    high: Sequence[int]
    if isinstance(given, Setting):
        high, low = given.high, given.low
    else:
        try:
            high, low = given
        except (TypeError, ValueError):
            raise SettingError(f"seat {seat}: a setting is (high5, low1), got {given!r}") from None
    try:
        return make_setting(w.cards, high, low)
    except SixCardError as e:
        raise SettingError(f"seat {seat}: {e}", e.token) from None


def _offered_progressive(opt: SixCardOptions) -> int:
    if opt.progressive_wager_cents is not None:
        return opt.progressive_wager_cents
    text = opt.table(opt.progressive_paytable).options.get("wager")
    return parse_money(str(text)) if text else 0


def _validate(
    dealer: tuple[int, ...],
    seats: Mapping[int, SeatWagers],
    player_settings: Mapping[int, object],
    opt: SixCardOptions,
) -> list[int]:
    if not seats:
        return []
    where: dict[int, str] = {c: "the dealer" for c in dealer}
    offered: int | None = None
    for s, w in seats.items():
        _check_seat(s, w)
        _deal_cards(s, w, where)
        prog = _check_wagers(s, w)
        if prog:
            offered = _offered_progressive(opt) if offered is None else offered
            _check_offered(s, prog, offered)
        if s not in player_settings:
            raise SettingError(f"seat {s}: no high/low setting given for the player's hand")
    extra = sorted(set(player_settings) - set(seats), key=str)
    if extra:
        raise SettingError(f"setting(s) given for seat(s) {extra} with no wager")
    return _seat_order(seats, opt)


def _check_offered(s: int, prog: int, offered: int) -> None:
    """The Progressive Payout Wager is the amount the table offers (§ 670a.12(d)(2))."""
    if offered and prog != offered:
        raise SixCardError(
            f"seat {s}: Progressive Payout Wager {prog} is not the {offered} wager offered (§ 670a.12(d)(2))"
        )


def _seat_order(seats: Mapping[int, SeatWagers], opt: SixCardOptions) -> list[int]:
    """The settlement order: ``opt.seat_order`` (every seat with a wager exactly once), else the default."""
    if opt.seat_order is None:
        return _default_order(seats)
    order = [s for s in opt.seat_order if s in seats]
    if len(set(opt.seat_order)) != len(opt.seat_order) or len(order) != len(seats):
        raise SixCardError(f"seat_order {opt.seat_order} must list every seat with a wager exactly once")
    return order


def _check_seat(s: object, w: object) -> None:
    if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= MAX_SEATS:
        raise SixCardError(f"seat {s!r} is not a betting position 1..{MAX_SEATS} (§ 670a.2(a))")
    if not isinstance(w, SeatWagers):
        raise SixCardError(f"seat {s}: expected SeatWagers, got {type(w).__name__}")


def _deal_cards(s: int, w: SeatWagers, where: dict[int, str]) -> None:
    """The seat's six cards, each dealt once (``where``: who holds each card so far)."""
    for c in check_six(w.cards, f"seat {s}'s hand"):
        if c in where:
            raise SixCardError(
                f"{card_str(c)} dealt to both seat {s} and {where[c]} (one deck, § 670a.3(a))", card_str(c)
            )
        where[c] = f"seat {s}"


def _check_wagers(s: int, w: SeatWagers) -> int:
    """Every amount checked; returns the Progressive Payout Wager."""
    base = _check_amount(s, "Six-Card Fortune Pai Gow Poker", w.base)
    if base == 0:
        raise SixCardError(
            f"seat {s}: no Six-Card Fortune Pai Gow Poker Wager; every other wager needs one (§ 670a.7(d)-(e))"
        )
    dd = _check_amount(s, "Double Down", w.double_down)
    if dd not in (0, base):
        raise SixCardError(f"seat {s}: Double Down Wager {dd} must equal the wager {base} (§ 670a.7(e)(1))")
    _check_amount(s, "Fortune Bonus", w.fortune)
    _check_amount(s, "Insurance", w.insurance)
    return _check_amount(s, "Progressive Payout", w.progressive)


def _default_order(seats: Mapping[int, object]) -> list[int]:
    """§ 670a.11(e): from the player farthest to the dealer's right, counterclockwise."""
    bad = [s for s in seats if not isinstance(s, int) or isinstance(s, bool) or not 1 <= s <= MAX_SEATS]
    if bad:
        raise SixCardError(f"seat {bad[0]!r} is not a betting position 1..{MAX_SEATS} (§ 670a.2(a))")
    return [s for s in settlement_order(MAX_SEATS) if s in seats]


__all__ = ["SeatWagers", "SixCardOptions", "envy_table", "settle_round"]
