"""The committed state diagram is current; logs carry table and round."""

from __future__ import annotations

import io
import json
from pathlib import Path

from controller.cli import main
from controller.games import available
from controller.play.machine import build, mermaid

ROOT = Path(__file__).resolve().parents[2]


def test_committed_diagram_is_up_to_date():
    committed = (ROOT / "docs" / "state-machine.md").read_text()
    assert committed == mermaid(), "docs/state-machine.md is stale: run `tablectl diagram`"


def test_diagram_stdout(capsys):
    assert main(["diagram", "--stdout"]) == 0
    out = capsys.readouterr().out
    for game, proc in available().items():
        states, _ = build(proc.phases)
        assert f"## {game}" in out and all(s in out for s in states)
    assert "stateDiagram-v2" in out


def test_json_logs_carry_table_and_round():
    from controller.core.log import LogContext, configure

    buf = io.StringIO()
    configure(stream=buf, level="info", json=None)  # a StringIO is not a terminal -> JSON
    ctx = LogContext("PG-07")
    ctx.set_round(42)
    ctx.logger("test").info("hello", x=1)
    line = json.loads(buf.getvalue().strip().splitlines()[-1])
    assert line["table"] == "PG-07" and line["round"] == 42 and line["event"] == "hello"
    configure(level="warning", json=True)


def test_each_command_module_is_named_as_its_command():
    # cli.main loads only the module named by the first argument (start-up time): the file name
    # must be the command's NAME, or `tablectl NAME` would not find its command
    import pkgutil

    from controller import cli, commands

    for info in pkgutil.iter_modules(commands.__path__):
        if not info.name.startswith("_"):
            (mod,) = cli._command_modules(info.name)
            assert mod.NAME == info.name


def test_run_loads_only_its_own_command_module():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from controller import cli\n"
        "try:\n"
        "    cli.main(['run', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('controller.commands.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "['controller.commands.run']"


def test_the_service_start_up_path_imports_no_numpy_analysis_or_simulators():
    # a Pi-class CPU starts the table in under a second only if the service's imports
    # are what the running table needs
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import controller.commands.run, controller.settings.config, controller.daemon.service, controller.core.log\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'hil', 'bench')"
        " or m.startswith('controller.analysis')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
