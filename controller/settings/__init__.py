"""The settings: the table profile and the hardware file read into range-checked sections, the pin
budget, the paytable files.  Each part's settings type lives here; the settings know no part of
the table."""
