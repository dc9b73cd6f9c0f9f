"""A throwaway PostgreSQL cluster in a temporary directory (``initdb`` + ``pg_ctl``), for the
sim and the tests when no server is given.  Trust authentication, bound to 127.0.0.1 on a free
port, removed on exit; fsync off unless asked (``fsync=True``: the benches that crash the
database, so that what it acknowledged is on disk as in production).

``initdb`` refuses to run as root: when we are root the data directory is handed to an
unprivileged user (``nobody``, or ``TABLECTL_PG_USER``) and ``initdb``/``pg_ctl`` run as that
user through ``runuser -u USER --``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


class PgUnavailable(RuntimeError):
    pass


def find_bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for cand in sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True):
        return cand
    raise PgUnavailable(
        f"no {name} found: install Debian's PostgreSQL server (`apt-get install postgresql`) "
        "or set TABLECTL_TEST_PG / pass --link DSN to use a running server"
    )


#: the clusters this process started: DSN -> (runuser prefix, pg_ctl, data directory)
CLUSTERS: dict[str, tuple[list[str], str, Path, Path]] = {}


def restart(dsn: str) -> None:
    """Restart a throwaway cluster as a crash would (``pg_ctl restart -m immediate``): every
    connection drops, the server recovers from its WAL (the chaos bench)."""
    run_as, pg_ctl, data, log = CLUSTERS[dsn]
    cmd = [*run_as, pg_ctl, "-D", str(data), "-l", str(log), "-m", "immediate", "-w", "-t", "30", "restart"]
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def power_loss(dsn: str) -> None:
    """The database's machine loses power: ``pg_ctl stop -m immediate`` (no checkpoint, every
    connection dropped, what is not in the WAL on disk is gone), then started again: it recovers
    from its WAL.  With ``fsync=on`` what it acknowledged survives; the OS's page cache is not
    thrown away here (a process cannot), so this is the database's half of a power loss."""
    run_as, pg_ctl, data, log = CLUSTERS[dsn]
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run([*run_as, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], check=True, **quiet)  # type: ignore[call-overload]
    subprocess.run([*run_as, pg_ctl, "-D", str(data), "-l", str(log), "-w", "-t", "30", "start"], check=True, **quiet)  # type: ignore[call-overload]


def write_conf(data: Path, port: int, sockdir: Path, settings: dict[str, str]) -> None:
    """Append the cluster's address and ``settings`` to its postgresql.conf (the last wins)."""
    lines = ["listen_addresses = '127.0.0.1'", f"port = {port}", f"unix_socket_directories = '{sockdir}'"]
    lines += [f"{k} = '{v}'" for k, v in settings.items()]
    conf = data / "postgresql.conf"
    with conf.open("a") as f:
        f.write("\n# tablectl throwaway cluster\n" + "\n".join(lines) + "\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def temp_cluster(prefix: str = "tablectl-pg-", *, fsync: bool = False, max_connections: int = 200) -> Iterator[str]:
    """Yield the DSN of a fresh cluster; stop and remove it afterwards."""
    initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
    base = Path(tempfile.mkdtemp(prefix=prefix))
    data = base / "data"
    run_as: list[str] = []
    if os.geteuid() == 0:
        user = os.environ.get("TABLECTL_PG_USER", "nobody")
        pw = pwd.getpwnam(user)
        os.chown(base, pw.pw_uid, pw.pw_gid)
        os.chmod(base, 0o700)
        run_as = ["runuser", "-u", user, "--"]
    port = free_port()
    log = base / "log"
    try:
        subprocess.run(
            [*run_as, initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"],
            check=True,
            capture_output=True,
        )
        # in postgresql.conf, not on pg_ctl's command line: a plain `pg_ctl start` after a
        # power loss (or a standby made from it) starts it as it was
        write_conf(data, port, base, {"fsync": "on" if fsync else "off", "max_connections": str(max_connections)})
        subprocess.run(
            [*run_as, pg_ctl, "-D", str(data), "-l", str(log), "-w", "-t", "30", "start"],
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError as e:
        text = (e.stderr or b"").decode(errors="replace").strip()
        with contextlib.suppress(OSError):
            text += "\n" + log.read_text(errors="replace")[-2000:]
        shutil.rmtree(base, ignore_errors=True)
        raise PgUnavailable(f"throwaway PostgreSQL did not start: {text}") from None
    dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    CLUSTERS[dsn] = (run_as, pg_ctl, data, log)
    try:
        yield dsn
    finally:
        CLUSTERS.pop(dsn, None)
        subprocess.run([*run_as, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
