"""Root at a shell writes as the service: `tablectl pin set` and a manual
`tablectl run` as root must not leave root-owned files in the service's state
directory (mode 0700, UMask=0077: the service could not read them)."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from controller.daemon.stateowner import act_as_owner

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (it is about what root leaves behind)")

NOBODY = pwd.getpwnam("nobody")


@pytest.fixture
def service_state_dir():
    """A state directory as install.sh makes it, owned by a non-root user (nobody
    stands in for tablectl), mode 0700, under a directory anyone can traverse."""
    top = Path(tempfile.mkdtemp(prefix="tablectl-owner-", dir="/tmp"))
    os.chmod(top, 0o755)
    d = top / "state"
    d.mkdir(mode=0o700)
    os.chown(d, NOBODY.pw_uid, NOBODY.pw_gid)
    yield d
    subprocess.run(["rm", "-rf", str(top)], check=True)


def test_pin_set_as_root_writes_the_pin_file_as_the_state_dirs_owner(service_state_dir: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-c", "from controller.cli import main; raise SystemExit(main())", "pin", "set",
         "technician", "--stdin", "--state-dir", str(service_state_dir)],
        input="4711\n", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    pins = service_state_dir / "pins.toml"
    st = pins.stat()
    assert (st.st_uid, st.st_gid) == (NOBODY.pw_uid, NOBODY.pw_gid)
    assert st.st_mode & 0o777 == 0o600
    assert "running as nobody" in r.stderr
    # and the service user can read it back
    r = subprocess.run(["runuser", "-u", "nobody", "--", "cat", str(pins)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "[technician]" in r.stdout, r.stderr


def test_act_as_owner_makes_every_later_file_the_owners(service_state_dir: Path) -> None:
    """What `tablectl run` calls before the ledger is opened: the ledger and its WAL are the owner's."""
    pid = os.fork()
    if pid == 0:  # the child becomes nobody; the test process stays root
        code = 1
        try:
            who = act_as_owner(service_state_dir, "run")
            (service_state_dir / "ledger.sqlite3").write_text("x")
            code = 0 if who == "nobody" and os.geteuid() == NOBODY.pw_uid and os.getegid() == NOBODY.pw_gid else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (service_state_dir / "ledger.sqlite3").stat().st_uid == NOBODY.pw_uid


def test_a_root_owned_or_missing_state_dir_changes_nothing(tmp_path: Path) -> None:
    assert act_as_owner(tmp_path, "pin") is None
    assert act_as_owner(tmp_path / "missing", "pin") is None
    assert os.geteuid() == 0
