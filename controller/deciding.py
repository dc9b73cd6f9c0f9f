"""Players' decisions, as a mixin of :class:`controller.table.Table`: the
phases in which players set their hands, double down, surrender, raise or fold,
or choose Over or Under (§ 670a.11(a)-(c); § 659a.11(d); § 687a.11(b);
§ 686a.7).  The dealer keys each answer on the keypad; the game's procedure
checks it against its rules and records it.  A wrong entry gets a one-line
error on the keypad and changes nothing.  Runs on the reactor thread only.
"""

from __future__ import annotations

from typing import Any

from controller.games.base import EntryError
from controller.reactor import Event


class DecidingMixin:
    # provided by Table
    round: Any
    state: str
    proc: Any
    dev: Any

    def _phase_decide(self, name: str) -> None:
        rnd = self.round
        ds = self.proc.decision_state(rnd, name)
        rnd.decisions[name] = ds
        if ds.done and not ds.required:
            self.commit([self.rec("decisions.none", phase=self.state)], lambda _e: self._advance())
            return
        if self.dev.keypad is None:
            self.raise_tilt("keypad", f"the players' decisions ({self.state}) need the dealer's keypad")
            return
        self.dev.keypad.prompt(self.proc.decision_prompt(rnd, name)[:120])
        self._emit("decide", phase=self.state, name=name, seats=list(ds.required))

    def _on_keypad(self, ev: Event) -> None:
        msg = ev.data.get("msg")
        if msg == "ERROR":
            self.raise_tilt("keypad", f"keypad error {ev.data.get('code')}: {ev.data.get('text')}")
            return
        if msg != "ENTRY":
            return
        text = " ".join(str(ev.data.get("text", "")).split())
        phase = self.proc.phase(self.state)
        try:
            if self.state == "open_for_wagers" and self.round is not None:
                reply = self._bet_entry(text)
                self.commit([self.rec("wager.keyed", text=text)], lambda _e, r=reply: self.dev.keypad.prompt(r))
            elif self.state == "hand_entry" and self.round is not None:
                if self._hand_entry(text):
                    self._hands_done()
            elif phase is not None and phase.kind == "decide":
                if self.round is None or phase.name not in self.round.decisions:
                    # the phase's state is entered but its records are not yet durable (the
                    # prompt is not shown): a quick key press must not act on an unopened step
                    raise EntryError(f"not ready for entries yet ({self.state}); wait for the prompt")
                self._decision_entry(phase.name, text)
            else:
                raise EntryError(f"not expecting an entry now ({self.state})")
        except ValueError as e:
            # bad input changes nothing: say what was wrong, record the attempt
            self.commit([self.rec("keypad.rejected", text=text[:80], error=str(e)[:160], state=self.state)])
            if self.dev.keypad is not None:
                self.dev.keypad.prompt(f"ERROR: {e}"[:120])

    def _decision_entry(self, name: str, text: str) -> None:
        rnd = self.round
        entry = self.proc.apply_entry(rnd, name, text)
        recs = [self.rec("decision", phase=self.state, text=text, **entry.record)]
        for (seat, wager), cents in sorted(entry.late.items()):
            # a wager made after "no more bets" where the rules allow it (Double Down,
            # § 670a.7(c); DJ Wild's Raise, § 687a.11(b)): accepted and recorded now
            rnd.wagers[(seat, wager)] = cents
            recs.append(self.rec("wager.accepted", seat=seat, spot=wager, cents=cents, late=True))
        ds = rnd.decisions[name]
        finished = ds.done or (bool(ds.required) and all(s in ds.answers for s in ds.required))
        self.commit(recs, lambda _e: self._after_decision(entry.reply, finished))

    def _after_decision(self, reply: str, finished: bool) -> None:
        if self.dev.keypad is not None and reply:
            self.dev.keypad.prompt(reply[:120])
        if finished and self.proc.phase(self.state) is not None:
            self._advance()

    def _hands_done(self) -> None:
        rnd = self.round
        entered = {str(s): self.proc.show_cards(c) for s, c in sorted(rnd.entered.items())}
        phases = self.proc.phases
        resume = next((p for p in phases if p.after_entry and phases.index(p) > rnd.phase), None)
        if resume is not None:
            # the players decide on the hands as keyed (Phase.after_entry), then settlement
            self.resume_after_entry()
            rnd.phase = phases.index(resume)
            self.commit([self.rec("hands.entered", hands=entered)], lambda _e: self._phase_decide(resume.name))
            return
        self.hands_entered()
        self.commit([self.rec("hands.entered", hands=entered)], lambda _e: self._phase_settle())
