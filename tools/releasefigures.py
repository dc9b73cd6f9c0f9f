"""The release bundle's figures, measured on what ``systemd/build-release.sh`` just built: the
wheels by kind (pure Python, or compiled with one wheel per platform), the simulators' and the
LAP host's wheels, the archive's size and the build's time.  docs/install.md carries them
between two markers, written by ``build-release.sh --docs`` and never typed: the block holds
the measurements as JSON and the text made from them, and a test checks that the one is the
other (tests/ops/test_surprises.py).

    python -m tools.releasefigures --bundle DIR --archive F.tar.gz --seconds N   # the block, on stdout
    python -m tools.releasefigures --update docs/install.md < block              # put it in place
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

BEGIN = "<!-- release figures: written by `systemd/build-release.sh --docs` (tools/releasefigures.py); not by hand -->"
END = "<!-- /release figures -->"


def _project(wheel: str) -> str:
    return re.sub(r"[-_.]+", "-", wheel.split("-")[0]).lower()


def wheels(d: Path) -> dict[str, Any]:
    """The wheels in ``d``: pure ones by project, compiled ones by project with their count."""
    pure: set[str] = set()
    compiled: dict[str, int] = defaultdict(int)
    for w in sorted(d.glob("*.whl")):  # none when there is no such directory
        if w.name.endswith(("-none-any.whl", "-py3-none-any.whl")):
            pure.add(_project(w.name))
        else:
            compiled[_project(w.name)] += 1
    return {"pure": sorted(pure), "compiled": dict(sorted(compiled.items()))}


def measure(bundle: Path, archive: Path, seconds: float) -> dict[str, Any]:
    aarch64 = any("aarch64" in w.name for w in (bundle / "wheelhouse").glob("*.whl"))
    return {
        "version": (bundle / "VERSION").read_text().strip(),
        "platforms": "the build machine's and aarch64 (Raspberry Pi OS)" if aarch64 else "the build machine's only",
        "build_s": round(seconds),
        "wheelhouse": wheels(bundle / "wheelhouse"),
        "rigs": wheels(bundle / "rigs"),
        "lap": wheels(bundle / "lap"),
        "archive_bytes": archive.stat().st_size,
    }


def _count(w: dict[str, Any]) -> int:
    return len(w["pure"]) + sum(int(c) for c in w["compiled"].values())


def _kinds(w: dict[str, Any]) -> str:
    compiled = ", ".join(f"{n} × {c}" for n, c in w["compiled"].items())
    return f"{len(w['pure'])} pure: {', '.join(w['pure']) or 'none'}; compiled: {compiled or 'none'}"


def render(f: dict[str, Any]) -> str:
    """The block docs/install.md carries: the measurements as JSON, then the text made from them."""
    mib = f["archive_bytes"] / 2**20
    text = (
        f"Figures of the last full build (tablectl {f['version']}, wheels for {f['platforms']}, measured by the "
        f"build itself): {f['build_s']} s; `wheelhouse/` {_count(f['wheelhouse'])} wheels "
        f"({_kinds(f['wheelhouse'])}); `rigs/` {_count(f['rigs'])} wheels ({_kinds(f['rigs'])}); "
        f"`lap/` {_count(f['lap'])} wheels ({_kinds(f['lap'])}); archive {mib:.1f} MiB "
        f"({f['archive_bytes'] / 1e6:.0f} MB)."
    )
    return f"{BEGIN}\n<!-- {json.dumps(f, sort_keys=True)} -->\n{text}\n{END}"


def block_of(doc: str) -> str | None:
    """The figures block in a document, or None."""
    i, j = doc.find(BEGIN), doc.find(END)
    return doc[i : j + len(END)] if 0 <= i < j else None


def parse(block: str) -> dict[str, Any]:
    """The measurements a block was made from."""
    m = re.search(r"^<!-- (\{.*\}) -->$", block, re.M)
    if m is None:
        raise ValueError("no measurements in the block")
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def update(doc_path: Path, block: str) -> None:
    doc = doc_path.read_text(encoding="utf-8")
    old = block_of(doc)
    if old is None:
        raise SystemExit(f"{doc_path}: no figures block ({BEGIN!r} ... {END!r}) to replace")
    doc_path.write_text(doc.replace(old, block.strip()), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.releasefigures", description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", type=Path, help="the built bundle's directory (tablectl-VERSION/)")
    p.add_argument("--archive", type=Path, help="the built archive")
    p.add_argument("--seconds", type=float, default=0.0, help="how long the build took")
    p.add_argument("--update", type=Path, metavar="DOC", help="replace DOC's figures block with the one on stdin")
    a = p.parse_args(argv)
    if a.update is not None:
        update(a.update, sys.stdin.read())
        return 0
    if a.bundle is None or a.archive is None:
        p.error("--bundle and --archive (or --update DOC)")
    print(render(measure(a.bundle, a.archive, a.seconds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
