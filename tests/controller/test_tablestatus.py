"""``tablectl status``, ``tablectl meters`` and ``tablectl history --hits`` for a
technician at a shell: read from the ledger read-only, amounts in dollars
and cents, times in the machine's time zone (the ledger keeps UTC)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from controller.books.ledger import Head, Ledger, Record
from controller.books.ledgerkey import init_key, read_key
from controller.books.witness import Witness, default_witness_dir
from controller.cli import main
from controller.core.records import Kind
from controller.daemon.service import LEDGER_FILE
from controller.reports.tablestatus import ReadOnlyLedger, format_status, local_time, round_view, sign_message

# 16:00:05 UTC on 4 July 2026 = 12:00:05 EDT in New York
T0 = datetime(2026, 7, 4, 16, 0, 5, tzinfo=UTC).timestamp()
LEVEL = "primary"


@pytest.fixture
def new_york(monkeypatch):
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def key_file(state: Path) -> Path:
    return state.parent / f"{state.name}-key" / "ledger.key"


def key_of(state: Path) -> bytes:
    """The ledger's key (a throwaway one, kept beside the state directory for ``history``)."""
    if not key_file(state).exists():
        init_key(key_file(state))
    return read_key(key_file(state))


def write(state: Path, *batches: list[Record]) -> None:
    led = Ledger(state / LEDGER_FILE, "PG-07", wall_clock=lambda: T0, key=key_of(state))
    try:
        for b in batches:
            led.append(b)
        # the witness of the head, as the service's writer keeps it (history refuses a ledger without)
        Witness(default_witness_dir(state), "PG-07", key_of(state)).write(led.head())
    finally:
        led.close()


START = [
    Record(Kind.POWER_UP, 0, {"version": "test"}),
    Record(Kind.METER_INIT, 0, {"level": LEVEL, "seed": 500_000, "rate": "21/100"}),
]
ROUND_TO_HIT = [
    Record(Kind.ROUND_OPEN, 1, {}),
    Record(Kind.WAGER_ACCEPTED, 1, {"seat": 3, "spot": "progressive", "cents": 100}),
    Record(Kind.METER_INCREMENT, 1, {"level": LEVEL, "wager": 100, "rate": "21/100"}),
    Record(Kind.LOCKOUT, 1, {"count": 1, "wagers": 1}),
    Record(Kind.DICE, 1, {"dice": [2, 3, 4], "total": 9, "red": 0, "start": 2}),
    Record(Kind.DEAL, 1, {"hands": {}}),
    Record(
        Kind.HIT_PENDING,
        1,
        {"seat": 3, "hand": "royal-flush", "cents": 100, "fraction": "1/10", "order": 1},  # cents: the wager
    ),
]
HIT_PAID = [
    Record(Kind.HIT_VALIDATED, 1, {"seat": 3, "hand": "royal-flush", "by": "key", "order": 1}),
    Record(Kind.METER_PAYOUT, 1, {"level": LEVEL, "seat": 3, "hand": "royal-flush", "cents": 50_002, "order": 1}),
    Record(Kind.ROUND_COMPLETE, 1, {}),
]


def test_status_a_linked_hit_validated_while_awaiting_the_lap(tmp_path, new_york):
    awaiting = Record(Kind.HIT_AWAITING_LAP, 1, {"seat": 3, "hand": "royal-flush", "by": "key", "hit_seq": 9})
    write(tmp_path, START, ROUND_TO_HIT, [awaiting])
    text = format_status(ReadOnlyLedger(tmp_path / LEDGER_FILE), None)
    assert "round 1: hit validated, waiting for the LAP (in progress)" in text
    assert "'HIT SEAT 3 VALIDATED - WAITING FOR LINK'" in text


def test_local_time_is_the_machines_zone(new_york):
    assert local_time("2026-07-04T16:00:05.123456+00:00") == "2026-07-04 12:00:05 EDT"
    assert local_time("2026-01-04T16:00:05.000000+00:00") == "2026-01-04 11:00:05 EST"


def test_history_hits_in_dollars_and_local_time(tmp_path, capsys, new_york):
    write(tmp_path, START, ROUND_TO_HIT, HIT_PAID)
    assert main(["history", "--hits", "--state-dir", str(tmp_path), "--key-file", str(key_file(tmp_path))]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("2026-07-04 12:00:05 EDT  round     1  seat 3  royal-flush"), out
    assert "$500.02" in out and "meter hit, paid by the attendant" in out
    assert "16:00" not in out and "50002" not in out and "500.02 " not in out.replace("$500.02", "")


def test_status_mid_round_awaiting_validation(tmp_path, new_york):
    write(tmp_path, START, ROUND_TO_HIT)
    led = ReadOnlyLedger(tmp_path / LEDGER_FILE)
    text = format_status(led, None)
    assert "table PG-07" in text
    assert "last event: #9 hit.pending at 2026-07-04 12:00:05 EDT" in text
    assert "table: open" in text
    assert "round 1: awaiting floor validation (in progress)" in text
    assert "tilts: none" in text
    # a meter hit's amount is fixed when it is paid (§ 670a.12(d)(3)): its share, and the $1 wager (not a pay)
    assert "meter hit awaiting a floorperson's validation: seat 3 royal-flush, 10% of the meter (wager $1.00)" in text
    # $5,000 seed + 21% of $1 = $5,000.21 exactly
    assert "meters: primary $5,000.21" in text
    assert "sign: $5,000.21  'HIT SEAT 3 ROYAL-FLUSH - CALL FLOOR'" in text
    assert "service: unknown (systemd not reachable here" in text


def test_status_after_the_round_and_a_tilt(tmp_path, new_york):
    write(
        tmp_path,
        START,
        ROUND_TO_HIT,
        HIT_PAID,
        [Record(Kind.TILT_RAISED, 1, {"source": "shoe", "reason": "card jam"})],
    )
    led = ReadOnlyLedger(tmp_path / LEDGER_FILE)
    text = format_status(led, {"ActiveState": "active", "SubState": "running", "StatusText": "tilt round 1"})
    assert "table: closed (tilt: a technician must clear it)" in text
    assert "round 1: complete" in text and "in progress" not in text
    assert "tilts: shoe: card jam" in text
    assert "meters: primary $4,500.19" in text  # $5,000.21 - $500.02
    assert "sign: $4,500.19  'TILT - CALL TECHNICIAN'" in text
    assert "service: active (running)  status: tilt round 1" in text


def test_status_when_the_service_is_stopped(tmp_path):
    write(tmp_path, START)
    text = format_status(ReadOnlyLedger(tmp_path / LEDGER_FILE), {"ActiveState": "inactive", "SubState": "dead"})
    assert "table: closed (service inactive)" in text and "round: none played yet" in text
    assert "sign: $5,000.00  'PLACE YOUR BETS'" in text


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "START POSITION 2"),
        ([Record(Kind.ROUND_VOID, 1, {"reason": "shoe"})], "ROUND VOID - WAGERS RETURNED"),
    ],
)
def test_sign_follows_the_recorded_step(tmp_path, extra, message):
    write(tmp_path, START, ROUND_TO_HIT[:5], extra)
    led = ReadOnlyLedger(tmp_path / LEDGER_FILE)
    assert sign_message({}, {}, round_view(led)) == message


def test_sign_after_lockout_shows_the_count(tmp_path):
    write(tmp_path, START, ROUND_TO_HIT[:4])
    led = ReadOnlyLedger(tmp_path / LEDGER_FILE)
    assert round_view(led).step == "no more bets"
    assert sign_message({}, {}, round_view(led)) == "NO MORE BETS - COUNT 1"


def test_status_and_meters_commands_read_only(tmp_path, capsys, new_york):
    write(tmp_path, START, ROUND_TO_HIT, HIT_PAID)
    path = tmp_path / LEDGER_FILE
    before = path.read_bytes()
    assert main(["status", "--state-dir", str(tmp_path), "--unit", "tablectl-test-none.service"]) == 0
    out = capsys.readouterr().out
    assert "round 1: complete" in out and "meters: primary $4,500.19" in out
    assert main(["meters", "--state-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("primary: $4,500.19  (the sign shows $4,500.19; hidden remainder none)"), out
    # the words of every output: meter hits and fixed pays, counts that read right
    assert "meter hits 1 (paid by an attendant $500.02)  fixed pays 0" in out and "WARNING" not in out
    assert "contributions: 1 wager, $0.21" in out
    assert path.read_bytes() == before  # nothing written


def test_missing_ledger_is_exit_1(tmp_path, capsys):
    assert main(["status", "--state-dir", str(tmp_path)]) == 1
    assert "no ledger at" in capsys.readouterr().err


def test_service_status_asks_systemctl(tmp_path, monkeypatch):
    from controller.reports.tablestatus import service_status

    fake = tmp_path / "systemctl"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" > {tmp_path / "args"}\n'
        "echo ActiveState=active\necho SubState=running\necho 'StatusText=open_for_wagers round 12'\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    st = service_status("tablectl.service")
    assert st is not None and st["ActiveState"] == "active" and st["StatusText"] == "open_for_wagers round 12"
    assert (tmp_path / "args").read_text().startswith("show tablectl.service --property=ActiveState,SubState")
    fake.write_text("#!/bin/sh\nexit 1\n")
    assert service_status() is None  # no system bus, no such unit: not reachable
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert service_status() is None


def test_status_says_the_ledger_reaches_its_witness(tmp_path, capsys):
    write(tmp_path, START, ROUND_TO_HIT)
    assert main(["status", "--state-dir", str(tmp_path), "--unit", "tablectl-test-none.service"]) == 0
    out = capsys.readouterr().out
    assert "ledger check: reaches the witness (event #" in out and "PROBLEM" not in out


def test_status_names_a_ledger_rolled_back_behind_its_witness(tmp_path, capsys):
    """An older copy put back (consistent in itself: every MAC checks) is behind the witness."""
    write(tmp_path, START)
    old = (tmp_path / LEDGER_FILE).read_bytes()
    write(tmp_path, ROUND_TO_HIT, HIT_PAID)
    (tmp_path / LEDGER_FILE).write_bytes(old)
    # exit 1: a ledger failing its check is said, never shown as an open table
    assert main(["status", "--state-dir", str(tmp_path), "--unit", "tablectl-test-none.service"]) == 1
    out = capsys.readouterr().out
    assert "table: open" not in out
    line = next(x for x in out.splitlines() if x.startswith("ledger check:"))
    assert "PROBLEM" in line and "but the witness says" in line and "tablectl audit" in line, line


def test_status_names_a_ledger_rewritten_at_the_witnessed_event(tmp_path):
    write(tmp_path, START, ROUND_TO_HIT)
    led = ReadOnlyLedger(tmp_path / LEDGER_FILE)
    count = led.last_event().seq  # type: ignore[union-attr]
    led.close()
    Witness(default_witness_dir(tmp_path), "PG-07").write(Head(count, "f" * 64))  # another ledger's MAC
    led = ReadOnlyLedger(tmp_path / LEDGER_FILE)
    try:
        text = format_status(led, None, default_witness_dir(tmp_path))
    finally:
        led.close()
    assert f"ledger check: PROBLEM: event {count}: its MAC differs from the witness's" in text
