"""``diag``: the technician's diagnostics.

* ``diag lights`` — every seat light and the beacon on, then off, then back to
  what they showed (the technician looks);
* ``diag sensors [SECONDS]`` — the live level of every input (bet sensors,
  buttons, key, door) and each change, until the time is up or a key is typed;
* ``diag shoe`` — the shoe's status over its link (loaded, shuffled, door, jam);
* ``diag shaker`` — one shake: three dice in 1..6, the red die identified, shaken
  for at least five seconds (§ 621a.2(f)(2));
* ``diag rng`` — the RNG's statistical self-test (chi-square, runs and serial
  correlation at 99 %; drivers/rng.py).

Outputs and the shaker are exercised only between rounds (a tilt included), never
during a round.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, TypeVar

from controller.console.registry import TECH, CommandError, Ctx, Log, Refused, command, parse_int, want_args
from controller.play.machine import between_rounds
from drivers.devicedefs import devices, resolve
from drivers.rng import SelfTestingRng

if TYPE_CHECKING:
    from controller.console.port import ConsoleTable
    from controller.core.reactor import Event

D = TypeVar("D")
#: a device's reply, as its driver posted it (drivers/serialdev.py): ``msg`` and the message's fields
Reply = Mapping[str, object]


def device_diagnostics() -> dict[str, Callable[[Ctx], str]]:
    """The serial devices' own diagnostics, as their declarations name them (drivers/devicedefs/)."""
    out: dict[str, Callable[[Ctx], str]] = {}
    for name, decl in devices().items():
        if decl.diagnostics:
            fn = resolve(decl.diagnostics)
            if not callable(fn):
                raise TypeError(f"the {name}'s diagnostics {decl.diagnostics} is not a function")
            out[name] = fn
    return out


def subs() -> tuple[str, ...]:
    """What ``diag`` tests: the lights and sensors, each device with diagnostics, the RNG."""
    return ("lights", "sensors", *device_diagnostics(), "rng")


SHAKE_MIN_MS = 5000  # § 621a.2(f)(2): shaken for at least five seconds
SHOE_REPLY_S = 3.0
SHAKER_REPLY_S = 30.0


@command(
    "diag", TECH, "diag lights|sensors [S]|shoe|shaker|rng", "device diagnostics and the RNG self-test", args=[subs]
)
def cmd_diag(ctx: Ctx, args: list[str]) -> str:
    if not args or args[0] not in subs():
        raise CommandError(f"usage: diag {'|'.join(subs())}")
    sub = args[0]
    if sub == "sensors":
        want_args(args, 1, 2, "diag sensors [SECONDS]")
        return _sensors(ctx, parse_int(args[1], "SECONDS", 1, 300) if len(args) > 1 else 10)
    want_args(args, 1, 1, f"diag {sub}")
    return {"lights": _lights, "rng": _rng, **device_diagnostics()}[sub](ctx)


def _idle(table: ConsoleTable, what: str) -> None:
    """Outputs and the shaker are exercised only between rounds (the table's one guard)."""
    try:
        between_rounds(table.state, what)
    except ValueError as e:
        raise Refused(str(e)) from None


def _num(reply: Reply, key: str) -> int:
    """A number field of a device's reply (a reply without it is the device's fault)."""
    v = reply.get(key)
    if not isinstance(v, int):
        raise Refused(f"the device's {reply.get('msg')} has no number {key!r}")
    return v


# --------------------------------------------------------------------------- lights


def _lights(ctx: Ctx) -> str:
    names = list(ctx.service.light_names)
    if not names:
        raise Refused("this table has no lights configured")
    saved: dict[str, str] = {}

    def on(table: ConsoleTable, log: Log) -> str:
        from drivers.gpio import ON

        _idle(table, "the light test runs")
        saved.update({n: table.dev.lights.mode(n) for n in names})
        log(lights=len(names))
        for n in names:
            table.dev.lights.set(n, ON)
        return ""

    def set_all(modes: Iterable[tuple[str, str]]) -> None:
        lights = ctx.table().dev.lights
        for n, mode in modes:
            lights.set(n, mode)

    from drivers.gpio import OFF

    ctx.act(on)
    ctx.say(f"lights: all {len(names)} on ({', '.join(names)})")
    try:
        ctx.sleep(ctx.server.limits.diag_light_s)
        ctx.call(set_all, [(n, OFF) for n in names])
        ctx.say("lights: all off")
        ctx.sleep(ctx.server.limits.diag_light_s / 2)
    finally:
        ctx.call(set_all, list(saved.items()))
    return "lights: restored; check every light came on and went off"


# --------------------------------------------------------------------------- sensors


def _sensors(ctx: Ctx, seconds: int) -> str:
    names = list(ctx.service.input_names)

    def levels() -> dict[str, bool]:
        inputs = ctx.table().dev.inputs
        return {n: bool(inputs.is_active(n)) for n in names}

    ctx.log_now(seconds=seconds)
    now = ctx.call(levels)
    ctx.say("inputs: " + "  ".join(f"{n}={'ACTIVE' if v else 'idle'}" for n, v in now.items()))
    ctx.say(f"watching for {seconds} s; type any key to stop")
    t0 = time.monotonic()
    changes = 0
    while time.monotonic() - t0 < seconds:
        if ctx.sleep(0.05):
            break
        cur = ctx.call(levels)
        for n, v in cur.items():
            if v != now[n]:
                changes += 1
                ctx.say(f"  +{time.monotonic() - t0:6.2f}s {n} {'ACTIVE' if v else 'idle'}")
        now = cur
    return f"sensors: {changes} change(s) seen"


# --------------------------------------------------------------------------- shoe and shaker


def _exchange(
    ctx: Ctx,
    device: str,
    pick: Callable[[ConsoleTable], D | None],
    want: tuple[str, ...],
    send: Callable[[D], None],
    timeout: float,
) -> Reply | None:
    """Send a request to a device on the reactor thread and wait for its reply; ``pick`` finds the
    device on the table (and refuses what may not run now)."""
    got: queue.Queue[Reply] = queue.Queue()

    def tap(ev: Event) -> None:
        if ev.kind == device and ev.data.get("msg") in want:
            got.put(dict(ev.data))

    def begin(table: ConsoleTable, log: Log) -> str:
        dev = pick(table)
        if dev is None:
            raise Refused(f"this table has no {device}")
        log(device=device)
        ctx.service.taps.append(tap)
        send(dev)
        return ""

    def untap() -> None:
        if tap in ctx.service.taps:
            ctx.service.taps.remove(tap)

    ctx.act(begin)
    try:
        return got.get(timeout=timeout)
    except queue.Empty:
        return None
    finally:
        ctx.call(untap)


def diag_shoe(ctx: Ctx) -> str:
    reply = _exchange(ctx, "shoe", lambda t: t.dev.shoe, ("STATUS",), lambda d: d.request_status(), SHOE_REPLY_S)
    if reply is None:
        return f"shoe: FAIL - no status reply within {SHOE_REPLY_S:g} s"
    shown = _shoe_flags(_num(reply, "flags"))
    problems = [k for k in ("door-open", "jammed") if k in shown]
    return (
        f"shoe: status flags {', '.join(shown) or 'none'}; {reply.get('remaining')} cards in the shoe, "
        f"{reply.get('stacks')} stacks dealt\nshoe: " + (f"FAIL - {', '.join(problems)}" if problems else "PASS")
    )


def _shoe_flags(f: int) -> list[str]:
    """The names of the shoe's status flags set in ``f``."""
    from drivers import protocol as P

    flags = {
        "loaded": P.SHOE_LOADED,
        "shuffled": P.SHOE_SHUFFLED,
        "door-open": P.SHOE_DOOR_OPEN,
        "jammed": P.SHOE_JAMMED,
        "reads-cards": P.SHOE_READS_CARDS,
    }
    return [k for k, bit in flags.items() if bit and f & bit]


def diag_shaker(ctx: Ctx) -> str:
    from drivers import protocol as P
    from drivers.shaker import Shaker

    def send(dev: Shaker) -> None:
        dev.arm(P.DEALER)
        dev.activate(P.DEALER)

    def idle_shaker(table: ConsoleTable) -> Shaker | None:
        shaker = table.dev.shaker
        if shaker is not None:
            _idle(table, "the shaker test runs")  # it moves: never during a round
        return shaker

    def disarm() -> None:
        dev = ctx.table().dev
        if dev.shaker is not None:
            dev.shaker.disarm()

    reply = _exchange(ctx, "shaker", idle_shaker, ("RESULT", "NO_ROLL", "ERROR"), send, SHAKER_REPLY_S)
    ctx.call(disarm)
    if reply is None:
        return f"shaker: FAIL - no result within {SHAKER_REPLY_S:g} s"
    if reply["msg"] == "ERROR":
        return f"shaker: FAIL - error {reply.get('code')}: {reply.get('text')}"
    if reply["msg"] == "NO_ROLL":
        return (
            f"shaker: no roll (reason {reply.get('reason')}, shaken {reply.get('shake_ms')} ms) - "
            "FAIL; run diag shaker again"
        )
    dice = [_num(reply, "d1"), _num(reply, "d2"), _num(reply, "d3")]
    red, shake_ms = _num(reply, "red"), _num(reply, "shake_ms")
    problems = _roll_problems(dice, red, shake_ms)
    return f"shaker: dice {'-'.join(map(str, dice))} (red die #{red + 1}), shaken {shake_ms} ms\nshaker: " + (
        f"FAIL - {'; '.join(problems)}" if problems else "PASS"
    )


def _roll_problems(dice: list[int], red: int, shake_ms: int) -> list[str]:
    """What is wrong with a shaker's RESULT: dice, the red die, a shake shorter than 5 s."""
    problems = []
    if not all(1 <= d <= 6 for d in dice):
        problems.append(f"impossible dice {dice}")
    if not 0 <= red <= 2:
        problems.append(f"red die index {red}")
    if shake_ms < SHAKE_MIN_MS:
        problems.append(f"shaken {shake_ms} ms, less than 5 s (§ 621a.2(f)(2))")
    return problems


# --------------------------------------------------------------------------- RNG


def _rng(ctx: Ctx) -> str:
    from controller.boot.selfcheck import check_rng

    t0 = time.perf_counter()
    rng = ctx.service.rng  # the generator the table draws from
    test = (lambda n: list(rng.self_test(samples=n))) if isinstance(rng, SelfTestingRng) else None
    outcome, problems = check_rng(test)
    ctx.detail = {"result": outcome}
    return "\n".join(
        [
            f"rng: {outcome.upper()} ({time.perf_counter() - t0:.2f} s; chi-square, runs and serial "
            "correlation at 99% on 1..7 and 1..8)"
        ]
        + [f"  {p}" for p in problems]
    )
