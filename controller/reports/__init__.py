"""Reports read from the ledger: the gaming day's accounting report (text and PDF) and ``tablectl
status`` / ``meters``."""
