"""`tablectl bench lockout`: a short run prints every figure it promises — the
whole path (frozen, durable in the lock-out journal, shown), the raw disk beside it and their
ratio, each segment of the path, and the ledger's own commit of the same records for every
press (its stamps were dropped when the writer's trace of a batch came after the bench had
stopped listening)."""

from __future__ import annotations

import argparse

import pytest

from bench import lockout

pytestmark = pytest.mark.slow


def test_a_short_run_prints_the_path_the_disk_and_every_segment() -> None:
    out: dict[str, object] = {}
    args = argparse.Namespace(presses=8, seed=3, pi_like=False, loaders=2)
    assert lockout.run(args, lambda k, v: out.__setitem__(k, v)) == 0
    assert out["presses"] == 8
    for name in ("lockout_freeze", "lockout_durable", "lockout_shown", "ledger_durable", "sensor_light", "fsync"):
        p50, p99 = float(str(out[f"{name}_p50_ms"])), float(str(out[f"{name}_p99_ms"]))
        assert 0 < p50 <= p99 <= float(str(out[f"{name}_max_ms"]))
    durable, freeze = float(str(out["lockout_durable_p50_ms"])), float(str(out["lockout_freeze_p50_ms"]))
    assert freeze < durable  # frozen before it is durable, and durable only after a sync
    assert durable <= float(str(out["lockout_shown_p50_ms"]))  # shown once durable
    ratio = float(str(out["lockout_durable_to_fsync_p99"]))
    assert ratio == pytest.approx(float(str(out["lockout_durable_p99_ms"])) / float(str(out["fsync_p99_ms"])), abs=0.01)
    for prefix, stages in (("", lockout.STAGES), ("ledger_", lockout.LEDGER_STAGES)):
        for a, b in zip(stages, stages[1:], strict=False):
            assert f"{prefix}segment_{a}_to_{b}_p50_ms" in out, (a, b)  # every press had every stamp
    assert {"gc0_collections", "gc1_max_ms", "gc2_max_ms"} <= out.keys()
