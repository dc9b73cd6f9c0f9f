"""The service's parts on their own (docs/architecture.md "The service in parts"):
each is built with only what it uses and owns its start and stop — the ledger stack, the
device set's RNG, the self-checks' record data, readiness."""

from __future__ import annotations

import socket
import tomllib
from pathlib import Path

import pytest

from controller.books.ledgerkey import init_key, read_key
from controller.daemon.ledgerstack import LedgerStack
from controller.daemon.options import StandIns
from controller.daemon.sdnotify import Notifier
from controller.settings.hardware import HardwareConfig, parse_hardware

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config" / "examples" / "table.toml"


def _stack(hw: HardwareConfig, tmp_path: Path) -> LedgerStack:
    """The ledger stack as the service makes it: handed the [ledger] section, the state directory and the table."""
    return LedgerStack(hw.ledger, hw.state_dir, hw.table_id, _key(tmp_path))


def _hw(tmp_path: Path) -> HardwareConfig:
    doc = tomllib.loads(EXAMPLE.read_text())
    doc["table"]["state_dir"] = str(tmp_path / "state")
    doc["table"].pop("software_record", None)
    doc["ledger"] = {"witness_dir": str(tmp_path / "witness")}
    (tmp_path / "state").mkdir(mode=0o700)
    (tmp_path / "witness").mkdir(mode=0o700)
    return parse_hardware(doc, "table.toml")


def _key(tmp_path: Path) -> bytes:
    path = tmp_path / "key"
    init_key(path)
    return read_key(path)


# --------------------------------------------------------------------------- the ledger stack
def test_ledger_stack_opens_checks_and_stops_in_order(tmp_path: Path) -> None:
    from controller.books.statelock import StateLock, StateLocked

    hw = _hw(tmp_path)
    stack = _stack(hw, tmp_path)
    ledger = stack.open()
    # the witness was read before the ledger was opened (and created): none yet
    assert stack.witnessed is None and ledger.path == stack.ledger_path
    # the state directory is the service's while it runs: a restore cannot take it
    with pytest.raises(StateLocked):
        StateLock(hw.state_dir).acquire("a restore")
    # a fresh ledger is sound with no witness yet; after the check one is written
    assert stack.check(full=True) == []
    assert stack.witness is not None and not stack.witness.path.exists()
    problems, recovered = stack.after_check(ledger_ok=True)
    assert problems == [] and recovered == []
    assert stack.witness is not None and stack.witness.path.exists() and stack.journal is not None
    stack.stop()
    StateLock(hw.state_dir).acquire("a restore").release()  # let go at stop


def test_ledger_stack_release_keeps_the_ledger_to_record_a_halt(tmp_path: Path) -> None:
    stack = _stack(_hw(tmp_path), tmp_path)
    ledger = stack.open()
    stack.release(keep_ledger=True)
    assert stack.ledger is ledger
    stack.record_tilt("gpio", "gpio: OSError: no pins")
    assert [e.kind for e in ledger.events()][-1] == "tilt.raised"
    stack.release()
    assert stack.ledger is None
    stack.stop()


def test_ledger_stack_refuses_work_before_it_is_open(tmp_path: Path) -> None:
    stack = _stack(_hw(tmp_path), tmp_path)
    with pytest.raises(RuntimeError, match="has not opened its ledger"):
        stack.check(full=True)
    assert stack.where_for_audit().state_dir == tmp_path / "state"  # the configuration's, before open


# --------------------------------------------------------------------------- the device set's RNG
def test_device_set_self_tests_the_rng_in_use(tmp_path: Path) -> None:
    from controller.core.clock import MonotonicClock
    from controller.core.log import LogContext
    from controller.daemon.deviceset import DeviceSet
    from hil.devices import ScriptedRng

    hw, clock = _hw(tmp_path), MonotonicClock()

    class Plain:
        def draw(self, n: int) -> int:
            return 1

    plain = DeviceSet(hw.gpio, hw.serial, clock, LogContext("T"), StandIns(rng=Plain()))
    assert plain.rng_test() is None  # no self-test of its own
    scripted = ScriptedRng(7)
    test = DeviceSet(hw.gpio, hw.serial, clock, LogContext("T"), StandIns(rng=scripted)).rng_test()
    assert test is not None and test(2000) == []
    scripted.biased = True
    assert test is not None and test(20_000), "the biased source fails the test it was given"


def test_device_set_makes_the_secrets_rng_once(tmp_path: Path) -> None:
    from controller.core.clock import MonotonicClock
    from controller.core.log import LogContext
    from controller.daemon.deviceset import DeviceSet
    from drivers.rng import SecretsRng

    hw = _hw(tmp_path)
    devices = DeviceSet(hw.gpio, hw.serial, MonotonicClock(), LogContext("T"))
    assert isinstance(devices.rng, SecretsRng) and devices.rng is devices.rng


# --------------------------------------------------------------------------- the self-checks
def test_start_checks_keep_what_they_found(tmp_path: Path) -> None:
    from controller.boot.startchecks import StartChecks

    checks = StartChecks(_hw(tmp_path))
    with pytest.raises(RuntimeError, match="have not run"):
        checks.records_data()
    assert not checks.ledger_passed()
    checks.add_problems(["witness: cannot write it"])
    assert checks.problems == ["witness: cannot write it"]


# --------------------------------------------------------------------------- readiness
@pytest.fixture
def notify_socket(tmp_path: Path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify"
    sock.bind(str(path))
    sock.settimeout(2)
    yield path, sock
    sock.close()


def test_readiness_sends_ready_once_then_status_changes_only(notify_socket) -> None:
    from controller.daemon.readiness import Readiness

    path, sock = notify_socket
    line = ["open_for_wagers round 1"]
    r = Readiness(lambda: line[0], Notifier({"NOTIFY_SOCKET": str(path)}))
    r.idle()  # before READY=1: no status line
    r.send_ready()
    r.send_ready()
    assert sock.recv(4096) == b"READY=1\nSTATUS=open_for_wagers round 1"
    r.idle()
    assert sock.recv(4096) == b"STATUS=open_for_wagers round 1"
    r.idle()  # unchanged: nothing sent
    line[0] = "tilt round 1 TILT shoe: gone"
    r.idle()
    assert sock.recv(4096) == b"STATUS=tilt round 1 TILT shoe: gone"
    assert r.ready.is_set()


def test_readiness_of_a_halted_start_up_names_the_stage(notify_socket) -> None:
    from controller.daemon.readiness import Readiness

    path, sock = notify_socket
    r = Readiness(lambda: "never shown", Notifier({"NOTIFY_SOCKET": str(path)}))
    r.enter("gpio")
    r.halt("gpio: OSError: no such chip")
    assert sock.recv(4096) == b"READY=1\nSTATUS=closed TILT gpio: OSError: no such chip; fix it and restart the service"
    with pytest.raises(ValueError, match="lunch"):
        r.enter("lunch")  # not a stage of the start-up
