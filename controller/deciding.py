"""Players' decisions and the dealer's keypad: the phases in which players set
their hands, double down, surrender, raise or fold, or choose Over or Under
(§ 670a.11(a)-(c); § 659a.11(d); § 687a.11(b); § 686a.7).  The dealer keys each
answer on the keypad; the game's procedure checks it against its rules and
records it.  A wrong entry gets a one-line error on the keypad and changes
nothing.

:class:`Deciding` is a component of :class:`controller.table.Table`.  It owns
the keypad's entries: it hands a ``BET`` to wagering (controller/wagering.py), a
keyed hand to dealing (controller/dealing.py), an answer to the procedure, and
when the hands are in, the round to the decision that follows them or to
settlement (controller/settling.py).  Runs on the reactor thread only.
"""

from __future__ import annotations

from controller.context import TableContext
from controller.dealing import Dealing
from controller.flood import CallLater, RejectLimiter
from controller.games.base import EntryError
from controller.reactor import Event
from controller.records import Kind, PhaseKind
from controller.round import RoundData
from controller.settling import Settling
from controller.wagering import Wagering
from drivers.keypad import MAX_PROMPT_ID


class Deciding:
    def __init__(
        self,
        ctx: TableContext,
        wagering: Wagering,
        dealing: Dealing,
        settling: Settling,
        call_later: CallLater | None = None,
    ):
        self.ctx = ctx
        self.rejects = RejectLimiter(ctx, ctx.profile.keypad, call_later)
        self.wagering = wagering
        self.dealing = dealing
        self.settling = settling
        # the last entry acted upon: (the prompt number it answered, its text in upper case)
        self._answered: tuple[int, str] | None = None
        self._state_prompt = 0  # the keypad's prompt number when the current state was entered
        self._opened: int | None | bool = False  # False: no entry in this step yet; else its opening prompt
        #: prompts that replied to an entry (``_prompt``): a reply sent after the step changed (its
        #: records' durable callback) is the last step's, never the new step's opening prompt
        self._replies: set[int] = set()

    def phase_decide(self, rnd: RoundData, name: str) -> None:
        ctx = self.ctx
        ds = ctx.proc.decision_state(rnd, name)
        rnd.decisions[name] = ds
        if ds.done and not ds.required:
            ctx.commit([ctx.rec(Kind.DECISIONS_NONE, phase=ctx.state)], lambda _e: ctx.advance())
            return
        if ctx.dev.keypad is None:
            ctx.raise_tilt("keypad", f"the players' decisions ({ctx.state}) need the dealer's keypad")
            return
        ctx.dev.keypad.prompt(ctx.proc.decision_prompt(rnd, name)[:120])
        ctx.emit("decide", phase=ctx.state, name=name, seats=list(ds.required))

    def on_keypad(self, ev: Event) -> None:
        ctx = self.ctx
        msg = ev.data.get("msg")
        if msg == "ERROR":
            ctx.raise_tilt("keypad", f"keypad error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg != "ENTRY":
            return
        text = " ".join(str(ev.data.get("text", "")).split())
        refused = self._refused(ev.data.get("prompt"), text)
        if refused:
            # a double enter or a line keyed at a prompt since replaced: it answers nothing now
            self.rejects.rejected(ev.t, text, refused, ctx.state)
            return
        phase = ctx.phase()
        rnd = ctx.round
        try:
            if ctx.state == "open_for_wagers" and rnd is not None:
                reply = self.wagering.bet_entry(rnd, text)
                ctx.commit([ctx.rec(Kind.WAGER_KEYED, text=text)], lambda _e: self._prompt(reply))
            elif ctx.state == "hand_entry" and rnd is not None:
                if self.dealing.hand_entry(rnd, text):
                    self._hands_done(rnd)
            elif phase is not None and phase.kind == PhaseKind.DECIDE:
                if rnd is None or phase.name not in rnd.decisions:
                    # the phase's state is entered but its records are not yet durable (the
                    # prompt is not shown): a quick key press must not act on an unopened step
                    raise EntryError(f"not ready for entries yet ({ctx.state}); wait for the prompt")
                self._decision_entry(rnd, phase.name, text)
            else:
                raise EntryError(f"not expecting an entry now ({ctx.state})")
        except ValueError as e:
            # bad input changes nothing: say what was wrong, record the attempt (rate-limited)
            if self.rejects.rejected(ev.t, text, str(e), ctx.state):
                self._prompt(f"ERROR: {e}"[:120])

    def state_entered(self) -> None:
        """The table entered a new state (a new step): prompts sent from now on belong to it."""
        keypad = self.ctx.dev.keypad
        self._state_prompt = keypad.prompt_id if keypad is not None else 0
        self._opened = False  # the step's own opening prompt, looked for at its first entry
        self._replies.clear()

    def _refused(self, prompt: object, text: str) -> str:
        """Why an entry keyed at prompt number ``prompt`` does not apply now ("" if it does).

        An entry applies only to the prompt it answers (docs/protocols.md § 4.4): the same
        line again at a prompt already answered is a repeat (a double enter), and a line
        keyed at a prompt of an earlier step is stale when the current step opened with a
        prompt of its own (a step that opens without one, like taking wagers, is answered at
        whatever the display shows).  Marks the prompt answered."""
        keypad = self.ctx.dev.keypad
        shown = keypad.prompt_id if keypad is not None else 0
        if not isinstance(prompt, int) or not 0 <= prompt <= MAX_PROMPT_ID:
            return "entry without a valid prompt number"
        key = (prompt, text.upper())
        if key == self._answered:
            return f"a repeat of the entry to prompt {prompt}, already answered"
        age = (shown - prompt) % MAX_PROMPT_ID  # prompts sent after the one answered
        if self._opened is False:
            self._opened = self._opening_prompt(shown)
        opening = self._opened
        stale = opening is not None and 0 < (opening - prompt) % MAX_PROMPT_ID < 0x8000  # keyed before it
        if prompt != shown and (age >= 0x8000 or stale):
            return f"keyed at an earlier prompt ({prompt}; the keypad now shows {shown}): key it again"
        self._answered = key
        return ""

    def same_player(self, a: int, b: int, by: str) -> str:
        """One player on two adjacent betting areas, from the console (§ 670a.7(f),
        § 688a.7(f), § 659a.7(f)); the keypad's ``SAME <seat> <seat>`` does the same in a
        decision phase.  Any time after "no more bets" until settlement; recorded in the
        ledger with the round (``Kind.DECISION``, ``decision: adjacent``).  A ValueError
        names the problem and changes nothing."""
        ctx = self.ctx
        rnd = ctx.round
        if rnd is None or ctx.state not in ctx.proc.in_round_states():
            raise EntryError(f"the same player is recorded during a round, before settlement (state {ctx.state})")
        text = f"SAME {a} {b}"
        entry = ctx.proc.same_player(rnd, text.split())
        ctx.commit([ctx.rec(Kind.DECISION, phase=ctx.state, text=text, by=by, **entry.record)])
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
        keypad = self.ctx.dev.keypad
        if keypad is not None:
            keypad.prompt(text)
            self._replies.add(keypad.prompt_id)

    def _decision_entry(self, rnd: RoundData, name: str, text: str) -> None:
        ctx = self.ctx
        entry = ctx.proc.apply_entry(rnd, name, text)
        recs = [ctx.rec(Kind.DECISION, phase=ctx.state, text=text, **entry.record)]
        for (seat, wager), cents in sorted(entry.late.items()):
            # a wager made after "no more bets" where the rules allow it (Double Down,
            # § 670a.7(c); DJ Wild's Raise, § 687a.11(b)): accepted and recorded now
            rnd.wagers[(seat, wager)] = cents
            recs.append(ctx.rec(Kind.WAGER_ACCEPTED, seat=seat, spot=wager, cents=cents, late=True))
        ds = rnd.decisions[name]
        finished = ds.done or (bool(ds.required) and all(s in ds.answers for s in ds.required))
        ctx.commit(recs, lambda _e: self._after_decision(entry.reply, finished))

    def _after_decision(self, reply: str, finished: bool) -> None:
        if reply:
            self._prompt(reply[:120])
        if finished and self.ctx.phase() is not None:
            self.ctx.advance()

    def _hands_done(self, rnd: RoundData) -> None:
        ctx = self.ctx
        entered = {str(s): ctx.proc.show_cards(c) for s, c in sorted(rnd.entered.items())}
        phases = ctx.proc.phases
        resume = next((p for p in phases if p.after_entry and phases.index(p) > rnd.phase), None)
        if resume is not None:
            # the players decide on the hands as keyed (Phase.after_entry), then settlement
            ctx.trigger("resume_after_entry")
            rnd.phase = phases.index(resume)
            ctx.commit([ctx.rec(Kind.HANDS_ENTERED, hands=entered)], lambda _e: self.phase_decide(rnd, resume.name))
            return
        ctx.trigger("hands_entered")
        ctx.commit([ctx.rec(Kind.HANDS_ENTERED, hands=entered)], lambda _e: self.settling.phase_settle())
