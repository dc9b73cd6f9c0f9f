"""The ledger and its trust: the HMAC-chained event log, its writer, checks, seals, schema
migrations, key, witness, the lock-out journal, the audit, backups, the state directory's lock,
the meters (pure functions over ledger events), what stands (tilts, acknowledgements, devices
out of order) and round recall.  The ledger knows no component of the table."""
