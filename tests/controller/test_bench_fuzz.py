"""``tablectl bench fuzz``: the harness runs both targets and reports crashes and
hangs; a decoder that misbehaves is counted as a crash (the harness can fail)."""

from __future__ import annotations

import argparse

import bench.fuzz as F


def _run(**kw):
    out: dict[str, object] = {}
    args = argparse.Namespace(**{"inputs": 300, "seed": 1, "hang_s": 2.0, "targets": "decoder,console", **kw})
    rc = F.run(args, lambda k, v: out.__setitem__(k, v))
    return rc, out


def test_fuzz_runs_both_targets_clean():
    rc, out = _run()
    assert rc == 0
    assert out["inputs"] == 600 and out["crashes"] == 0 and out["hangs"] == 0


def test_a_broken_decoder_is_a_crash(monkeypatch):
    from drivers import framing

    real = framing.FrameDecoder.feed
    monkeypatch.setattr(framing.FrameDecoder, "feed", lambda self, data: [*real(self, data), "junk"])
    rc, out = _run(targets="decoder")
    assert rc == 1 and out["decoder_crashes"] == 300 and "decoder_first_crash" in out
