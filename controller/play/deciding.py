"""Players' decisions and the dealer's keypad: the phases in which players set
their hands, double down, surrender, raise or fold, or choose Over or Under
(§ 670a.11(a)-(c); § 659a.11(d); § 687a.11(b); § 686a.7).  The dealer keys each
answer on the keypad; the game's procedure checks it against its rules and
says what it changes (:class:`~controller.games.base.Entry`).  A wrong entry gets
a one-line error on the keypad and changes nothing.

:class:`Deciding` is a component of :class:`controller.play.table.Table`.  It owns what
was decided in the round (:class:`~controller.games.round.Decided`, the only writer) and
the keypad's entries: it hands a ``BET`` and a late wager to wagering
(controller/play/wagering.py), a keyed hand to dealing (controller/play/dealing.py), an answer
to the procedure, and when the hands are in, the round to the decision that follows
them or to settlement (controller/play/settling.py).  Runs on the reactor thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from controller.core.reactor import Event
from controller.core.records import Kind, PhaseKind
from controller.games.base import EntryError, Procedure
from controller.games.round import Decided, DecidedView, Round
from controller.play.bundles import Shared
from controller.play.flood import CallLater, RejectLimiter
from controller.play.machine import TableState
from drivers.keypad import MAX_PROMPT_ID, Keypad


class Bets(Protocol):
    """Wagers keyed by the dealer (controller/play/wagering.py)."""

    def bet_entry(self, text: str) -> str: ...

    def accept_late(self, seat: int, wager: str, cents: int) -> None: ...


class Hands(Protocol):
    """Hands keyed by the dealer (controller/play/dealing.py)."""

    def hand_entry(self, rnd: Round, text: str) -> bool: ...


class Deciding:
    def __init__(
        self,
        shared: Shared,
        *,
        keypad: Keypad | None,
        bets: Bets,
        hands: Hands,
        settle: Callable[[], None],
        call_later: CallLater | None = None,
    ):
        """The rejected entries are limited as the profile's ``[keypad]`` says (controller/play/flood.py)."""
        self.books, self.machine, self.game, self.rounds = shared.books, shared.machine, shared.game, shared.rounds
        self.keypad = keypad
        self.rejects = RejectLimiter(shared.books, shared.raise_tilt, shared.game.profile.keypad, call_later)
        self.bets, self.hands, self.settle = bets, hands, settle
        self.raise_tilt, self.emit = shared.raise_tilt, shared.emit
        self._d = Decided()
        # the last entry acted upon: (the prompt number it answered, its text in upper case)
        self._answered: tuple[int, str] | None = None
        self._state_prompt = 0  # the keypad's prompt number when the current state was entered
        self._opened: int | None | bool = False  # False: no entry in this step yet; else its opening prompt
        #: prompts that replied to an entry (``_prompt``): a reply sent after the step changed (its
        #: records' durable callback) is the last step's, never the new step's opening prompt
        self._replies: set[int] = set()

    @property
    def proc(self) -> Procedure:
        return self.game.proc

    # ---- the round's record -------------------------------------------------------------
    @property
    def record(self) -> DecidedView:
        """What was decided in the round in play (read-only)."""
        return self._d

    def new_round(self) -> DecidedView:
        self._d = Decided()
        return self._d

    # ---- a decision phase ----------------------------------------------------------------
    def phase_decide(self, rnd: Round, name: str) -> None:
        books, state = self.books, self.machine.state
        ds = self.proc.decision_state(rnd, name)
        self._d.decisions[name] = ds
        if ds.done and not ds.required:
            books.commit([books.rec(Kind.DECISIONS_NONE, phase=state)], lambda _e: self.machine.advance())
            return
        if self.keypad is None:
            self.raise_tilt("keypad", f"the players' decisions ({state}) need the dealer's keypad")
            return
        self.keypad.prompt(self.proc.decision_prompt(rnd, name)[:120])
        self.emit("decide", phase=state, name=name, seats=list(ds.required))

    def on_keypad(self, ev: Event) -> None:
        msg = ev.data.get("msg")
        if msg == "ERROR":
            self.raise_tilt("keypad", f"keypad error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg != "ENTRY":
            return
        text = " ".join(str(ev.data.get("text", "")).split())
        state = self.machine.state
        refused = self._refused(ev.data.get("prompt"), text)
        if refused:
            # a double enter or a line keyed at a prompt since replaced: it answers nothing now
            self.rejects.rejected(ev.t, text, refused, state)
            return
        try:
            self._entry(text)
        except ValueError as e:
            # bad input changes nothing: say what was wrong, record the attempt (rate-limited)
            if self.rejects.rejected(ev.t, text, str(e), state):
                self._prompt(f"ERROR: {e}"[:120])

    def _entry(self, text: str) -> None:
        """One entry that applies now: a wager, a hand, or an answer to the decision phase."""
        state, phase, rnd = self.machine.state, self.machine.phase(), self.rounds.round
        if state == TableState.OPEN and rnd is not None:
            reply = self.bets.bet_entry(text)
            self.books.commit([self.books.rec(Kind.WAGER_KEYED, text=text)], lambda _e: self._prompt(reply))
        elif state == TableState.HAND_ENTRY and rnd is not None:
            if self.hands.hand_entry(rnd, text):
                self._hands_done(rnd)
        elif phase is not None and phase.kind == PhaseKind.DECIDE:
            self._decide_entry(rnd, phase.name, text)
        else:
            raise EntryError(f"not expecting an entry now ({state})")

    def _decide_entry(self, rnd: Round | None, name: str, text: str) -> None:
        """An entry in the decision phase ``name``, once its step is open."""
        if rnd is None or name not in self._d.decisions:
            # the phase's state is entered but its records are not yet durable (the
            # prompt is not shown): a quick key press must not act on an unopened step
            raise EntryError(f"not ready for entries yet ({self.machine.state}); wait for the prompt")
        self._decision_entry(rnd, name, text)

    def state_entered(self) -> None:
        """The table entered a new state (a new step): prompts sent from now on belong to it."""
        self._state_prompt = self.keypad.prompt_id if self.keypad is not None else 0
        self._opened = False  # the step's own opening prompt, looked for at its first entry
        self._replies.clear()

    def _refused(self, prompt: object, text: str) -> str:
        """Why an entry keyed at prompt number ``prompt`` does not apply now ("" if it does).

        An entry applies only to the prompt it answers (docs/protocols.md § 4.4): the same
        line again at a prompt already answered is a repeat (a double enter), and a line
        keyed at a prompt of an earlier step is stale when the current step opened with a
        prompt of its own (a step that opens without one, like taking wagers, is answered at
        whatever the display shows).  Marks the prompt answered."""
        shown = self.keypad.prompt_id if self.keypad is not None else 0
        if not isinstance(prompt, int) or not 0 <= prompt <= MAX_PROMPT_ID:
            return "entry without a valid prompt number"
        key = (prompt, text.upper())
        if key == self._answered:
            return f"a repeat of the entry to prompt {prompt}, already answered"
        if self._opened is False:
            self._opened = self._opening_prompt(shown)
        if prompt != shown and self._earlier(prompt, shown):
            return f"keyed at an earlier prompt ({prompt}; the keypad now shows {shown}): key it again"
        self._answered = key
        return ""

    def _earlier(self, prompt: int, shown: int) -> bool:
        """Whether ``prompt`` came before the one ``shown`` now (numbers wrap), or before the
        current step's own opening prompt."""
        age = (shown - prompt) % MAX_PROMPT_ID  # prompts sent after the one answered
        opening = self._opened
        stale = opening is not None and 0 < (opening - prompt) % MAX_PROMPT_ID < 0x8000  # keyed before it
        return age >= 0x8000 or stale

    def same_player(self, a: int, b: int, by: str) -> str:
        """One player on two adjacent betting areas, from the console (§ 670a.7(f),
        § 688a.7(f), § 659a.7(f)); the keypad's ``SAME <seat> <seat>`` does the same in a
        decision phase.  Any time after "no more bets" until settlement; recorded in the
        ledger with the round (``Kind.DECISION``, ``decision: adjacent``).  A ValueError
        names the problem and changes nothing."""
        rnd, state = self.rounds.round, self.machine.state
        if rnd is None or state not in self.proc.in_round_states():
            raise EntryError(f"the same player is recorded during a round, before settlement (state {state})")
        text = f"SAME {a} {b}"
        entry = self.proc.same_player(rnd, text.split())
        self.books.commit([self.books.rec(Kind.DECISION, phase=state, text=text, by=by, **entry.record)])
        return entry.reply

    def _opening_prompt(self, shown: int) -> int | None:
        """The first prompt this step sent that is not a reply to an entry (None: the step
        opened without one, e.g. taking wagers, and is answered at whatever the display shows)."""
        pid = self._state_prompt
        for _ in range((shown - self._state_prompt) % MAX_PROMPT_ID):
            pid = pid % MAX_PROMPT_ID + 1
            if pid not in self._replies:
                return pid
        return None

    def _prompt(self, text: str) -> None:
        """A reply to an entry (its outcome or its error)."""
        if self.keypad is not None:
            self.keypad.prompt(text)
            self._replies.add(self.keypad.prompt_id)

    def _decision_entry(self, rnd: Round, name: str, text: str) -> None:
        books = self.books
        entry = self.proc.apply_entry(rnd, name, text)
        ds = self._d.decisions[name] = self._d.decisions[name].after(entry)
        recs = [books.rec(Kind.DECISION, phase=self.machine.state, text=text, **entry.record)]
        for (seat, wager), cents in sorted(entry.late.items()):
            # a wager made after "no more bets" where the rules allow it (the procedure's
            # keyed_wager and Wagering.accept_late say which): accepted and recorded now
            self.bets.accept_late(seat, wager, cents)
            recs.append(books.rec(Kind.WAGER_ACCEPTED, seat=seat, spot=wager, cents=cents, late=True))
        finished = ds.done or (bool(ds.required) and all(s in ds.answers for s in ds.required))
        books.commit(recs, lambda _e: self._after_decision(entry.reply, finished))

    def _after_decision(self, reply: str, finished: bool) -> None:
        if reply:
            self._prompt(reply[:120])
        if finished and self.machine.phase() is not None:
            self.machine.advance()

    def _hands_done(self, rnd: Round) -> None:
        books, proc = self.books, self.proc
        entered = {str(s): proc.show_cards(c) for s, c in sorted(rnd.entered.items())}
        phases = proc.phases
        resume = next((p for p in phases if p.after_entry and phases.index(p) > rnd.phase), None)
        if resume is not None:
            # the players decide on the hands as keyed (Phase.after_entry), then settlement
            # (entering the phase's state sets the round's phase, controller/play/table.py)
            self.machine.trigger("resume_after_entry")
            books.commit([books.rec(Kind.HANDS_ENTERED, hands=entered)], lambda _e: self.phase_decide(rnd, resume.name))
            return
        self.machine.trigger("hands_entered")
        books.commit([books.rec(Kind.HANDS_ENTERED, hands=entered)], lambda _e: self.settle())
