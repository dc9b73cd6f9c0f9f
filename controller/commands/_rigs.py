"""The simulators and benchmarks (``hil/``, ``bench/``) are a distribution of their own,
``tablectl-rigs``, which a table's release does not install (docs/install.md):
``tablectl sim``, ``hil`` and ``bench`` say so instead of failing on an import."""

from __future__ import annotations

import importlib.util
import sys

RIGS_MISSING = (
    "the simulators and benchmarks (hil/, bench/) are not installed here: a table's release leaves them out. "
    "They are the tablectl-rigs distribution: run this from a checkout (./bootstrap), or install it beside "
    "the release from the bundle's rigs/ directory (docs/install.md, 'The simulators on a release')"
)


def missing(prog: str, package: str = "hil") -> int | None:
    """None when ``package`` can be imported; else 2, having said what to install."""
    if importlib.util.find_spec(package) is not None:
        return None
    print(f"tablectl {prog}: {RIGS_MISSING}", file=sys.stderr)
    return 2
