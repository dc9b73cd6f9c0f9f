"""PINs per role (scrypt, salted, parameters stored), the PIN file, and the lock-out (issue 6 item 1)."""

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


def test_lockout_counts_consecutive_failures_and_expires():
    now = [100.0]
    lk = Lockout(max_failures=5, period_s=60, wall=lambda: now[0])
    assert [lk.fail() for _ in range(4)] == [None] * 4 and lk.remaining() == 0
    assert lk.fail() == 160.0 and lk.remaining() == 60.0
    now[0] = 159.5
    assert lk.remaining() == 0.5
    now[0] = 160.0
    assert lk.remaining() == 0 and lk.failures == 0
    lk.fail()
    lk.succeed()
    assert lk.failures == 0


def test_lockout_rebuilt_from_ledger_events_newest_first():
    lk = Lockout(wall=lambda: 1000.0)
    lk.load(
        [
            ev("console.login", ok=False),
            ev("console.login", ok=False, counted=False),
            ev("console.login", ok=False),
            ev("console.login", ok=True),
            ev("console.login", ok=False),
        ]
    )
    assert lk.failures == 2 and lk.remaining() == 0  # counted failures since the last success
    lk.load([ev("console.login", ok=False), ev("console.locked", until=1500.0), ev("console.login", ok=False)])
    assert lk.failures == 1 and lk.remaining() == 500.0
