"""The LAP controller (a server in the back office, on PostgreSQL): its schema, the floor view and
the common sign, the catalogue, reconciliation, the throwaway cluster of the tests."""
