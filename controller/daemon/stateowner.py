"""Root at a shell writes as the service.

``tablectl pin set`` and a manual ``tablectl run`` are often typed as root on a Pi
(``sudo``).  The service runs as the ``tablectl`` user with ``UMask=0077`` and its
state directory mode 0700: a ``pins.toml`` or a ledger (and its ``-wal``) made by
root there would be root-owned and unreadable to the service, which would then
halt at its next start.  So before such a command writes anything, a process
running as root whose state directory belongs to another user becomes that user
(its uid, primary group and supplementary groups, e.g. ``gpio`` and ``dialout``),
and everything it makes is the service's.  A state directory owned by root (a
development checkout, a test) changes nothing."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def act_as_owner(state_dir: Path, command: str) -> str | None:
    """Become the owner of ``state_dir`` when running as root and it is someone
    else's; returns that user's name (or uid), or None when nothing changed."""
    if os.geteuid() != 0:
        return None
    try:
        st = os.stat(state_dir)
    except OSError:
        return None  # not made yet: the command reports it in its own words
    if st.st_uid == 0:
        return None
    import pwd

    try:
        pw = pwd.getpwuid(st.st_uid)
        name, gid = pw.pw_name, pw.pw_gid
        os.initgroups(name, gid)
    except KeyError:  # an owner with no passwd entry: its uid, the directory's group
        name, gid = str(st.st_uid), st.st_gid
        os.setgroups([])
    os.setgid(gid)
    os.setuid(st.st_uid)
    print(f"tablectl {command}: running as {name}, the owner of {state_dir} (not root)", file=sys.stderr)
    return name
