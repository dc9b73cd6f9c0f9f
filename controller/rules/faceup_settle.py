"""Face Up Pai Gow Poker (58 Pa. Code chapter 688a): settlement of a round.

Pure: no I/O beyond the shared paytable lookup, no hardware imports.  Money is
integer cents.  A percentage-of-meter progressive pay is returned as
``WagerResult.meter_fraction`` (the meters layer pays it from the meter in seat
order); its ``net`` is what the seat gains or loses apart from the meter: ``-amount``
when the paytable says "original wager not returned", else the fixed part of the
pay (Progressive Paytable 4: "$5,000/100% of meter").

Seats are numbered 1..6 (§ 688a.2(a)) as everywhere in tablectl
(controller/rules/positions.py): seat 1 is the dealer's far left, seat 6 the player
"farthest to the dealer's right" (betting position 2 of the § 688a.5(i) count).
Settlement runs 6, 5, ... 1 ("beginning with the player farthest to the dealer's right
and continuing around the table in a counterclockwise direction", § 688a.11(e)); the
%-of-meter pays follow it.  ``FaceUpOptions.seat_order`` gives the order explicitly
(the table passes ``Procedure.settlement_order``).

A player on two adjacent betting areas (§ 688a.7(f)) has the same
``SeatWagers.player`` on both: neither seat is paid an Envy Bonus for the other's
hand ("A player is not entitled to an Envy Bonus for his own hand",
§ 688a.11(h)(2)(ii)).

Order of the results: surrenders (collected at once, § 688a.11(d)); every Face Up
Pai Gow Poker Wager (§ 688a.11(e)-(f)); then, the seven cards rearranged to the
highest ranking hand (§ 688a.11(h)): every Ace High Bonus Wager ((h)(1)), every
Fortune Bonus Wager ((h)(2)(i)), the Fortune Envy Bonuses ((h)(2)(ii)), every
Progressive Payout Wager ((h)(3)), the Progressive Envy Bonuses (§ 688a.12(d)
Paytable 4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from controller.rules.cards import card_str
from controller.rules.faceup import (
    FaceUpError,
    Setting,
    SettingError,
    base_outcome,
    check_seven,
    make_setting,
    setting_text,
)
from controller.rules.faceup_bonus import (
    BONUS_READINGS,
    ENVY_QUALIFYING,
    ace_high_kind,
    bonus_categories,
    bonus_hand,
    paytable_keys,
)
from controller.rules.faceup_houseway import DEFAULT_HOUSE_WAY, house_way
from controller.rules.paytables import Payout, Paytable, get_paytable, parse_money
from controller.rules.positions import settlement_order
from controller.rules.settlement import EvenMoney, Stake, WagerResult, paytable_result, wager_cents, whole_cents

MAX_SEATS = 6  # § 688a.2(a)
#: who is paid which Envy Bonus (reading 688a-8): "lammer" (default, § 688a.8(b)(1),
#: § 688a.11(h)(2)(ii)) or "same-wager"
ENVY_RECEIVERS = ("lammer", "same-wager")


@dataclass(frozen=True)
class SeatWagers:
    """One seat's seven cards and wagers (cents).  Every optional wager needs the Face
    Up Pai Gow Poker Wager (§ 688a.7(d)-(e))."""

    cards: tuple[int, ...]  # the seven cards dealt to the seat
    base: int  # Face Up Pai Gow Poker Wager, § 688a.7(d)
    ace_high: int = 0  # Ace High Bonus Wager, § 688a.7(e)(1)
    fortune: int = 0  # Fortune Bonus Wager, § 688a.7(e)(2)
    progressive: int = 0  # Progressive Payout Wager, § 688a.7(e)(3)
    surrender: bool = False  # § 688a.11(d): only without an optional wager
    #: § 688a.7(f): the same value on two adjacent seats = one player (no envy on his own hand)
    player: str | None = None

    def who(self, seat: int) -> str:
        return self.player if self.player is not None else f"seat {seat}"


@dataclass(frozen=True)
class FaceUpOptions:
    """The table's paytables (names in config/paytables/688a.toml) and flags."""

    base_paytable: str = "Face Up Base"
    ace_high_paytable: str = "Ace High 1"
    fortune_paytable: str = "Face Up Fortune 1"
    progressive_paytable: str = "Face Up Progressive 1"
    #: § 688a.11(a): the house way of the Rules Submission (controller/rules/faceup_houseway.py)
    house_way: str = DEFAULT_HOUSE_WAY
    #: which Qualifying Wagers (§ 688a.1: a Progressive or Fortune wager of at least
    #: $5) earn which Envy Bonus.  "lammer" (default): the § 688a.12(c) (Fortune) envy to
    #: every seat with an Envy lammer, i.e. with either Qualifying Wager (§ 688a.8(b)(1),
    #: § 688a.11(h)(2)(ii)); the Progressive envy (§ 688a.12(d) Paytable 4) only to a
    #: qualifying Progressive Payout Wager.  "same-wager": the Fortune envy only to a
    #: qualifying Fortune Bonus Wager.  No reading pays an envy of a wager the seat did
    #: not make.  docs/rules-readings/688a.md 688a-8.
    envy_receivers: str = "lammer"
    #: a hand both a straight and a three-of-a-kind (688a-7): "best-pay" (default) pays
    #: the higher row (three-of-a-kind, § 688a.12(c), § 659a.6(d)(10)-(11)); "ranking"
    #: the § 688a.6(b) order (straight)
    bonus_reading: str = "best-pay"
    #: whether the table offers the Fortune Bonus (§ 688a.7(e)(2)): its Envy Bonus is paid to
    #: a qualifying Progressive wager even in a round where nobody bet the Fortune
    fortune_offered: bool = True
    seat_order: tuple[int, ...] | None = None
    #: the paytables to read (default: those passed in, controller/rules/paytables.py)
    paytables: Mapping[str, Paytable] | None = field(default=None, compare=False)

    def table(self, name: str) -> Paytable:
        return get_paytable(name, self.paytables)


def _check_amount(seat: int, what: str, v: object) -> int:
    return wager_cents(seat, what, v, FaceUpError)


def _lookup(pt: Paytable, category: str) -> tuple[str, Payout | None]:
    for key in paytable_keys(category):
        p = pt.payout(key)
        if p is not None:
            return key, p
    return category, None


def _odds_result(seat: int, wager: str, amount: int, hand: str, pt: Paytable, rule: str) -> WagerResult:
    """An odds wager (Ace High, Fortune; § 688a.12(b),(c)): a hand not in the table loses."""
    p = pt.payout(hand)
    if p is not None and p.kind not in ("odds", "for", "push", "lose"):
        raise FaceUpError(f"{pt.name}: {hand} pays {p.text!r}; this wager pays odds ({pt.section})")
    return paytable_result(Stake(seat, wager, amount), hand, pt, p, rule)


def _qualifying(pt: Paytable) -> int:
    return parse_money(str(pt.options.get("qualifying_wager", "$5")))  # § 688a.1 "Qualifying Wager"


def _envy(
    wager: str,
    receivers: Sequence[int],
    holders: Sequence[tuple[int, str]],
    pt: Paytable,
    rule: str,
    seats: Mapping[int, SeatWagers],
) -> list[WagerResult]:
    """Each receiver is paid the envy of every other player's qualifying hand
    (§ 688a.11(h)(2)(ii): multiple envies stack; never one's own hand — his own seat or
    his other adjacent betting area, § 688a.7(f) — nor the dealer's)."""
    out = []
    for seat in receivers:
        for holder, cat in holders:
            if seats[holder].who(holder) == seats[seat].who(seat):
                continue
            key, p = _lookup(pt, cat)
            if p is None:
                continue
            if p.kind != "fixed":
                raise FaceUpError(f"{pt.name}: an Envy Bonus is a fixed sum (§ 688a.1), got {p.text!r}")
            out.append(
                WagerResult(
                    seat,
                    wager,
                    0,
                    "win",
                    p.cents,
                    key,
                    pt.name,
                    p.text,
                    detail=f"Envy Bonus for seat {holder}'s {cat} ({rule})",
                )
            )
    return out


def settle_round(
    dealer_cards: Sequence[int] | str,
    seats: Mapping[int, SeatWagers],
    player_settings: Mapping[int, Setting | tuple[Sequence[int], Sequence[int]]],
    options: FaceUpOptions | None = None,
) -> list[WagerResult]:
    """Settle every wager of one round (§ 688a.11(d)-(h), § 688a.12).

    ``dealer_cards``: the dealer's seven cards, set here by the table's house way
    (§ 688a.11(a), § 688a.13(h)).  ``player_settings[seat]``: the player's ``Setting``
    or ``(high5, low2)``; not needed for a surrendered seat, nor when the dealer has an
    Ace High Pai Gow (every base wager pushes).  Raises :class:`FaceUpError` (a
    ``ValueError``) for bad input: wrong card counts, a card dealt twice, a setting
    that is not a split of the seat's seven cards, a seat outside 1..6, a negative or
    non-integer wager, an optional wager without the base wager, a surrender with an
    optional wager (§ 688a.11(d)), a progressive wager of another amount than the
    paytable's.
    """
    opt = options or FaceUpOptions()
    _check_options(opt)
    dealer = check_seven(dealer_cards, "dealer's hand")
    order = _validate(dealer, seats, opt)
    dealer_set = house_way(dealer, opt.house_way)
    dealer_ah = ace_high_kind(dealer)
    settings = _settings(order, seats, player_settings, dealer_ah)
    base_pt = opt.table(opt.base_paytable)
    win = base_pt.payout("win")
    if win is None:
        raise FaceUpError(f"{base_pt.name}: no 'win' payout (§ 688a.12(a))")

    pay = EvenMoney(base_pt, win, "§ 688a.12(a)")
    out = _surrenders(order, seats)
    for s in order:  # § 688a.11(e)-(f), § 688a.12(a)
        if not seats[s].surrender:
            out.append(_base_result(s, seats[s], settings.get(s), dealer_set, dealer_ah, pay))
    out += _ace_high_results(order, seats, dealer_ah, opt)
    prog_q = [s for s in order if seats[s].progressive]
    out += _fortune_results(order, seats, prog_q, opt)
    out += _progressive_results(order, seats, prog_q, opt)
    return out


def _check_options(opt: FaceUpOptions) -> None:
    if opt.envy_receivers not in ENVY_RECEIVERS:
        raise FaceUpError(f"envy_receivers={opt.envy_receivers!r}: one of {', '.join(ENVY_RECEIVERS)}")
    if opt.bonus_reading not in BONUS_READINGS:
        raise FaceUpError(f"bonus_reading={opt.bonus_reading!r}: one of {', '.join(BONUS_READINGS)}")


def _settings(
    order: Sequence[int],
    seats: Mapping[int, SeatWagers],
    player_settings: Mapping[int, Setting | tuple[Sequence[int], Sequence[int]]],
    dealer_ah: str | None,
) -> dict[int, Setting]:
    """Each seat's checked setting; none needed for a surrendered seat, nor when the dealer
    has an Ace High Pai Gow (§ 688a.11(f)(2)(iii))."""
    settings: dict[int, Setting] = {}
    for s in order:
        if seats[s].surrender:
            continue
        if s not in player_settings:
            if dealer_ah is None:
                raise SettingError(f"seat {s}: no setting given for the seat's hand")
            continue
        settings[s] = _setting(s, seats[s], player_settings[s])
    return settings


def _surrenders(order: Sequence[int], seats: Mapping[int, SeatWagers]) -> list[WagerResult]:
    """§ 688a.11(d): a surrendered wager is collected at once."""
    return [
        WagerResult(
            s,
            "base",
            seats[s].base,
            "surrender",
            -seats[s].base,
            None,
            detail="§ 688a.11(d): surrendered after the dealer's hands were set",
        )
        for s in order
        if seats[s].surrender
    ]


def _base_result(
    s: int,
    w: SeatWagers,
    setting: Setting | None,
    dealer_set: Setting,
    dealer_ah: str | None,
    pay: EvenMoney,
) -> WagerResult:
    """§ 688a.11(e)-(f), § 688a.12(a): one seat's base wager."""
    if setting is None:  # dealer Ace High Pai Gow, no setting given
        return WagerResult(
            s, "base", w.base, "push", 0, None, detail="§ 688a.11(f)(2)(iii): dealer has an Ace High Pai Gow"
        )
    res = base_outcome(setting, dealer_set, dealer_ah is not None)
    hand = setting_text(setting)
    detail = f"{res.section}; {setting} vs dealer {dealer_set}" + (" (foul)" if setting.foul else "")
    return pay.result(s, "base", w.base, res.outcome, hand, detail)


def _ace_high_results(
    order: Sequence[int], seats: Mapping[int, SeatWagers], dealer_ah: str | None, opt: FaceUpOptions
) -> list[WagerResult]:
    """§ 688a.11(h)(1), § 688a.12(b): the Ace High wagers."""
    if not any(seats[s].ace_high for s in order):
        return []
    pt = opt.table(opt.ace_high_paytable)
    out: list[WagerResult] = []
    for s in order:
        a = seats[s].ace_high
        if not a:
            continue
        if dealer_ah is None:
            out.append(
                WagerResult(
                    s,
                    "ace-high",
                    a,
                    "lose",
                    -a,
                    "dealer-not-ace-high",
                    pt.name,
                    None,
                    detail="§ 688a.11(h)(1)(i)(A)",
                )
            )
            continue
        if ace_high_kind(seats[s].cards) is not None:
            key = "both-ace-high"
        else:
            key = f"dealer-ace-high-{dealer_ah}"
        out.append(_odds_result(s, "ace-high", a, key, pt, "§ 688a.11(h)(1)(i)(B), § 688a.12(b)"))
    return out


def _fortune_results(
    order: Sequence[int], seats: Mapping[int, SeatWagers], prog_q: Sequence[int], opt: FaceUpOptions
) -> list[WagerResult]:
    """§ 688a.11(h)(2), § 688a.12(c): the Fortune wagers and their envy."""
    fortune_q = [s for s in order if seats[s].fortune]
    lammer_prog = _lammer_progressive(seats, prog_q, opt)
    if not (fortune_q or (opt.fortune_offered and lammer_prog)):
        return []
    pt = opt.table(opt.fortune_paytable)
    out = [_fortune(s, seats[s], pt, opt) for s in fortune_q]
    if "envy_paytable" in pt.options:
        out += _fortune_envy(order, seats, pt, lammer_prog, opt)
    return out


def _lammer_progressive(seats: Mapping[int, SeatWagers], prog_q: Sequence[int], opt: FaceUpOptions) -> list[int]:
    """The seats whose qualifying Progressive Payout Wager carries an Envy lammer (``envy_receivers``
    "lammer"), among ``prog_q``."""
    if not prog_q or opt.envy_receivers != "lammer":
        return []
    pq = _qualifying(opt.table(opt.progressive_paytable))
    return [s for s in prog_q if seats[s].progressive >= pq]


def _fortune_envy(
    order: Sequence[int], seats: Mapping[int, SeatWagers], pt: Paytable, lammer_prog: Sequence[int], opt: FaceUpOptions
) -> list[WagerResult]:
    """§ 688a.11(h)(2)(ii), § 688a.12(c): the Fortune envy."""
    # § 688a.11(h): every seat's seven cards rearranged to the highest ranking hand
    # (surrendered seats too: their cards stay on the table for the envy, § 688a.11(d))
    fortune_hands = {s: bonus_hand(seats[s].cards, "bug").category for s in order}
    holders = [(s, fortune_hands[s]) for s in order if fortune_hands[s] in ENVY_QUALIFYING]
    envy_pt = opt.table(str(pt.options["envy_paytable"]))
    q = _qualifying(pt)
    # § 688a.8(b)(1): an Envy lammer beside every Qualifying Wager; § 688a.11(h)(2)(ii):
    # the § 688a.12(c) envy to each player with an Envy lammer (reading 688a-8)
    recv = [s for s in order if seats[s].fortune >= q or s in lammer_prog]
    return _envy("fortune-envy", recv, holders, envy_pt, "§ 688a.11(h)(2)(ii), § 688a.12(c)", seats)


def _progressive_results(
    order: Sequence[int], seats: Mapping[int, SeatWagers], prog_q: Sequence[int], opt: FaceUpOptions
) -> list[WagerResult]:
    """§ 688a.11(h)(3), § 688a.12(d): the Progressive wagers and their envy."""
    if not prog_q:
        return []
    pt = opt.table(opt.progressive_paytable)
    out = [_progressive(s, seats[s], pt, opt) for s in prog_q]
    if "envy_paytable" in pt.options:
        mode = str(pt.options.get("joker", "bug"))
        envy_pt = opt.table(str(pt.options["envy_paytable"]))
        q = _qualifying(pt)
        cats = {s: bonus_hand(seats[s].cards, mode).category for s in order}  # type: ignore[arg-type]
        pholders = [(s, cats[s]) for s in order if cats[s] in ENVY_QUALIFYING]
        # only a Progressive Payout Wager earns the Progressive envy: no text pays it to a
        # seat that did not make the wager (reading 688a-8)
        recv = [s for s in order if seats[s].progressive >= q]
        out += _envy("progressive-envy", recv, pholders, envy_pt, "§ 688a.6(f), § 688a.12(d)", seats)
    return out


def _categories(cards: Sequence[int], mode: str, opt: FaceUpOptions) -> tuple[str, ...]:
    """The rows the hand may be paid as (688a-7): under ``ranking`` only the highest
    ranking category of § 688a.6(b)."""
    cats = bonus_categories(cards, mode)  # type: ignore[arg-type]
    return cats if opt.bonus_reading == "best-pay" else cats[:1]


def _fortune(seat: int, w: SeatWagers, pt: Paytable, opt: FaceUpOptions) -> WagerResult:
    """§ 688a.11(h)(2)(i), § 688a.12(c): the best paying of the hands the seven cards form
    (a straight holding three of a kind is paid as three of a kind, reading 688a-7)."""
    rule = "§ 688a.11(h)(2)(i), § 688a.12(c)"
    results = []
    for cat in _categories(w.cards, "bug", opt):
        key = _lookup(pt, cat)[0]
        results.append(_odds_result(seat, "fortune", w.fortune, key, pt, rule))
    best = max(results, key=lambda r: r.net)
    if best is not results[0]:
        best = replace(best, detail=f"{rule}; straight and three-of-a-kind: the higher pay (reading 688a-7)")
    return best


def _progressive(seat: int, w: SeatWagers, pt: Paytable, opt: FaceUpOptions) -> WagerResult:
    """§ 688a.11(h)(3)(i), § 688a.12(d): fixed pays per the paytable's wager; "original
    wager not returned" means the printed amount is all the player receives.  A straight
    holding three of a kind (Paytable 4) is paid the higher row (reading 688a-7)."""
    mode = str(pt.options.get("joker", "bug"))
    results = [_progressive_as(seat, w, pt, opt, cat) for cat in _categories(w.cards, mode, opt)]
    best = max(results, key=lambda r: r.net)
    if best is not results[0]:
        best = replace(best, detail=best.detail + "; straight and three-of-a-kind: the higher pay (reading 688a-7)")
    return best


def _progressive_as(seat: int, w: SeatWagers, pt: Paytable, opt: FaceUpOptions, cat: str) -> WagerResult:
    amount = w.progressive
    returned = bool(pt.options.get("original_wager_returned", False))
    key, p = _lookup(pt, cat)
    meter_pt = opt.table(str(pt.options["meter_paytable"])) if "meter_paytable" in pt.options else None
    mp = meter_pt.payout(cat) if meter_pt is not None else None
    rule = "§ 688a.11(h)(3), § 688a.12(d)"
    if p is None and mp is None:
        return WagerResult(
            seat, "progressive", amount, "lose", -amount, cat, pt.name, None, detail=f"{rule}: no full house or better"
        )
    keep = 0 if returned else -amount
    pays = [x for x in (p, mp) if x is not None]
    fraction, fixed = _progressive_pays(pays, amount, pt, key)
    texts = [x.text for x in pays]
    detail = rule + ("" if returned else "; original wager not returned")
    if fraction is not None:
        detail += "; % of meter paid by the progressive system, not from the table inventory (§ 688a.11(h)(3)(i)(B)(4))"
    return WagerResult(
        seat,
        "progressive",
        amount,
        "win",
        keep + fixed,
        key,
        pt.name,
        " + ".join(texts),
        meter_fraction=fraction,
        detail=detail,
    )


def _progressive_pays(pays: Sequence[Payout], amount: int, pt: Paytable, key: str) -> tuple[Fraction | None, int]:
    """(the share of the meter won, or None; the fixed pays in cents) of the paytable's and the
    meter paytable's pays of one hand."""
    fraction = None
    fixed = 0
    for x in pays:
        if x.kind == "meter":
            fraction = x.ratio if fraction is None else fraction + x.ratio
        elif x.kind == "fixed":
            fixed += whole_cents(x.net_win(amount, per_wager_cents=pt.per_wager_cents), rule=f"{pt.section} {key}")
        else:
            raise FaceUpError(f"{pt.name}: {key} pays {x.text!r}; progressive pays are amounts or % of meter")
    return fraction, fixed


def _setting(seat: int, w: SeatWagers, given: Setting | tuple[Sequence[int], Sequence[int]]) -> Setting:
    high: Sequence[int]
    low: Sequence[int]
    if isinstance(given, Setting):
        high, low = given.high, given.low
    else:
        try:
            high, low = given
        except (TypeError, ValueError):
            raise SettingError(f"seat {seat}: a setting is (high5, low2), got {given!r}") from None
    try:
        return make_setting(w.cards, high, low)
    except FaceUpError as e:
        raise SettingError(f"seat {seat}: {e}", e.token) from None


def _validate(dealer: tuple[int, ...], seats: Mapping[int, SeatWagers], opt: FaceUpOptions) -> list[int]:
    where: dict[int, str] = {c: "the dealer" for c in dealer}
    prog_pt: Paytable | None = None
    for s, w in seats.items():
        _check_seat(s, w)
        _deal_cards(s, w, where)
        _check_wagers(s, w)
        if w.progressive:
            prog_pt = prog_pt or opt.table(opt.progressive_paytable)
            _check_progressive(s, w, prog_pt)
    return _seat_order(seats, opt)


def _seat_order(seats: Mapping[int, SeatWagers], opt: FaceUpOptions) -> list[int]:
    """The settlement order: ``opt.seat_order`` (every seat with a wager once), else § 688a.11(e)'s."""
    if opt.seat_order is not None:
        if sorted(opt.seat_order) != sorted(set(opt.seat_order)) or not set(seats) <= set(opt.seat_order):
            raise FaceUpError(f"seat_order {opt.seat_order} must list every seat with a wager once")
        return [s for s in opt.seat_order if s in seats]
    return [s for s in settlement_order(MAX_SEATS) if s in seats]  # § 688a.11(e)


def _check_seat(s: object, w: object) -> None:
    if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= MAX_SEATS:
        raise FaceUpError(f"seat {s!r} is not a betting position 1..{MAX_SEATS} (§ 688a.2(a))")
    if not isinstance(w, SeatWagers):
        raise FaceUpError(f"seat {s}: expected SeatWagers, got {type(w).__name__}")


def _deal_cards(s: int, w: SeatWagers, where: dict[int, str]) -> None:
    """The seat's seven cards, each dealt once (``where``: who holds each card so far)."""
    for c in check_seven(w.cards, f"seat {s}'s hand"):
        if c in where:
            raise FaceUpError(
                f"{card_str(c)} dealt to both seat {s} and {where[c]} (one deck, § 688a.3(a))", card_str(c)
            )
        where[c] = f"seat {s}"


def _check_wagers(s: int, w: SeatWagers) -> None:
    if _check_amount(s, "Face Up Pai Gow Poker", w.base) == 0:
        raise FaceUpError(f"seat {s}: no Face Up Pai Gow Poker Wager; every other wager needs one (§ 688a.7(d)-(e))")
    opts = [
        _check_amount(s, "Ace High Bonus", w.ace_high),
        _check_amount(s, "Fortune Bonus", w.fortune),
        _check_amount(s, "Progressive Payout", w.progressive),
    ]
    if w.surrender and any(opts):
        raise FaceUpError(f"seat {s}: a player with an optional wager may not surrender (§ 688a.11(d))")


def _check_progressive(s: int, w: SeatWagers, prog_pt: Paytable) -> None:
    if prog_pt.per_wager_cents and w.progressive != prog_pt.per_wager_cents:
        raise FaceUpError(
            f"seat {s}: Progressive Payout Wager {w.progressive} is not the "
            f"{prog_pt.per_wager_cents} wager of {prog_pt.name} (§ 688a.12(d))"
        )


__all__ = ["ENVY_RECEIVERS", "FaceUpOptions", "SeatWagers", "settle_round"]
