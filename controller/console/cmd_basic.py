"""Console commands: help, whoami, logout, status, meters, clear, verify, outoforder, inservice,
validate, reshuffle, newdealer."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict, TypeVar

from controller.console.auth import ROLES
from controller.console.registry import (
    ALL,
    FLOOR,
    REGISTRY,
    TECH,
    CommandError,
    Ctx,
    Log,
    Refused,
    command,
    parse_int,
    want_args,
)
from controller.core.records import Kind
from controller.play.machine import TableState
from drivers.devicedefs import out_of_order

if TYPE_CHECKING:
    from controller.boot.selfcheck import SelfCheckReport
    from controller.console.port import ConsoleTable
    from drivers.serialdev import SerialDevice

T = TypeVar("T")


def ooo_devices() -> tuple[str, ...]:
    """The devices that may be marked out of order (their declarations, drivers/devicedefs/)."""
    return tuple(out_of_order())


def alternatives() -> tuple[str, ...]:
    """Every method used instead of a device out of order."""
    return tuple(dict.fromkeys(a for alts in out_of_order().values() for a in alts))


@command("help", ALL, "help [COMMAND]", "list the commands you may use, or explain one", args=[lambda: tuple(REGISTRY)])
def cmd_help(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 0, 1, "help [COMMAND]")
    if args:
        c = REGISTRY.get(args[0])
        if c is None:
            from controller.core.suggest import did_you_mean

            raise CommandError(f"unknown command {args[0]!r}{did_you_mean(args[0], REGISTRY)}")
        return f"{c.usage}\n  {c.summary}\n  roles: {', '.join(c.roles)}"
    lines = [f"  {c.usage:<40} {c.summary}" for n, c in sorted(REGISTRY.items()) if ctx.role in c.roles]
    return "commands (tab completes):\n" + "\n".join(lines)


@command("whoami", ALL, "whoami", "show your role and this console")
def cmd_whoami(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 0, 0, "whoami")
    return f"{ctx.role} on the {ctx.session.chan.name} console of table {ctx.server.table_id}"


@command("logout", ALL, "logout", "end this session")
def cmd_logout(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 0, 0, "logout")
    return "logged out"


# --------------------------------------------------------------------------- status


def _devices(serial: Sequence[SerialDevice]) -> list[str]:
    out = []
    for d in serial:
        st = d.link.stats
        line = f"  {d.device:<7} {d.cfg.port}  link {'LOST' if d.link.lost else 'up'}"
        line += (
            f"  sent {st.sent} received {st.received} retransmits {st.retransmits} "
            f"crc-errors {st.crc_errors} faults {st.faults}"
        )
        out.append(line)
    return out


class _Snapshot(TypedDict):
    state: str
    round: int
    tilts: dict[str, str]
    out_of_order: dict[str, str]
    devices: list[str]


@command("status", ALL, "status", "table state, tilts, devices, version and software digest")
def cmd_status(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 0, 0, "status")
    svc = ctx.service

    def snapshot() -> _Snapshot:
        t = ctx.table()
        return {
            "state": t.state,
            "round": t.round_no,
            "tilts": dict(t.tilts),
            "out_of_order": dict(t.out_of_order),
            "devices": _devices(svc.serial_devices),
        }

    st = ctx.call(snapshot)
    up = time.monotonic() - (svc.started_monotonic or time.monotonic())
    lines = [
        f"table {svc.hw.table_id}  game {svc.hw.profile.game}  tablectl {ctx.server.version}",
        f"state: {st['state']}  round: {st['round']}  uptime: {int(up) // 3600}h{int(up) % 3600 // 60:02d}m",
        *_fault_lines(st["tilts"], st["out_of_order"]),
        "devices:",
        *(st["devices"] or ["  (no serial devices)"]),
        f"  gpio    {svc.hw.gpio.pin_factory}: {len(svc.input_names)} inputs, {len(svc.light_names)} lights",
    ]
    if svc.self_check is not None:
        lines += _software_lines(svc.self_check)
    return "\n".join(lines)


def _fault_lines(tilts: Mapping[str, str], out_of_order: Mapping[str, str]) -> list[str]:
    """The tilts (or none), and the devices out of order with what stands in for each."""
    lines = ["tilts: " + ("none" if not tilts else "; ".join(f"{k}: {v}" for k, v in sorted(tilts.items())))]
    if out_of_order:
        lines.append("out of order: " + ", ".join(f"{d} (using {alt})" for d, alt in sorted(out_of_order.items())))
    return lines


def _software_lines(sc: SelfCheckReport) -> list[str]:
    """The software digest against the recorded one, and the self-checks' results."""
    rec = ("match" if sc.recorded_digest == sc.digest else "MISMATCH") if sc.recorded_digest else "not recorded"
    return [
        f"software: sha256 {sc.digest or '- (not computed)'}  (recorded: {rec})",
        "self-checks: " + ", ".join(f"{k} {v}" for k, v in sc.results.items()),
    ]


# --------------------------------------------------------------------------- meters


@command(
    "meters", ALL, "meters", "progressive meters: amount, seed, rate, hidden remainder, meter hits, fixed pays, paid"
)
def cmd_meters(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 0, 0, "meters")
    meters = ctx.call(lambda: dict(ctx.table().meters))
    if not meters:
        return "no progressive meters on this table"
    from controller.books.meters import meter_lines

    out: list[str] = []
    for level, m in sorted(meters.items()):
        out += meter_lines(level, m)
    return "\n".join(out)


# --------------------------------------------------------------------------- clear


@command("clear", TECH, "clear REASON...", "clear the active tilts, with a reason (logged)")
def cmd_clear(ctx: Ctx, args: list[str]) -> str:
    reason = " ".join(args).strip()
    if len(reason) < 3:
        raise CommandError("usage: clear REASON...  (say why, e.g. clear shoe jam removed)")

    def act(table: ConsoleTable, log: Log) -> str:
        if table.state != TableState.TILT:
            raise Refused(f"the table is not in tilt (state {table.state})")
        tilts = dict(table.tilts)
        log(reason=reason, cleared=sorted(tilts))
        if not table.clear_tilt(reason, f"console:{ctx.role}"):
            return "the table did not clear the tilt"
        return "cleared: " + "; ".join(f"{k} ({v})" for k, v in sorted(tilts.items())) + f"\nstate: {table.state}"

    return ctx.act(act)


# --------------------------------------------------------------------------- verify


@command(
    "verify",
    FLOOR,
    "verify [files]",
    "software version and SHA-256 digest, checked against the record",
    args=[("files",)],
)
def cmd_verify(ctx: Ctx, args: list[str]) -> str:
    from controller.boot import selfcheck as S

    want_args(args, 0, 1, "verify [files]")
    if args and args[0] != "files":
        raise CommandError("usage: verify [files]")
    rec = S.load_record(S.software_record_of(ctx.service.hw))
    files = S.manifest(full=True, bytecode=rec is not None and rec.bytecode)  # as recorded
    now = S.digest_of(files)
    sc = ctx.service.self_check
    lines = [
        f"tablectl {ctx.server.version}: {len(files)} files",
        f"digest now:        {now}",
        f"digest at start-up: {sc.digest if sc else '-'}",
    ]
    if rec is None:
        lines.append("recorded digest:   none (tablectl verify --record at installation)")
        ctx.detail = {"digest": now, "result": "not recorded"}
        return "\n".join(lines)
    lines.append(f"recorded digest:   {rec.digest}  (version {rec.version}, {rec.recorded})")
    diff = S.compare(rec.files, files)
    if rec.digest == now:
        lines.append("result: MATCH")
        ctx.detail = {"digest": now, "result": "match"}
        return "\n".join(lines)
    problem = (
        f"software: digest {now[:16]}... does not match the recorded {rec.digest[:16]}... ({S.describe_mismatch(diff)})"
    )

    def act(table: ConsoleTable, log: Log) -> str:
        log(digest=now, result="mismatch")
        table.raise_tilt("self-check", problem)
        return "result: MISMATCH - tilt raised"

    lines.append(ctx.act(act))
    if args:
        lines += S.difference_lines(diff)
    return "\n".join(lines)


# --------------------------------------------------------------------------- out of order


@command(
    "outoforder",
    FLOOR,
    "outoforder DEVICE ALTERNATIVE",
    "mark a device out of order and the method used instead (§ 670a.13(n))",
    args=[ooo_devices, alternatives],
)
def cmd_outoforder(ctx: Ctx, args: list[str]) -> str:
    pairs = " | ".join(f"{d} {a}" for d, alts in out_of_order().items() for a in alts)
    want_args(args, 2, 2, f"outoforder DEVICE ALTERNATIVE  ({pairs})")
    device, alternative = args
    if device not in ooo_devices():
        raise CommandError(f"unknown device {device!r} (devices: {', '.join(ooo_devices())})")

    def act(table: ConsoleTable, log: Log) -> str:
        if device in table.out_of_order:
            raise Refused(f"the {device} is already out of order")
        # the table validates before changing anything; log only what it accepts
        try:
            table.mark_out_of_order(device, f"console:{ctx.role}", alternative)
        except ValueError as e:
            raise Refused(str(e)) from None
        log(device=device, alternative=alternative)
        return f"{device} marked out of order; {alternative} used instead (§ 670a.13(n))"

    return ctx.act(act)


@command(
    "inservice",
    FLOOR,
    "inservice DEVICE",
    "put a repaired device back in service (ends its alternative)",
    args=[ooo_devices],
)
def cmd_inservice(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 1, 1, "inservice DEVICE")
    device = args[0]
    if device not in ooo_devices():
        raise CommandError(f"unknown device {device!r} (devices: {', '.join(ooo_devices())})")

    def act(table: ConsoleTable, log: Log) -> str:
        try:
            table.mark_in_service(device, f"console:{ctx.role}")
        except ValueError as e:
            raise Refused(str(e)) from None
        log(device=device)
        return f"{device} back in service"

    return ctx.act(act)


# --------------------------------------------------------------------------- the floor


@command(
    "validate",
    FLOOR,
    "validate",
    "validate the progressive hit waiting for a floorperson "
    "(§ 670a.11(h)(3)(i)(B)(III)); it is then paid from the meter",
)
def cmd_validate(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 0, 0, "validate")

    def act(table: ConsoleTable, log: Log) -> str:
        rnd = table.round
        if table.state != TableState.FLOOR_VALIDATION or rnd is None or not rnd.pending_hits:
            raise Refused("no progressive hit is waiting for validation")
        hit = rnd.pending_hits[0]
        table.validate_hit(f"console:{ctx.role}")
        log(seat=hit.seat, hand=hit.hand)
        return f"validated: seat {hit.seat} {hit.hand}; paid from the meter as it now stands"

    return ctx.act(act)


def _table_action(ctx: Ctx, action: Callable[[ConsoleTable, str], T], reply: Callable[[T], str]) -> str:
    """``action(table, by)``; a ValueError from the table is a refusal that changed nothing;
    ``reply(result)`` is the answer."""

    def act(table: ConsoleTable, log: Log) -> str:
        try:
            got = action(table, f"console:{ctx.role}")
        except ValueError as e:
            raise Refused(str(e)) from None
        log()
        return str(reply(got))

    return ctx.act(act)


@command("reshuffle", FLOOR, "reshuffle", "direct a reshuffle before the next deal (§ 670a.5(a), § 686a.5(f))")
def cmd_reshuffle(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 0, 0, "reshuffle")
    return _table_action(
        ctx,
        lambda t, by: t.floor_reshuffle(by),
        lambda _r: "reshuffle ordered: the cards are shuffled before the next deal",
    )


@command("newdealer", ALL, "newdealer", "record a new dealer at the table (Over/Under burns a card, § 686a.7(c))")
def cmd_newdealer(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 0, 0, "newdealer")
    return _table_action(
        ctx, lambda t, by: t.new_dealer(by), lambda note: "new dealer recorded" + (f": {note}" if note else "")
    )


@command(
    "same",
    ALL,
    "same SEAT SEAT",
    "record one player on two adjacent betting areas (boxes) this round (§ 670a.7(f), § 688a.7(f), § 659a.7(f), "
    "§ 687a.7(e)): no envy on his own hand",
)
def cmd_same(ctx: Ctx, args: list[str]) -> str:
    want_args(args, 2, 2, "same SEAT SEAT")
    a, b = (parse_int(x, "seat", 1, 7) for x in args)

    def act(table: ConsoleTable, log: Log) -> str:
        try:
            reply = table.same_player(a, b, f"console:{ctx.role}")
        except ValueError as e:
            raise Refused(str(e)) from None
        log(seats=[a, b])
        return str(reply).lower()

    return ctx.act(act)


# --------------------------------------------------------------------------- unlock


@command(
    "unlock",
    TECH,
    "unlock ROLE REASON...",
    "lift ROLE's login lock at every console endpoint, with a reason (audited in the ledger)",
    args=[ROLES],
)
def cmd_unlock(ctx: Ctx, args: list[str]) -> str:
    """A technician's override of a login lock-out: ``console.unlocked`` in the
    ledger (the role, the endpoints that were locked, who, why) before the lock is lifted."""
    if len(args) < 2 or args[0].lower() not in ROLES or len(" ".join(args[1:]).strip()) < 3:
        raise CommandError(f"usage: unlock ROLE REASON...  (ROLE one of {', '.join(ROLES)})")
    role, reason = args[0].lower(), " ".join(args[1:]).strip()
    ctx.log_now(target=role, reason=reason)
    ctx.session.log(Kind.CONSOLE_UNLOCKED, role=role, by=ctx.role, reason=reason)
    was = ctx.server.unlock(role)
    return f"unlocked {role}" + (f" (was locked at: {', '.join(was)})" if was else " (it was not locked)")
