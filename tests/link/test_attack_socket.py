"""A process on the table service's link socket.

The socket is 0660: before, any process that could open it spoke the uplink's JSON — the linked
wager opened with no LAP and no database, a forged meter was shown — and one malformed line
(``{"t":"meter"}``, a ``hit`` whose ``seq`` is a string) was an internal-error tilt of the whole
table.  Now the table service hears only the uplink's user (``SO_PEERCRED``) and drops, counts
and logs every line that is not a message of the link (controller/play/linkmsg.py).  The tables,
their uplinks and the LAP here are the real ones, on a real PostgreSQL (tests/link/test_link_scenarios.py)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.play.linked import LinkPort
from tests.integration.harness import Harness, records
from tests.integration.test_table_linked import linked_doc
from tests.link.test_link_scenarios import Pit

#: what the uplink says to open the linked wager (and a meter to show), as the attacker says it
OPENING = [
    {"t": "link", "up": True},
    {"t": "state", "state": "running"},
    {"t": "hb", "state": "running", "meters": {"primary": 1}},
    {"t": "reconciled", "seq": 10_000},
    {"t": "meter", "level": "primary", "cents": 99_999_999},
]

MALFORMED = [
    b'{"t":"meter"}',  # no level, no cents
    b'{"t":"hit","seq":"7","order":1,"amount":5}',  # seq a string
    b'{"t":"hb","state":"running","meters":{"primary":"lots"}}',
    b'{"t":"won","level":"primary","table":"T9","amount":-5}',
    b'{"t":"reconciled","seq":true}',
    b'{"t":"state"}',
    b'{"t":"no such thing"}',
    b"[1, 2]",
    b"not json at all",
    b'{"t":"link","up":"yes"}',
]


@pytest.fixture
def pit(make_lap, pg_dsn, tmp_path) -> Iterator[Pit]:
    lap = make_lap(tables=2, seed="$5,000", reset="$5,000", increment_rate="21%")
    p = Pit(lap, pg_dsn, tmp_path)
    yield p
    p.close()


def _table(pit: Pit, tid: str, peers: set[int] | None, path: Path | None = None) -> tuple[Harness, LinkPort]:
    h = Harness(pit.tmp / f"{tid}.db", linked_doc(pit.timeout))
    port = LinkPort(path or pit.tmp / f"{tid}.sock", h.reactor.post, peers)
    assert h.table.lap is not None
    h.lap.send = port.send
    port.start()
    pit.tables[tid], pit.ports[tid] = h, port
    return h, port


def _speak(path: Path, lines: list[bytes], seconds: float) -> None:
    """Connect and say ``lines`` again and again for ``seconds`` (as long as the socket lets us)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(path))
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            s.sendall(b"".join(line + b"\n" for line in lines))
            time.sleep(0.05)
    except OSError:
        pass  # the table service closed it: it does not hear this peer
    finally:
        s.close()


def _opening() -> list[bytes]:
    return [json.dumps(m).encode() for m in OPENING]


def _shown(h: Harness) -> list[int]:
    return [c[1][0][0][1] for c in h.sign.calls if c[0] == "show_meters"]


def test_a_peer_that_is_not_the_uplinks_user_opens_nothing(pit):
    """The LAP runs; the table's uplink is not there; a process of another user (here: the
    port accepts only a uid that is not ours) speaks the uplink's messages."""
    h, port = _table(pit, "T1", {os.geteuid() + 4242})
    _speak(pit.tmp / "T1.sock", _opening(), 1.0)
    for _ in range(40):
        pit.pump()
        time.sleep(0.025)
    assert not pit.is_open("T1")
    assert 99_999_999 not in _shown(h)  # the forged meter is not shown
    assert port.stats.refused_peers >= 1 and port.stats.lines == 0
    assert [e.data["open"] for e in records(h, "link.state")] == [False]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to be another user (nobody)")
def test_a_process_of_another_user_opens_nothing_when_the_lap_and_uplink_are_down(pit):
    """As found: no LAP, no database link, and a process of another user on the socket."""
    # the socket where the other user can reach it (the test's own directory is root's, 0700): a
    # directory open to all, the uplink connecting through a link to it
    public = Path(tempfile.mkdtemp(prefix="tablectl-linksock-"))
    public.chmod(0o777)
    (pit.tmp / "T1.sock").symlink_to(public / "T1.sock")
    try:
        h, port = _table(pit, "T1", None, public / "T1.sock")
        pit.start_uplink("T1")
        pit.until(lambda: pit.is_open("T1"))
        pit.uplinks["T1"].stop()
        pit.stop_lap(crash=True)
        pit.until(lambda: not pit.is_open("T1"))
        (public / "T1.sock").chmod(0o666)  # the socket is 0660; let the other user knock
        nobody = pwd.getpwnam("nobody")
        pid = os.fork()
        if pid == 0:  # the attacker: another user
            try:
                os.setgid(nobody.pw_gid)
                os.setuid(nobody.pw_uid)
                _speak(public / "T1.sock", _opening(), 1.5)
            finally:
                os._exit(0)
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            pit.pump()
            assert not pit.is_open("T1")
            time.sleep(0.025)
        os.waitpid(pid, 0)
        assert port.stats.refused_peers >= 1 and 99_999_999 not in _shown(h)
    finally:
        shutil.rmtree(public, ignore_errors=True)


@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
def test_malformed_lines_are_counted_and_dropped_never_a_tilt(pit):
    """The uplink's own user (the only one the socket hears) sends lines that are not messages
    of the link: each is dropped, counted and logged; the table neither tilts nor opens."""
    h = pit.add("T1")
    pit.until(lambda: pit.is_open("T1"))
    pit.uplinks["T1"].stop()  # the genuine uplink goes; the socket is free
    pit.until(lambda: not pit.is_open("T1"))
    _speak(pit.tmp / "T1.sock", MALFORMED, 0.3)
    for _ in range(20):
        pit.pump()  # a line reaching the table's reactor would raise here (an internal-error tilt)
        time.sleep(0.025)
    assert h.state != "tilt" and records(h, "tilt.raised") == []
    assert not pit.is_open("T1")
    assert pit.ports["T1"].stats.bad_lines >= len(MALFORMED)  # each counted (and logged once a second)
    pit.start_uplink("T1")  # and the genuine uplink is heard again
    pit.until(lambda: pit.is_open("T1"))
