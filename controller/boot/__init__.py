"""Start-up: the configuration loaded with one error path, run --check's preflight, the self-checks
(configuration, ledger, software digest, RNG)."""
