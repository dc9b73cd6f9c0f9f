"""Shared fixtures: a manual clock for unit tests and a HIL rig for scenario tests."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")


def _cache_bytecode() -> None:
    """Compiled modules kept between runs, outside the tree, even where the environment says not
    to write them (``PYTHONDONTWRITEBYTECODE``): otherwise each xdist worker compiles and rewrites
    every test module afresh (collection alone 13 s -> 6 s per worker on 2 cores).  Outside the
    tree: the software digest covers the files of the code, and a release is built from the tree.
    In this process only: the services, installs and digests tests start run as the environment
    says (a release compiled into a prefix would leave its record without its bytecode).  Per user
    and private: a module's cached code is what runs."""
    prefix = Path(tempfile.gettempdir()) / f"tablectl-pycache-{os.getuid()}"
    prefix.mkdir(mode=0o700, exist_ok=True)
    if prefix.stat().st_uid != os.getuid() or prefix.stat().st_mode & 0o077:
        return  # someone else's, or open to others: compile afresh as before
    sys.pycache_prefix = str(prefix)
    sys.dont_write_bytecode = False


_cache_bytecode()

if TYPE_CHECKING:
    from hil.rig import Rig

T = TypeVar("T")

#: the tests' throwaway ledger key (a table's comes from `tablectl key init`, controller/books/ledgerkey.py)
TEST_KEY = bytes.fromhex("5e" * 32)


class ManualClock:
    """A game clock that only moves when a test says so."""

    speed = 1.0

    def __init__(self, t: float = 1000.0):
        self.t = t

    def now(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt

    def sleep(self, seconds: float) -> None:
        self.t += seconds

    def to_real(self, seconds: float) -> float:
        return 0.0

    def wait(self, event: threading.Event, seconds: float | None) -> bool:
        return event.is_set()

    def idle(
        self,
        until: float | None = None,
        ready: Callable[[], bool] | None = None,
        wake: Callable[[], None] | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


@pytest.fixture(autouse=True, scope="session")
def _quiet_structured_logs() -> None:
    """Logs as in production (JSON, table and round stamped), warnings and up only."""
    from controller.core.log import configure

    configure(level="warning", json=True)


@pytest.fixture(autouse=True)
def _structured_logs_restored() -> Iterator[None]:
    """A test that configures the logs (a command run in-process) binds them to the stream it was
    given, often one pytest closes after that test: the next tests on that worker would log to
    a closed file.  Each test's own configuration ends with it."""
    import structlog

    saved = structlog.get_config()
    yield
    if structlog.get_config() != saved:
        structlog.configure(**saved)


@pytest.fixture
def manual_clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def make_rig(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    """Build a HIL rig (not yet started) so a test can script decks and dice first."""
    from controller.core.log import configure
    from hil.rig import Rig

    configure(level="warning", json=True)
    made: list[Rig] = []

    def make(**kw: Any) -> Rig:
        kw.setdefault("seed", 11)
        kw.setdefault("speed", 50.0)
        r = Rig(tmp_path / "state", **kw)
        made.append(r)
        return r

    yield make
    for r in made:
        r.stop()


@pytest.fixture
def rig(make_rig: Callable[..., Rig]) -> Rig:
    return make_rig().start()


def eventually(pred: Callable[[], T], timeout: float = 10.0, interval: float = 0.005, what: str = "condition") -> T:
    """Poll until ``pred()`` is true (devices answer asynchronously over the ptys)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(interval)


@pytest.fixture
def whole_machine() -> Iterator[None]:
    """A soak test that loads both cores by itself (200 tables in one process, a Patroni cluster
    with the chaos bench's tables) waits for any other such test of this run to end: two at once on
    2 cores starved each other's deadlines (CI: load 271, 4 of 200 uplinks reconnecting and a
    node-loss reopened in 38.9 s).  Other tests go on beside it."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))
    path = Path(tempfile.gettempdir()) / f"tablectl-whole-machine-{os.getuid()}-{run}.lock"
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
