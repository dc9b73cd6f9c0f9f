"""DJ Wild Stud Poker — 58 Pa. Code Chapter 687a.  Pure rules for the round and the
settlement of every wager, in integer cents.

* One 53-card deck, the four deuces and the joker wild (§ 687a.3(a), § 687a.6(b));
  hands are evaluated by ``controller.rules.poker`` with ``rules="dj-wild"``.
* Each player places an Ante Wager and an equal Blind Wager (§ 687a.1, § 687a.7(d)(1)),
  and optionally a Progressive Bonus, Trips Bonus and Two-Way Bad Beat Bonus Wager
  (§ 687a.7(d)(2)-(4)).  Five cards each to the players and the dealer; one more card
  is set aside face down to replace the joker for the Progressive (§ 687a.8(f)).
* Each player raises two times the Ante or folds (§ 687a.11(b)).  A fold forfeits the
  Ante and Blind (§ 687a.11(b)) and the Two-Way Bad Beat (§ 687a.11(b)(2)), not the
  Trips (§ 687a.11(b)(1)); whether a folded hand qualifies for the Progressive is the
  certificate holder's choice (§ 687a.11(b)(3)) — :attr:`DJWildConfig.progressive_on_fold`.
* There is no dealer qualification: the raised hand is compared with the dealer's
  (§ 687a.11(e)).  Higher: Ante and Raise win 1 to 1 (§ 687a.12(a)) and the Blind is
  paid from the Blind paytable — push on three-of-a-kind or less (§ 687a.12(b)).  Equal:
  all three push (§ 687a.11(e)(2)).  Lower: all three lose (§ 687a.11(e)(3)).
* Then the optional wagers (§ 687a.11(f)), in this order: Progressive (joker replaced by
  the set-aside card; hand evaluated without wild cards — reading 687a-3), Trips
  (three-of-a-kind or better, natural/with-wild columns, § 687a.12(d)), Two-Way Bad Beat
  (three-of-a-kind or better that loses to the dealer, § 687a.11(f)(3), § 687a.12(e)).

The rulings where the text leaves a choice are in ``docs/rules-readings/687a.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from controller.rules import poker
from controller.rules.cards import JOKER, CardError, card_str, parse_cards
from controller.rules.paytables import Paytable, get_paytable
from controller.rules.settlement import WagerResult, whole_cents

GAME = "dj-wild"
HAND_CARDS = 5
RULES = "dj-wild"  # § 687a.6(b): deuces and the joker fully wild
PROGRESSIVE_RULES = "natural"  # reading 687a-3: the Progressive hand has no wild cards

ANTE_PAYTABLE = "DJ Wild Ante"
RAISE_PAYTABLE = "DJ Wild Raise"
BLIND_PAYTABLE = "DJ Wild Blind"

#: hands that can win the optional wagers (§ 687a.6(d),(e),(f)): three-of-a-kind or better
_BELOW_TRIPS = ("two-pair", "pair", "high-card")


class DJWildError(ValueError):
    """An impossible DJ Wild play: bad amount, missing card, duplicate card, unknown seat ..."""


@dataclass(frozen=True)
class DJWildConfig:
    """Which paytables the table runs (its Rules Submission, § 601a.2) and its options."""

    trips_paytable: str = "DJWT-05"  # § 687a.12(d)
    bad_beat_paytable: str = "DJWBB-01"  # § 687a.12(e)
    progressive_paytable: str = "DJ Wild Progressive 1"  # § 687a.12(c)
    progressive_envy_paytable: str | None = "DJ Wild Progressive 1 Envy"
    blind_paytable: str = BLIND_PAYTABLE  # § 687a.12(b)
    #: § 687a.11(b)(3): may a folded hand win the Progressive Bonus Wager?
    progressive_on_fold: bool = False
    #: reading 687a-4: the Two-Way Bad Beat also pays the dealer's losing three-of-a-kind or better
    bad_beat_two_way: bool = True


@dataclass(frozen=True)
class DJSeat:
    """One betting position.  ``raised`` is the § 687a.11(b) decision (False = fold)."""

    seat: int
    ante: int  # cents; the Blind equals it (§ 687a.1 "Blind Wager")
    cards: Sequence[int] | str
    raised: bool
    trips: int = 0
    bad_beat: int = 0
    progressive: int = 0
    #: § 687a.7(e): one player on several adjacent boxes has the same value on each of them
    #: (no Envy Bonus for his own hand, § 670a.11(h)(3)(ii) by reading 687a-5); None = alone
    player: str | None = None

    def who(self) -> str:
        return self.player if self.player is not None else f"seat {self.seat}"

    @property
    def blind(self) -> int:
        return self.ante

    @property
    def raise_amount(self) -> int:
        """§ 687a.1 "Raise Wager": two times the Ante."""
        return 2 * self.ante if self.raised else 0


# --------------------------------------------------------------------------- hands


def parse_hand(text: str | Sequence[str]) -> tuple[int, ...]:
    """Five cards from the 53-card deck (§ 687a.3(a))."""
    return parse_cards(text, count=HAND_CARDS, allow_joker=True)


def _cards(cards: Sequence[int] | str, what: str) -> tuple[int, ...]:
    if isinstance(cards, str) or (len(cards) and isinstance(cards[0], str)):
        return parse_hand(cards)
    out = tuple(cards)
    for c in out:
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= JOKER:
            raise CardError(f"{what}: {c!r} is not a card number (0..52)")
    _check_five_distinct(out, what)
    return out


def _check_five_distinct(out: tuple[int, ...], what: str) -> None:
    """Five cards (§ 687a.3(a)), none twice."""
    if len(out) != HAND_CARDS:
        raise CardError(f"{what}: wrong number of cards: got {len(out)}, expected {HAND_CARDS}")
    if len(set(out)) != HAND_CARDS:
        dup = next(c for c in out if out.count(c) > 1)
        raise CardError(f"{what}: duplicate card {card_str(dup)}", card_str(dup))


def evaluate(cards: Sequence[int] | str) -> poker.HandRank:
    """The best DJ Wild Stud Poker hand of five cards (§ 687a.6)."""
    return poker.eval_five(_cards(cards, "hand"), rules=RULES)


def is_natural(cards: Sequence[int] | str, rank: poker.HandRank | None = None) -> bool:
    """Natural for the Trips paytable's "Natural" column (§ 687a.12(d); reading 687a-1):
    no joker, and the hand makes the same category with every deuce played as a plain
    deuce — e.g. 2c 5c 8c Jc Kc is a natural flush and 2h 3c 4d 5s 6c a natural straight.

    This is the shared evaluator's ``HandRank.natural`` for ``rules="dj-wild"``; the
    tests check it against the definition above on every class of hands.  It is the
    reading that reproduces the regulator's Trips figures (docs/rules-readings/687a.md)."""
    hand = _cards(cards, "hand")
    return (rank or poker.eval_five(hand, rules=RULES)).natural


def trips_key(cards: Sequence[int] | str, rank: poker.HandRank | None = None) -> str:
    """Trips paytable key: ``natural-<hand>`` or ``wild-<hand>`` (§ 687a.12(d) columns; reading 687a-1)."""
    hand = _cards(cards, "hand")
    rank = rank or poker.eval_five(hand, rules=RULES)
    return f"{'natural' if is_natural(hand, rank) else 'wild'}-{rank.category.text}"


def progressive_cards(cards: Sequence[int] | str, replacement: int | None) -> tuple[int, ...]:
    """§ 687a.11(f)(1): the joker in the player's hand is replaced by the card set aside
    on the layout (§ 687a.2(b)(4), § 687a.8(f)).  Without a joker the hand is unchanged."""
    hand = _cards(cards, "hand")
    if JOKER not in hand:
        return hand
    if replacement is None:
        raise DJWildError("the hand holds the joker: the set-aside replacement card is needed (§ 687a.11(f)(1))")
    if isinstance(replacement, bool) or not isinstance(replacement, int) or not 0 <= replacement < JOKER:
        raise CardError(f"replacement card {replacement!r} must be a natural card (0..51)")
    if replacement in hand:
        raise CardError(f"replacement card {card_str(replacement)} is already in the hand", card_str(replacement))
    return tuple(replacement if c == JOKER else c for c in hand)


def progressive_rank(cards: Sequence[int] | str, replacement: int | None) -> poker.HandRank:
    """The hand that decides the Progressive Bonus Wager: joker replaced (§ 687a.11(f)(1)),
    then ranked without wild cards (reading 687a-3), eligible hands § 687a.6(d)."""
    return poker.eval_five(progressive_cards(cards, replacement), rules=PROGRESSIVE_RULES)


# --------------------------------------------------------------------------- one wager at a time


def _amount(seat: int, name: str, amt: int, minimum: int) -> int:
    if isinstance(amt, bool) or not isinstance(amt, int) or amt < minimum:
        raise DJWildError(f"seat {seat}: {name} wager {amt!r} must be a whole number of cents >= {minimum}")
    return amt


def _win(seat: int, wager: str, amount: int, table: Paytable, key: str, detail: str = "") -> WagerResult:
    """A wager paid by ``table``'s row ``key`` (a hand it does not print loses); a pay that is not a
    whole number of cents is refused citing where the paytable is printed."""
    pay = table.payout(key)
    if pay is None:
        return WagerResult(seat, wager, amount, "lose", -amount, hand=key, paytable=table.name, detail=detail)
    if pay.kind == "push":
        return WagerResult(seat, wager, amount, "push", 0, hand=key, paytable=table.name, pays=pay.text, detail=detail)
    if pay.kind == "meter":
        return WagerResult(
            seat,
            wager,
            amount,
            "win",
            0,
            hand=key,
            paytable=table.name,
            pays=pay.text,
            meter_fraction=pay.ratio,
            detail=detail,
        )
    net = whole_cents(pay.net_win(amount, per_wager_cents=table.per_wager_cents), rule=table.section)
    return WagerResult(seat, wager, amount, "win", net, hand=key, paytable=table.name, pays=pay.text, detail=detail)


def compare_to_dealer(player: poker.HandRank, dealer: poker.HandRank) -> int:
    """1 player higher, 0 equal (push), -1 lower (§ 687a.11(e)(1)-(3)); no dealer qualification."""
    return poker.compare(player, dealer)


def settle_main(
    seat: DJSeat, player: poker.HandRank, dealer: poker.HandRank | None, config: DJWildConfig = DJWildConfig()
) -> list[WagerResult]:
    """Ante, Blind and Raise (§ 687a.11(b),(e), § 687a.12(a),(b)), in that order."""
    s, a = seat.seat, seat.ante
    hand = player.category.text
    if not seat.raised:
        why = "folded (§ 687a.11(b))"
        return [
            WagerResult(s, "ante", a, "lose", -a, hand=hand, detail=why),
            WagerResult(s, "blind", a, "lose", -a, hand=hand, detail=why),
        ]
    if dealer is None:
        raise DJWildError(f"seat {s} raised: the dealer's hand is needed (§ 687a.11(d))")
    cmp = compare_to_dealer(player, dealer)
    if cmp == 0:
        why = "tie with the dealer (§ 687a.11(e)(2))"
        return [
            WagerResult(s, w, amt, "push", 0, hand=hand, detail=why)
            for w, amt in (("ante", a), ("blind", a), ("raise", 2 * a))
        ]
    if cmp < 0:
        why = f"dealer's {dealer.category.text} is higher (§ 687a.11(e)(3))"
        return [
            WagerResult(s, w, amt, "lose", -amt, hand=hand, detail=why)
            for w, amt in (("ante", a), ("blind", a), ("raise", 2 * a))
        ]
    why = "beats the dealer (§ 687a.11(e)(1))"
    return [
        _win(s, "ante", a, get_paytable(ANTE_PAYTABLE), "win", why),
        _win(s, "blind", a, get_paytable(config.blind_paytable), hand, why),
        _win(s, "raise", 2 * a, get_paytable(RAISE_PAYTABLE), "win", why),
    ]


def settle_trips(seat: int, amount: int, cards: Sequence[int] | str, paytable: str = "DJWT-05") -> WagerResult:
    """Trips Bonus Wager (§ 687a.11(f)(2), § 687a.12(d)); settled even after a fold (§ 687a.11(b)(1))."""
    _amount(seat, "trips", amount, 1)
    table = get_paytable(paytable)
    hand = _cards(cards, f"seat {seat}")
    player = poker.eval_five(hand, rules=RULES)
    if player.category.text in _BELOW_TRIPS:
        return WagerResult(seat, "trips", amount, "lose", -amount, hand=player.category.text, paytable=table.name)
    return _win(seat, "trips", amount, table, trips_key(hand, player))


def settle_bad_beat(
    s: DJSeat, player: poker.HandRank, dealer: poker.HandRank | None, config: DJWildConfig = DJWildConfig()
) -> WagerResult:
    """Two-Way Bad Beat Bonus Wager (§ 687a.11(f)(3), § 687a.12(e)); forfeited on a fold (§ 687a.11(b)(2)).

    Wins when the player's three-of-a-kind or better loses to the dealer's higher hand,
    paid by the player's hand (§ 687a.11(f)(3)(ii)).  With ``bad_beat_two_way`` (reading 687a-4,
    the default) it also wins when the *dealer's* three-of-a-kind or better loses to the
    player's hand, paid by the dealer's hand — the wager's name, and the only reading
    that comes near the regulator's figures (86.8% ... 85.848%; one-way gives about 43%).
    The seat's ``bad_beat`` wager and decision; the paytable and ``bad_beat_two_way`` are ``config``'s."""
    seat, amount, raised, two_way = s.seat, s.bad_beat, s.raised, config.bad_beat_two_way
    _amount(seat, "bad-beat", amount, 1)
    table = get_paytable(config.bad_beat_paytable)
    hand = player.category.text
    if not raised:
        return WagerResult(
            seat, "bad-beat", amount, "lose", -amount, hand=hand, paytable=table.name, detail="folded (§ 687a.11(b)(2))"
        )
    if dealer is None:
        raise DJWildError(f"seat {seat}: the dealer's hand is needed for the Two-Way Bad Beat (§ 687a.11(f)(3))")
    cmp = compare_to_dealer(player, dealer)
    if cmp < 0 and hand in table:
        return _win(
            seat,
            "bad-beat",
            amount,
            table,
            hand,
            f"player's {hand} lost to the dealer's {dealer.category.text} (§ 687a.11(f)(3)(ii))",
        )
    dhand = dealer.category.text
    if two_way and cmp > 0 and dhand in table:
        return _win(
            seat,
            "bad-beat",
            amount,
            table,
            dhand,
            f"dealer's {dhand} lost to the player's {hand} (two-way, reading 687a-4)",
        )
    return WagerResult(seat, "bad-beat", amount, "lose", -amount, hand=hand, paytable=table.name)


def settle_progressive(
    seat: int, amount: int, raised: bool, prog: poker.HandRank, config: DJWildConfig = DJWildConfig()
) -> WagerResult:
    """Progressive Bonus Wager (§ 687a.11(f)(1), § 687a.12(c)); ``prog`` is :func:`progressive_rank`.

    The wager must be the paytable's amount ($1 for Paytable 1, $5 for Paytable 2).
    Percentage-of-meter pays carry ``meter_fraction`` (net 0 until the meter layer pays)."""
    table = get_paytable(config.progressive_paytable)
    offered = table.per_wager_cents  # Progressive Paytable 1 is for $1, 2 for $5 (§ 687a.12(c))
    if offered is None:
        raise DJWildError(f"{table.name!r} names no wager: a Progressive Bonus paytable is for one (§ 687a.12(c))")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount != offered:
        raise DJWildError(
            f"seat {seat}: progressive wager {amount!r} cents; {table.name!r} is for a "
            f"{offered}-cent wager (§ 687a.12(c))"
        )
    hand = prog.category.text
    if not raised and not config.progressive_on_fold:
        return WagerResult(
            seat,
            "progressive",
            amount,
            "lose",
            -amount,
            hand=hand,
            paytable=table.name,
            detail="folded hands do not qualify (§ 687a.11(b)(3))",
        )
    return _win(seat, "progressive", amount, table, hand)


# --------------------------------------------------------------------------- the round


@dataclass(frozen=True)
class DJRound:
    """Everything dealt in a round: the seats (in settlement order), the dealer's five
    cards and the card set aside for the Progressive (§ 687a.8(f))."""

    seats: tuple[DJSeat, ...]
    dealer: Sequence[int] | str
    replacement: int | None = None
    config: DJWildConfig = field(default_factory=DJWildConfig)


def _validated(rnd: DJRound) -> tuple[list[DJSeat], tuple[int, ...] | None]:
    seats: list[DJSeat] = []
    seen_seats: set[int] = set()
    dealt: dict[int, str] = {}
    any_raise = False
    for s in rnd.seats:
        _check_seat(s, seen_seats)
        seen_seats.add(s.seat)
        cards = _cards(s.cards, f"seat {s.seat}")
        _take(dealt, cards, f"seat {s.seat}")
        seats.append(replace(s, cards=cards))
        any_raise = any_raise or s.raised
    dealer: tuple[int, ...] | None = None
    if rnd.dealer is not None and (len(rnd.dealer) or any_raise):
        dealer = _cards(rnd.dealer, "dealer")
        _take(dealt, dealer, "the dealer")
    if rnd.replacement is not None:
        _take(dealt, [rnd.replacement], "the progressive replacement")
    return seats, dealer


def _check_seat(s: DJSeat, seen_seats: set[int]) -> None:
    """A seat's position (once per round), its wagers, its decision and its player."""
    if isinstance(s.seat, bool) or not isinstance(s.seat, int) or s.seat < 1:
        raise DJWildError(f"seat {s.seat!r} is not a betting position (1, 2, ...)")
    if s.seat in seen_seats:
        raise DJWildError(f"seat {s.seat} appears twice in one round")
    _amount(s.seat, "ante", s.ante, 1)
    if not isinstance(s.raised, bool):
        raise DJWildError(f"seat {s.seat}: raised must be True (Raise Wager) or False (fold), got {s.raised!r}")
    if s.player is not None and not isinstance(s.player, str):
        raise DJWildError(f"seat {s.seat}: player must be a name (str) or None, got {s.player!r}")
    for name in ("trips", "bad_beat", "progressive"):
        _amount(s.seat, name.replace("_", "-"), getattr(s, name), 0)


def _take(dealt: dict[int, str], cards: Iterable[int], who: str) -> None:
    """``cards`` dealt to ``who``, each once from the one deck (``dealt``: who holds each card so far)."""
    for c in cards:
        if c in dealt:
            raise CardError(
                f"{card_str(c)} dealt to both {dealt[c]} and {who} (one 53-card deck, § 687a.3(a))", card_str(c)
            )
        dealt[c] = who


def settle_round(rnd: DJRound) -> list[WagerResult]:
    """Settle every wager of the round, seat by seat in the order given (the dealing
    order, § 687a.11(e)): Ante, Blind, Raise, then Progressive, Trips, Two-Way Bad Beat
    (§ 687a.11(f)(1)-(3)); Progressive envy bonuses last (§ 687a.12(c), reading 687a-5)."""
    cfg = rnd.config
    seats, dealer_cards = _validated(rnd)
    dealer = poker.eval_five(dealer_cards, rules=RULES) if dealer_cards is not None else None
    out: list[WagerResult] = []
    for s in seats:
        player = poker.eval_five(s.cards, rules=RULES)
        out.extend(settle_main(s, player, dealer, cfg))
        if s.progressive:
            prog = progressive_rank(s.cards, rnd.replacement)
            r = settle_progressive(s.seat, s.progressive, s.raised, prog, cfg)
            out.append(r)
        if s.trips:
            out.append(settle_trips(s.seat, s.trips, s.cards, cfg.trips_paytable))
        if s.bad_beat:
            out.append(settle_bad_beat(s, player, dealer, cfg))
    out.extend(_envy(seats, _envy_holders(seats, rnd.replacement, cfg), cfg))
    return out


def _envy_holders(seats: list[DJSeat], replacement: int | None, cfg: DJWildConfig) -> list[tuple[int, poker.HandRank]]:
    """Every seat whose Progressive hand is in the envy column, whether or not it bet the
    Progressive: the envy follows § 670a (reading 687a-5), where a holder needs no wager —
    "Has an Envy Bonus Qualifying Hand and any player at the table placed a Progressive
    Payout Wager" (§ 670a.11(h)(3)(i)(C)).  Only when a seat bet the Progressive.  A folded
    hand holds nothing unless folded hands qualify (§ 687a.11(b)(3), ``progressive_on_fold``);
    a joker hand with no card set aside (§ 687a.8(f)) cannot be ranked for it."""
    if not cfg.progressive_envy_paytable or not any(s.progressive for s in seats):
        return []
    table = get_paytable(cfg.progressive_envy_paytable)
    out: list[tuple[int, poker.HandRank]] = []
    for s in seats:
        rank = _envy_rank(s, replacement, cfg)
        if rank is not None and table.payout(rank.category.text) is not None:
            out.append((s.seat, rank))
    return out


def _envy_rank(s: DJSeat, replacement: int | None, cfg: DJWildConfig) -> poker.HandRank | None:
    """A seat's Progressive hand for the envy; None: folded (unless folded hands qualify), or a
    joker hand with no card set aside."""
    if not s.raised and not cfg.progressive_on_fold:
        return None
    hand = _cards(s.cards, f"seat {s.seat}'s hand")
    if JOKER in hand and replacement is None:
        return None
    return progressive_rank(hand, replacement)


def _envy(seats: list[DJSeat], hits: list[tuple[int, poker.HandRank]], cfg: DJWildConfig) -> list[WagerResult]:
    """Envy (the "Envy" column of § 687a.12(c)): each *other* player's seat with a
    Progressive wager is paid for every holder's royal / straight flush; never for one's own
    hand — his seat or another of his adjacent boxes (§ 687a.7(e)) — nor the dealer's
    ("A player is not entitled to an Envy Bonus for his own hand", § 670a.11(h)(3)(ii),
    reading 687a-5)."""
    if not cfg.progressive_envy_paytable:
        return []
    table = get_paytable(cfg.progressive_envy_paytable)
    who = {s.seat: s.who() for s in seats}
    out: list[WagerResult] = []
    for hit_seat, rank in hits:
        key = rank.category.text
        pay = table.payout(key)
        if pay is None:
            continue
        for s in seats:
            if who[s.seat] == who[hit_seat] or not s.progressive:
                continue
            net = whole_cents(Fraction(pay.cents), rule="§ 687a.12(c) envy")
            out.append(
                WagerResult(
                    s.seat,
                    "progressive-envy",
                    0,
                    "win",
                    net,
                    hand=key,
                    paytable=table.name,
                    pays=pay.text,
                    detail=f"envy for seat {hit_seat}",
                )
            )
    return out


def void_round(rnd_seats: Iterable[DJSeat]) -> list[WagerResult]:
    """§ 687a.8(i): all hands void, every wager returned (the table's voids, a misdeal or a
    shoe's jam, go through controller/play/wagering.py)."""
    out: list[WagerResult] = []
    for s in rnd_seats:
        for w, amt in (
            ("ante", s.ante),
            ("blind", s.ante),
            ("raise", s.raise_amount),
            ("progressive", s.progressive),
            ("trips", s.trips),
            ("bad-beat", s.bad_beat),
        ):
            if amt:
                out.append(WagerResult(s.seat, w, amt, "returned", 0, detail="round void (§ 687a.13)"))
    return out


def void_exposed(rnd: DJRound) -> list[WagerResult]:
    """§ 687a.13(d): a player's or the dealer's card revealed before the Raise Wagers —
    all hands void and the wagers returned, except that Progressive Bonus and Trips Bonus
    Wagers are settled per § 687a.11(f) on the hands as dealt (no Raise was made yet)."""
    seats, _ = _validated(rnd)
    out: list[WagerResult] = []
    for s in seats:
        for w, amt in (("ante", s.ante), ("blind", s.ante), ("bad-beat", s.bad_beat)):
            if amt:
                out.append(
                    WagerResult(s.seat, w, amt, "returned", 0, detail="cards exposed before the raise (§ 687a.13(d))")
                )
        if s.progressive:
            prog = progressive_rank(s.cards, rnd.replacement)
            out.append(settle_progressive(s.seat, s.progressive, True, prog, rnd.config))
        if s.trips:
            out.append(settle_trips(s.seat, s.trips, s.cards, rnd.config.trips_paytable))
    return out
