"""Group ``controller/`` into packages by what changes together (issue 27): a replayable,
idempotent move.

    python -m tools.reorg            # check, move (git mv), rewrite every reference
    python -m tools.reorg --check    # only say what would move and what is not mapped

``MAPPING`` names each module's new dotted path.  Before anything changes the script lists
every module under ``controller/``: one that is neither mapped (old or new name), nor in a
package that stays (``KEEP``), nor a package's ``__init__`` is printed and the run fails
(exit 1), so a module another branch added is placed by adding it to the mapping, not left
behind.  Then it moves the files with ``git mv`` (a file already at its new place is left
alone), writes the new packages' ``__init__.py``, and rewrites every reference to an old
name in the tracked files under ``ROOTS``: ``import``/``from`` statements (``from controller
import ledger`` becomes ``from controller.books import ledger``, split where the names go to
different packages), dotted names in any text (``"controller.ledger.os.fsync"`` in a patch,
``controller.cli:main`` in pyproject, ``python -m controller.x`` in a unit) and file paths
(``controller/ledger.py``); then docs/compliance.md is regenerated (it cites paths).  Run
twice, the second run changes nothing: no new name contains an old one (checked at start).
The package order the move builds is kept by tests/controller/test_layers.py;
docs/architecture.md lists each package's modules (tests/controller/test_docs_match_code.py).
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: packages (and root modules) that stay where they are; a module added inside them needs no mapping
KEEP = (
    "controller",
    "controller.__main__",
    "controller.cli",
    "controller.rules",
    "controller.analysis",
    "controller.games",
    "controller.console",
    "controller.commands",
)

#: the new packages, bottom to top (tests/controller/test_layers.py has the full order), and what each holds
PACKAGES: dict[str, str] = {
    "controller.core": "What every layer shares: the ledger records' vocabulary, money in words, bounded and "
    "private files, did-you-mean, JSON lines, the game clock, the reactor, the log context.",
    "controller.settings": "The settings: the table profile and the hardware file read into range-checked "
    "sections, the pin budget, the paytable files.  Each part's settings type lives here; the settings know no "
    "part of the table.",
    "controller.books": "The ledger and its trust: the HMAC-chained event log, its writer, checks, seals, "
    "schema migrations, key, witness, the lock-out journal, the audit, backups, the state directory's lock, "
    "the meters (pure functions over ledger events), what stands (tilts, acknowledgements, devices out of "
    "order) and round recall.  The ledger knows no component of the table.",
    "controller.play": "The table and its components: the live machine, its assembly, the roles each "
    "component is given, wagering, dealing, deciding, settling, the floor, faults, the link's table side, "
    "start-up recovery, the progressive's records.",
    "controller.reports": "Reports read from the ledger: the gaming day's accounting report (text and PDF) "
    "and ``tablectl status`` / ``meters``.",
    "controller.boot": "Start-up: the configuration loaded with one error path, run --check's preflight, the "
    "self-checks (configuration, ledger, software digest, RNG).",
    "controller.daemon": "The service and its process plumbing: the service's threads and wiring, systemd "
    "notification, the state directory's owner.",
    "controller.lap": "The LAP controller (a server in the back office, on PostgreSQL): its schema, the "
    "floor view and the common sign, the catalogue, reconciliation, the throwaway cluster of the tests.",
    "controller.uplink": "The uplink (on the Pi, beside the table service): the table's socket channel, its "
    "view of the LAP, the ledger seam, the uplink process.",
}

MAPPING: dict[str, str] = {
    # core
    "controller.records": "controller.core.records",
    "controller.money": "controller.core.money",
    "controller.safefile": "controller.core.safefile",
    "controller.suggest": "controller.core.suggest",
    "controller.jsonlines": "controller.core.jsonlines",
    "controller.clock": "controller.core.clock",
    "controller.reactor": "controller.core.reactor",
    "controller.log": "controller.core.log",
    # settings
    "controller.config": "controller.settings.config",
    "controller.hardware": "controller.settings.hardware",
    "controller.pins": "controller.settings.pins",
    "controller.paytablefiles": "controller.settings.paytablefiles",
    # books
    "controller.ledger": "controller.books.ledger",
    "controller.ledgercheck": "controller.books.ledgercheck",
    "controller.ledgermigrate": "controller.books.ledgermigrate",
    "controller.ledgerwriter": "controller.books.ledgerwriter",
    "controller.ledgerkey": "controller.books.ledgerkey",
    "controller.seals": "controller.books.seals",
    "controller.witness": "controller.books.witness",
    "controller.lockjournal": "controller.books.lockjournal",
    "controller.audit": "controller.books.audit",
    "controller.auditrun": "controller.books.auditrun",
    "controller.backup": "controller.books.backup",
    "controller.backupextend": "controller.books.backupextend",
    "controller.statelock": "controller.books.statelock",
    "controller.meters": "controller.books.meters",
    "controller.standing": "controller.books.standing",
    "controller.history": "controller.books.history",
    # games (the package stays; the round every procedure hook is given joins it)
    "controller.round": "controller.games.round",
    # play
    "controller.table": "controller.play.table",
    "controller.assembly": "controller.play.assembly",
    "controller.context": "controller.play.context",
    "controller.profilechange": "controller.play.profilechange",
    "controller.wagering": "controller.play.wagering",
    "controller.dealing": "controller.play.dealing",
    "controller.deciding": "controller.play.deciding",
    "controller.flood": "controller.play.flood",
    "controller.settling": "controller.play.settling",
    "controller.floor": "controller.play.floor",
    "controller.faults": "controller.play.faults",
    "controller.linking": "controller.play.linking",
    "controller.linked": "controller.play.linked",
    "controller.linkmsg": "controller.play.linkmsg",
    "controller.recovery": "controller.play.recovery",
    "controller.status": "controller.play.status",
    "controller.timers": "controller.play.timers",
    "controller.devices": "controller.play.devices",
    "controller.inputs": "controller.play.inputs",
    "controller.betting": "controller.play.betting",
    "controller.machine": "controller.play.machine",
    "controller.progressive": "controller.play.progressive",
    # reports
    "controller.report": "controller.reports.report",
    "controller.reportview": "controller.reports.reportview",
    "controller.reportpdf": "controller.reports.reportpdf",
    "controller.tablestatus": "controller.reports.tablestatus",
    # boot
    "controller.startup": "controller.boot.startup",
    "controller.selfcheck": "controller.boot.selfcheck",
    # daemon
    "controller.service": "controller.daemon.service",
    "controller.sdnotify": "controller.daemon.sdnotify",
    "controller.stateowner": "controller.daemon.stateowner",
    "controller.ledgerstack": "controller.daemon.ledgerstack",
    "controller.deviceset": "controller.daemon.deviceset",
    "controller.background": "controller.daemon.background",
    "controller.readiness": "controller.daemon.readiness",
    "controller.startchecks": "controller.boot.startchecks",
    # the LAP (server side)
    "controller.link.lap": "controller.lap.lap",
    "controller.link.config": "controller.lap.config",
    "controller.link.schema": "controller.lap.schema",
    "controller.link.schema_floor": "controller.lap.schema_floor",
    "controller.link.schema_rules": "controller.lap.schema_rules",
    "controller.link.catalog": "controller.lap.catalog",
    "controller.link.reconcile": "controller.lap.reconcile",
    "controller.link.floor": "controller.lap.floor",
    "controller.link.floor_auth": "controller.lap.floor_auth",
    "controller.link.floor_history": "controller.lap.floor_history",
    "controller.link.floor_page": "controller.lap.floor_page",
    "controller.link.floor_routes": "controller.lap.floor_routes",
    "controller.link.floor_server": "controller.lap.floor_server",
    "controller.link.floorlock": "controller.lap.floorlock",
    "controller.link.pgtemp": "controller.lap.pgtemp",
    "controller.link.pgconn": "controller.lap.pgconn",
    "controller.link.lapreport": "controller.lap.lapreport",
    "controller.link.lapreportpdf": "controller.lap.lapreportpdf",
    # the uplink (table side)
    "controller.link.uplink": "controller.uplink.uplink",
    "controller.link.channel": "controller.uplink.channel",
    "controller.link.lapview": "controller.uplink.lapview",
    "controller.link.ledgerseam": "controller.uplink.ledgerseam",
}

#: whole directories (data, not modules) moved with their package
DIRS: dict[str, str] = {"controller/link/web": "controller/lap/web"}
#: a package emptied by the move -> where references to the package itself go (package data, docs)
PACKAGE_MOVES: dict[str, str] = {"controller.link": "controller.lap"}

ROOTS = ("controller", "drivers", "hil", "bench", "tools", "tests", "rigs", "docs", "systemd", "config")
ROOT_FILES = ("pyproject.toml", "README.md", "DEVELOPERS.md")
TEXT = {".py", ".md", ".toml", ".yaml", ".yml", ".service", ".sh", ".cfg", ".ini", ".txt", ".rules", ".conf", ""}
SELF = "tools/reorg.py"


def git(*args: str, check: bool = True) -> str:
    r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    if check and r.returncode:
        raise SystemExit(f"git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def path_of(mod: str) -> Path:
    return ROOT / (mod.replace(".", "/") + ".py")


def dotted(p: Path) -> str:
    parts = p.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# --------------------------------------------------------------------------- checks


def check_mapping() -> list[str]:
    """Problems with the mapping itself: a new name that contains an old one (a second run
    would rewrite it again), two modules sent to one place."""
    out = []
    olds = set(MAPPING) | set(PACKAGE_MOVES)
    news = list(MAPPING.values()) + list(PACKAGES)
    for new in news:
        for old in olds:
            if re.search(rf"(?<![\w.]){re.escape(old)}(?!\w)", new):
                out.append(f"new name {new} contains old name {old}: a second run would rewrite it")
    dup = {v for v in MAPPING.values() if list(MAPPING.values()).count(v) > 1}
    out += [f"two modules mapped to {v}" for v in sorted(dup)]
    out += [f"{v} is not in a new package or a kept one" for v in MAPPING.values() if not _placed(v)]
    return out


def _placed(new: str) -> bool:
    pkg = new.rsplit(".", 1)[0]
    return pkg in PACKAGES or pkg in KEEP


def _kept(mod: str) -> bool:
    return mod in KEEP or any(mod.startswith(k + ".") for k in KEEP if k != "controller")


def unmapped() -> list[str]:
    """Modules under controller/ the mapping does not place."""
    out = []
    new_names = set(MAPPING.values()) | set(PACKAGES)
    for p in sorted((ROOT / "controller").rglob("*.py")):
        mod = dotted(p)
        if mod in MAPPING or mod in new_names or _kept(mod) or mod in PACKAGE_MOVES:
            continue
        out.append(f"{p.relative_to(ROOT)} ({mod})")
    return out


# --------------------------------------------------------------------------- the move


def move(dry: bool) -> list[str]:
    done = []
    for pkg, doc in PACKAGES.items():
        init = path_of(pkg + ".__init__")
        if not init.exists():
            done.append(f"new package {pkg}")
            if not dry:
                init.parent.mkdir(parents=True, exist_ok=True)
                init.write_text(f'"""{_wrap(doc)}"""\n')
                git("add", str(init.relative_to(ROOT)))
    for old, new in MAPPING.items():
        src, dst = path_of(old), path_of(new)
        if src.exists() and dst.exists():
            raise SystemExit(f"both {src.relative_to(ROOT)} and {dst.relative_to(ROOT)} exist: merge them by hand")
        if src.exists():
            done.append(f"{old} -> {new}")
            if not dry:
                git("mv", str(src.relative_to(ROOT)), str(dst.relative_to(ROOT)))
    for old_dir, new_dir in DIRS.items():
        if (ROOT / old_dir).exists():
            if (ROOT / new_dir).exists():
                raise SystemExit(f"both {old_dir} and {new_dir} exist: merge them by hand")
            done.append(f"{old_dir}/ -> {new_dir}/")
            if not dry:
                git("mv", old_dir, new_dir)
    for pkg in PACKAGE_MOVES:
        d = ROOT / pkg.replace(".", "/")
        init = d / "__init__.py"
        files = d.rglob("*") if d.exists() else iter(())
        left = [p for p in files if p.is_file() and p != init and "__pycache__" not in p.parts]
        if init.exists() and not left:
            done.append(f"package {pkg} removed (emptied)")
            if not dry:
                git("rm", "-q", str(init.relative_to(ROOT)))
                _rmtree_pycache(d)
    return done


def _rmtree_pycache(d: Path) -> None:
    import shutil

    shutil.rmtree(d / "__pycache__", ignore_errors=True)
    if d.exists() and not any(d.iterdir()):
        d.rmdir()


def _wrap(text: str, width: int = 96) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


# --------------------------------------------------------------------------- rewriting


def _subst_table() -> list[tuple[re.Pattern[str], str]]:
    pairs: dict[str, str] = {}
    for old, new in {**MAPPING, **PACKAGE_MOVES}.items():
        pairs[old] = new
    for old, new in MAPPING.items():
        pairs[old.replace(".", "/") + ".py"] = new.replace(".", "/") + ".py"
    for old, new in DIRS.items():
        pairs[old] = new
    out = []
    for old in sorted(pairs, key=len, reverse=True):
        if "/" in old:
            out.append((re.compile(rf"(?<![\w/.]){re.escape(old)}(?![\w])"), pairs[old]))
        else:
            out.append((re.compile(rf"(?<![\w.]){re.escape(old)}(?!\w)"), pairs[old]))
    return out


def rewrite_from_imports(src: str) -> str:
    """``from controller import ledger, meters as M`` -> one statement per new package."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return src
    lines = src.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        moved = [a for a in node.names if f"{node.module}.{a.name}" in MAPPING]
        if not moved:
            continue
        groups: dict[str, list[str]] = {}
        for a in node.names:
            full = f"{node.module}.{a.name}"
            pkg = MAPPING[full].rsplit(".", 1)[0] if full in MAPPING else node.module
            name = MAPPING[full].rsplit(".", 1)[1] if full in MAPPING else a.name
            alias = a.asname or (a.name if name != a.name else None)
            groups.setdefault(pkg, []).append(f"{name} as {alias}" if alias and alias != name else name)
        first = lines[node.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        if node.col_offset != len(indent):
            raise SystemExit(f"an import not at the start of its line: {first.strip()!r}")
        text = "".join(f"{indent}from {pkg} import {', '.join(names)}\n" for pkg, names in groups.items())
        end = node.end_lineno or node.lineno
        rest = lines[end - 1][node.end_col_offset or 0 :].strip()  # a trailing comment is kept
        if rest.startswith("#"):
            text = text.rstrip("\n") + "  " + rest + "\n"
        elif rest:
            raise SystemExit(f"an import followed by more on its line: {lines[end - 1].strip()!r}")
        edits.append((node.lineno - 1, end, text))
    for start, end, text in sorted(edits, reverse=True):
        lines[start:end] = [text]
    return "".join(lines)


def tracked_files() -> list[Path]:
    names = git("ls-files", "--", *ROOTS, *ROOT_FILES).split("\n")
    out = []
    for n in names:
        p = ROOT / n
        if n and n != SELF and p.is_file() and p.suffix in TEXT and "egg-info" not in n:
            out.append(p)
    return out


def rewrite(dry: bool) -> list[str]:
    table = _subst_table()
    changed = []
    for p in tracked_files():
        try:
            src = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite_from_imports(src) if p.suffix == ".py" else src
        for pat, repl in table:
            new = pat.sub(repl, new)
        if new != src:
            changed.append(str(p.relative_to(ROOT)))
            if not dry:
                p.write_text(new, encoding="utf-8")
    return changed


def leftovers() -> list[str]:
    """Mentions of an emptied package's directory (``controller/link/``) a person must place."""
    out = []
    for pkg in PACKAGE_MOVES:
        d = pkg.replace(".", "/")
        pat = re.compile(rf"(?<![\w/.]){re.escape(d)}/?(?![\w])")
        for p in tracked_files():
            text = p.read_text(encoding="utf-8", errors="replace")
            for i, line in enumerate(text.splitlines(), 1):
                if pat.search(line):
                    out.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()[:110]}")
    return out


def tidy(files: list[str]) -> None:
    py = [f for f in files if f.endswith(".py")]
    ruff = ROOT / ".venv" / "bin" / "ruff"
    if not py or not ruff.exists():
        return
    subprocess.run([str(ruff), "check", "-q", "--fix", "--select", "I", *py], cwd=ROOT, check=False)
    subprocess.run([str(ruff), "format", "-q", *py], cwd=ROOT, check=False)
    long = subprocess.run([str(ruff), "check", "-q", "--select", "E501", *py], cwd=ROOT, capture_output=True, text=True)
    if long.returncode:
        print("lines the longer names made too long (wrap them by hand):", long.stdout.strip(), sep="\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.reorg", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="say what would change; change nothing")
    args = ap.parse_args(argv)
    problems = check_mapping()
    if problems:
        print("the mapping is wrong:", *problems, sep="\n  ")
        return 1
    missing = unmapped()
    if missing:
        print("modules the mapping does not place (add them to MAPPING in tools/reorg.py):", *missing, sep="\n  ")
        return 1
    moved = move(args.check)
    print(f"{'would move' if args.check else 'moved'}: {len(moved)}", *moved, sep="\n  ")
    changed = rewrite(args.check)
    print(f"{'would rewrite' if args.check else 'rewrote'}: {len(changed)} files", *changed, sep="\n  ")
    if not args.check:
        tidy(changed)
    left = leftovers()
    if left:
        print("mentions of an emptied package to place by hand:", *left, sep="\n  ")
    if not args.check and (moved or changed):
        compliance()
        print("next: ruff, mypy, tests/controller/test_layers.py and test_docs_match_code.py (docs/architecture.md)")
    return 0


def compliance() -> None:
    """docs/compliance.md cites file paths: regenerated from the moved tree."""
    py = ROOT / ".venv" / "bin" / "python"
    r = subprocess.run([str(py if py.exists() else sys.executable), "-m", "tools.compliance"], cwd=ROOT, check=False)
    ok = r.returncode == 0
    print("docs/compliance.md regenerated" if ok else "python -m tools.compliance failed: run it by hand")


if __name__ == "__main__":
    sys.exit(main())
