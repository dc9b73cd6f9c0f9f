"""Linked progressives (issue 14): the LAP controller on PostgreSQL (lap.py, schema.py,
config.py), and the throwaway cluster used by the sim and the tests (pgtemp.py)."""
