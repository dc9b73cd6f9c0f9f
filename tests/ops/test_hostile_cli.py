"""Every subcommand, run with hostile arguments (missing files, directories,
/dev/full, huge dates and numbers, files that are not UTF-8, a garbage or truncated ledger, a
link to /dev/zero), ends with a message and exit 0, 1 or 2, never a traceback nor "this is a
fault in tablectl".  Each case runs as its own process, stdin empty (or not UTF-8), with a
time limit: a command still running then (a service waiting for its socket) has shown no
traceback so far, which is checked too.  A subcommand with no cases here fails the test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from controller.cli import build_parser
from tests.ops import FAULT

pytestmark = pytest.mark.slow

M, DIR, BAD, GARB, TRUNC, FULL, ZERO, EMPTY, DAY = (
    "{missing}",
    "{dir}",
    "{bad}",
    "{garbage}",
    "{truncated}",
    "/dev/full",
    "{zero}",
    "{empty}",
    "2026-01-01",
)

#: per subcommand, argument lists; ``>FULL`` as the first item sends stdout to /dev/full,
#: ``<BAD`` sends a non-UTF-8 file to stdin
CASES: dict[str, list[list[str]]] = {
    "analyze": [
        ["--game", "blackjack", "--wager", "x"],
        ["--deck", "99", "--cards", "5"],
        ["--deck", "53", "--cards", "99"],
        ["--game", "six-card-fortune", "--paytable", "\u00e9\u00e9"],
        ["--game", "six-card-fortune", "--wager", "progressive", "--rate", "9999%"],
        [">FULL", "--list"],
        ["-o", "nokey"],
    ],
    "audit": [
        ["--state-dir", M],
        ["--state-dir", GARB],
        ["--state-dir", TRUNC],
        ["--config", BAD],
        ["--config", DIR],
        ["--state-dir", GARB, "--key-file", ZERO],
        ["--state-dir", GARB, "--key-file", DIR],
        ["--state-dir", GARB, "--witness-dir", ZERO],
        ["--config", "{nested}"],
    ],  # fmt: skip
    "backup": [
        [FULL, "--state-dir", GARB],
        [BAD, "--state-dir", GARB],
        [M + "/x", "--state-dir", M],
        ["{out}", "--state-dir", TRUNC],
        ["{out}", "--config", BAD],
        ["{out}", "--config", "{nested}"],
        [M + "/typo", "--state-dir", GARB],
    ],  # fmt: skip
    "bench": [["nosuch"], [">FULL", "list"]],
    "console": [
        ["--socket", M],
        ["--port", M],
        ["--port", DIR],
        ["--socket", DIR],
        ["--port", FULL, "--baud", "-5"],
        ["--wait", "1", "--socket", M],
        ["--wait", "-1"],
        ["--wait", "1e400"],
        ["--port", DIR, "--baud", "9" * 30],
    ],  # fmt: skip
    "diagram": [["--out", M + "/x/sm.md"], ["--out", DIR], ["--out", FULL], [">FULL", "--stdout"]],
    "eval": [["<BAD"], ["<BAD", "--rules", "dj-wild"], [">FULL", "<GOOD"]],
    "hil": [["run", M], ["run", BAD], ["run", DIR], ["run", FULL]],
    "history": [
        ["--state-dir", GARB],
        ["--state-dir", TRUNC],
        ["--config", BAD],
        ["99999999999999999999", "--state-dir", GARB],
        ["--last", "-1", "--state-dir", GARB],
        ["--config", DIR],
        ["--config", "{nested}"],
        ["99999999999999999999999", "--state-dir", GARB],
        ["--last", "999999999999999999999", "--state-dir", GARB],
    ],  # fmt: skip
    "key": [
        ["init", "--key-file", DIR],
        ["init", "--key-file", FULL],
        ["init", "--key-file", BAD],
        ["init", "--config", M],
        ["init", "--config", "{nested}"],
        ["init", "--config", BAD],
    ],  # fmt: skip
    "lap": [
        ["--db", "postgresql://x", "--config", BAD, "--check"],
        ["--db", "postgresql://x", "--config", M, "--check"],
        ["--db", "postgresql://x", "--config", DIR, "--check"],
        ["--db", "postgresql://x", "--config", "{tinyrate}", "--check"],
        ["--db", "postgresql://127.0.0.1:9/x", "--config", "{lap}", "--check"],
        ["--db", "postgresql://x", "--config", "{lap}", "--staff-pin", "nobody:king"],
        ["--db", "postgresql://127.0.0.1:9/x", "--config", "{nested}", "--check"],
        ["--db", "not-a-dsn", "--config", "{lap}", "--check", "--sim"],
        ["--db", "postgresql://x", "--config", "{lap}", "--report", "--day", "today", "--format", "pdf"],
    ],  # fmt: skip
    "meters": [
        ["--state-dir", GARB],
        ["--state-dir", TRUNC],
        ["--state-dir", M],
        ["--config", BAD],
        ["--config", "{nested}"],
    ],
    "migrate": [
        ["--state-dir", GARB],
        ["--state-dir", TRUNC, "--key-file", BAD],
        ["--config", DIR],
        ["--config", "{nested}"],
    ],  # fmt: skip
    "pin": [
        ["list", "--state-dir", M],
        ["list", "--state-dir", "{badpins}"],
        ["set", "king", "--state-dir", GARB, "--stdin"],
        ["set", "technician", "--state-dir", GARB, "--stdin", "<BAD"],
        ["list", "--config", BAD],
        ["list", "--config", "{nested}"],
    ],  # fmt: skip
    "report": [
        ["--day", "9999-12-31", "--state-dir", GARB],
        ["--day", "0001-01-01", "--state-dir", GARB],
        ["--day", DAY, "--state-dir", GARB, "--out", FULL],
        ["--day", DAY, "--state-dir", GARB, "--out", DIR],
        ["--day", DAY, "--state-dir", TRUNC],
        ["--day", DAY, "--tz", "../../etc/passwd", "--state-dir", GARB],
        ["--day", DAY, "--day-start", "25:99", "--state-dir", GARB],
        ["--day", DAY, "--config", "{nested}"],
        ["--day", "today", "--state-dir", GARB],
        ["--day", "today", "--format", "pdf", "--state-dir", GARB],
    ],  # fmt: skip
    "slip": [
        ["1", "1", "--state-dir", GARB],
        ["1", "1", "--state-dir", TRUNC],
        ["99999999999999999999", "1", "--state-dir", GARB],
        ["1", "-7", "--state-dir", GARB],
        ["1", "1", "--state-dir", GARB, "--out", FULL],
        ["1", "1", "--state-dir", GARB, "--out", DIR],
        ["1", "1", "--tz", "../../etc/passwd", "--state-dir", GARB],
        ["1", "1", "--config", BAD],
        ["1", "1", "--config", "{nested}"],
    ],  # fmt: skip
    "restore": [
        [EMPTY, "--state-dir", "{victim}"],
        [DIR, "--state-dir", "{victim}"],
        [BAD, "--state-dir", "{victim}"],
        [FULL, "--state-dir", "{victim}"],
        [M, "--state-dir", "{victim}"],
        [ZERO, "--state-dir", "{victim}"],
        [EMPTY, "--config", "{nested}"],
    ],  # fmt: skip
    "run": [
        ["--config", BAD, "--check"],
        ["--config", M, "--check"],
        ["--config", DIR, "--check", "--offline"],
        ["--config", ZERO, "--check"],
        ["--config", "{nested}", "--check"],
        ["--config", "{nested}", "--check", "--config-only", "--offline"],
    ],  # fmt: skip
    "sim": [
        ["--game", "blackjack"],
        ["--tables", "0"],
        ["--rounds", "0"],
        ["--floor", "nohost"],
        ["--speed", "-1"],
        ["--rounds", "1", "--state-dir", FULL],
        ["--rounds", "1", "--state-dir", GARB],
        ["--tables", "2", "--floor", "256.1.1.1:80"],
        ["--tables", "2", "--state-dir", M],
        ["--tables", "2", "--console-pty"],
        ["--tables", "2", "--rounds", "1", "--link", "postgresql://x@127.0.0.1:9/x"],
        ["--tables", "2", "--rounds", "1", "--link", "not-a-dsn"],
        ["--rounds", "1", "--log-level", "nope"],
        ["--rounds", "1", "--state-dir", "/proc/nope"],
        ["--rounds", "99999999999999999999"],
        ["--tables", "99999999999"],
        ["--speed", "1e400"],
    ],  # fmt: skip
    "status": [
        ["--state-dir", GARB],
        ["--state-dir", TRUNC],
        ["--state-dir", M],
        ["--config", BAD],
        ["--config", "{nested}"],
        ["--state-dir", GARB, "--key-file", ZERO],
        ["--state-dir", TRUNC, "--key-file", DIR],
    ],  # fmt: skip
    "uplink": [
        ["--config", BAD, "--check"],
        ["--config", M, "--check"],
        ["--config", DIR, "--check"],
        ["--config", "{longsock}", "--check"],
        ["--config", ZERO, "--check"],
        ["--config", "{nested}", "--check"],
    ],  # fmt: skip
    "verify": [
        ["--record-file", BAD],
        ["--record-file", DIR],
        ["--state-dir", GARB],
        ["--record-file", M],
        ["--record-file", ZERO],
        ["--record", "--record-file", M + "/x/software.json"],
        ["--config", BAD],
        ["--config", "{nested}"],
    ],  # fmt: skip
}


@pytest.fixture(scope="module")
def files(sim_ledger: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("hostile")
    bad = d / "bad.toml"
    bad.write_bytes(b"\xff\xfe\x00[table]\n\x80\x81")
    garbage = d / "garbage"
    garbage.mkdir()
    (garbage / "ledger.sqlite3").write_bytes(os.urandom(8192))
    (garbage / "pins.toml").write_bytes(b"\xff\xff")
    trunc = d / "truncated"
    trunc.mkdir()
    data = (sim_ledger / "ledger.sqlite3").read_bytes()
    (trunc / "ledger.sqlite3").write_bytes(data[: len(data) // 2])
    (d / "truncated-witness").mkdir()
    (d / "truncated-witness" / "witness.json").symlink_to("/dev/zero")
    shutil.copytree(sim_ledger.parent / f"{sim_ledger.name}-key", d / "truncated-key")
    victim = d / "victim"
    for sfx in ("", "-key", "-witness"):
        shutil.copytree(sim_ledger.parent / f"{sim_ledger.name}{sfx}", d / f"victim{sfx}")
    badpins = d / "badpins"
    badpins.mkdir()
    (badpins / "pins.toml").write_text("[technician\nhash = 1")
    (d / "empty.sqlite3").touch()
    (d / "zero").symlink_to("/dev/zero")
    tiny = d / "tiny.toml"
    tiny.write_text(
        '[link]\ngroup="p"\n[levels.a]\nseed="$1"\nincrement_rate="1e-30%"\n[tables.T]\nasset="a"\ngame="g"\n'
    )
    lap = d / "lap.toml"
    lap.write_text('[link]\ngroup="p"\n[levels.a]\nseed="$1"\nincrement_rate="1%"\n[tables.T]\nasset="a"\ngame="g"\n')
    longsock = d / "uplink.toml"
    longsock.write_text('[uplink]\ndb="x"\nschema="lap_p"\ntable="T"\nsocket="/' + "x" * 200 + '"\n')
    nested = d / "nested.toml"  # past the parser's recursion: a RecursionError before
    nested.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    good = d / "hands.txt"
    good.write_text("As Kd Qh Jc Ts\n" * 2000)
    return {
        "missing": str(d / "missing"),
        "dir": str(d),
        "bad": str(bad),
        "garbage": str(garbage),
        "truncated": str(trunc),
        "zero": str(d / "zero"),
        "empty": str(d / "empty.sqlite3"),
        "victim": str(victim),
        "badpins": str(badpins),
        "tinyrate": str(tiny),
        "lap": str(lap),
        "longsock": str(longsock),
        "out": str(d / "out"),
        "GOOD": str(good),
        "nested": str(nested),
    }


def test_every_subcommand_has_hostile_cases():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(CASES)  # type: ignore[arg-type]


def _run(argv: list[str], files: dict[str, str], timeout: float = 30) -> tuple[int | None, str]:
    stdout: int | IO[Any] = subprocess.PIPE
    stdin: int | IO[Any] = subprocess.DEVNULL
    args = []
    for a in argv:
        if a == ">FULL":
            stdout = open("/dev/full", "w")  # noqa: SIM115 - closed below
        elif a.startswith("<"):
            stdin = open(files["GOOD"] if a == "<GOOD" else files["bad"], "rb")  # noqa: SIM115
        else:
            args.append(a.format(**files))
    try:
        p = subprocess.Popen(
            [sys.executable, "-m", "controller", *args],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "TABLECTL_TRACEBACK": ""},
        )
        try:
            out, err = p.communicate(timeout=timeout)
            return p.returncode, (out or "") + err
        except subprocess.TimeoutExpired:
            p.terminate()
            out, err = p.communicate(timeout=30)
            return None, (out or "") + err
    finally:
        for f in (stdout, stdin):
            if not isinstance(f, int):
                f.close()


def _keeps_retrying(command: str, argv: list[str]) -> bool:
    """The console's bridge to a socket nobody serves keeps retrying (controller/console/relay.py:
    the technician sees why, and it connects once the controller starts): it is given 3 s, and
    must still be running then and have said why."""
    return command == "console" and argv[0] == "--socket"


@pytest.mark.parametrize("command", sorted(CASES))
def test_hostile_arguments_never_end_in_a_traceback(command, files):
    bad = []
    for argv in CASES[command]:
        retrying = _keeps_retrying(command, argv)
        rc, text = _run([command, *argv], files, timeout=3 if retrying else 30)
        if retrying and (rc is not None or "not running; retrying" not in text):
            bad.append(f"tablectl {command} {' '.join(argv)}: exit {rc}, expected to keep retrying\n{text[-1500:]}")
        if "Traceback" in text or FAULT in text or rc not in (None, 0, 1, 2):
            bad.append(f"tablectl {command} {' '.join(argv)}: exit {rc}\n{text[-1500:]}")
    assert not bad, "\n\n".join(bad)
