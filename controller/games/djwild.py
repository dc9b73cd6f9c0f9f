"""DJ Wild Stud Poker at the table (58 Pa. Code 687a).

The round, from the automated dealing shoe (§ 687a.10):

* wagers: the Ante and the equal Blind (§ 687a.7(d)(1)), and where the table offers
  them the Trips Bonus and Two-Way Bad Beat Bonus (§ 687a.7(d)(3),(4)), keyed by the
  dealer; the Progressive Bonus Wager on its sensor (§ 687a.7(d)(2), § 687a.2(b));
* "no more bets" (§ 687a.10(a)(2)) is the dealer's **Start Game** button, which freezes
  and lights the Progressive Bonus Wagers placed (§ 687a.8(c)); there is no starting
  position;
* ``dispensing``: a stack of five to each seat with an Ante and Blind from the dealer's
  far left clockwise — seat 1 upward (§ 687a.10(b)) — then the dealer's five, then, if
  any Progressive Bonus Wager was made, the one card set aside on the layout to replace
  a player's joker (§ 687a.10(c), § 687a.11(f)(1));
* ``stub_check``: the cards left are counted when due — every round when the shuffler
  does not count the deck, at least once every 5 rounds (§ 687a.10(d)-(f)); a profile
  option (``stub_every_rounds``), or never when the shuffler counts (``shuffler_counts``);
* ``raise_or_fold``: each player, from the dealer's far left clockwise, raises two
  times the Ante (a late wager) or folds (§ 687a.11(b)); keyed ``RAISE <seat>`` /
  ``FOLD <seat>``; ``EXPOSED`` when a player's or the dealer's card was revealed before
  the Raise Wagers were placed (§ 687a.13(d)); ``SAME <seat> <seat>`` when adjacent boxes
  are one player's (§ 687a.7(e), up to the profile's ``adjacent_boxes``): no envy on his
  own hand (reading 687a-5);
* ``settlement``: every wager through controller/rules/djwild.py (§ 687a.11(d)-(f),
  § 687a.12), seat by seat from the dealer's far left, seat 1 upward (§ 687a.11(e),
  reading 687a-8).

Readings of the table procedure: docs/rules-readings/687a.md (687a-8 ... 687a-10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.core.records import PhaseKind
from controller.games.base import (
    DecisionState,
    Entry,
    EntryError,
    GameRound,
    Phase,
    Procedure,
    Stack,
    WagerSpec,
    adjacent_seats,
    by_seat,
    entry_verb,
    seat_arg,
)
from controller.rules import djwild as R
from controller.rules.cards import JOKER, CardError, card_str, parse_card
from controller.rules.paytables import get_paytable
from controller.rules.settlement import WagerResult

if TYPE_CHECKING:
    from controller.games.round import Round
    from controller.settings.config import TableProfile

OPTIONAL = ("trips", "bad-beat")
TRIPS_TABLES = ("DJWT-04", "DJWT-05", "DJWT-06", "DJWT-07")  # § 687a.12(d)
BAD_BEAT_TABLES = ("DJWBB-01", "DJWBB-02", "DJWBB-03", "DJWBB-04")  # § 687a.12(e)
PROGRESSIVE_TABLES = {
    "DJ Wild Progressive 1": "DJ Wild Progressive 1 Envy",  # § 687a.12(c)
    "DJ Wild Progressive 2": "DJ Wild Progressive 2 Envy",
}
#: [game.options] and their defaults
OPTIONS: dict[str, Any] = {
    "keyed": ["trips", "bad-beat"],  # optional wagers offered (§ 687a.7(d)(3),(4))
    "ante_min_cents": 500,
    "ante_max_cents": 50_000,
    "trips_max_cents": 10_000,
    "bad_beat_max_cents": 10_000,
    "trips_paytable": "DJWT-05",
    "bad_beat_paytable": "DJWBB-01",
    "progressive_on_fold": False,  # § 687a.11(b)(3)
    "bad_beat_two_way": True,  # reading 687a-4
    "shuffler_counts": False,  # § 687a.10(d): the shuffler counts 53 cards after each shuffle
    "stub_every_rounds": 5,  # § 687a.10(d): at least once every 5 rounds
    "adjacent_boxes": 1,  # § 687a.7(e): boxes one player may wager on (Rules Submission); SAME <seat> <seat>
}
EXPOSED_WHY = "a card was revealed before the Raise Wagers (§ 687a.13(d))"


def _option_error(file: str, key: str, problem: str) -> ValueError:
    return ValueError(f"{file}: [game.options] {key}: {problem}")


def _options(profile: TableProfile) -> dict[str, Any]:
    """The table's options over the defaults, each checked."""
    f = profile.file
    opts = dict(profile.options)
    unknown = sorted(set(opts) - set(OPTIONS))
    if unknown:
        raise _option_error(f, unknown[0], f"unknown option (options: {', '.join(OPTIONS)})")
    o = {**OPTIONS, **opts}
    keyed = o["keyed"]
    if not isinstance(keyed, list) or any(k not in OPTIONAL for k in keyed):
        raise _option_error(f, "keyed", f"{keyed!r}: a list of the optional wagers {', '.join(OPTIONAL)}")
    _check_counts(f, o, profile.seats)
    _check_choices(f, o)
    return o


def _check_choices(f: str, o: Mapping[str, Any]) -> None:
    """The true-or-false options, and the paytables chosen among those of § 687a.12."""
    for k in ("progressive_on_fold", "bad_beat_two_way", "shuffler_counts"):
        if not isinstance(o[k], bool):
            raise _option_error(f, k, f"{o[k]!r} must be true or false")
    for k, allowed in (("trips_paytable", TRIPS_TABLES), ("bad_beat_paytable", BAD_BEAT_TABLES)):
        if o[k] not in allowed:
            raise _option_error(f, k, f"{o[k]!r} is not one of {', '.join(allowed)}")


def _check_counts(f: str, o: Mapping[str, Any], seats: int) -> None:
    """The whole-number options: amounts, the stub's count interval, the adjacent boxes."""
    for k in (
        "ante_min_cents",
        "ante_max_cents",
        "trips_max_cents",
        "bad_beat_max_cents",
        "stub_every_rounds",
        "adjacent_boxes",
    ):
        if isinstance(o[k], bool) or not isinstance(o[k], int) or o[k] < 1:
            raise _option_error(f, k, f"{o[k]!r} must be a whole number >= 1")
    if o["ante_min_cents"] > o["ante_max_cents"]:
        raise _option_error(f, "ante_min_cents", "is above ante_max_cents")
    if o["stub_every_rounds"] > 5:
        raise _option_error(
            f,
            "stub_every_rounds",
            f"{o['stub_every_rounds']}: the stub is counted at least once every 5 rounds (§ 687a.10(d))",
        )
    if o["adjacent_boxes"] > seats:
        raise _option_error(f, "adjacent_boxes", f"{o['adjacent_boxes']}: more than the {seats} seats")


def _wagers(o: Mapping[str, Any]) -> dict[str, WagerSpec]:
    """The Ante, Blind and Raise Wagers, and the optional wagers keyed."""
    w: dict[str, WagerSpec] = {
        "ante": WagerSpec("ante", "§ 687a.7(d)(1)", min_cents=o["ante_min_cents"], max_cents=o["ante_max_cents"]),
        "blind": WagerSpec(
            "blind", "§ 687a.7(d)(1)", needs="ante", min_cents=o["ante_min_cents"], max_cents=o["ante_max_cents"]
        ),
        "raise": WagerSpec(
            "raise",
            "§ 687a.11(b)",
            needs="ante",
            late=True,
            min_cents=2 * o["ante_min_cents"],
            max_cents=2 * o["ante_max_cents"],
        ),
    }
    if "trips" in o["keyed"]:
        w["trips"] = WagerSpec("trips", "§ 687a.7(d)(3)", needs="ante", max_cents=o["trips_max_cents"])
    if "bad-beat" in o["keyed"]:
        w["bad-beat"] = WagerSpec("bad-beat", "§ 687a.7(d)(4)", needs="ante", max_cents=o["bad_beat_max_cents"])
    return w


def _progressive(profile: TableProfile) -> tuple[str, str | None, WagerSpec | None]:
    """The progressive's paytable, its envy paytable and its wager (none without a [progressive])."""
    prog = profile.progressive
    if prog is None:
        return R.DJWildConfig.progressive_paytable, None, None
    f = profile.file
    if prog.paytable not in PROGRESSIVE_TABLES:
        raise ValueError(
            f"{f}: [progressive] paytable: {prog.paytable!r} is not one of "
            f"{', '.join(PROGRESSIVE_TABLES)} (§ 687a.12(c))"
        )
    per = get_paytable(prog.paytable).per_wager_cents
    if per is not None and prog.wager_cents != per:
        raise ValueError(
            f"{f}: [progressive] wager: {prog.paytable!r} is for a ${per / 100:,.2f} wager, "
            f"got ${prog.wager_cents / 100:,.2f} (§ 687a.12(c))"
        )
    if prog.envy_paytable not in (None, PROGRESSIVE_TABLES[prog.paytable]):
        raise ValueError(
            f"{f}: [progressive] envy_paytable: {prog.envy_paytable!r} does not go with "
            f"{prog.paytable!r} (its Envy column is {PROGRESSIVE_TABLES[prog.paytable]!r})"
        )
    spec = WagerSpec(
        "progressive",
        "§ 687a.7(d)(2), § 687a.8(c)",
        sensed=True,
        fixed_cents=prog.wager_cents,
        progressive=True,
        needs="ante",
    )
    return prog.paytable, prog.envy_paytable, spec


@dataclass
class DJWildRound(GameRound):
    raised: dict[int, bool] = field(default_factory=dict)  # seat -> raised (True) or folded (§ 687a.11(b))
    exposed: bool = False  # a card was revealed before the Raise Wagers (§ 687a.13(d))
    replacement: int | None = None  # the card set aside, keyed with the hands (§ 687a.11(f)(1))
    stub_counted: bool = False  # the cards left are counted this round (§ 687a.10(d))


class DJWild(Procedure):
    play: DJWildRound
    game = "dj-wild"
    chapter = "58 Pa. Code 687a"
    deck = 53  # § 687a.3(a): 52 cards and one joker
    stack_size = 5  # § 687a.10(b)
    lockout_button = "start_game"  # § 687a.8(c): the dealer's Start Game button
    adjacent_section = "§ 687a.7(e)"  # the number of adjacent boxes: the Rules Submission's
    phases = (
        Phase("dispensing", PhaseKind.DEAL, "§ 687a.10(a)-(c)", "main"),
        Phase("stub_check", PhaseKind.STUB, "§ 687a.10(d)-(f)"),
        Phase("raise_or_fold", PhaseKind.DECIDE, "§ 687a.11(b), § 687a.13(d)", "raise", after_entry=True),
        Phase("settlement", PhaseKind.SETTLE, "§ 687a.11(d)-(f), § 687a.12"),
    )

    def __init__(self, profile: TableProfile):
        super().__init__(profile)
        if profile.seats > 6:
            raise ValueError(
                f"{profile.file}"
                f": [game] seats = {profile.seats}: DJ Wild Stud Poker has no more than six betting positions"
                " (§ 687a.2(a))"
            )
        o = _options(profile)
        self.adjacent_boxes: int = o["adjacent_boxes"]
        self.adjacent_areas = self.adjacent_boxes > 1
        self.options = o
        w = _wagers(o)
        prog_table, envy, prog_spec = _progressive(profile)
        if prog_spec is not None:
            w["progressive"] = prog_spec
        self.wagers = w
        self.config = R.DJWildConfig(
            trips_paytable=o["trips_paytable"],
            bad_beat_paytable=o["bad_beat_paytable"],
            progressive_paytable=prog_table,
            progressive_envy_paytable=envy,
            progressive_on_fold=o["progressive_on_fold"],
            bad_beat_two_way=o["bad_beat_two_way"],
        )
        #: rounds dealt since the stub was last counted; None = not since start-up (count now)
        self.rounds_since_count: int | None = None

    def new_play(self) -> DJWildRound:
        return DJWildRound()

    # ---- wagers (§ 687a.7) ---------------------------------------------------------------
    def keyed_wager(self, seat: int, wager: str, cents: int, *, late: bool = False) -> None:
        """§ 687a.7(c): every wager but the Raise before "no more bets" (the framework refuses
        one keyed later); the Raise only after the cards, as the player's decision."""
        if wager == "raise" and not late:
            raise EntryError(
                "the Raise Wager is made after the player has examined his cards: RAISE <seat> (§ 687a.11(b))"
            )
        super().keyed_wager(seat, wager, cents, late=late)

    def reject_unsupported(self, wagers: Mapping[tuple[int, str], int]) -> dict[tuple[int, str], str]:
        """At the lock-out: a seat plays only with an Ante *and* an equal Blind
        (§ 687a.7(d)(1), § 687a.1 "Blind Wager"); every optional wager needs them
        (§ 687a.7(d)(2)-(4))."""
        out: dict[tuple[int, str], str] = {}
        seats = by_seat(wagers)
        for seat, ws in seats.items():
            ante, blind = ws.get("ante"), ws.get("blind")
            why = None
            if ante is None or blind is None:
                why = "a seat plays with an Ante Wager and a Blind Wager (§ 687a.7(d)(1))"
            elif ante != blind:
                why = (
                    f"the Blind Wager (${blind / 100:,.2f}) must equal the Ante Wager "
                    f"(${ante / 100:,.2f}) (§ 687a.7(d)(1))"
                )
            if why is None:
                continue
            for w in ws:
                out[(seat, w)] = why if w in ("ante", "blind") else f"a {w} wager needs an Ante and Blind ({why})"
        return out

    # ---- dealing (§ 687a.10) ----------------------------------------------------------------
    def players(self, rnd: Round) -> list[int]:
        """Seats with an Ante and Blind, from the dealer's far left clockwise (§ 687a.10(b))."""
        return sorted(s for (s, w) in rnd.wagers if w == "ante")

    def plan(self, rnd: Round, name: str) -> list[Stack]:
        """§ 687a.10(b),(c): five to each player from the dealer's far left clockwise,
        the dealer's five, and the replacement card if any Progressive Bonus Wager."""
        players = self.players(rnd)
        if not players:
            return []
        out = [Stack(f"seat:{s}", self.stack_size) for s in players] + [Stack("dealer", self.stack_size)]
        if any(w == "progressive" for (_s, w) in rnd.wagers):
            out.append(Stack("replacement", 1))  # § 687a.10(c), § 687a.11(f)(1)
        return out

    stub_skip_reason = "not due: counted at least every 5 rounds (§ 687a.10(d))"

    def stub_due(self, rnd: Round) -> bool:
        """§ 687a.10(d): without a shuffler that counts the deck, the stub is counted at
        least once every ``stub_every_rounds`` (<= 5) rounds dealt; the first round after
        start-up always counts (what happened before is not known).  Cards the shoe did not
        read are counted too: the count leads to the keypad entry of the hands."""
        if not rnd.dealt_stacks:
            return False
        if rnd.unread:  # the cards were not read: counted, then keyed (hand entry)
            self.play.stub_counted = True
            return True
        if self.options["shuffler_counts"]:
            return False
        due = self.rounds_since_count is None or self.rounds_since_count + 1 >= self.options["stub_every_rounds"]
        self.play.stub_counted = due
        return due

    def round_ended(self, rnd: Round, void: bool) -> None:
        if rnd is None or not rnd.dealt_stacks:
            return
        if self.play.stub_counted and not void:
            self.rounds_since_count = 0
        elif self.rounds_since_count is not None:
            self.rounds_since_count += 1

    # ---- raise or fold (§ 687a.11(b)) ----------------------------------------------------------
    def decision_state(self, rnd: Round, name: str) -> DecisionState:
        players = self.players(rnd)
        required = tuple(players)
        if players and self.replacement_needed(rnd):
            required = (0,) + required  # 0: the replacement card, keyed
        return DecisionState(required=required, done=not players)

    def replacement_needed(self, rnd: Round) -> bool:
        """Hands entered on the keypad (shoe out of order or not reading): the card set
        aside must be keyed too when a Progressive seat's hand holds the joker."""
        if not rnd.entered:
            return False
        prog = {s for (s, w) in rnd.wagers if w == "progressive"}
        return any(JOKER in rnd.entered.get(s, ()) for s in prog) and self.play.replacement is None

    def decision_prompt(self, rnd: Round, name: str) -> str:
        nxt = self._next(rnd)
        same = "; SAME <seat> <seat>" if self.adjacent_areas else ""
        return f"RAISE OR FOLD: 'RAISE <seat>' / 'FOLD <seat>' from seat {nxt} clockwise; EXPOSED (§ 687a.13(d)){same}"

    def _next(self, rnd: Round) -> int | None:
        ds = rnd.decisions["raise"]
        return next((s for s in self.players(rnd) if s not in ds.answers), None)

    def apply_entry(self, rnd: Round, name: str, text: str) -> Entry:
        verb, parts = entry_verb(text)
        if verb == "SAME":  # § 687a.7(e): one player on adjacent boxes
            return self.same_player(rnd, parts)
        if verb == "EXPOSED" and len(parts) == 1:
            # § 687a.13(d): all hands void, every wager returned except the Progressive and
            # Trips Bonus Wagers, settled on the hands as dealt
            self.play.exposed = True
            return Entry("CARD EXPOSED - HANDS VOID, PROGRESSIVE/TRIPS SETTLED", {"decision": "exposed"}, done=True)
        if verb == "REPLACEMENT" and len(parts) == 2:
            return self._replacement(rnd, rnd.decisions[name], parts[1])
        if verb in ("RAISE", "FOLD") and len(parts) == 2:
            return self._raise_or_fold(rnd, rnd.decisions[name], verb, parts[1])
        same = ", SAME <seat> <seat>" if self.adjacent_areas else ""
        raise EntryError(f"enter RAISE <seat>, FOLD <seat>, REPLACEMENT <card>{same} or EXPOSED")

    def _replacement(self, rnd: Round, ds: DecisionState, text: str) -> Entry:
        if 0 not in ds.required:
            raise EntryError("the replacement card is keyed only when the hands were keyed")
        try:
            card = parse_card(text)
        except CardError as e:
            raise EntryError(str(e)) from None
        used = {c for cs in rnd.entered.values() for c in cs}
        if card == JOKER or card in used:
            raise EntryError(f"{card_str(card)} cannot be the card set aside (a natural card not in any hand)")
        self.play.replacement = card
        return Entry(
            f"REPLACEMENT {card_str(card)}",
            {"decision": "replacement", "card": card_str(card)},
            answer=(0, card_str(card)),
        )

    def _raise_or_fold(self, rnd: Round, ds: DecisionState, verb: str, text: str) -> Entry:
        seat = seat_arg(text, self.players(rnd))
        if seat in ds.answers:
            raise EntryError(f"seat {seat} has already {'raised' if ds.answers[seat] == 'raise' else 'folded'}")
        nxt = self._next(rnd)
        if seat != nxt:
            raise EntryError(f"seat {nxt} decides first: clockwise from the dealer's far left (§ 687a.11(b))")
        ante = rnd.wagers[(seat, "ante")]
        if verb == "FOLD":
            self.play.raised[seat] = False
            return Entry(f"SEAT {seat} FOLDS", {"seat": seat, "decision": "fold"}, answer=(seat, "fold"))
        self.play.raised[seat] = True
        amount = 2 * ante  # § 687a.1 "Raise Wager", § 687a.11(b)
        return Entry(
            f"SEAT {seat} RAISES {amount / 100:,.2f}",
            {"seat": seat, "decision": "raise"},
            late={(seat, "raise"): amount},
            answer=(seat, "raise"),
        )

    def same_player(self, rnd: Round, parts: Sequence[str]) -> Entry:
        """``SAME <seat> <seat>``: the two adjacent boxes are one player's (§ 687a.7(e)); keyed
        again with a neighbouring box it joins that box too, up to the profile's
        ``adjacent_boxes`` (the Rules Submission's number).  Recorded in ``self.play.player``
        (seat -> player): no Envy Bonus for his own hand (§ 670a.11(h)(3)(ii), reading 687a-5).
        Raises :class:`EntryError`, changing nothing, when the table allows one box, a seat is
        not playing, the boxes are not adjacent, already one player's, or too many."""
        n = self.adjacent_boxes
        if n < 2:
            raise EntryError("this table permits a player one box (§ 687a.7(e): the Rules Submission's number)")
        a, b = adjacent_seats(parts, self.players(rnd), "adjacent boxes (§ 687a.7(e))")
        players = self.play.player
        who = {s: players.get(s, f"seat {s}") for s in self.players(rnd)}
        if who[a] == who[b]:
            raise EntryError(f"seats {a} and {b} are already one player's boxes")
        group = sorted(s for s, w in who.items() if w in (who[a], who[b]))
        if len(group) > n:
            raise EntryError(f"a player may wager on at most {n} adjacent boxes (§ 687a.7(e), the Rules Submission)")
        name = "seats " + "+".join(map(str, group))
        for s in group:
            players[s] = name
        shown = f"{', '.join(map(str, group[:-1]))} AND {group[-1]}"
        return Entry(f"SEATS {shown} ONE PLAYER", {"decision": "adjacent", "seats": group})

    # ---- settlement (§ 687a.11(d)-(f), § 687a.12) -----------------------------------------------
    def settlement_order(self) -> list[int]:
        """§ 687a.11(e): "Beginning with the player farthest to the dealer's left and continuing
        around the table": seat 1 upward, the way the cards were dealt and the raises asked
        (reading 687a-8).  Percentage-of-meter hits are paid in this order."""
        return list(range(1, self.seats + 1))

    def _round(
        self, rnd: Round, hands: Mapping[int, Sequence[int]], dealer: Sequence[int], replacement: int | None
    ) -> R.DJRound:
        ws = by_seat(rnd.wagers)
        raised = self.play.raised
        same = self.play.player  # § 687a.7(e): SAME <seat> <seat>
        seats = tuple(
            R.DJSeat(
                seat=s,
                ante=ws[s]["ante"],
                cards=tuple(hands[s]),
                raised=bool(raised.get(s, False)),
                trips=ws[s].get("trips", 0),
                bad_beat=ws[s].get("bad-beat", 0),
                progressive=ws[s].get("progressive", 0),
                player=same.get(s),
            )
            for s in self.settlement_order()
            if s in hands
        )
        return R.DJRound(seats=seats, dealer=tuple(dealer), replacement=replacement, config=self.config)

    def _settle(
        self, rnd: Round, hands: Mapping[int, Sequence[int]], dealer: Sequence[int], replacement: int | None
    ) -> list[WagerResult]:
        if not hands:
            return []
        dj = self._round(rnd, hands, dealer, replacement)
        if self.play.exposed:
            out = R.void_exposed(dj)
            # raises placed before the exposure come back too: all hands are void (reading 687a-9)
            out += [
                WagerResult(s, "raise", c, "returned", 0, detail=EXPOSED_WHY)
                for (s, w), c in sorted(rnd.wagers.items())
                if w == "raise"
            ]
            return out
        missing = [s for s in hands if s not in self.play.raised]
        if missing:
            raise EntryError(f"seats {missing} neither raised nor folded (§ 687a.11(b))")
        return R.settle_round(dj)

    def settle(self, rnd: Round) -> list[WagerResult]:
        players = self.players(rnd)
        repl = rnd.cards.get("replacement")
        return self._settle(
            rnd, {s: rnd.cards[f"seat:{s}"] for s in players}, rnd.cards.get("dealer", ()), repl[0] if repl else None
        )

    def settle_entered(self, rnd: Round) -> list[WagerResult]:
        """Settlement from the hands the dealer keyed (shoe out of order, § 687a.13(g), or
        cards not read); the card set aside is keyed in the raise-or-fold phase."""
        problem = self.hand_entry_complete(rnd)
        if problem:
            raise EntryError(problem)
        players = self.players(rnd)
        return self._settle(rnd, {s: rnd.entered[s] for s in players}, rnd.entered.get(0, ()), self.play.replacement)

    def hand_entry_complete(self, rnd: Round) -> str | None:
        missing = [str(s) for s in self.players(rnd) if s not in rnd.entered]
        if self.players(rnd) and 0 not in rnd.entered:
            missing.append("dealer")
        return f"enter the hands of: {', '.join(missing)}" if missing else None

    def describe(self, rnd: Round) -> str:
        dealer = rnd.cards.get("dealer") or rnd.entered.get(0)
        return f"dealer {self.show_cards(dealer)}" if dealer else ""
