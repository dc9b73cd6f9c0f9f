"""``diag``: the technician's diagnostics (issue 6 item 1).

* ``diag lights`` — every seat light and the beacon on, then off, then back to
  what they showed (the technician looks);
* ``diag sensors [SECONDS]`` — the live level of every input (bet sensors,
  buttons, key, door) and each change, until the time is up or a key is typed;
* ``diag shoe`` — the shoe's status over its link (loaded, shuffled, door, jam);
* ``diag shaker`` — one shake: three dice in 1..6, the red die identified, shaken
  for at least five seconds (§ 621a.2(f)(2));
* ``diag rng`` — the RNG's statistical self-test (chi-square, runs and serial
  correlation at 99 %; drivers/rng.py).

Outputs and the shaker are exercised only between rounds or in tilt, never
during a round.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from controller.console.registry import TECH, CommandError, Ctx, Refused, command, parse_int, want_args
from drivers.devicedefs import devices, resolve


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


IDLE_STATES = ("tilt", "open_for_wagers")
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


def _between_rounds(table: Any, what: str) -> None:
    if table.state not in IDLE_STATES:
        raise Refused(f"{what} only between rounds or in tilt (state {table.state})")


# --------------------------------------------------------------------------- lights


def _lights(ctx: Ctx) -> str:
    names = list(ctx.service.light_names)
    if not names:
        raise Refused("this table has no lights configured")
    saved: dict[str, str] = {}

    def on(table: Any, log: Any) -> str:
        from drivers.gpio import ON

        _between_rounds(table, "the light test runs")
        saved.update({n: table.dev.lights.mode(n) for n in names})
        log(lights=len(names))
        for n in names:
            table.dev.lights.set(n, ON)
        return ""

    def set_all(modes: Iterable[tuple[str, str]]) -> None:
        for n, mode in modes:
            ctx.service.table.dev.lights.set(n, mode)

    from drivers.gpio import OFF

    ctx.act(on)
    ctx.say(f"lights: all {len(names)} on ({', '.join(names)})")
    try:
        ctx.sleep(ctx.server.diag_light_s)
        ctx.call(set_all, [(n, OFF) for n in names])
        ctx.say("lights: all off")
        ctx.sleep(ctx.server.diag_light_s / 2)
    finally:
        ctx.call(set_all, list(saved.items()))
    return "lights: restored; check every light came on and went off"


# --------------------------------------------------------------------------- sensors


def _sensors(ctx: Ctx, seconds: int) -> str:
    names = list(ctx.service.input_names)

    def levels() -> dict[str, bool]:
        inputs = ctx.service.table.dev.inputs
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
    want: tuple[str, ...],
    send: Callable[[Any], None],
    timeout: float,
    precheck: Callable[[Any], None] | None = None,
) -> dict[str, Any] | None:
    """Send a request to a device on the reactor thread and wait for its reply event."""
    got: queue.Queue[dict[str, Any]] = queue.Queue()

    def tap(ev: Any) -> None:
        if ev.kind == device and ev.data.get("msg") in want:
            got.put(dict(ev.data))

    def begin(table: Any, log: Any) -> str:
        dev = getattr(table.dev, device, None)
        if dev is None:
            raise Refused(f"this table has no {device}")
        if precheck is not None:
            precheck(table)
        log(device=device)
        ctx.service.taps.append(tap)
        send(dev)
        return ""

    ctx.act(begin)
    try:
        return got.get(timeout=timeout)
    except queue.Empty:
        return None
    finally:
        ctx.call(lambda: tap in ctx.service.taps and ctx.service.taps.remove(tap))


def diag_shoe(ctx: Ctx) -> str:
    reply = _exchange(ctx, "shoe", ("STATUS",), lambda d: d.request_status(), SHOE_REPLY_S)
    if reply is None:
        return f"shoe: FAIL - no status reply within {SHOE_REPLY_S:g} s"
    shown = _shoe_flags(reply.get("flags", 0))
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
        "reads-cards": getattr(P, "SHOE_READS_CARDS", 0),
    }
    return [k for k, bit in flags.items() if bit and f & bit]


def diag_shaker(ctx: Ctx) -> str:
    from drivers import protocol as P

    def send(dev: Any) -> None:
        dev.arm(P.DEALER)
        dev.activate(P.DEALER)

    reply = _exchange(
        ctx,
        "shaker",
        ("RESULT", "NO_ROLL", "ERROR"),
        send,
        SHAKER_REPLY_S,
        precheck=lambda t: _between_rounds(t, "the shaker test runs"),
    )
    ctx.call(lambda: ctx.service.table.dev.shaker.disarm())
    if reply is None:
        return f"shaker: FAIL - no result within {SHAKER_REPLY_S:g} s"
    if reply["msg"] == "ERROR":
        return f"shaker: FAIL - error {reply.get('code')}: {reply.get('text')}"
    if reply["msg"] == "NO_ROLL":
        return (
            f"shaker: no roll (reason {reply.get('reason')}, shaken {reply.get('shake_ms')} ms) - "
            "FAIL; run diag shaker again"
        )
    dice = [reply["d1"], reply["d2"], reply["d3"]]
    problems = _roll_problems(dice, reply)
    return (
        f"shaker: dice {'-'.join(map(str, dice))} (red die #{reply['red'] + 1}), shaken {reply['shake_ms']} ms\n"
        "shaker: " + (f"FAIL - {'; '.join(problems)}" if problems else "PASS")
    )


def _roll_problems(dice: list[int], reply: Mapping[str, Any]) -> list[str]:
    """What is wrong with a shaker's RESULT: dice, the red die, a shake shorter than 5 s."""
    problems = []
    if not all(1 <= d <= 6 for d in dice):
        problems.append(f"impossible dice {dice}")
    if not 0 <= reply["red"] <= 2:
        problems.append(f"red die index {reply['red']}")
    if reply["shake_ms"] < SHAKE_MIN_MS:
        problems.append(f"shaken {reply['shake_ms']} ms, less than 5 s (§ 621a.2(f)(2))")
    return problems


# --------------------------------------------------------------------------- RNG


def _rng(ctx: Ctx) -> str:
    from controller.boot.selfcheck import check_rng

    t0 = time.perf_counter()
    self_test = getattr(ctx.service.rng, "self_test", None)  # the generator the table draws from
    outcome, problems = check_rng((lambda n: list(self_test(samples=n))) if self_test is not None else None)
    ctx.detail = {"result": outcome}
    return "\n".join(
        [
            f"rng: {outcome.upper()} ({time.perf_counter() - t0:.2f} s; chi-square, runs and serial "
            "correlation at 99% on 1..7 and 1..8)"
        ]
        + [f"  {p}" for p in problems]
    )
