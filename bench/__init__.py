"""Benchmarks, run with ``tablectl bench NAME [ARGS...] [NAME [ARGS...]]...``.

Each module here defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args, emit) -> int``; ``emit(key, value)`` prints one ``key: value``
line.  Figures are measured, never asserted in tests: performance lives here,
not in timed tests.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from types import ModuleType

#: ``emit(key, value)``: one figure, printed as ``key: value``
Emit = Callable[[str, object], None]


def discover() -> dict[str, ModuleType]:
    mods: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods[mod.NAME] = mod
    return mods


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (q in 0..100)."""
    if not sorted_values:
        raise ValueError("no samples")
    import math

    k = max(0, min(len(sorted_values) - 1, math.ceil(q / 100 * len(sorted_values)) - 1))
    return sorted_values[k]
