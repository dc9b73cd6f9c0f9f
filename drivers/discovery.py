"""Declarations found by the loader: the one discovery loop the games (controller/gamedefs/) and
the serial devices (drivers/devicedefs/) share, and the dotted references their declarations use.

It lives in drivers/ because drivers/ imports nothing of controller/ (tests/drivers/test_seams.py)
while controller/ may import drivers/; it imports nothing but the standard library, so the rules
engine reading the game ids still knows no driver.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from typing import TypeVar

D = TypeVar("D")


def resolve(ref: str) -> object:
    """The object a ``"package.module:Name"`` reference names (imported on use)."""
    mod, _, name = ref.partition(":")
    return getattr(importlib.import_module(mod), name)


def discover(package: str, path: Iterable[str], attr: str, kind: type[D], key: Callable[[D], str]) -> dict[str, D]:
    """The ``attr`` of every public module of ``package`` (its ``__path__``), by ``key``, in the order of
    the modules' names; a value not of ``kind`` or a key declared twice is refused, naming the module."""
    out: dict[str, D] = {}
    for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        decl = getattr(importlib.import_module(f"{package}.{info.name}"), attr)
        if not isinstance(decl, kind):
            raise TypeError(f"{package}.{info.name}.{attr} is not a {kind.__name__}")
        name = key(decl)
        if name in out:
            raise RuntimeError(f"{kind.__name__.removesuffix('Decl').lower()} {name!r} declared twice ({info.name})")
        out[name] = decl
    return out
