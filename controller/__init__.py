"""tablectl controller: rules engine, round state machine, meters, ledger, console
and service wiring.  See docs/architecture.md."""

__version__ = "0.1.0"
