"""Every error found trying tablectl as a new user and as a technician would is a
clear message and exit 2 (usage, configuration) or 1 (an operation that failed), never a
traceback.  One test per case; each failed at the branch's start (a traceback, exit 1 for a
configuration error, or a check that passed what it should refuse), as noted on each."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from controller.cli import main
from tests.ops import FAULT

LAP_TOML = """[link]
group = "pit1"
[levels.primary]
seed = "$5,000"
increment_rate = "{rate}"
max_wager = "$5"
meter_pays = ["100%", "10%"]
[tables.T01]
asset = "A-1"
game = "six-card-fortune"
"""


def fails(capsys: pytest.CaptureFixture[str], argv: list[str], rc: int, *said: str) -> str:
    """Run ``tablectl argv``: exit ``rc``, each of ``said`` on stderr, no traceback, no fault."""
    try:
        got = main(argv)
    except SystemExit as e:  # argparse's usage errors
        got = int(e.code or 0)
    out, err = capsys.readouterr()
    assert got == rc, (got, out, err)
    assert "Traceback" not in out + err and FAULT not in err, err
    for s in said:
        assert s in err, (s, err)
    return err


# --------------------------------------------------------------------------- sim


def test_sim_unknown_game_lists_the_games_and_guesses(capsys):
    # before: ProfileUnreadable traceback, exit 1
    fails(capsys, ["sim", "--game", "blackjack"], 2, "no game 'blackjack'", "games: dj-wild, face-up")
    fails(capsys, ["sim", "--game", "six-card-fortun"], 2, "did you mean 'six-card-fortune'")


def test_sim_tables_zero_is_refused(capsys):
    # before: silently played one unlinked table, exit 0
    fails(capsys, ["sim", "--tables", "0", "--rounds", "1"], 2, "--tables must be at least 1")


def test_sim_floor_on_a_busy_port_is_refused_before_anything_starts(capsys, monkeypatch):
    # before: an OSError traceback after a throwaway PostgreSQL cluster had been started
    started = []
    import hil.linksim

    def run_link_sim(*a: Any, **kw: Any) -> int:
        started.append((a, kw))
        return 0

    monkeypatch.setattr(hil.linksim, "run_link_sim", run_link_sim)
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        fails(capsys, ["sim", "--tables", "2", "--floor", f"127.0.0.1:{port}"], 2, "cannot listen there")
    assert started == []


def test_sim_on_a_ledger_that_tilts_at_start_says_why(ledger_copy, capsys):
    # before: TimeoutError traceback after 30 s ("table did not reach the expected state")
    for p in ledger_copy.glob("ledger.sqlite3*"):
        p.unlink()  # the witness says events were recorded: a latched tilt at start
    fails(
        capsys,
        ["sim", "--rounds", "1", "--state-dir", str(ledger_copy)],
        1,
        "the table did not open: it is in a latched tilt",
        "the witness says",
        f"tablectl audit --state-dir {ledger_copy}",
    )


# --------------------------------------------------------------------------- report


@pytest.mark.parametrize(
    ("out", "rc", "said"),
    [
        ("missing/r.csv", 2, "there is no directory"),
        (".", 2, "is a directory"),
        ("/dev/full", 1, "No space left on device"),
    ],
)
def test_report_out_that_cannot_be_written(out, rc, said, ledger_copy, tmp_path, capsys):
    # before: FileNotFoundError / IsADirectoryError / OSError tracebacks
    target = out if out.startswith("/") else str(tmp_path / out)
    day = ["--day", "2026-01-01", "--state-dir", str(ledger_copy)]
    fails(capsys, ["report", *day, "--out", target], rc, said)
    fails(capsys, ["report", *day, "--format", "pdf", "--out", target], rc, said)


def test_report_day_out_of_range(ledger_copy, capsys):
    # before: OverflowError traceback ("date value out of range")
    fails(capsys, ["report", "--day", "9999-12-31", "--state-dir", str(ledger_copy)], 2, "a gaming day from")


# --------------------------------------------------------------------------- ledger readers


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
@pytest.mark.parametrize("cmd", ["status", "meters"])
def test_status_on_a_truncated_or_garbage_ledger(cmd, damage, ledger_copy, capsys):
    # before: sqlite3.DatabaseError traceback
    led = ledger_copy / "ledger.sqlite3"
    data = led.read_bytes()
    led.write_bytes(data[: len(data) // 3] if damage == "truncated" else bytes(range(256)) * 64)
    for side in ledger_copy.glob("ledger.sqlite3-*"):
        side.unlink()
    fails(capsys, [cmd, "--state-dir", str(ledger_copy)], 1, "cannot be read")


def test_restore_of_an_empty_file(ledger_copy, tmp_path, capsys):
    # before: sqlite3.OperationalError traceback ("no such table: events")
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    before = (ledger_copy / "ledger.sqlite3").read_bytes()
    fails(capsys, ["restore", str(empty), "--state-dir", str(ledger_copy)], 1, "not a readable ledger")
    assert (ledger_copy / "ledger.sqlite3").read_bytes() == before


# --------------------------------------------------------------------------- linked progressive configs


def test_a_lap_toml_that_is_not_utf8_is_a_configuration_error(tmp_path, capsys):
    # before: UnicodeDecodeError traceback, exit 1 (systemd restarts on 1, not on 2)
    bad = tmp_path / "lap.toml"
    bad.write_bytes(b"\xff\xfe[link]\n")
    fails(capsys, ["lap", "--db", "postgresql://127.0.0.1:9/x", "--config", str(bad), "--check"], 2, "not UTF-8")


def test_a_tiny_increment_rate_is_refused_by_lap_check(tmp_path, capsys):
    # before: `lap --check` passed it; the LAP then died on "bigint out of range"
    cfg = tmp_path / "lap.toml"
    cfg.write_text(LAP_TOML.format(rate="0.0000000000000000001%"))
    fails(capsys, ["lap", "--db", "postgresql://x", "--config", str(cfg), "--check"], 2, "increment_rate", "finer than")
    from controller.lap.config import RATE_DEN, load_lap

    cfg.write_text(LAP_TOML.format(rate="21.0125%"))  # four decimals: kept
    assert RATE_DEN % load_lap(cfg).levels[0].rate.denominator == 0


UPLINK = '[uplink]\ndb = "x"\nschema = "lap_pit1"\ntable = "T01"\n'


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('socket = "/run/' + "s" * 110 + '/link.sock"\n', "at most 107 (AF_UNIX)"),
        ('ledger = "var/lib/tablectl/ledger.sqlite3"\n', "must be an absolute path"),
        ('socket = "link.sock"\n', "must be an absolute path"),
    ],
)
def test_uplink_check_refuses_a_socket_path_too_long_and_relative_paths(extra, said, tmp_path, capsys):
    # before: `uplink --check` said OK to each
    cfg = tmp_path / "uplink.toml"
    cfg.write_text(UPLINK + extra)
    fails(capsys, ["uplink", "--config", str(cfg), "--check"], 2, said)


# --------------------------------------------------------------------------- analyze


def test_analyze_unknown_game_and_wager_and_paytable_guess(capsys):
    # before: "no analysis for game 'blackjack' wager 'x' (wagers of blackjack with one: none)"
    fails(capsys, ["analyze", "--game", "blackjack", "--wager", "x"], 2, "no game 'blackjack'", "games: dj-wild")
    fails(capsys, ["analyze", "--game", "face-upp", "--wager", "x"], 2, "did you mean 'face-up'")
    fails(capsys, ["analyze", "--game", "six-card-fortune", "--wager", "progresive"], 2, "did you mean 'progressive'")
    fails(
        capsys,
        ["analyze", "--game", "six-card-fortune", "--paytable", "Six-Card Fortune Bonu"],
        2,
        "did you mean 'Six-Card Fortune Bonus'",
    )


# --------------------------------------------------------------------------- the CLI itself


def test_an_unforeseen_exception_is_one_line_not_a_traceback(monkeypatch, capsys):
    from controller.commands import eval as ev

    def boom(args):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(ev, "run", boom)
    assert main(["eval"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ZeroDivisionError: boom" in err and FAULT in err


def test_diagram_refuses_to_write_into_an_installed_tree(monkeypatch, tmp_path, capsys):
    # before: it wrote site-packages/docs/state-machine.md, and `verify` said MISMATCH
    from controller.commands import diagram

    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.setattr(diagram, "_ROOT", site)
    monkeypatch.setattr(diagram, "DEFAULT_PATH", site / "docs" / "state-machine.md")
    fails(capsys, ["diagram"], 2, "not a checkout", "--out FILE")
    assert list(site.iterdir()) == []
    assert main(["diagram", "--out", str(tmp_path / "sm.md")]) == 0
    assert "stateDiagram-v2" in (tmp_path / "sm.md").read_text()
    fails(capsys, ["diagram", "--out", str(tmp_path / "no" / "sm.md")], 2, "there is no directory")


def test_the_simulators_missing_say_what_to_install(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n in ("hil", "bench") else real(n, *a))
    for argv in (["sim", "--rounds", "1"], ["hil", "run"], ["bench", "list"]):
        fails(capsys, argv, 2, "tablectl-rigs", "a table's release leaves them out")


def test_stdout_on_dev_full_is_said(tmp_path):
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [sys.executable, "-m", "controller", "analyze", "--list"], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert r.returncode == 1 and "No space left on device" in r.stderr and "Traceback" not in r.stderr


def test_the_cli_names_a_fault_as_the_tests_expect():
    from controller import cli

    assert cli.FAULT == FAULT
