"""Console ``config check FILE`` on a bad file: the error names file,
section and key, never "internal error", and never echoes the file's contents
(a non-UTF-8 file included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hil.console.conftest import Term

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_config_check_on_bad_files_gives_the_error_not_the_contents(console_rig, tmp_path):
    rig, con = console_rig()
    t = Term(con.pty_path)
    try:
        assert "logged in as technician" in t.login("technician")
        secret = b"do-not-echo-this-line"
        binary = tmp_path / "binary.toml"
        binary.write_bytes(b"[table]\n" + secret + b" \xff\xfe\x00\x9c garbage\n" * 50)
        out = t.cmd(f"config check {binary}")
        assert out.startswith(f"error: configuration invalid: {binary}: not UTF-8 text (byte "), out
        assert "internal error" not in out and "do-not-echo" not in out and len(out) < 300, out

        prof = tmp_path / "prof.toml"
        prof.write_text(
            (ROOT / "config/tables/six-card-fortune.toml")
            .read_text()
            .replace("base_min_cents = 500", 'base_min_cents = "x"')
        )
        table = tmp_path / "table.toml"
        table.write_text(
            (ROOT / "config/examples/table.toml")
            .read_text()
            .replace('profile = "six-card-fortune"', f'profile = "{prof}"')
        )
        out = t.cmd(f"config check {table}")
        assert out.startswith(f"error: configuration invalid: {prof}: [game.options] base_min_cents: "), out
        assert "internal error" not in out

        prof.write_bytes(b"\xff\xfe[game]\n")
        out = t.cmd(f"config check {table}")
        assert f"{table}: [table] profile: {prof}: not UTF-8 text" in out and "internal error" not in out, out
    finally:
        t.close()
