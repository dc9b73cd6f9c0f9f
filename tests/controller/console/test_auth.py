"""PINs per role (scrypt, salted, parameters stored), the PIN file, and the lock-out."""

from __future__ import annotations

import stat
from types import SimpleNamespace

import pytest

from controller.console.auth import Lockout, PinError, PinStore, hash_pin, verify_pin
from tests.hil.console.conftest import FAST_SCRYPT


def test_scrypt_hash_is_salted_and_carries_its_parameters():
    a, b = hash_pin("4321", **FAST_SCRYPT), hash_pin("4321", **FAST_SCRYPT)
    assert a != b and a.startswith("scrypt$1024$8$1$") and "4321" not in a
    assert verify_pin("4321", a) and verify_pin("4321", b)
    assert not verify_pin("4322", a)
    assert not verify_pin("4321", "scrypt$1024$8$1$zz$00") and not verify_pin("4321", "md5$x")


def test_pin_store(tmp_path):
    store = PinStore(tmp_path / "pins.toml")
    assert store.verify("technician", "1234") is None and store.roles_set() == []
    store.set("technician", "123456", **FAST_SCRYPT)
    assert stat.S_IMODE((tmp_path / "pins.toml").stat().st_mode) == 0o600
    assert store.verify("technician", "123456") is True and store.verify("technician", "123457") is False
    with pytest.raises(PinError, match="already the technician's"):
        store.set("dealer", "123456", **FAST_SCRYPT)  # roles need different PINs
    for bad in ("123", "1234567890123", "12a4", "١٢٣٤"):
        with pytest.raises(PinError, match="4 to 12 digits"):
            store.set("dealer", bad, **FAST_SCRYPT)
    with pytest.raises(PinError, match="unknown role 'boss'"):
        store.set("boss", "9999", **FAST_SCRYPT)
    fp = store.fingerprint()
    store.set("dealer", "9999", **FAST_SCRYPT)
    assert store.roles_set() == ["dealer", "technician"] and store.fingerprint() != fp
    assert "123456" not in (tmp_path / "pins.toml").read_text()


def ev(kind, **data):
    return SimpleNamespace(kind=kind, data=data)


def test_lockout_counts_failures_per_role_and_endpoint_and_expires():
    """Failures per (role, endpoint) on the monotonic clock.  Before: one counter for
    every role, reset by anyone's success, on the wall clock."""
    now = [100.0]
    lk = Lockout(max_failures=5, period_s=60, clock=lambda: now[0])
    for _ in range(4):
        assert lk.fail("dealer", "pty") == (lk.failures[("dealer", "pty")], False)
    lk.succeed("technician", "pty")  # a success for another role resets nothing of the dealer's
    assert lk.failures[("dealer", "pty")] == 4
    assert lk.fail("dealer", "pty") == (5, True)
    assert lk.remaining("dealer", "pty") == 60.0
    # a dealer's failures never lock the technician out, nor the dealer at another endpoint
    assert lk.remaining("technician", "pty") == 0 and lk.remaining("dealer", "socket") == 0
    now[0] = 159.5
    assert lk.remaining("dealer", "pty") == 0.5
    now[0] = 160.0
    assert lk.remaining("dealer", "pty") == 0 and ("dealer", "pty") not in lk.failures
    lk.fail("dealer", "pty")
    lk.succeed("dealer", "pty")
    assert ("dealer", "pty") not in lk.failures


def test_a_technician_unlock_lifts_one_role_only():
    now = [0.0]
    lk = Lockout(max_failures=2, period_s=600, clock=lambda: now[0])
    for who in ("dealer", "floorperson"):
        lk.fail(who, "pty"), lk.fail(who, "pty")
    assert lk.unlock("dealer") == ["pty"]
    assert lk.remaining("dealer", "pty") == 0 and lk.remaining("floorperson", "pty") == 600


def test_lockout_rebuilt_from_ledger_events_newest_first():
    lk = Lockout(clock=lambda: 1000.0)
    lk.load(
        [
            ev("console.login", role="dealer", console="pty", ok=False),
            ev("console.login", role="dealer", console="pty", ok=False, counted=False),
            ev("console.login", role="technician", console="pty", ok=True),  # not the dealer's
            ev("console.login", role="dealer", console="pty", ok=False),
            ev("console.login", role="dealer", console="pty", ok=True),
            ev("console.login", role="dealer", console="pty", ok=False),
        ],
        None,
    )
    assert lk.failures == {("dealer", "pty"): 2} and lk.remaining("dealer", "pty") == 0


def test_a_lock_survives_a_restart_with_its_remaining_time_not_an_end_time():
    """A lock made while the wall clock was a year ahead lasted 525,615 minutes
    across restarts.  Now the remaining time is kept and a lock never exceeds its period."""
    locked = ev("console.locked", role="technician", console="pty", remaining_s=900, until=2e9)
    lk = Lockout(period_s=900, clock=lambda: 50.0)
    lk.load([locked], {"technician@pty": 312.5})
    assert lk.remaining("technician", "pty") == 312.5
    lk.load([locked], None)  # no lock file: the recorded remaining time, at most the period
    assert lk.remaining("technician", "pty") == 900
    lk.load([locked], {"technician@pty": 10**9})  # a damaged file cannot make it longer
    assert lk.remaining("technician", "pty") == 900
    lk.load([locked], {})  # the file says the lock ran out
    assert lk.remaining("technician", "pty") == 0
    lk.load([ev("console.unlocked", role="technician", console="pty", by="technician"), locked], None)
    assert lk.remaining("technician", "pty") == 0  # lifted by a technician
