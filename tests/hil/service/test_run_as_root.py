"""A manual `tablectl run` typed as root on a Pi: the process becomes the
state directory's owner before it opens anything there, so the ledger, its WAL, the
witness and every other file it leaves are the service user's (mode 0700 directory,
UMask=0077: root-owned files would stop the service at its next start).

The real command in a fresh process, as root, against the simulators on ptys handed to
the service user (as the dialout group does on a Pi); `nobody` stands in for tablectl."""

from __future__ import annotations

import os
import pwd
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bench.startup import _toml
from controller.boot import selfcheck
from tests.hil.console.conftest import set_pins

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (it is about what root leaves behind)"),
    pytest.mark.slow,
]

NOBODY = pwd.getpwnam("nobody")


def _nobody_can_run_this_python() -> bool:
    """On a Pi the release's interpreter is readable by all; a development interpreter under
    /root (pyenv) is not, and the process, once it is the service user, could not import."""
    r = subprocess.run(
        ["runuser", "-u", "nobody", "--", sys.executable, "-c", "import tempfile, controller.daemon.service"],
        cwd="/",
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        timeout=60,
    )
    return r.returncode == 0


def _owned_by_nobody(path: Path) -> None:
    os.chown(path, NOBODY.pw_uid, NOBODY.pw_gid)


def test_run_as_root_leaves_only_files_the_service_user_owns() -> None:
    if not _nobody_can_run_this_python():
        pytest.skip(f"the service user cannot read this interpreter's files ({sys.prefix}, {sys.base_prefix})")
    from controller.books.ledgerkey import init_key
    from hil.rig import PINS as PIN_MAP
    from hil.rig import Rig

    top = Path(tempfile.mkdtemp(prefix="tablectl-rootrun-", dir="/tmp"))
    os.chmod(top, 0o755)
    state = top / "state"
    witness = top / "state-witness"
    rig = None
    proc = None
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        # as install.sh leaves a table: state and witness directories the service user's, 0700; the
        # PINs set (by `tablectl pin set` as root, which writes as the owner); the software record root's
        for d in (state, witness):
            d.mkdir(mode=0o700)
        set_pins(state)
        for p in [state, witness, *state.iterdir()]:
            _owned_by_nobody(p)
        record = top / "software.json"
        selfcheck.record_digest(record)
        creds = top / "creds"
        creds.mkdir(mode=0o700)  # root's: the key is read before the process becomes the owner
        init_key(creds / "tablectl-ledger-key")  # as `tablectl key init` makes it
        rig = Rig(top / "rig-state")  # its simulated devices only
        for s in rig.sims:
            s.start()
            # a Pi's dialout group, for the service user: the pty, and the way to its link
            _owned_by_nobody(Path(s.path).resolve())
            os.chmod(Path(s.path).parent, 0o755)
        doc = {
            "table": {
                "id": "ROOT-01",
                "profile": "six-card-fortune",
                "state_dir": str(state),
                "software_record": str(record),
            },
            "gpio": {"pin_factory": "mock", **PIN_MAP},
            "serial": {s.device: {"port": s.path} for s in rig.sims},
            "ledger": {"witness_dir": str(witness)},
        }
        cfg = top / "table.toml"
        cfg.write_text("\n".join(f"{k} = {_toml(v)}" for k, v in doc.items()) + "\n")
        notify.bind(str(top / "notify"))
        os.chmod(top / "notify", 0o777)  # the process sends READY=1 after it is no longer root
        notify.settimeout(30)
        proc = subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--config", str(cfg)],
            env={**os.environ, "NOTIFY_SOCKET": str(top / "notify"), "CREDENTIALS_DIRECTORY": str(creds)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        msgs: list[str] = []
        while not any(m.startswith("READY=1") for m in msgs):
            msgs.append(notify.recv(4096).decode())
        ready = next(m for m in msgs if m.startswith("READY=1"))
        # the table opened: its ledger, devices and self-checks all worked as the service user
        assert ready.startswith("READY=1\nSTATUS=open_for_wagers round"), ready
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        err = proc.stderr.read() if proc.stderr else ""
        assert f"running as nobody, the owner of {state}" in err, err
        made = sorted(p for d in (state, witness) for p in d.rglob("*"))
        assert any(p.name.startswith("ledger") for p in made), made  # it did write there
        root_owned = [str(p) for p in made if p.stat().st_uid != NOBODY.pw_uid]
        assert root_owned == []
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if rig is not None:
            for s in rig.sims:
                s.stop()
        notify.close()
        subprocess.run(["rm", "-rf", str(top)], check=True)
