"""The service's start-up self-checks (controller/daemon/service.py; controller/boot/selfcheck.py): run once
the ledger stack is open and before any pin, port or link is touched — configuration, the
ledger's chain and witness, the software digest, the RNG's self-test — with what they found
kept for the table's start-up records and the console (docs/architecture.md "The service in
parts")."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from controller.books.ledger import Ledger
from controller.boot.selfcheck import SelfCheckReport
from controller.core.records import Kind
from controller.play.context import Log
from controller.settings.hardware import HardwareConfig

#: a value of the ``config.loaded`` record's data (controller/boot/selfcheck.py)
ConfigData = dict[str, object]


def _last_values(ledger: Ledger) -> dict[str, str] | None:
    """The configuration values in effect before (the newest record holding them), or None."""
    for ev in ledger.events(kinds=(Kind.CONFIG_LOADED, Kind.CONFIG_APPLIED), newest_first=True):
        if "values" in ev.data:
            return dict(ev.data["values"])
    return None


class StartChecks:
    """The self-checks of one start-up and what they found."""

    def __init__(
        self,
        hw: HardwareConfig,
        *,
        require_digest: bool = False,
        rng_test: Callable[[int], list[str]] | None = None,
    ):
        self._hw = hw
        self.require_digest = require_digest  # a missing software record is a problem (real tables)
        self._rng_test = rng_test  # None: the self-test of the RNG in use
        self.started_monotonic: float | None = None
        self.report: SelfCheckReport | None = None
        #: the report's problems and those found after it (the witness, the lock-out journal):
        #: each latched as the self-check's tilt
        self.problems: list[str] = []
        self.config_values: dict[str, str] = {}  # what is in effect (console `config show`)
        self.config_loaded: ConfigData = {}

    def begin(self) -> None:
        self.started_monotonic = time.monotonic()

    def run(
        self,
        ledger: Ledger,
        ledger_check: Callable[[], list[str]],
        rng_test: Callable[[int], list[str]] | None,
    ) -> SelfCheckReport:
        """Every start-up check (controller/boot/selfcheck.py ``run_all``); never touches a pin or a
        port.  ``rng_test``: the RNG in use's self-test, unless one was given."""
        from controller.boot import selfcheck

        report = selfcheck.run_all(
            self._hw,
            ledger,
            require_digest=self.require_digest,
            rng_test=self._rng_test if self._rng_test is not None else rng_test,
            ledger_check=ledger_check,
        )
        self.report = report
        self.problems = list(report.problems)
        return report

    def add_problems(self, problems: list[str]) -> None:
        """Problems found after the report (the witness, the lock-out journal): latched with it."""
        self.problems += problems

    def set_config_values(self, values: dict[str, str]) -> None:
        """The configuration now in effect (the console's ``config apply``)."""
        self.config_values = values

    def ledger_passed(self) -> bool:
        return self.report is not None and self.report.results.get("ledger") == "pass"

    def done(self, ledger: Ledger, log: Log) -> None:
        """Log what was found; keep the configuration in effect and the ``config.loaded`` data
        (read before the ledger writer starts)."""
        report = self._report()
        for p in self.problems:
            log.error("self_check.failed", problem=p)
        log.info("self_check.done", results=report.results, seconds=report.seconds)
        self.config_values = dict(report.config_values)
        self.config_loaded = self._config_loaded_data(ledger, report.config_values)

    def records_data(self) -> dict[str, object]:
        """The ``self_check`` record's data."""
        sc = self._report()
        return {
            "results": sc.results,
            "problems": sc.problems,
            "digest": sc.digest,
            "recorded_digest": sc.recorded_digest,
            "seconds": sc.seconds,
        }

    def _report(self) -> SelfCheckReport:
        if self.report is None:
            raise RuntimeError("the self-checks have not run")
        return self.report

    def _config_loaded_data(self, ledger: Ledger, values: Mapping[str, str]) -> ConfigData:
        """Data of the ``config.loaded`` record: every value when the configuration
        differs from the one in effect before (with the changes, old and new), else
        only its digest."""
        from controller.boot.selfcheck import config_digest

        digest = config_digest(values)
        last_values = _last_values(ledger)
        if last_values is not None and config_digest(last_values) == digest:
            return {"file": self._hw.file, "digest": digest, "changed": {}}
        old = last_values or {}
        changed = {
            k: [old.get(k), values.get(k)] for k in sorted(set(old) | set(values)) if old.get(k) != values.get(k)
        }
        return {
            "file": self._hw.file,
            "digest": digest,
            "values": dict(values),
            "changed": changed if last_values is not None else {},
        }
