"""The ledger's key (docs/security.md).

The ledger's chain is an HMAC-SHA256 under a 32-byte secret.  On a table the key is
a root-only file (``tablectl key init`` makes it: mode 0600, owner root) that
systemd hands to the service with ``LoadCredential=tablectl-ledger-key:/etc/tablectl/ledger.key``:
the service reads ``$CREDENTIALS_DIRECTORY/tablectl-ledger-key`` and never needs to
read ``/etc/tablectl/ledger.key`` itself.  Tools run by root (``tablectl audit``,
``history``, ``verify``) read the key file (``[ledger] key_file``).  The simulator,
the HIL rig and the tests make a throwaway key of their own.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from controller.core.safefile import read_bounded

if TYPE_CHECKING:
    from controller.settings.hardware import LedgerConfig

KEY_BYTES = 32


class LedgerKeyError(RuntimeError):
    """No usable key: names where it was looked for."""


def init_key(path: str | Path, *, overwrite: bool = False) -> Path:
    """Create a new random key file, mode 0600 (owner: whoever runs it, root on a table).
    An existing key is never replaced unless ``overwrite``: a new key makes the old
    ledger unverifiable.  The key is written to a new file beside it and renamed over
    the name: a kill mid-way leaves the old key or the new one, never an empty file, and
    a link planted at the name is replaced, never followed (root writing through it
    would have clobbered whatever it pointed at)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if not overwrite and (p.exists() or p.is_symlink()):
        raise LedgerKeyError(f"{p}: a key already exists (a new key would make the ledger unverifiable)")
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, secrets.token_hex(KEY_BYTES).encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        if overwrite:
            os.replace(tmp, p)
        else:
            os.link(tmp, p)  # fails if the name was taken meanwhile: never replaces a key
    except FileExistsError:
        raise LedgerKeyError(f"{p}: a key already exists (a new key would make the ledger unverifiable)") from None
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(p.parent)
    return p


def _fsync_dir(d: Path) -> None:
    """The rename durable (its directory's entry written)."""
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_key(path: str | Path) -> bytes:
    """The key in a key file (64 hex digits); anything else is refused, naming the file."""
    p = Path(path)
    try:
        text = read_bounded(p, 4096, follow=True).strip()  # a key is 65 bytes; a link is fine (root's /etc)
    except OSError as e:
        raise LedgerKeyError(f"{p}: cannot read the ledger key: {e.strerror or e}") from None
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise LedgerKeyError(f"{p}: not a ledger key (64 hex digits, from `tablectl key init`)") from None
    if len(key) != KEY_BYTES:
        raise LedgerKeyError(f"{p}: the ledger key must be {KEY_BYTES} bytes, got {len(key)}")
    return key


def key_path(ledger_cfg: LedgerConfig, environ: dict[str, str] | None = None) -> Path:
    """Where the key is: the systemd credential when the service runs under systemd
    (``$CREDENTIALS_DIRECTORY``), else ``[ledger] key_file``."""
    env = os.environ if environ is None else environ
    cred_dir = env.get("CREDENTIALS_DIRECTORY")
    if cred_dir:
        return Path(cred_dir) / ledger_cfg.key_credential
    return Path(ledger_cfg.key_file)


def load_key(ledger_cfg: LedgerConfig, environ: dict[str, str] | None = None) -> bytes:
    return read_key(key_path(ledger_cfg, environ))


def beside_key_file(state_dir: str | Path) -> Path:
    """The key kept beside a state directory ``D``: ``D-key/ledger.key``.  The simulator and the
    HIL rig make theirs there (``tablectl sim --state-dir D``), so that ``tablectl history``,
    ``audit``, ``backup``, ``report``... ``--state-dir D`` find it with no ``--key-file``."""
    d = Path(state_dir)
    return d.parent / f"{d.name}-key" / "ledger.key"


def throwaway_key() -> bytes:
    """A random key for the simulator and tests (never written anywhere)."""
    return secrets.token_bytes(KEY_BYTES)
