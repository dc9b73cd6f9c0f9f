"""The LAP's database's replication as the LAP sees it: whether an acknowledged commit (a hit
answered) survives the primary's loss (controller/lap/service.py checks it at start and on its timer)."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg


@dataclass(frozen=True)
class Replication:
    """What the LAP's database does with a commit before it is acknowledged (a LAP
    failed over to a standby that lagged, or restored from a backup, forgot acknowledged hits)."""

    safe: bool  # a synchronous standby is configured and streaming: an acknowledged commit is on two servers
    text: str


def replication(conn: psycopg.Connection) -> Replication:
    """The database's replication as the LAP sees it (``pg_stat_replication`` shows a standby's
    state to a superuser or a member of ``pg_monitor`` / ``pg_read_all_stats`` only)."""
    names = str(conn.execute("SHOW synchronous_standby_names").fetchone()[0]).strip()  # type: ignore[index]
    commit = str(conn.execute("SHOW synchronous_commit").fetchone()[0])  # type: ignore[index]
    rows = conn.execute(
        "SELECT application_name, state, sync_state FROM pg_stat_replication ORDER BY application_name"
    ).fetchall()
    standbys = ", ".join(f"{r[0] or '?'} ({r[1] or 'state hidden'}, {r[2] or '?'})" for r in rows) or "none"
    sync = [r for r in rows if r[1] == "streaming" and r[2] in ("sync", "quorum")]
    if not names:
        return Replication(
            False, f"no synchronous standby configured (synchronous_standby_names is empty; standbys: {standbys})"
        )
    if commit in ("off", "local"):
        return Replication(False, f"synchronous_commit = {commit}: a commit does not wait for the standby ({standbys})")
    if not sync:
        return Replication(
            False,
            f"a synchronous standby is configured ({names}) but none is streaming: commits wait (standbys: {standbys})",
        )
    return Replication(
        True, f"synchronous standby streaming: {', '.join(str(r[0]) for r in sync)} (standbys: {standbys})"
    )
