"""Reading a small file the service or a command relies on, without surprises.

Whoever can write the state directory or the witness directory (the service's own user, a
person with the SD card) could put a symbolic link there to ``/dev/zero``, a FIFO that never
ends, or a file of gigabytes where a few hundred bytes are expected: read without a bound, the
start-up check or ``tablectl audit`` would fill the memory of a Pi (the OOM killer) or hang.

:func:`read_bounded` opens the file once, refuses what is not a regular file (checked on the
open descriptor, so nothing can be swapped in between), refuses a symbolic link as the last
component unless ``follow`` (``O_NOFOLLOW``: files the service writes itself are never links),
and reads at most ``limit`` bytes: a longer file is refused, never cut.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

#: bounds for the files read here (a witness is about 120 bytes, a PIN file a few hundred)
SMALL = 64 * 1024
#: configuration files (a table's, a profile, a paytable, lap.toml): a few KiB each
CONFIG = 1024 * 1024


class UnsafeFile(OSError):
    """The file is not what is expected there: a link, not a regular file, or too large."""


def read_bounded(path: str | Path, limit: int = SMALL, *, follow: bool = False) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``).  Raises FileNotFoundError when
    there is none, :class:`UnsafeFile` for a symbolic link (unless ``follow``), a directory, a
    device, a FIFO or a socket, or a file over ``limit`` bytes; other OSErrors as they come."""
    p = Path(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(p, flags)
    except OSError as e:
        if e.errno == errno.ELOOP and not follow:
            raise UnsafeFile(errno.ELOOP, "is a symbolic link, where a file is expected", str(p)) from None
        raise
    try:
        _check_regular(os.fstat(fd), limit, p)
        data = _read_upto(fd, limit + 1)
        if len(data) > limit:  # grew while being read
            raise UnsafeFile(errno.EFBIG, f"is more than the {limit} bytes expected", str(p))
        return data
    finally:
        os.close(fd)


def _check_regular(st: os.stat_result, limit: int, p: Path) -> None:
    """:class:`UnsafeFile` unless ``st`` is a regular file of at most ``limit`` bytes."""
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, FIFO or socket)"
        raise UnsafeFile(errno.EINVAL, f"is {kind}", str(p))
    if st.st_size > limit:
        raise UnsafeFile(errno.EFBIG, f"is {st.st_size} bytes, more than the {limit} expected", str(p))


def _read_upto(fd: int, n: int) -> bytes:
    """At most ``n`` bytes from ``fd``, until its end."""
    chunks = []
    left = n
    while left > 0:
        b = os.read(fd, min(left, 65536))
        if not b:
            break
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


def read_text_bounded(path: str | Path, limit: int = SMALL, *, follow: bool = False) -> str:
    """:func:`read_bounded`, decoded as UTF-8 (UnicodeDecodeError when it is not)."""
    return read_bounded(path, limit, follow=follow).decode("utf-8")


def describe(e: OSError) -> str:
    """An OSError as one line without the Errno prefix: ``<file>: <what>``."""
    what = e.strerror or str(e)
    return f"{e.filename}: {what}" if e.filename else what
