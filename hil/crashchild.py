"""The child process of ``tablectl bench crash``: plays rounds on the HIL rig with
a persistent state directory until it is killed (or has played ``--rounds``).

It writes a *witness* file: one fsynced JSON line for everything the table has
shown or acknowledged (the accepted count, a completed or voided round, a paid
hit) — each written from the table's "durable" callbacks, i.e. only after the
ledger holds it.  The parent compares witness and ledger: anything witnessed
but missing from the ledger was *lost*.

To kill mid-transaction as well as at random instants, ``--commit-kill P`` makes
the child SIGKILL itself, with probability P, inside a ledger transaction just
before its COMMIT — or, for an append that is one ``INSERT`` in autocommit mode (its
own transaction), from another thread a few hundred microseconds after the
statement starts, while SQLite writes and syncs it (a wrapper around the
connection installed here, in the child only; the product code has no such hook).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from controller.rules.cards import parse_cards


class _KillingCursor:
    def __init__(self, cur: Any, rng: random.Random, p: float):
        self._cur, self._rng, self._p = cur, rng, p

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT" and self._rng.random() < self._p:
            os.kill(os.getpid(), signal.SIGKILL)  # the transaction is open and unfinished
        if (
            sql.startswith("INSERT INTO events")
            and not self._cur.connection.in_transaction
            and self._rng.random() < self._p
        ):  # one statement, its own transaction: killed while it runs
            threading.Timer(self._rng.uniform(0.0, 0.0006), os.kill, (os.getpid(), signal.SIGKILL)).start()
        return self._cur.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


class _KillingConnection:
    def __init__(self, db: Any, rng: random.Random, p: float):
        self._db, self._rng, self._p = db, rng, p

    def cursor(self) -> _KillingCursor:
        return _KillingCursor(self._db.cursor(), self._rng, self._p)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def _rich_deck(rng: random.Random) -> list[int]:
    """A shuffled deck, sometimes with a progressive hand planted in one stack."""
    deck = list(range(53))
    rng.shuffle(deck)
    roll = rng.random()
    plant = "As Ks Qs Js Ts" if roll < 0.25 else "Ac Ad Ah As Jk" if roll < 0.35 else None
    if plant:
        cards = list(parse_cards(plant))
        rest = [c for c in deck if c not in cards]
        k = rng.randrange(7)
        deck = rest[: 6 * k] + cards + rest[6 * k :]
    return deck


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hil.crashchild")
    ap.add_argument("--state-dir", type=Path, required=True)
    ap.add_argument("--witness", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=10**9)
    ap.add_argument("--commit-kill", type=float, default=0.0)
    ap.add_argument("--speed", type=float, default=100.0)
    args = ap.parse_args(argv)

    from controller.log import configure
    from hil.people import People
    from hil.rig import Rig

    configure(stream=sys.stderr, level="critical")
    rng = random.Random(args.seed)
    rig = Rig(args.state_dir, seed=args.seed, speed=args.speed)
    for _ in range(200):
        rig.shoe.stacked_decks.append(_rich_deck(rng))
    wfd = os.open(args.witness, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def witness(what: str, data: dict[str, Any]) -> None:
        if what not in ("count_shown", "round", "void", "hit_paid"):
            return
        rec: dict[str, Any] = {"what": what, "round": rig.table.round_no}
        if what == "count_shown":
            rec["count"] = data["count"]
        elif what == "hit_paid":
            rec.update(seat=data["seat"], cents=data["cents"], order=data["order"])
        os.write(wfd, (json.dumps(rec) + "\n").encode())
        os.fsync(wfd)

    rig.start()
    if args.commit_kill:
        led = rig.service.ledger
        led.db = _KillingConnection(led.db, random.Random(args.seed ^ 0x5EED), args.commit_kill)
    rig.table.listeners.append(witness)
    print("ready", flush=True)
    people = People(rig, random.Random(f"{args.seed}/people"))
    status = 0
    try:
        for _ in range(args.rounds):
            people.play_round()
    except RuntimeError as e:  # a tilt: report it to the parent
        print(f"tilt: {e}", flush=True)
        status = 3
    finally:
        rig.stop()
    return status


if __name__ == "__main__":
    sys.exit(main())
