"""The uplink (on the Pi, beside the table service): the table's socket channel, its view of the
LAP, the ledger seam, the uplink process."""
