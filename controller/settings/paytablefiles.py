"""The paytable files read, outside the rules engine: ``config/paytables/<chapter>.toml``
(one file per chapter, the format in controller/rules/paytables.py) parsed and checked
into one mapping by name, names unique across files.  The rules engine looks names up in
what is passed in (``use_paytables``); ``controller/__init__.py`` passes ``shipped_paytables``."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path

from controller.gamedefs import games
from controller.rules.paytables import Paytable, PaytableError, parse_paytables


def load_paytables(paths: Iterable[Path]) -> dict[str, Paytable]:
    """Load and validate every paytable file; names must be unique across files."""
    allt: dict[str, Paytable] = {}
    for p in sorted(paths):
        try:
            doc = tomllib.loads(Path(p).read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise PaytableError(f"{p}: not valid TOML: {e}") from None
        for name, pt in parse_paytables(doc, str(p)).items():
            if name in allt:
                raise PaytableError(f"{p}: paytable {name!r} also defined in {allt[name].source}")
            allt[name] = pt
    return allt


def default_paytable_dir() -> Path:
    from config import CONFIG_DIR  # the packaged config/ directory

    return CONFIG_DIR / "paytables"


def shipped_paytables() -> dict[str, Paytable]:
    """The paytables of every declared game (controller/gamedefs/): its file under config/paytables,
    or where its declaration says."""
    base = default_paytable_dir()
    return load_paytables({base / decl.paytable_file for decl in games().values()})
