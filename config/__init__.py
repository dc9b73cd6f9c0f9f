"""Shipped configuration data: paytables (``paytables/``), table profiles
(``tables/``) and example hardware configurations.  This is a package only so that
the data installs with tablectl; there is no code here."""

from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent
