"""``tablectl sim``: the controller playing rounds against the HIL simulators.

One readable line per round (printed when the round's closing record is
durable) and a closing summary.  Every choice comes from the seed, so the same
seed prints the same output.
"""

from __future__ import annotations

import random
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from controller.meters import format_cents
from controller.service import LEDGER_FILE
from hil.balance import check as check_balance
from hil.people import People
from hil.rig import Rig


@dataclass
class Summary:
    rounds: int = 0
    voids: int = 0
    accepted: int = 0
    progressive: int = 0
    rejected: int = 0
    hits: int = 0
    paid_cents: int = 0
    meter_start: int | None = None
    meter_end: int | None = None
    lines: list[str] = field(default_factory=list)


SHORT = {"progressive": "prog", "double-down": "dd", "insurance": "ins"}


def _money(c: int) -> str:
    return ("+" if c > 0 else "") + format_cents(c)


class Reporter:
    def __init__(self, out: TextIO, describe: Any = None):
        #: the game procedure's one-line summary of a round's hands (Procedure.describe), if any
        self.describe = describe
        self.out = out
        self.s = Summary()
        self._meter_open: int | None = None

    def __call__(self, what: str, data: Mapping[str, Any]) -> None:
        if what == "open":
            return
        if what == "round":
            self._round(data)
        elif what == "void":
            self._void(data)

    def _meter(self, data: Mapping[str, Any]) -> int | None:
        m = data.get("meter")
        return m.cents if m is not None else None

    def _round(self, data: Mapping[str, Any]) -> None:
        rnd = data["data"]
        s = self.s
        s.rounds += 1
        s.accepted += len(rnd.wagers)
        s.progressive += len(rnd.accepted)
        s.rejected += len(rnd.rejected)
        per_seat: dict[int, list[str]] = {}
        for r in rnd.results:
            label = SHORT.get(r.wager, r.wager)
            if r.is_meter_pay:
                paid = next((p["cents"] for p in rnd.payouts if p["seat"] == r.seat and p["hand"] == r.hand), 0)
                text = f"{label} {r.hand} HIT {r.pays} = {format_cents(paid)}"
                s.hits += 1
                s.paid_cents += paid
            elif r.wager.endswith("-envy"):
                text = f"envy({r.hand}) {_money(r.net)}"
            elif r.wager == "progressive":
                text = f"{label} {r.hand or r.outcome} {_money(r.net)}"  # a losing hand may have no name
            else:
                text = f"{label} {r.outcome} {_money(r.net)}"
            if r.amount + r.net > 0:
                s.paid_cents += r.amount + r.net
            per_seat.setdefault(r.seat, []).append(text)
        parts = [f"s{seat} " + ", ".join(texts) for seat, texts in per_seat.items()]
        d = rnd.dice
        dice = f" dice {d[0]}-{d[1]}-{d[2]}={sum(d)}" if d else ""
        rng = f" rng {rnd.rng_value}" if rnd.rng_value is not None else ""
        start = f" start {rnd.start}" if rnd.start is not None else ""
        meter = self._meter(data)
        if s.meter_start is None:
            s.meter_start = meter
        s.meter_end = meter
        seats = ",".join(str(x) for x in sorted({seat for (seat, _w) in rnd.wagers})) or "none"
        late = f" late-rejected {','.join(map(str, rnd.rejected))}" if rnd.rejected else ""
        reshake = f" no-roll x{rnd.no_rolls}" if rnd.no_rolls else ""
        shown = f" | meter {format_cents(meter)}" if meter is not None else ""
        desc = self.describe(rnd) if self.describe is not None else ""
        hands = f" | {desc}" if desc else ""
        line = (
            f"round {rnd.number:>3}: seats [{seats}] wagers {len(rnd.wagers)}{late}{dice}{rng}{reshake}{start} | "
            + ("; ".join(parts) if parts else "no wagers")
            + hands
            + shown
        )
        print(line, file=self.out, flush=True)

    def _void(self, data: Mapping[str, Any]) -> None:
        rnd = data["data"]
        self.s.voids += 1
        self.s.rounds += 1
        print(
            f"round {rnd.number:>3}: VOID ({data['reason']}); {len(rnd.unsettled())} wager(s) returned",
            file=self.out,
            flush=True,
        )


def run_sim(
    *,
    game: str,
    rounds: int,
    seed: int,
    realtime: bool = False,
    speed: float = 50.0,
    state_dir: Path | None = None,
    out: TextIO = sys.stdout,
    console_pty: bool = False,
    idle_skip: bool = True,
) -> int:
    tmp = None
    if state_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="tablectl-sim-")
        state_dir = Path(tmp.name) / "state"  # the rig's throwaway key and the witness go beside it
    rig = Rig(
        Path(state_dir),
        profile=game,
        seed=seed,
        speed=1.0 if realtime else speed,
        idle_skip=idle_skip and not realtime,  # at human pace the waits are the point
    )
    rep = Reporter(out, lambda rnd: rig.table.proc.describe(rnd))
    print(
        f"tablectl sim: game {game}, {rounds} rounds, seed {seed}, "
        f"{'real time' if realtime else f'clock x{rig.clock.speed:g}'}",
        file=out,
        flush=True,
    )
    # --console-pty keeps running until Ctrl-C (or SIGTERM): from here on those only ask for
    # a stop, they never raise, so the rig is stopped and the summary printed on every path
    stop = StopRequest().install() if console_pty else None
    try:
        return _play(rig, rep, people_seed=seed, rounds=rounds, state_dir=Path(state_dir), out=out, stop=stop)
    except TableClosed as e:
        print(f"tablectl sim: {e}", file=sys.stderr)
        if tmp is None:
            print(f"  `tablectl audit --state-dir {state_dir}` names the problem", file=sys.stderr)
        return 1
    finally:
        if stop is not None:
            stop.restore()
        if tmp is not None:
            tmp.cleanup()


class TableClosed(RuntimeError):
    """The table latched a tilt while starting (its self-check): no round can be played."""


def _wait_open(rig: Rig) -> int | None:
    """The meter when the table opens for wagers; :class:`TableClosed` when it latched a tilt at
    start instead (a damaged ledger in ``--state-dir``, a witness it does not reach...)."""

    def opened_or_latched(s: Mapping[str, Any]) -> bool:
        return s.get("state") == "open_for_wagers" or "self-check" in (s.get("tilts") or {})

    try:
        s = rig.table.wait_for(opened_or_latched, 30.0)
    except TimeoutError:
        s = rig.table.status
        raise TableClosed(f"the table did not open for wagers in 30 s (state {s.get('state')})") from None
    if s.get("state") != "open_for_wagers":
        tilts = "; ".join(f"{k}: {v}" for k, v in (s.get("tilts") or {}).items())
        raise TableClosed(f"the table did not open: it is in a latched tilt ({tilts})")
    m = s.get("meter_cents")
    return int(m) if m is not None else None


def _play(rig: Rig, rep: Reporter, *, people_seed: int, rounds: int, state_dir: Path, out: TextIO, stop: Any) -> int:
    """Start the rig, play, stop it (on every path), check the balance, print the summary;
    ``stop`` (a :class:`StopRequest`) only with ``--console-pty``, which keeps the console open."""
    rig.start()
    try:
        if stop is not None:
            _open_console(rig, state_dir, out)
        rig.table.listeners.append(rep)
        start_meter = _wait_open(rig)
        people = People(rig, random.Random(f"{people_seed}/people"))
        for _ in range(rounds):
            if stop is not None and stop.requested:
                break  # asked to stop: after the round in play, never in the middle of one
            people.play_round()
        rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 30.0)
        end_meter = rig.table.status.get("meter_cents")
        if stop is not None and not stop.requested:
            _hold_console(out, stop)
    finally:
        rig.stop()
    balance = check_balance(state_dir / LEDGER_FILE, people.placed)
    return _summary(out, rep.s, start_meter, end_meter, balance)


def _summary(out: TextIO, s: Summary, start_meter: int | None, end_meter: int | None, balance: Any) -> int:
    print("summary:", file=out)
    print(f"  rounds: {s.rounds} ({s.voids} void)", file=out)
    print(f"  accepted_wagers: {s.accepted}", file=out)
    print(f"  rejected_late: {s.rejected}", file=out)
    print(f"  meter_start: {format_cents(start_meter) if start_meter is not None else '-'}", file=out)
    print(f"  meter_end: {format_cents(end_meter) if end_meter is not None else '-'}", file=out)
    print(f"  progressive_wagers: {s.progressive}", file=out)
    print(f"  hits: {s.hits}", file=out)
    print(f"  paid: {format_cents(s.paid_cents)}", file=out)
    print(balance.line(), file=out, flush=True)
    return 0 if balance.ok else 1


#: PINs set in a simulator's state directory when it has none (never on a real table)
SIM_PINS = {"dealer": "1111", "floorperson": "2222", "technician": "3333"}


def _open_console(rig: Rig, state_dir: Path, out: TextIO) -> None:
    """``--console-pty``: the technician console on a pty a person can attach to."""
    from controller.console.auth import PIN_FILE, PinStore

    store = PinStore(state_dir / PIN_FILE)
    if not store.roles_set():
        for role, pin in SIM_PINS.items():
            store.set(role, pin)
        pins = "simulator PINs " + ", ".join(f"{r} {p}" for r, p in SIM_PINS.items())
    else:
        pins = f"PINs as set in {store.path} (`tablectl pin set ROLE --state-dir {state_dir}`)"
    con = rig.service.start_console(pty=True)
    print(f"console: {con.pty_path} ({pins})", file=out)
    print(f"  attach with: {miniterm_command()} {con.pty_path}   (Ctrl-] quits)", file=out, flush=True)


def miniterm_command() -> str:
    """pyserial's terminal (installed with tablectl's pyserial: no picocom or screen needed)."""
    script = Path(sys.executable).with_name("pyserial-miniterm")
    return str(script) if script.exists() else f"{sys.executable} -m serial.tools.miniterm"


class StopRequest:
    """SIGINT (Ctrl-C) and SIGTERM as a request to stop, for ``--console-pty``.

    The handlers only set :attr:`requested`; they never raise.  (They used to raise
    KeyboardInterrupt, installed only once the rounds were done: a Ctrl-C that came
    right after "the console stays open" was printed, before the wait's ``try``, or
    while the rig was stopping, escaped and the summary was never printed.)  They
    are installed before the rig starts, also when SIGINT came in ignored (a shell's
    background job, a CI runner), and put back by :meth:`restore`."""

    SIGNALS = ("SIGINT", "SIGTERM")

    def __init__(self) -> None:
        self.requested = False
        self._old: dict[int, Any] = {}

    def install(self) -> StopRequest:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():  # signal handlers live there
            for name in self.SIGNALS:
                sig = getattr(signal, name)
                self._old[sig] = signal.signal(sig, self._handler)
        return self

    def _handler(self, signum: int, frame: object) -> None:
        self.requested = True

    def restore(self) -> None:
        import signal

        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        self._old.clear()


def _hold_console(out: TextIO, stop: StopRequest) -> None:
    import time

    print("rounds done; the console stays open - Ctrl-C to stop", file=out, flush=True)
    while not stop.requested:
        time.sleep(0.05)
