"""Developer tools run from the repository (``python -m tools.<name>``); not installed on a table."""
