"""HIL scenarios: one YAML file per case, run against the real controller in a
fresh :class:`hil.rig.Rig` (simulated devices on ptys, mock pins, a temporary
state directory).  ``tablectl hil run [PATH...]`` and tests/hil/test_scenarios.py
run them; the format is documented in docs/hil.md.

A scenario says what happens (``setup``: faults and scripted dice/decks before
the table starts; ``steps``: people's actions, injected faults, technician
commands, waits) and what must be seen (``expect``, and ``check`` steps on the
way): states visited, lights per seat, the sign, ledger records, wagers
returned, meter cents, tilts, device traffic and link statistics — checked by
hil/expect.py.

Every scenario must cite the section it tests (``section``).  Directories are
scanned for ``*.yaml`` without recursion, so ``hil/scenarios/pending/`` (cases
waiting for controller behaviour) runs only when named explicitly.
"""

from __future__ import annotations

import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TextIO

import yaml

from drivers.devicedefs import names as serial_devices
from hil import expect
from hil.expect import EXPECT_KEYS, compare, status_matches

WAIT_S = 15.0  # default real seconds a wait may take before it is a failure
TOP_KEYS = {"name", "section", "description", "profile", "seed", "speed", "rig", "setup", "steps", "expect"}


class ScenarioError(ValueError):
    """A scenario file that is not a valid scenario (names the file and the problem)."""


class StepFailed(AssertionError):
    pass


@dataclass
class Scenario:
    name: str
    section: str
    path: Path
    description: str = ""
    profile: str = "six-card-fortune-progressive"
    seed: int = 1
    speed: float = 50.0
    rig: dict[str, Any] = field(default_factory=dict)
    setup: dict[str, Any] = field(default_factory=dict)
    steps: list[Any] = field(default_factory=list)
    expect: dict[str, Any] = field(default_factory=dict)


@dataclass
class Result:
    scenario: Scenario
    passed: bool
    failures: list[str]
    seconds: float


# --------------------------------------------------------------------------- loading


def load(path: str | Path) -> Scenario:
    p = Path(path)
    doc = _read_doc(p)
    _check_head(p, doc)
    _check_steps(p, doc)
    _check_prompt_waits(p, doc.get("steps", []))
    _check_sections(p, doc)
    return Scenario(
        name=doc["name"],
        section=doc["section"],
        path=p,
        description=doc.get("description", ""),
        profile=doc.get("profile", "six-card-fortune-progressive"),
        seed=int(doc.get("seed", 1)),
        speed=float(doc.get("speed", 50.0)),
        rig=dict(doc.get("rig", {})),
        setup=dict(doc.get("setup", {})),
        steps=list(doc.get("steps", [])),
        expect=dict(doc.get("expect", {})),
    )


def _read_doc(p: Path) -> dict[str, Any]:
    """The scenario file's mapping, its keys all known."""
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{p}: cannot read scenario: {e}") from None
    if not isinstance(doc, dict):
        raise ScenarioError(f"{p}: a scenario is a mapping")
    unknown = set(doc) - TOP_KEYS
    if unknown:
        raise ScenarioError(f"{p}: unknown key(s) {', '.join(sorted(unknown))}")
    return doc


def _check_head(p: Path, doc: dict[str, Any]) -> None:
    """A name, and a section that cites one."""
    for key in ("name", "section"):
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            raise ScenarioError(f"{p}: {key!r} is required (a non-empty string)")
    if "§" not in doc["section"] and "SPEC" not in doc["section"]:
        raise ScenarioError(f"{p}: section {doc['section']!r} cites no section (§ ...)")


def _check_steps(p: Path, doc: dict[str, Any]) -> None:
    """Steps: a list of one-action mappings, each action known."""
    if not isinstance(doc.get("steps", []), list):
        raise ScenarioError(f"{p}: steps must be a list")
    for i, step in enumerate(doc.get("steps", [])):
        if not isinstance(step, dict) or len(step) != 1:
            raise ScenarioError(f"{p}: step {i + 1} must be a mapping with exactly one action, got {step!r}")
        (action,) = step
        if action not in ACTIONS:
            raise ScenarioError(f"{p}: step {i + 1}: unknown action {action!r} ({', '.join(sorted(ACTIONS))})")


def _check_prompt_waits(p: Path, steps: list[dict[str, Any]]) -> None:
    """No ``wait_prompt`` an earlier one already met: it would not wait at all, and the next step
    (a keyed entry, a button) could reach the table before the entry it follows was taken."""
    waited: dict[str, int] = {}
    for i, step in enumerate(steps):
        if "wait_prompt" not in step:
            continue
        try:
            text, count = _prompt_wait(step["wait_prompt"])
        except (KeyError, TypeError, ValueError):
            raise ScenarioError(f"{p}: step {i + 1}: wait_prompt is a text, or {{contains: text, count: n}}") from None
        if waited.get(text, 0) >= count:
            raise ScenarioError(
                f"{p}: step {i + 1}: wait_prompt {text!r} count {count} was met by an earlier step already "
                f"(give the count of such prompts seen by now, {waited[text] + 1})"
            )
        waited[text] = count


def _prompt_wait(v: Any) -> tuple[str, int]:
    """A ``wait_prompt`` step's (text, count): a text alone is a count of 1."""
    return (v, 1) if isinstance(v, str) else (str(v["contains"]), int(v.get("count", 1)))


def _check_sections(p: Path, doc: dict[str, Any]) -> None:
    """rig, setup and expect are mappings; the expectations known."""
    for key in ("rig", "setup", "expect"):
        if not isinstance(doc.get(key, {}), dict):
            raise ScenarioError(f"{p}: {key} must be a mapping")
    bad = set(doc.get("expect", {})) - EXPECT_KEYS
    if bad:
        raise ScenarioError(f"{p}: unknown expectation(s) {', '.join(sorted(bad))}")


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """Scenario files named, or ``*.yaml`` directly inside the directories named."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(q for q in p.glob("*.yaml") if q.is_file())
        elif p.is_file():
            out.append(p)
        else:
            raise ScenarioError(f"{p}: no such scenario file or directory")
    return out


# --------------------------------------------------------------------------- running


def _set_device_fault(dev_faults: Any, key: str, val: Any) -> None:
    """One field of a simulator's own faults (``scripted`` extended, ``face_up`` merged)."""
    if key == "scripted":
        getattr(dev_faults, key).extend(tuple(r) for r in val)
    elif key == "face_up":
        dev_faults.face_up.update({int(k): int(v) for k, v in val.items()})
    else:
        setattr(dev_faults, key, val)


class Runner:
    """Runs one scenario in its own rig."""

    def __init__(self, scn: Scenario, state_dir: Path):
        from hil.rig import Rig, TableSetup

        self.scn = scn
        self.rig = Rig(
            state_dir,
            profile=scn.profile,
            seed=scn.seed,
            speed=scn.speed,
            setup=TableSetup(
                shake_s=float(scn.rig.get("shake_s", 5.0)),
                link=scn.rig.get("link"),
                profile_overrides=scn.rig.get("profile_overrides"),
                keypad=bool(scn.rig.get("keypad", False)),
            ),
        )
        self.wait_s = float(scn.rig.get("wait_s", WAIT_S))

    # ---- the whole run ---------------------------------------------------------
    def run(self) -> list[str]:
        rig = self.rig
        try:
            self._setup(self.scn.setup)
            rig.start()
            for i, step in enumerate(self.scn.steps, 1):
                ((action, arg),) = step.items()
                try:
                    ACTIONS[action](self, arg)
                except (StepFailed, TimeoutError, AssertionError) as e:
                    return [f"step {i} ({action}): {e}"]
            return self._final(self.scn.expect)
        except ScenarioError as e:
            return [f"invalid scenario: {e}"]
        except Exception as e:  # noqa: BLE001 - a crash is a failure of the scenario, reported
            return [f"error: {type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"]
        finally:
            rig.stop()

    def _final(self, exp: Mapping[str, Any]) -> list[str]:
        """The closing expectations: records become durable a moment after the state
        that follows them, so wait (bounded) until they hold, then make sure they still
        hold a little later (a count that is only transiently right is a failure)."""
        clock = self.rig.clock
        if not clock.wait_for(lambda: not self.check(exp), real_s=self.wait_s):
            problems = self.check(exp)
            if problems:
                return problems
        # a little later: 5 s of game time, and no less real time than that is at the clock's speed
        real_end = time.monotonic() + clock.to_real(5.0)
        clock.sleep(5.0)
        time.sleep(max(0.0, real_end - time.monotonic()))
        return self.check(exp)

    def _setup(self, setup: Mapping[str, Any]) -> None:
        shoe = self.rig.shoe
        for key, val in setup.items():
            if key == "decks":
                shoe.stacked_decks += [stacked_deck(stacks, shoe.deck_size) for stacks in val]
            elif key == "tiles":
                shoe.stacked_decks += [stacked_tiles(stacks) for stacks in val]
            elif key == "rng":
                self._script_rng(val)
            elif key in serial_devices():
                self._inject(key, val)
            else:
                raise ScenarioError(f"{self.scn.path}: setup: unknown key {key!r}")

    def _script_rng(self, val: Mapping[str, Any]) -> None:
        """``rng``: the draws the controller's RNG gives first (``scripted``), or a ``biased`` one."""
        self.rig.rng.scripted.extend(int(x) for x in val.get("scripted", []))
        self.rig.rng.biased = bool(val.get("biased", False))

    # ---- faults ---------------------------------------------------------------------
    def _inject(self, device: str, faults: Mapping[str, Any]) -> None:
        sim = self.rig.sim(device)
        dev_faults = getattr(sim, f"{device}_faults", None)
        for key, val in faults.items():
            action = _DEVICE_ACTIONS.get(key)
            if action is not None:
                action(sim, key, val)
            elif dev_faults is not None and key in {f.name for f in fields(dev_faults)}:
                _set_device_fault(dev_faults, key, val)
            else:
                raise ScenarioError(f"{self.scn.path}: {device}: unknown fault {key!r}")

    # ---- steps -----------------------------------------------------------------------
    def _seats(self, v: Any) -> list[int]:
        return [int(v)] if isinstance(v, int) else [int(s) for s in v]

    def step_place(self, v: Any) -> None:
        for s in self._seats(v):
            self.rig.place(s)

    def step_remove(self, v: Any) -> None:
        for s in self._seats(v):
            self.rig.remove(s)

    def step_press(self, v: str) -> None:
        self.rig.press(v)

    def step_activate(self, v: int) -> None:
        if not self.rig.press_activation(int(v)):
            raise StepFailed(f"the shaker was not armed for seat {v}")

    def step_activate_armed(self, v: int) -> None:
        """Wait (bounded) until the shaker is armed for seat ``v`` and not shaking, then the
        player presses the seat's activation button (§ 621a.2(f), § 621a.6(a)(3))."""
        sh = self.rig.shaker
        self._poll(lambda: sh.armed == int(v) and not sh.shaking, f"the shaker armed for seat {v}")
        if not self.rig.press_activation(int(v)):
            raise StepFailed(f"the shaker was not armed for seat {v}")

    def step_sleep(self, v: float) -> None:
        self.rig.clock.sleep(float(v))

    def step_inject(self, v: Mapping[str, Any]) -> None:
        v = dict(v)
        self._inject(v.pop("device"), v)

    def step_device_send(self, v: Mapping[str, Any]) -> None:
        v = dict(v)
        self.rig.sim(v.pop("device")).send(v.pop("msg"), **v)

    def step_keypad(self, v: str) -> None:
        if self.rig.keypad is None:
            raise ScenarioError(f"{self.scn.path}: keypad step without rig.keypad: true")
        # the dealer reads the display first: the entry answers the latest prompt (protocols.md § 4.4)
        self.rig.keypad.wait_shown(int(self.rig.table.status.get("prompt", 0)), self.wait_s)
        self.rig.keypad.enter(str(v))

    def step_wait_prompt(self, v: Any) -> None:
        """Wait until the keypad has shown ``count`` prompts containing ``contains``."""
        text, count = _prompt_wait(v)
        kp = self.rig.keypad
        if kp is None:
            raise ScenarioError(f"{self.scn.path}: wait_prompt without rig.keypad: true")
        self._poll(
            lambda: sum(1 for p in list(kp.prompts) if text in p) >= count,
            f"{count} keypad prompt(s) containing {text!r} (prompts: {kp.prompts})",
        )

    def step_command(self, v: Mapping[str, Any]) -> None:
        v = dict(v)
        self.rig.service.post_command(v.pop("cmd"), **v)

    def step_wait(self, v: Mapping[str, Any]) -> None:
        v = dict(v)
        timeout = float(v.pop("timeout", self.wait_s))
        self.rig.table.wait_for(lambda s: status_matches(s, v), timeout)

    def step_stays(self, v: Mapping[str, Any]) -> None:
        """The table status keeps matching for ``for`` game seconds (e.g. a tilt that
        must not clear by itself)."""
        v = dict(v)
        seconds = float(v.pop("for", 5.0))
        clock, table = self.rig.clock, self.rig.table
        until = time.monotonic() + clock.to_real(seconds)  # and no less real time than at the clock's speed
        if clock.wait_for(lambda: not status_matches(table.status, v), game_s=seconds):
            raise StepFailed(f"status changed to {dict(table.status)}; expected it to stay {v}")
        while time.monotonic() < until:
            st = table.status
            if not status_matches(st, v):
                raise StepFailed(f"status changed to {dict(st)}; expected it to stay {v}")
            time.sleep(0.01)

    def step_wait_event(self, v: Any) -> None:
        what, count = (v, 1) if isinstance(v, str) else (v["event"], int(v.get("count", 1)))
        self.rig.wait_emitted(what, count, self.wait_s)

    def step_wait_visited(self, v: str) -> None:
        self._poll(lambda: v in self.rig.table.visited, f"state {v!r} visited")

    def step_wait_ledger(self, v: Any) -> None:
        kind, count = (v, 1) if isinstance(v, str) else (v["kind"], int(v.get("count", 1)))
        self._poll(lambda: len(self.rig.ledger_events([kind])) >= count, f"{count} {kind!r} ledger record(s)")

    def step_wait_link(self, v: Mapping[str, Any]) -> None:
        v = dict(v)
        stats = self.rig.link_stats(v.pop("device"))
        # link statistics move in wire time (drivers/link.py): watched busily, so the game clock
        # runs on at its plain speed meanwhile, as it would on a table
        self._poll(
            lambda: all(compare(getattr(stats, k), want) for k, want in v.items()), f"link stats {v}", idle=False
        )

    def step_round(self, v: Mapping[str, Any] | None) -> None:
        """A dealer's round up to the count confirmation: wait for the table to open with
        a shuffled deck, chips on ``bets``, lock-out, count shown, ``late`` chips (rejected),
        the dealer collects, confirm (unless ``confirm: false``)."""
        v = dict(v or {})
        bets = self._seats(v.get("bets", []))
        late = self._seats(v.get("late", []))
        t = self.rig.table
        self._wait_open()
        for s in bets:
            self.rig.place(s)
        self.rig.clock.sleep(0.5)
        self.rig.press("lockout")
        t.wait_for(lambda s: s.get("count_shown") or s.get("state") == "tilt", self.wait_s)
        for s in late:
            self.rig.place(s)
        self.rig.clock.sleep(0.5)
        for s in bets + late:
            self.rig.remove(s)
        if v.get("confirm", True):
            self.rig.press("confirm")

    def _wait_open(self) -> None:
        """Until the table is open for wagers with a shuffled deck; a tilt fails the step."""
        st = self.rig.table.wait_for(
            lambda s: (
                s.get("state") in ("open_for_wagers", "tilt") and (s.get("deck_ready") or s.get("state") == "tilt")
            ),
            self.wait_s,
        )
        if st["state"] == "tilt":
            raise StepFailed(f"the table is in tilt before the round: {st.get('tilts')}")

    def step_eventually(self, v: Mapping[str, Any]) -> None:
        """Like ``check``, but waits until the expectations hold (lights and the sign change
        only once the records behind them are durable)."""
        if self.rig.clock.wait_for(lambda: not self.check(v), real_s=self.wait_s):
            return
        problems = self.check(v)
        if problems:
            raise StepFailed(f"not within {self.wait_s} s: " + "; ".join(problems))

    def step_check(self, v: Mapping[str, Any]) -> None:
        problems = self.check(v)
        if problems:
            raise StepFailed("; ".join(problems))

    def _poll(self, pred: Callable[[], bool], what: str, *, idle: bool = True) -> None:
        """Wait until ``pred()``; ``idle``: the scenario is idle meanwhile (the clock may skip)."""
        if idle:
            if not self.rig.clock.wait_for(pred, real_s=self.wait_s) and not pred():
                raise StepFailed(f"{what} not seen within {self.wait_s} s")
            return
        deadline = time.monotonic() + self.wait_s
        while not pred():
            if time.monotonic() > deadline:
                raise StepFailed(f"{what} not seen within {self.wait_s} s")
            time.sleep(0.01)

    # ---- expectations ------------------------------------------------------------------
    def check(self, exp: Mapping[str, Any]) -> list[str]:
        """The expectations in ``exp`` that do not hold (hil/expect.py); one it does not
        know makes the scenario invalid."""
        bad = set(exp) - EXPECT_KEYS
        if bad:
            raise ScenarioError(f"{self.scn.path}: unknown expectation(s) {', '.join(sorted(bad))}")
        return expect.check(self.rig, exp)


ACTIONS: dict[str, Callable[[Runner, Any], None]] = {
    name[5:]: fn for name, fn in vars(Runner).items() if name.startswith("step_")
}


# --------------------------------------------------------------------------- helpers


def stacked_deck(stacks: Sequence[str], deck_size: int = 53) -> list[int]:
    """A scripted deck: the given stacks (card strings) in dispensing order, then every
    other card of the deck in order.  A multi-deck shoe (``deck_size`` a multiple of 52
    above 53: six decks for Over/Under, § 686a.3(a)) may repeat a card up to once per
    deck; the rest of the batch follows."""
    from controller.rules.cards import parse_cards

    decks = deck_size // 52 if deck_size > 53 and deck_size % 52 == 0 else 0
    if decks:
        return _stacked_shoe(stacks, decks)
    cards = [c for s in stacks for c in parse_cards(s)]
    if len(set(cards)) != len(cards):
        raise ScenarioError(f"scripted deck repeats a card: {stacks}")
    return cards + [c for c in range(deck_size) if c not in cards]


def _stacked_shoe(stacks: Sequence[str], decks: int) -> list[int]:
    """A scripted shoe of ``decks`` decks (no joker): each card at most once per deck."""
    from collections import Counter

    from controller.rules.cards import parse_cards

    cards = [c for s in stacks for c in parse_cards(s, allow_duplicates=True, allow_joker=False)]
    left = Counter({c: decks for c in range(52)})
    left.subtract(cards)
    if any(n < 0 for n in left.values()):
        raise ScenarioError(f"scripted deck has a card more than {decks} times: {stacks}")
    return cards + [c for c in range(52) for _ in range(left[c])]


def stacked_tiles(stacks: Sequence[str]) -> list[int]:
    """A scripted set of Pai Gow tiles (58 Pa. Code 621a): the eight stacks of four, as tile
    text (``"6-6 1-2 2-4 5-5"``, top tile first) in dispensing order -> the shoe's card
    bytes (tile ids 0..31, identical tiles taking their ids in turn)."""
    from controller.rules.tiles import FULL_SET, TileError, parse_tiles

    free = list(range(len(FULL_SET)))
    out: list[int] = []
    try:
        for s in stacks:
            for k in parse_tiles(s, count=4):
                i = next((i for i in free if FULL_SET[i] == k), None)
                if i is None:
                    raise ScenarioError(f"scripted tiles use more copies of a tile than the set holds: {s!r}")
                free.remove(i)
                out.append(i)
    except TileError as e:
        raise ScenarioError(f"scripted tiles: {e}") from None
    return out + free


def run_scenario(scn: Scenario, state_dir: Path | None = None) -> Result:
    t0 = time.monotonic()
    if state_dir is None:
        with tempfile.TemporaryDirectory(prefix="tablectl-hil-") as d:
            failures = Runner(scn, Path(d) / "state").run()
    else:
        failures = Runner(scn, state_dir).run()
    return Result(scn, not failures, failures, time.monotonic() - t0)


def _plug(sim: Any, key: str, val: Any) -> None:
    """``unplug: true`` / ``replug: false`` unplug the device; ``unplug: false`` / ``replug: true`` plug it back."""
    if bool(val) == (key == "replug"):
        sim.replug()
    else:
        sim.unplug()


def _lid(sim: Any, key: str, val: Any) -> None:
    sim.set_lid(val == "open")


def _port_fault(sim: Any, key: str, val: Any) -> None:
    setattr(sim.port, key, val)


def _sim_setting(sim: Any, key: str, val: Any) -> None:
    setattr(sim, key, val)


#: the faults any simulated device takes, by key (the device's own fault fields besides)
_DEVICE_ACTIONS: dict[str, Callable[[Any, str, Any], None]] = {
    "unplug": _plug,
    "replug": _plug,
    "lid": _lid,
    **dict.fromkeys(("mute", "corrupt_next", "corrupt_all", "nak_all"), _port_fault),
    **dict.fromkeys(("silent", "reply_delay_s"), _sim_setting),
}


def run_paths(paths: Sequence[str | Path], out: TextIO, *, verbose: bool = False) -> int:
    """Run the scenarios found under ``paths``; print a pass/fail table; 0 if all pass."""
    scenarios = _load_all(paths, out)
    if not scenarios:
        return 2
    results = []
    w = max(len(s.name) for s in scenarios)
    sw = min(40, max(len(s.section) for s in scenarios))
    print(f"{'result':6}  {'scenario':{w}}  {'section':{sw}}  {'time':>6}", file=out)
    for scn in scenarios:
        r = run_scenario(scn)
        results.append(r)
        print(
            f"{'PASS' if r.passed else 'FAIL':6}  {scn.name:{w}}  {fit(scn.section, sw):{sw}}  {r.seconds:5.1f}s",
            file=out,
            flush=True,
        )
        _print_failures(r, out, verbose)
    failed = sum(1 for r in results if not r.passed)
    print(f"{len(results)} scenario(s): {len(results) - failed} passed, {failed} failed", file=out)
    return 1 if failed else 0


def fit(text: str, width: int) -> str:
    """``text`` in ``width`` characters: whole citations (or words) only, ``…`` for the rest —
    never a section number cut mid-way (``§ 670a.11(d)(2)`` read as ``§ 670a.1``)."""
    if len(text) <= width:
        return text
    for sep in ("; ", ", ", " "):
        cut = text.rfind(sep, 0, width - 1 + len(sep))  # what is kept, and the ellipsis, fit
        if cut > 0:
            return text[:cut].rstrip(" ,;§") + "…"
    return text[: width - 1] + "…"


def _load_all(paths: Sequence[str | Path], out: TextIO) -> list[Scenario]:
    """The scenarios under ``paths``; none (said why) when one is not valid or none is found."""
    try:
        scenarios = [load(f) for f in discover(paths)]
    except ScenarioError as e:
        print(f"tablectl hil run: {e}", file=out)
        return []
    if not scenarios:
        print("tablectl hil run: no scenarios found", file=out)
    return scenarios


def _print_failures(r: Result, out: TextIO, verbose: bool) -> None:
    """A failed scenario's failures, indented: their first lines (every line when ``verbose``)."""
    for f in [] if r.passed else r.failures:
        for line in f.splitlines() if verbose else f.splitlines()[:1]:
            print(f"        {line}", file=out)
