"""``config show|check|apply`` (SPEC § 5: parameters change only
between rounds, by a technician, and are logged).

* ``config show`` — the configuration in effect, one ``key = value`` a line;
* ``config check [FILE]`` — parse and range-check a hardware file (default: the
  one the service was started with) and list what differs from the running
  configuration, old and new;
* ``config apply [FILE]`` — apply a changed table profile between rounds (the
  table's ``apply_profile``), logged as ``config.applied`` with every changed
  value, old and new.  Changes to pins, ports, the table id or the state
  directory need a restart (``systemctl restart tablectl``), which logs them
  at start-up (``config.loaded``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from controller.console.registry import FLOOR, CommandError, Ctx, Log, Refused, command
from controller.core.records import Kind

if TYPE_CHECKING:
    from controller.console.port import ConsoleTable
    from controller.settings.hardware import HardwareConfig

LIVE_PREFIX = "profile."


def _running(ctx: Ctx) -> dict[str, str]:
    from controller.boot.selfcheck import config_values

    return ctx.service.config_values or config_values(ctx.service.hw)


def _load(ctx: Ctx, args: list[str]) -> tuple[HardwareConfig, str]:
    """The file checked as ``tablectl run`` checks it (controller/boot/startup.py): the hardware
    file, its profile and the game's options; an error names file, section and key and
    never quotes the file's bytes."""
    from controller.boot.startup import load_config
    from controller.settings.config import ConfigError

    path = args[0] if args else ctx.service.hw.file
    if not Path(path).is_file():
        raise CommandError(f"no configuration file {path!r}" + ("" if args else "; name one: config check FILE"))
    try:
        hw, _procedure = load_config(path)
    except ConfigError as e:
        raise CommandError(f"configuration invalid: {e}") from None
    return hw, path


def _diff(old: dict[str, str], new: dict[str, str]) -> dict[str, list[str | None]]:
    return {
        k: [old.get(k), new.get(k)]
        for k in sorted(set(old) | set(new))
        if old.get(k) != new.get(k) and not k.endswith(".file") and k != "file"
    }


def _subcommand(args: list[str]) -> str:
    if not args or args[0] not in ("show", "check", "apply") or len(args) > 2 or (args[0] == "show" and len(args) > 1):
        raise CommandError("usage: config show | config check [FILE] | config apply [FILE]")
    return args[0]


def _check_lines(diff: Mapping[str, object], restart: list[str]) -> list[str]:
    if not diff:
        return ["no changes from the running configuration"]
    if restart:
        return [f"{len(restart)} change(s) need a restart: {', '.join(restart[:5])}"]
    return []


def _check_apply(diff: Mapping[str, object], restart: list[str]) -> None:
    """Refused: nothing to apply, or a change that needs a restart."""
    if not diff:
        raise Refused("nothing to apply: the file matches the running configuration")
    if restart:
        raise Refused(
            f"{', '.join(restart[:5])} cannot change while running; restart the service "
            "(systemctl restart tablectl) - the change is logged at start-up"
        )


@command(
    "config",
    FLOOR,
    "config show|check [FILE]|apply [FILE]",
    "show, check or apply the configuration",
    args=[("show", "check", "apply")],
)
def cmd_config(ctx: Ctx, args: list[str]) -> str:
    from controller.boot.selfcheck import config_digest, config_values

    sub = _subcommand(args)
    if sub == "show":
        vals = _running(ctx)
        return "\n".join(f"{k} = {v}" for k, v in vals.items())
    if ctx.role != "technician":
        raise CommandError(f"config {sub} needs the technician role")
    hw, path = _load(ctx, args[1:])
    new = config_values(hw)
    diff = _diff(_running(ctx), new)
    restart = [k for k in diff if not k.startswith(LIVE_PREFIX)]
    lines = [f"{path}: OK"] + [f"  {k}: {o} -> {n}" for k, (o, n) in diff.items()]
    if sub == "check":
        lines += _check_lines(diff, restart)
        ctx.detail = {"file": path, "changes": len(diff)}
        return "\n".join(lines)
    _check_apply(diff, restart)

    def act(table: ConsoleTable, log: Log) -> str:
        try:  # the table refuses it during a round, changing nothing
            table.apply_profile(hw.profile)
        except ValueError as e:
            raise Refused(str(e)) from None
        log(file=path)
        table.commit(
            [
                table.rec(
                    Kind.CONFIG_APPLIED,
                    file=path,
                    by=f"console:{ctx.role}",
                    changed=diff,
                    values=new,
                    digest=config_digest(new),
                )
            ]
        )
        ctx.service.config_values = new
        return "\n".join(lines + [f"applied {len(diff)} change(s)"])

    return ctx.act(act)
