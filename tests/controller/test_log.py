"""Log lines carry their syslog priority when, and only when, they go to the journal
(controller/core/log.py): journald files ``<N>``-prefixed lines at priority N, so
``journalctl -p warning`` shows warnings and worse."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from controller.core.log import LogContext, configure, is_journal_stream

ROOT = Path(__file__).resolve().parents[2]
PREFIX = re.compile(r"^<(\d)>")


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    configure(level="warning", json=True, journal=False)  # as tests/conftest.py sets it


def _journal(monkeypatch, f) -> None:
    """Make ``f`` the journal stream, as systemd does for a service's stdout."""
    st = os.fstat(f.fileno())
    monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")


def _log_every_level() -> None:
    log = LogContext("PG-01").logger("test")
    log.debug("d")
    log.info("i")
    log.warning("w")
    log.error("e")
    log.critical("c")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        log.exception("x")


def test_journal_lines_carry_their_syslog_priority(tmp_path, monkeypatch):
    path = tmp_path / "journal"
    with path.open("w") as f:
        _journal(monkeypatch, f)
        assert is_journal_stream(f)
        configure(stream=f, level="debug", json=True)  # journal=None: detected
        _log_every_level()
    lines = path.read_text().splitlines()
    assert len(lines) == 6, lines
    got = []
    for line in lines:
        m = PREFIX.match(line)
        assert m, line
        entry = json.loads(line[m.end() :])  # the rest is the JSON line as before
        got.append((entry["event"], entry["level"], int(m.group(1))))
    assert got == [
        ("d", "debug", 7),
        ("i", "info", 6),
        ("w", "warning", 4),
        ("e", "error", 3),
        ("c", "critical", 3),
        ("x", "error", 3),
    ]
    assert "RuntimeError: boom" in json.loads(lines[-1][3:])["exception"]


def test_journal_priority_filters_with_the_level(tmp_path, monkeypatch):
    path = tmp_path / "journal"
    with path.open("w") as f:
        _journal(monkeypatch, f)
        configure(stream=f, level="warning", json=True)
        _log_every_level()
    assert [line[:3] for line in path.read_text().splitlines()] == ["<4>", "<3>", "<3>", "<3>"]


def test_every_line_of_a_multiline_entry_is_prefixed(tmp_path, monkeypatch):
    # readable (non-JSON) lines put a traceback on lines of its own: journald files each
    # line as an entry, so each carries the priority of the entry it belongs to
    path = tmp_path / "journal"
    with path.open("w") as f:
        _journal(monkeypatch, f)
        configure(stream=f, level="info", json=False)
        try:
            raise ValueError("bad frame")
        except ValueError:
            LogContext("PG-01").logger("test").exception("link.failed")
    lines = [x for x in path.read_text().splitlines() if x]
    assert len(lines) > 3, lines
    assert all(x.startswith("<3>") for x in lines), lines
    assert any("ValueError: bad frame" in x for x in lines)


@pytest.mark.parametrize("value", [None, "", "garbage", "12:", ":34", "1:2:3", "x:y", "OTHER"])
def test_lines_stay_bare_when_the_stream_is_not_the_journal(tmp_path, monkeypatch, value):
    other = tmp_path / "other"
    other.write_text("")
    if value is None:
        monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    elif value == "OTHER":  # a journal stream inherited from a parent, but this is another file
        st = os.stat(other)
        monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
    else:
        monkeypatch.setenv("JOURNAL_STREAM", value)
    path = tmp_path / "log"
    with path.open("w") as f:
        assert not is_journal_stream(f)
        configure(stream=f, level="info", json=True)
        LogContext("PG-01").logger("test").warning("w")
    line = path.read_text().strip()
    assert line.startswith("{") and json.loads(line)["event"] == "w"


def test_a_stream_without_a_file_is_not_the_journal(monkeypatch):
    monkeypatch.setenv("JOURNAL_STREAM", "1:1")
    buf = io.StringIO()
    assert not is_journal_stream(buf)
    configure(stream=buf, level="info")
    LogContext("PG-01").logger("test").info("i")
    assert buf.getvalue().startswith("{")


def test_journal_forced_on_and_off(tmp_path, monkeypatch):
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    buf = io.StringIO()
    configure(stream=buf, level="info", json=True, journal=True)
    LogContext("PG-01").logger("test").info("i")
    assert buf.getvalue().startswith("<6>{")
    path = tmp_path / "journal"
    with path.open("w") as f:
        _journal(monkeypatch, f)
        configure(stream=f, level="info", json=True, journal=False)
        LogContext("PG-01").logger("test").info("i")
    assert path.read_text().startswith("{")


def test_a_service_process_whose_stdout_is_the_journal(tmp_path):
    """As under systemd: a fresh process, stdout a file named by JOURNAL_STREAM, and the
    default configure() (stdout, level info)."""
    out = tmp_path / "stdout"
    code = (
        "from controller.core.log import LogContext, configure\n"
        "configure()\n"
        "log = LogContext('PG-01').logger('service')\n"
        "log.info('service.started'); log.warning('tap.failed'); log.error('ledger.write_failed')\n"
    )
    with out.open("w") as f:
        st = os.fstat(f.fileno())
        env = {**os.environ, "JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}
        subprocess.run([sys.executable, "-c", code], stdout=f, env=env, cwd=ROOT, check=True, timeout=60)
    lines = out.read_text().splitlines()
    assert [(x[:3], json.loads(x[3:])["event"]) for x in lines] == [
        ("<6>", "service.started"),
        ("<4>", "tap.failed"),
        ("<3>", "ledger.write_failed"),
    ]


def test_the_unit_leaves_the_level_prefix_and_the_journal_on():
    """systemd/tablectl.service must not turn off SyslogLevelPrefix= (default on) nor send
    stdout/stderr anywhere but the journal, or the priorities would be lost."""
    unit = (ROOT / "systemd" / "tablectl.service").read_text()
    settings = [line.split("=", 1) for line in unit.splitlines() if "=" in line and not line.startswith("#")]
    for key, value in settings:
        if key.strip() == "SyslogLevelPrefix":
            assert value.strip().lower() in ("yes", "true", "on", "1"), value
        if key.strip() in ("StandardOutput", "StandardError"):
            assert value.strip() in ("journal", "journal+console", "inherit"), (key, value)
