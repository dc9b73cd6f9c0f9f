"""The child process of ``tablectl bench crash``: plays rounds on the HIL rig with
a persistent state directory until it is killed (or has played ``--rounds``).

It writes a *witness* file: one fsynced JSON line for everything the table has
shown or acknowledged (the accepted count, a completed or voided round, a paid
hit) — each written from the table's "durable" callbacks, i.e. only after the
ledger holds it.  The parent compares witness and ledger: anything witnessed
but missing from the ledger was *lost*.

Besides being killed from outside (the parent's SIGKILL at a random instant),
``--kill-in commit|checkpoint`` makes the child SIGKILL itself at a place an outside
kill rarely hits: inside a ledger transaction, or inside a WAL checkpoint, the first
one after ``--arm-after`` seconds (:class:`_Trap`: a wrapper around the connection
installed here, in the child only; the product code has no such hook).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from controller.rules.cards import parse_cards


class _Trap:
    """Where the child kills itself: ``commit`` — inside the next ledger transaction after it is
    armed, just before its COMMIT (or, for an append that is one ``INSERT`` in autocommit mode,
    its own transaction, from another thread a few hundred microseconds after the statement
    starts, while SQLite writes and syncs it); ``checkpoint`` — inside the next WAL checkpoint
    (``PRAGMA wal_checkpoint``: the WAL synced, its pages copied into the database file, that
    synced), a random instant up to 2 ms into it.  ``armed`` is set after a random delay."""

    def __init__(self, where: str, rng: random.Random):
        self.where, self.rng = where, rng
        self.armed = False

    def before(self, sql: str, in_transaction: bool) -> None:
        if not self.armed:
            return
        if self.where == "commit" and sql == "COMMIT":
            os.kill(os.getpid(), signal.SIGKILL)  # the transaction is open and unfinished
        elif self.where == "commit" and sql.startswith("INSERT INTO events") and not in_transaction:
            self._kill_within(0.0006)  # one statement, its own transaction: killed while it runs
        elif self.where == "checkpoint" and sql.startswith("PRAGMA wal_checkpoint"):
            self._kill_within(0.002)

    def _kill_within(self, seconds: float) -> None:
        threading.Timer(self.rng.uniform(0.0, seconds), os.kill, (os.getpid(), signal.SIGKILL)).start()


class _KillingCursor:
    def __init__(self, cur: Any, trap: _Trap):
        self._cur, self._trap = cur, trap

    def execute(self, sql: str, *args: Any) -> Any:
        self._trap.before(sql, self._cur.connection.in_transaction)
        return self._cur.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


class _KillingConnection:
    def __init__(self, db: Any, trap: _Trap):
        self._db, self._trap = db, trap

    def cursor(self) -> _KillingCursor:
        return _KillingCursor(self._db.cursor(), self._trap)

    def execute(self, sql: str, *args: Any) -> Any:
        self._trap.before(sql, self._db.in_transaction)
        return self._db.execute(sql, *args)

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
    ap.add_argument("--kill-in", choices=("none", "commit", "checkpoint"), default="none")
    ap.add_argument("--arm-after", type=float, default=0.0, help="seconds after ready before --kill-in is armed")
    ap.add_argument("--speed", type=float, default=100.0)
    args = ap.parse_args(argv)

    from controller.core.log import configure
    from hil.people import People
    from hil.rig import Rig

    configure(stream=sys.stderr, level="critical")
    rng = random.Random(args.seed)
    rig = Rig(args.state_dir, seed=args.seed, speed=args.speed)
    for _ in range(200):
        rig.shoe.stacked_decks.append(_rich_deck(rng))
    wfd = os.open(args.witness, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def witness(what: str, data: Mapping[str, Any]) -> None:
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
    if args.kill_in != "none":
        led = rig.service.ledger
        if led is None:  # the rig always opens one; without it there is no commit to kill in
            rig.stop()
            raise SystemExit("--kill-in: the table started without a ledger")
        trap = _Trap(args.kill_in, random.Random(args.seed ^ 0x5EED))
        # the proxy forwards everything else to the connection it wraps (__getattr__)
        led.db = cast(sqlite3.Connection, _KillingConnection(led.db, trap))
        threading.Timer(args.arm_after, setattr, (trap, "armed", True)).start()
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
