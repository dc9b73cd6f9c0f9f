"""``tablectl bench crash --kills N``: crash consistency.

A child process (hil/crashchild.py) plays rounds on the HIL rig with a
persistent ledger; it is killed with SIGKILL, then restarted on the same state
directory, N times.  Each run is one kind of kill, drawn by ``--mix`` (default
``external=0.65,startup=0.1,commit=0.15,checkpoint=0.1``):

* ``external`` — the parent's SIGKILL at a random instant while it plays (up to ``--max-wait``);
* ``startup`` — the parent's SIGKILL at a random instant while it starts (within ``--startup-window``
  of spawning it: opening and checking the ledger, recovering the round in play, the lock-out
  journal, the first records);
* ``commit`` — the child kills itself inside a ledger transaction, just before its COMMIT (or
  while a one-statement append runs), the first one after a random delay;
* ``checkpoint`` — the child kills itself inside a WAL checkpoint, the first one after a random
  delay.

A run whose own kill did not come in time is killed from outside and counted as ``external``;
the figures say how many of each happened.  A last child recovers and plays a round to the end.
Then the ledger is checked:

* ``lost``: things the table showed or acknowledged (witness file, written only
  from durable callbacks) that the ledger does not hold;
* ``doubled``: anything recorded twice — two lock-outs or two closings of a round,
  a seat's wager accepted, credited, returned or a hit paid twice;
* ``meters_reconcile``: the hash chain verifies, the stored meters equal the
  meters recomputed from the events, and each meter equals seed + reseeds +
  increments − payouts − voids exactly;
* ``audit``: ``tablectl audit`` on the final ledger (every MAC, checkpoint, meter
  and the witness of the head, controller/books/audit.py) exits 0.

Exit status 0 only when lost = 0, doubled = 0, the meters reconcile and the audit passes.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench import Emit

NAME = "crash"
HELP = "SIGKILL the controller at random instants N times; count lost/doubled events, reconcile meters"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kills", type=int, default=25)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-wait", type=float, default=1.5, help="longest run before a kill, seconds (default 1.5)")
    p.add_argument(
        "--mix",
        default="external=0.65,startup=0.1,commit=0.15,checkpoint=0.1",
        help="kinds of kill and their shares (external, startup, commit, checkpoint)",
    )
    p.add_argument(
        "--startup-window", type=float, default=1.0, help="with a startup kill: within this long of the spawn (s)"
    )
    p.add_argument("--state-dir", type=Path, help="keep the ledger here (default: a temporary directory)")


KINDS = ("external", "startup", "commit", "checkpoint")


def parse_mix(text: str) -> dict[str, float]:
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, _, share = part.partition("=")
        if name.strip() not in KINDS:
            raise ValueError(f"--mix: unknown kind of kill {name!r} (known: {', '.join(KINDS)})")
        mix[name.strip()] = float(share)
    if not mix or sum(mix.values()) <= 0:
        raise ValueError("--mix: no kill has a share")
    return mix


def _child(
    state: Path, witness: Path, seed: int, kill_in: str = "none", arm_after: float = 0.0, rounds: int | None = None
) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "hil.crashchild", "--state-dir", str(state), "--witness", str(witness)]
    cmd += ["--seed", str(seed), "--kill-in", kill_in, "--arm-after", f"{arm_after:.4f}"]
    if rounds is not None:
        cmd += ["--rounds", str(rounds)]
    # the final run's errors are reported; a killed child's stderr is of no interest
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, text=True, stderr=subprocess.STDOUT if rounds is not None else subprocess.DEVNULL
    )


def _read_ledger(state: Path) -> tuple[list[str], list[Any], dict[str, Any]]:
    """The ledger's chain problems, its events and its meters recomputed from them."""
    from controller.books.ledger import Ledger
    from controller.daemon.service import LEDGER_FILE
    from hil.rig import rig_ledger_key

    led = Ledger.open_readonly(state / LEDGER_FILE, "check", key=rig_ledger_key(state))
    try:
        return led.verify(), list(led.events()), led.recompute_meters()
    finally:
        led.close()


def check(state: Path, witness: Path) -> dict[str, object]:
    problems, events, meters = _read_ledger(state)
    per_round, doubled = _doubled(events)
    paid = {(e.round, e.data.get("seat"), e.data.get("cents")) for e in events if e.kind == "meter.payout"}
    witnessed, lost = _lost(witness, per_round, paid)
    return {
        "events": len(events),
        "rounds": max(per_round) if per_round else 0,
        "witnessed": witnessed,
        "lost": lost,
        "doubled": doubled,
        "chain_problems": len(problems),
        "meters_reconcile": "yes" if not problems and _exact(meters) else "no",
        "meter_cents": {k: m.cents for k, m in meters.items()},
        "hits": sum(m.hits for m in meters.values()),
        "voids": sum(c["round.void"] for c in per_round.values()),
    }


def _exact(meters: dict[str, Any]) -> bool:
    """Every meter is its seed plus increments less payouts, its hidden remainder under a cent."""
    return all(m.value == m.expected_value() and 0 <= m.remainder < 1 for m in meters.values())


def _doubled(events: list[Any]) -> tuple[dict[int, Counter[str]], int]:
    """The kinds of event per round, and how many were recorded twice (a wager, an increment, a
    return, a void or a payout twice; a lock-out, a count, an opening or a closing twice)."""
    per_round: dict[int, Counter[str]] = {}
    keys: Counter[tuple[Any, ...]] = Counter()
    for e in events:
        c = per_round.setdefault(e.round, Counter())
        c[e.kind] += 1
        seat = e.data.get("seat")
        if e.kind in ("wager.accepted", "meter.increment", "wager.returned", "meter.void"):
            keys[(e.round, e.kind, seat, e.data.get("spot", ""))] += 1
        elif e.kind == "meter.payout":
            keys[(e.round, e.kind, seat, e.data.get("hand"))] += 1
    doubled = sum(n - 1 for n in keys.values() if n > 1)
    for rnd, c in per_round.items():
        if rnd == 0:
            continue
        doubled += max(0, c["lockout"] - 1) + max(0, c["count.confirmed"] - 1) + max(0, c["round.open"] - 1)
        doubled += max(0, c["round.complete"] + c["round.void"] - 1)
    return per_round, doubled


#: what the witness saw shown -> the event kind that must be in the ledger for it
_WITNESSED_KIND = {"count_shown": "lockout", "round": "round.complete", "void": "round.void"}


def _lost(witness: Path, per_round: dict[int, Counter[str]], paid: set[tuple[Any, Any, Any]]) -> tuple[int, int]:
    """How many things the witness saw shown, and how many of them the ledger does not hold."""
    witnessed = lost = 0
    if not witness.exists():
        return witnessed, lost
    for line in witness.read_text().splitlines():
        try:
            w = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by the kill was never complete, so never shown
        witnessed += 1
        c = per_round.get(w["round"], Counter[str]())
        kind = _WITNESSED_KIND.get(w["what"])
        if kind is not None:
            lost += c[kind] == 0
        elif w["what"] == "hit_paid":
            lost += (w["round"], w["seat"], w["cents"]) not in paid
    return witnessed, lost


def _audit(state: Path) -> tuple[int, str]:
    """``tablectl audit`` on the final ledger, as a technician would run it."""
    from hil.rig import rig_key_file

    cmd = [sys.executable, "-m", "controller.cli", "audit", "--state-dir", str(state)]
    cmd += ["--key-file", str(rig_key_file(state))]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, " | ".join((p.stdout + p.stderr).strip().splitlines()[-3:])


def _one_kill(args: argparse.Namespace, rng: random.Random, state: Path, witness: Path, seed: int) -> str:
    """Run one child and kill it (see the module docstring); the kind of kill that happened,
    or "failed: ..." when the child ended otherwise."""
    kind: str = rng.choices(list(args.mix), weights=list(args.mix.values()))[0]
    kill_in = kind if kind in ("commit", "checkpoint") else "none"
    child = _child(state, witness, seed, kill_in, rng.uniform(0.0, args.max_wait))
    if kind == "startup":
        time.sleep(rng.uniform(0.0, args.startup_window))
    else:
        line = child.stdout.readline() if child.stdout else ""
        if line.strip() == "ready":
            time.sleep(rng.uniform(0.0, args.max_wait) if kind == "external" else args.max_wait * 2)
    if child.poll() is None:
        child.send_signal(signal.SIGKILL)
        child.wait()
        return "startup" if kind == "startup" else "external"
    if child.returncode == -signal.SIGKILL:
        return kind  # killed itself where it was told to
    return f"failed: exited {child.returncode}"


def run(args: argparse.Namespace, emit: Emit) -> int:
    rng = random.Random(args.seed)
    try:
        args.mix = parse_mix(args.mix) if isinstance(args.mix, str) else args.mix
    except ValueError as e:
        emit("error", str(e))
        return 2
    tmp = None
    state = args.state_dir
    if state is None:
        tmp = tempfile.TemporaryDirectory(prefix="tablectl-crash-")
        state = Path(tmp.name) / "state"  # the rig's key and the ledger's witness go beside it
    state.mkdir(parents=True, exist_ok=True)
    witness = state / "witness.jsonl"
    t0 = time.monotonic()
    try:
        kinds = _kills(args, rng, state, witness, emit)
        if kinds is None:
            return 2
        final_rc = _final_run(args, state, witness, emit)
        res = check(state, witness)
        audit = _audit(state)
    finally:
        if tmp is not None:
            tmp.cleanup()
    _emit_results(emit, kinds, res, audit)
    emit("elapsed_s", f"{time.monotonic() - t0:.1f}")
    return 0 if _sound(res) and final_rc == 0 and audit[0] == 0 else 1


def _sound(res: Mapping[str, object]) -> bool:
    """No round lost or doubled, and the meters reconcile."""
    return bool(res["lost"] == 0 and res["doubled"] == 0 and res["meters_reconcile"] == "yes")


def _kills(args: argparse.Namespace, rng: random.Random, state: Path, witness: Path, emit: Emit) -> Counter[str] | None:
    """``--kills`` runs, each killed at a random instant: how many of each kind; None (said) when a
    run failed on its own."""
    kinds: Counter[str] = Counter()
    for i in range(args.kills):
        what = _one_kill(args, rng, state, witness, args.seed * 100_003 + i)
        if what.startswith("failed"):
            emit("child_failed", f"run {i} {what}")
            return None
        kinds[what] += 1
    return kinds


def _final_run(args: argparse.Namespace, state: Path, witness: Path, emit: Emit) -> int:
    """A last run left to finish (its recovery of the last kill, two rounds): its exit code."""
    final = _child(state, witness, args.seed * 100_003 + args.kills, rounds=2)
    out, _ = final.communicate(timeout=120)
    emit("final_run_exit", final.returncode)
    if final.returncode != 0:
        emit("final_run_output", " | ".join(out.strip().splitlines()[-3:]))
    return int(final.returncode)


def _emit_results(
    emit: Callable[[str, object], None], kinds: Counter[str], res: dict[str, Any], audit: tuple[int, str]
) -> None:
    """The kills by kind, what the ledger holds against what was shown, the audit and the meters."""
    kills = sum(kinds.values())
    emit("kills", kills)
    for kind in KINDS:
        emit(f"kills_{kind}", kinds[kind])
    emit("kills_external_share", f"{(kinds['external'] + kinds['startup']) / max(1, kills):.2f}")
    for k in ("rounds", "events", "witnessed", "hits", "voids", "chain_problems"):
        emit(k, res[k])
    emit("lost", res["lost"])
    emit("doubled", res["doubled"])
    emit("meters_reconcile", res["meters_reconcile"])
    emit("audit_exit", audit[0])
    if audit[0] != 0:
        emit("audit_output", audit[1])
    for level, cents in res["meter_cents"].items():
        emit(f"meter_{level}_cents", cents)
