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

from controller.core.money import format_cents
from controller.daemon.service import LEDGER_FILE
from hil.balance import check as check_balance
from hil.luck import maybe_stack
from hil.people import People
from hil.rig import Rig


@dataclass
class Summary:
    """The play's figures, in the words of the day's accounting report (controller/reports/reportview.py):
    the same figures, so that the two can be compared line by line (tests/hil/test_report_sim.py)."""

    completed: int = 0
    voids: int = 0
    wagers: int = 0  # wagers accepted, every spot (a voided round's too)
    wagered_cents: int = 0
    coin_in: int = 0  # progressive wagers credited to the meter (a voided round's are taken back)
    coin_in_cents: int = 0
    refused_late: int = 0  # late wagers refused (chips placed after the lock-out)
    meter_hits: int = 0  # percentage-of-meter hits, paid by an attendant
    meter_paid_cents: int = 0
    fixed_pays: int = 0  # fixed progressive pays, paid by the table (the wager included)
    fixed_paid_cents: int = 0
    won_cents: int = 0  # winnings paid by the table
    returned_cents: int = 0  # wagers handed back with a win or a push
    void_returned: int = 0
    void_returned_cents: int = 0
    meter_start: int | None = None
    meter_end: int | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def rounds(self) -> int:
        """Rounds played: completed or voided."""
        return self.completed + self.voids

    @property
    def paid_cents(self) -> int:
        """Everything handed to players at settlement: winnings, meter hits, wagers returned."""
        return self.won_cents + self.meter_paid_cents + self.returned_cents


SHORT = {"progressive": "prog", "double-down": "dd", "insurance": "ins"}


def _money(c: int) -> str:
    return ("+" if c > 0 else "") + format_cents(c)


def _round_tags(rnd: Any) -> str:
    """What a round line says after its wagers: late wagers refused, dice, RNG, no-rolls, start."""
    late = ""
    if rnd.rejected:
        many = "s" if len(rnd.rejected) > 1 else ""
        late = f" late wager{many} refused at seat{many} {','.join(map(str, rnd.rejected))}"
    d = rnd.dice
    dice = f" dice {d[0]}-{d[1]}-{d[2]}={sum(d)}" if d else ""
    rng = f" rng {rnd.rng_value}" if rnd.rng_value is not None else ""
    reshake = f" no-roll x{rnd.no_rolls}" if rnd.no_rolls else ""
    start = f" start {rnd.start}" if rnd.start is not None else ""
    return f"{late}{dice}{rng}{reshake}{start}"


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
        self._count(rnd)
        per_seat: dict[int, list[str]] = {}
        for r in rnd.results:
            per_seat.setdefault(r.seat, []).append(self._result(rnd, r))
        parts = [f"s{seat} " + ", ".join(texts) for seat, texts in per_seat.items()]
        meter = self._meter(data)
        if s.meter_start is None:
            s.meter_start = meter
        s.meter_end = meter
        seats = ",".join(str(x) for x in sorted({seat for (seat, _w) in rnd.wagers})) or "none"
        shown = f" | meter {format_cents(meter)}" if meter is not None else ""
        hands = self._hands(rnd)
        line = (
            f"round {rnd.number:>3}: seats [{seats}] wagers {len(rnd.wagers)}{_round_tags(rnd)} | "
            + ("; ".join(parts) if parts else "no wagers")
            + hands
            + shown
        )
        print(line, file=self.out, flush=True)

    def _hands(self, rnd: Any) -> str:
        """`` | `` and the game's description of the round's hands, if it has one."""
        desc = self.describe(rnd) if self.describe is not None else ""
        return f" | {desc}" if desc else ""

    def _count(self, rnd: Any) -> None:
        """The round in the summary's counts."""
        s = self.s
        s.completed += 1
        s.wagers += len(rnd.wagers)
        s.wagered_cents += sum(rnd.wagers.values())
        s.coin_in += len(rnd.accepted)
        s.coin_in_cents += sum(rnd.accepted.values())
        s.refused_late += len(rnd.rejected)

    def _result(self, rnd: Any, r: Any) -> str:
        """One wager's result as printed, counted into the summary."""
        s = self.s
        label = SHORT.get(r.wager, r.wager)
        paid = max(r.amount + r.net, 0)  # handed to the player by the table: winnings and the wager back
        s.won_cents += max(r.net, 0)
        s.returned_cents += paid - max(r.net, 0)
        if r.is_meter_pay:
            return self._meter_hit(rnd, r, label)
        if r.wager == "progressive" and r.outcome == "win":
            s.fixed_pays += 1
            s.fixed_paid_cents += paid
            return f"{label} {r.hand} FIXED PAY {r.pays} {_money(r.net)}"
        if r.wager.endswith("-envy"):
            return f"envy({r.hand}) {_money(r.net)}"
        if r.wager == "progressive":
            return f"{label} {r.hand or r.outcome} {_money(r.net)}"  # a losing hand may have no name
        return f"{label} {r.outcome} {_money(r.net)}"

    def _meter_hit(self, rnd: Any, r: Any, label: str) -> str:
        """A meter hit as printed (the amount the round paid for it), counted into the summary."""
        cents = next((p["cents"] for p in rnd.payouts if p["seat"] == r.seat and p["hand"] == r.hand), 0)
        self.s.meter_hits += 1
        self.s.meter_paid_cents += cents
        return f"{label} {r.hand} METER HIT {r.pays} = {format_cents(cents)}"

    def _void(self, data: Mapping[str, Any]) -> None:
        rnd = data["data"]
        s = self.s
        s.voids += 1
        s.wagers += len(rnd.wagers)
        s.wagered_cents += sum(rnd.wagers.values())
        s.refused_late += len(rnd.rejected)
        returned = rnd.unsettled()
        s.void_returned += len(returned)
        s.void_returned_cents += sum(returned.values())
        print(
            f"round {rnd.number:>3}: VOID ({data['reason']}); {len(returned)} wager(s) returned",
            file=self.out,
            flush=True,
        )


@dataclass(frozen=True)
class SimSettings:
    """What a one-table simulation plays (``tablectl sim``): ``rounds`` rounds of ``game`` from
    ``seed``, in real time or at ``speed`` times it (``idle_skip``: the idle waits skipped, never
    in real time), its ledger kept in ``state_dir`` (None: thrown away); ``console_pty``: a
    console on a pty, kept open until Ctrl-C; ``hit_rate``: the share of rounds dealt a
    progressive hit first (hil/luck.py)."""

    game: str
    rounds: int
    seed: int
    realtime: bool = False
    speed: float = 50.0
    state_dir: Path | None = None
    console_pty: bool = False
    idle_skip: bool = True
    hit_rate: float = 0.0


def run_sim(settings: SimSettings, out: TextIO = sys.stdout) -> int:
    """Play ``settings``, report each round and the summary to ``out``; 0 when the table balanced."""
    game, rounds, seed = settings.game, settings.rounds, settings.seed
    realtime, state_dir = settings.realtime, settings.state_dir
    tmp = None
    if state_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="tablectl-sim-")
        state_dir = Path(tmp.name) / "state"  # the rig's throwaway key and the witness go beside it
    rig = Rig(
        Path(state_dir),
        profile=game,
        seed=seed,
        speed=1.0 if realtime else settings.speed,
        idle_skip=settings.idle_skip and not realtime,  # at human pace the waits are the point
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
    stop = StopRequest().install() if settings.console_pty else None
    try:
        return _play(rig, rep, rounds=rounds, stop=stop, hit_rate=settings.hit_rate)
    except TableClosed as e:
        _say_closed(e, state_dir if tmp is None else None)
        return 1
    finally:
        if stop is not None:
            stop.restore()
        if tmp is not None:
            tmp.cleanup()


def _say_closed(e: TableClosed, kept: Path | None) -> None:
    """The table latched a tilt at start: said, with how to look into a ledger that is kept."""
    print(f"tablectl sim: {e}", file=sys.stderr)
    if kept is not None:
        print(f"  `tablectl audit --state-dir {kept}` names the problem", file=sys.stderr)


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


def _play(rig: Rig, rep: Reporter, *, rounds: int, stop: Any, hit_rate: float = 0.0) -> int:
    """Start the rig, play, stop it (on every path), check the balance, print the summary (to the
    reporter's stream); the players' and hits' seeds derive from the rig's, the ledger is in its
    state directory.  ``stop`` (a :class:`StopRequest`) only with ``--console-pty``, which keeps
    the console open."""
    people_seed, state_dir, out = rig.seed, rig.state_dir, rep.out
    rig.start()
    try:
        if stop is not None:
            _open_console(rig, state_dir, out)
        rig.table.listeners.append(rep)
        start_meter = _wait_open(rig)
        people = People(rig, random.Random(f"{people_seed}/people"))
        luck = random.Random(f"{people_seed}/hits")  # --hit-rate (hil/luck.py)
        for _ in range(rounds):
            if stop is not None and stop.requested:
                break  # asked to stop: after the round in play, never in the middle of one
            maybe_stack(rig, luck, hit_rate)
            people.play_round()
        rig.table.wait_for(lambda s: s.get("state") == "open_for_wagers", 30.0)
        end_meter = rig.table.status.get("meter_cents")
        if stop is not None and not stop.requested:
            _hold_console(out, stop)
    finally:
        rig.stop()
    balance = check_balance(state_dir / LEDGER_FILE, people.placed)
    return _summary(out, rep.s, start_meter, end_meter, balance)


def summary_lines(s: Summary, start_meter: int | None, end_meter: int | None) -> list[str]:
    """The closing summary: the play's figures as the day's accounting report names them
    (``tablectl report``; the same labels, counts as counts, money in dollars)."""

    def money(c: int | None) -> str:
        return format_cents(c) if c is not None else "-"

    paid = s.meter_paid_cents + s.fixed_paid_cents
    return [
        f"rounds played: {s.rounds} (completed {s.completed}, voided {s.voids})",
        f"wagers accepted: {s.wagers} (every spot), {format_cents(s.wagered_cents)} wagered",
        f"late wagers refused: {s.refused_late}",
        f"progressive coin-in: {s.coin_in} wagers, {format_cents(s.coin_in_cents)}",
        f"meter at the start: {money(start_meter)}",
        f"meter at the end: {money(end_meter)}",
        f"progressive hits: {s.meter_hits + s.fixed_pays} (meter hits {s.meter_hits}, fixed pays {s.fixed_pays})",
        f"progressive paid: {format_cents(paid)} (by an attendant {format_cents(s.meter_paid_cents)}, "
        f"by the table {format_cents(s.fixed_paid_cents)})",
        f"paid to players: {format_cents(s.paid_cents)} (winnings {format_cents(s.won_cents)}, meter hits "
        f"{format_cents(s.meter_paid_cents)}, wagers returned {format_cents(s.returned_cents)})",
        f"wagers returned by voided rounds: {s.void_returned}, {format_cents(s.void_returned_cents)}",
    ]


def _summary(out: TextIO, s: Summary, start_meter: int | None, end_meter: int | None, balance: Any) -> int:
    print("summary:", file=out)
    for line in summary_lines(s, start_meter, end_meter):
        print(f"  {line}", file=out)
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
