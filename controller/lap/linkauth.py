"""The link records' authenticators (shared by the table's uplink, which makes them, and the LAP,
whose database checks them: controller/lap/schema_auth.py).

A table's database role proves nothing about who wrote a row: its password sits in
``uplink.toml`` and travels the network.  So every record a table's uplink writes to the LAP
(contribution, void, hit claim, payment, batch head) carries an HMAC-SHA256 under the table's own
**link key** (32 random bytes made by ``tablectl lap --enrol-table``, handed to the uplink like
the ledger key by ``LoadCredential=``; the LAP keeps it in ``link_keys``, which no table role can
read).  The database computes the same MAC before the record moves money.

The message is a JSON array rendered exactly as PostgreSQL renders ``jsonb`` as text
(:func:`jsonb_text`): the database builds it with ``jsonb_build_array(...)::text`` from the row
it is given, so the two sides agree on every byte without a second encoding of the data.  It
names the record's purpose (``event``/``batch``), the linked group's schema, the table, the
record's ledger seq and the key's number: a genuine record of another table, another group or
another seq does not verify.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

#: what a link key file's line starts with (one line: the tag, schema, table, key number, hex key)
KEY_TAG = "tablectl-link-key"
KEY_BYTES = 32
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class LinkKeyError(ValueError):
    """A link key file that is missing, unreadable, readable by others or not one."""


@dataclass(frozen=True)
class LinkKey:
    schema: str
    table_id: str
    key_no: int
    key: bytes

    def line(self) -> str:
        return f"{KEY_TAG} {self.schema} {self.table_id} {self.key_no} {self.key.hex()}\n"

    def pads(self) -> tuple[bytes, bytes]:
        """The HMAC's inner and outer padded keys (what the database stores: it computes the MAC
        with two ``sha256`` calls)."""
        k = self.key.ljust(64, b"\0")
        return bytes(b ^ 0x36 for b in k), bytes(b ^ 0x5C for b in k)


def new_key(schema: str, table_id: str, key_no: int) -> LinkKey:
    return LinkKey(schema, table_id, key_no, secrets.token_bytes(KEY_BYTES))


def write_key(path: Path, k: LinkKey) -> None:
    """Write a link key file (mode 0600, never over an existing file)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(k.line())
        f.flush()
        os.fsync(f.fileno())


def read_key(path: Path) -> LinkKey:
    """A link key file (as :func:`write_key` writes it); refused when others may read it."""
    try:
        st = path.stat()
        if st.st_mode & 0o077:
            raise LinkKeyError(f"{path}: group or others may read it (mode {st.st_mode & 0o777:o}); chmod 600")
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as e:
        raise LinkKeyError(f"{path}: {getattr(e, 'strerror', None) or e}") from None
    return parse_key(text, str(path))


def parse_key(text: str, where: str = "link key") -> LinkKey:
    parts = text.strip().split(" ")
    if len(parts) != 5 or parts[0] != KEY_TAG:
        raise LinkKeyError(f"{where}: not a link key file (made by `tablectl lap --enrol-table`)")
    _, schema, table, no, hexkey = parts
    try:
        key = bytes.fromhex(hexkey)
        n = int(no)
    except ValueError:
        raise LinkKeyError(f"{where}: its key number or key is not valid") from None
    if len(key) != KEY_BYTES or n < 1:
        raise LinkKeyError(f"{where}: a link key is {KEY_BYTES} bytes and numbered from 1")
    return LinkKey(schema, table, n, key)


# ---------------------------------------------------------------- jsonb's text, exactly
_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}


def _jstr(s: str) -> str:
    out = []
    for ch in s:
        e = _ESCAPES.get(ch)
        if e is not None:
            out.append(e)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def jsonb_text(v: Any) -> str:
    """``v`` as PostgreSQL prints it once stored as ``jsonb``: object keys ordered by length, then
    bytes; ``", "`` and ``": "`` between items.  Whole numbers only (a float's text is not the
    same on both sides): a float is refused."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        if "\0" in v:
            raise ValueError("jsonb holds no NUL character")
        return _jstr(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(jsonb_text(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: (len(str(k).encode()), str(k).encode()))
        return "{" + ", ".join(f"{_jstr(str(k))}: {jsonb_text(v[k])}" for k in keys) + "}"
    raise ValueError(f"a link record holds whole numbers, strings, true/false and null only, not {type(v).__name__}")


# ---------------------------------------------------------------- the messages
def aware_time(ts: str | None) -> str | None:
    """A table time with its zone (the ledger writes UTC; a time without a zone is taken as UTC,
    never as the database session's zone: both sides of the MAC must read one instant)."""
    if ts is None:
        return None
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return (dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)).isoformat()


def table_time_us(ts: str | None) -> int | None:
    """A record's table time as microseconds since the epoch (what the database takes from its
    ``timestamptz``); a time with no zone is UTC (the ledger writes UTC)."""
    if ts is None:
        return None
    dt = datetime.fromisoformat(ts)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(microseconds=1)


def event_message(k: LinkKey, seq: int, kind: str, level: str, table_time: str | None, data: Any) -> bytes:
    """What an event record's MAC is taken over; it names the key (``k``: its group, table and
    number), never holds it."""
    msg = ["event", k.schema, k.table_id, seq, kind, level, k.key_no, table_time_us(table_time), data]
    return jsonb_text(msg).encode()


def batch_message(k: LinkKey, last_seq: int, events: int, wagers: int, head: str) -> bytes:
    """What a batch head's MAC is taken over (naming the key as :func:`event_message` does)."""
    return jsonb_text(["batch", k.schema, k.table_id, last_seq, events, wagers, head, k.key_no]).encode()


def mac(key: bytes, msg: bytes) -> str:
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def sign_event(k: LinkKey, seq: int, kind: str, level: str, table_time: str | None, data: Any) -> str:
    return mac(k.key, event_message(k, seq, kind, level, table_time, data))


def sign_batch(k: LinkKey, last_seq: int, events: int, wagers: int, head: str) -> str:
    return mac(k.key, batch_message(k, last_seq, events, wagers, head))
