"""tablectl controller: rules engine, round state machine, meters, ledger, console
and service wiring.  See docs/architecture.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.rules.paytables import Paytable

__version__ = "0.1.0"


def _shipped_paytables() -> dict[str, Paytable]:
    from controller.settings.paytablefiles import shipped_paytables

    return shipped_paytables()


def _pass_paytables() -> None:
    """The rules engine reads no file: the shipped paytables are passed in here, loaded at
    the first lookup (controller/rules/paytables.py ``use_paytables``)."""
    from controller.rules.paytables import use_paytables

    use_paytables(_shipped_paytables)


_pass_paytables()
