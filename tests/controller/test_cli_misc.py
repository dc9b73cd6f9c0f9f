"""The committed state diagram is current; logs carry table and round."""

from __future__ import annotations

import io
import json
from pathlib import Path

from controller.cli import main
from controller.games import available
from controller.machine import build, mermaid

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
    from controller.log import LogContext, configure

    buf = io.StringIO()
    configure(stream=buf, level="info", json=None)  # a StringIO is not a terminal -> JSON
    ctx = LogContext("PG-07")
    ctx.set_round(42)
    ctx.logger("test").info("hello", x=1)
    line = json.loads(buf.getvalue().strip().splitlines()[-1])
    assert line["table"] == "PG-07" and line["round"] == 42 and line["event"] == "hello"
    configure(level="warning", json=True)
