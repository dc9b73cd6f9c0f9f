"""``tablectl bench crash --kills N``: crash consistency.

A child process (hil/crashchild.py) plays rounds on the HIL rig with a
persistent ledger; it is killed with SIGKILL at a random instant — and, with
``--commit-kill``, kills itself inside ledger transactions just before COMMIT (or while a
one-statement append runs) —
then restarted on the same state directory, N times.  A last child recovers and
plays a round to the end.  Then the ledger is checked:

* ``lost``: things the table showed or acknowledged (witness file, written only
  from durable callbacks) that the ledger does not hold;
* ``doubled``: anything recorded twice — two lock-outs or two closings of a round,
  a seat's wager accepted, credited, returned or a hit paid twice;
* ``meters_reconcile``: the hash chain verifies, the stored meters equal the
  meters recomputed from the events, and each meter equals seed + reseeds +
  increments − payouts − voids exactly;
* ``audit``: ``tablectl audit`` on the final ledger (every MAC, checkpoint, meter
  and the witness of the head, controller/audit.py) exits 0.

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
from pathlib import Path

NAME = "crash"
HELP = "SIGKILL the controller at random instants N times; count lost/doubled events, reconcile meters"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kills", type=int, default=25)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-wait", type=float, default=1.5, help="longest run before a kill, seconds (default 1.5)")
    p.add_argument(
        "--commit-kill",
        type=float,
        default=0.02,
        help="probability that the child kills itself inside a transaction, per commit (default 0.02)",
    )
    p.add_argument("--state-dir", type=Path, help="keep the ledger here (default: a temporary directory)")


def _child(state: Path, witness: Path, seed: int, commit_kill: float, rounds: int | None = None) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "hil.crashchild",
        "--state-dir",
        str(state),
        "--witness",
        str(witness),
        "--seed",
        str(seed),
        "--commit-kill",
        str(commit_kill),
    ]
    if rounds is not None:
        cmd += ["--rounds", str(rounds)]
    # the final run's errors are reported; a killed child's stderr is of no interest
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, text=True, stderr=subprocess.STDOUT if rounds is not None else subprocess.DEVNULL
    )


def check(state: Path, witness: Path) -> dict[str, object]:
    from controller.ledger import Ledger
    from controller.service import LEDGER_FILE
    from hil.rig import rig_ledger_key

    led = Ledger.open_readonly(state / LEDGER_FILE, "check", key=rig_ledger_key(state))
    try:
        problems = led.verify()
        events = list(led.events())
        meters = led.recompute_meters()
    finally:
        led.close()
    per_round: dict[int, Counter] = {}
    keys: Counter = Counter()
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
    lost = 0
    kinds_by_round = {rnd: c for rnd, c in per_round.items()}
    paid = {(e.round, e.data.get("seat"), e.data.get("cents")) for e in events if e.kind == "meter.payout"}
    witnessed = 0
    if witness.exists():
        for line in witness.read_text().splitlines():
            try:
                w = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by the kill was never complete, so never shown
            witnessed += 1
            c = kinds_by_round.get(w["round"], Counter())
            if w["what"] == "count_shown":
                lost += c["lockout"] == 0
            elif w["what"] == "round":
                lost += c["round.complete"] == 0
            elif w["what"] == "void":
                lost += c["round.void"] == 0
            elif w["what"] == "hit_paid":
                lost += (w["round"], w["seat"], w["cents"]) not in paid
    exact = all(m.value == m.expected_value() and 0 <= m.remainder < 1 for m in meters.values())
    return {
        "events": len(events),
        "rounds": max(per_round) if per_round else 0,
        "witnessed": witnessed,
        "lost": lost,
        "doubled": doubled,
        "chain_problems": len(problems),
        "meters_reconcile": "yes" if not problems and exact else "no",
        "meter_cents": {k: m.cents for k, m in meters.items()},
        "hits": sum(m.hits for m in meters.values()),
        "voids": sum(c["round.void"] for c in per_round.values()),
    }


def _audit(state: Path) -> tuple[int, str]:
    """``tablectl audit`` on the final ledger, as a technician would run it."""
    from hil.rig import rig_key_file

    cmd = [sys.executable, "-m", "controller.cli", "audit", "--state-dir", str(state)]
    cmd += ["--key-file", str(rig_key_file(state))]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, " | ".join((p.stdout + p.stderr).strip().splitlines()[-3:])


def run(args: argparse.Namespace, emit) -> int:
    rng = random.Random(args.seed)
    tmp = None
    state = args.state_dir
    if state is None:
        tmp = tempfile.TemporaryDirectory(prefix="tablectl-crash-")
        state = Path(tmp.name) / "state"  # the rig's key and the ledger's witness go beside it
    state.mkdir(parents=True, exist_ok=True)
    witness = state / "witness.jsonl"
    t0 = time.monotonic()
    kills = 0
    self_kills = 0
    try:
        for i in range(args.kills):
            child = _child(state, witness, args.seed * 100_003 + i, args.commit_kill)
            line = child.stdout.readline() if child.stdout else ""
            if line.strip() == "ready":
                time.sleep(rng.uniform(0.0, args.max_wait))
            if child.poll() is None:
                child.send_signal(signal.SIGKILL)
                kills += 1
            elif child.returncode == -signal.SIGKILL:
                self_kills += 1  # killed itself inside a transaction
                kills += 1
            child.wait()
            if child.returncode not in (-signal.SIGKILL, 0):
                emit("child_failed", f"run {i} exited {child.returncode}")
                return 2
        final = _child(state, witness, args.seed * 100_003 + args.kills, 0.0, rounds=2)
        out, _ = final.communicate(timeout=120)
        emit("final_run_exit", final.returncode)
        if final.returncode != 0:
            emit("final_run_output", " | ".join(out.strip().splitlines()[-3:]))
        res = check(state, witness)
        audit = _audit(state)
    finally:
        if tmp is not None:
            tmp.cleanup()
    emit("kills", kills)
    emit("kills_inside_transaction", self_kills)
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
    emit("elapsed_s", f"{time.monotonic() - t0:.1f}")
    ok = (
        res["lost"] == 0
        and res["doubled"] == 0
        and res["meters_reconcile"] == "yes"
        and final.returncode == 0
        and audit[0] == 0
    )
    return 0 if ok else 1
