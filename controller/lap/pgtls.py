"""TLS with client certificates for a throwaway cluster (controller/lap/pgtemp.py): the link as
production runs it (docs/security.md), for the tests and the benches.

:func:`make_pki` makes a throwaway CA and the server's certificate (``127.0.0.1``/``localhost``
in its subjectAltName, so that ``sslmode=verify-full`` checks the name); :meth:`Pki.issue` a
client certificate whose CN is a role's name.  :func:`enable_tls` turns ``ssl = on`` and
rewrites ``pg_hba.conf``: every role but the cluster's owner logs in over TLS only, with a
certificate from that CA whose CN is its own name (``hostssl … clientcert=verify-full``): a
table's certificate does not log in as another table, no certificate or no TLS does not log in
at all.  The owner (the LAP's and the bench's own connections) keeps a plain login.

Made with the ``openssl`` command (no Python dependency for a test's certificates).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from controller.lap.pgtemp import CLUSTERS

_DAYS = "2"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, stdin=subprocess.DEVNULL)


def _key(path: Path, cwd: Path) -> None:
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(path), cwd=cwd)
    path.chmod(0o600)


@dataclass
class Pki:
    """A throwaway CA in ``root`` and the certificates it issued."""

    root: Path
    issued: dict[str, tuple[Path, Path]] = field(default_factory=dict)

    @property
    def ca(self) -> Path:
        return self.root / "ca.crt"

    def issue(self, cn: str, *, server: bool = False) -> tuple[Path, Path]:
        """(certificate, key) for ``cn``, made once."""
        if cn in self.issued:
            return self.issued[cn]
        crt, key, csr = self.root / f"{cn}.crt", self.root / f"{cn}.key", self.root / f"{cn}.csr"
        _key(key, self.root)
        _openssl("req", "-new", "-key", str(key), "-subj", f"/CN={cn}", "-out", str(csr), cwd=self.root)
        ext = self.root / f"{cn}.ext"
        ext.write_text(
            "subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth\n"
            if server
            else "extendedKeyUsage = clientAuth\n"
        )
        _openssl(
            "x509", "-req", "-in", str(csr), "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", _DAYS, "-sha256", "-extfile", str(ext), "-out", str(crt), cwd=self.root,
        )  # fmt: skip
        self.issued[cn] = (crt, key)
        return crt, key

    def dsn(self, dsn: str, user: str) -> str:
        """``dsn`` logging in as ``user`` over TLS with its own certificate, the server's name checked."""
        crt, key = self.issue(user)
        args = conninfo_to_dict(dsn)
        args.update(user=user, sslmode="verify-full", sslrootcert=str(self.ca), sslcert=str(crt), sslkey=str(key))
        return make_conninfo("", **args)


def make_pki(root: Path) -> Pki:
    root.mkdir(parents=True, exist_ok=True)
    _key(root / "ca.key", root)
    _openssl(
        "req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=tablectl throwaway link CA", "-days", _DAYS,
        "-sha256", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-out", "ca.crt", cwd=root,
    )  # fmt: skip
    pki = Pki(root)
    pki.issue("server", server=True)
    return pki


HBA = """# tablectl throwaway cluster, TLS (controller/lap/pgtls.py)
local all all trust
host all {owner} 127.0.0.1/32 trust
host replication {owner} 127.0.0.1/32 trust
hostssl all all 127.0.0.1/32 trust clientcert=verify-full
"""


def configure_tls(data: Path, run_as: list[str], pki: Pki, owner: str = "postgres") -> None:
    """A data directory's certificates, ``ssl = on`` and ``pg_hba.conf`` (read at the next reload;
    copied with it by ``pg_basebackup`` to a standby made of it)."""
    crt, key = pki.issue("server", server=True)
    for src, name in ((crt, "server.crt"), (key, "server.key"), (pki.ca, "root.crt")):
        shutil.copyfile(src, data / name)
        os.chmod(data / name, 0o600)
        if run_as:  # the server's user must own its key (runuser -u USER)
            shutil.chown(data / name, run_as[2], None)
    with (data / "postgresql.conf").open("a") as f:
        f.write("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\nssl_ca_file = 'root.crt'\n")
    (data / "pg_hba.conf").write_text(HBA.format(owner=owner))
    if run_as:
        shutil.chown(data / "pg_hba.conf", run_as[2], None)


def enable_tls_pair(pair: Any, pki: Pki) -> None:
    """The same for a throwaway primary and its standby (hil/pgpair.py): both reloaded; the
    standbys made later copy the primary's directory, this included."""
    for node in pair.nodes:
        configure_tls(node.data, pair.run_as, pki)
        pair.pg_ctl(node, "reload")
        _wait_ssl(pair.node_dsn(node), node.log)


def enable_tls(dsn: str, pki: Pki) -> None:
    """Turn a throwaway cluster's link to TLS with client certificates (a reload)."""
    run_as, pg_ctl, data, log = CLUSTERS[dsn]
    configure_tls(data, run_as, pki, str(conninfo_to_dict(dsn).get("user") or "postgres"))
    subprocess.run([*run_as, pg_ctl, "-D", str(data), "reload"], check=True, capture_output=True)
    _wait_ssl(dsn, log)


def _wait_ssl(dsn: str, log: Path) -> None:
    import time

    import psycopg

    end = time.monotonic() + 10  # a reload is signalled, not waited for
    while time.monotonic() < end:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as c:
            if c.execute("SHOW ssl").fetchone() == ("on",):
                return
        time.sleep(0.05)
    raise RuntimeError(f"the throwaway cluster did not turn ssl on (see {log})")
