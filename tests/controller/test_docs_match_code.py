"""docs/architecture.md matches the code: every file it names exists, every
``Class.attribute`` it names is defined on that class (or a base it names), every ledger
event kind it names is written somewhere, and every state it names is a machine state.
docs/performance.md, the benches' history moved out of it, is held to the same
files, attributes and event kinds."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PERF = ROOT / "docs" / "performance.md"
DOCS = (DOC, PERF)
SOURCES = [p for d in ("controller", "drivers", "hil") for p in (ROOT / d).rglob("*.py")]


def _prose(doc: Path = DOC) -> str:
    return re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)  # fenced blocks are drawings


def _names(doc: Path = DOC) -> list[str]:
    return re.findall(r"`([^`]+)`", _prose(doc))


def _classes() -> dict[str, tuple[set[str], list[str]]]:
    """class name -> (attributes defined in its body, names of its bases)"""
    out: dict[str, tuple[set[str], list[str]]] = {}
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                attrs: set[str] = set()
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        attrs.add(item.name)
                    elif isinstance(item, ast.Assign):
                        attrs.update(t.id for t in item.targets if isinstance(t, ast.Name))
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        attrs.add(item.target.id)
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
                prev = out.get(node.name, (set(), []))
                out[node.name] = (prev[0] | attrs, prev[1] + bases)
    return out


def _has(
    classes: dict[str, tuple[set[str], list[str]]], cls: str, attr: str, seen: frozenset[str] = frozenset()
) -> bool:
    if cls not in classes or cls in seen:
        return False
    attrs, bases = classes[cls]
    return attr in attrs or any(_has(classes, b, attr, seen | {cls}) for b in bases)


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_named_files_exist(doc: Path):
    paths = [n for n in _names(doc) if re.match(r"^(controller|drivers|hil|bench|config|docs|systemd)/", n)]
    assert len(paths) >= (10 if doc == DOC else 1)
    for name in paths:
        pattern = re.sub(r"<[^>]+>", "*", name).rstrip("/")
        assert list(ROOT.glob(pattern)), f"docs/{doc.name} names {name}, which does not exist"


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_named_class_attributes_exist(doc: Path):
    classes = _classes()
    refs = [m.groups() for n in _names(doc) if (m := re.match(r"^([A-Z]\w+)\.(\w+)", n))]
    assert len(refs) > 10
    missing = [f"{c}.{a}" for c, a in refs if not _has(classes, c, a)]
    assert not missing, f"docs/{doc.name} names what the code does not define: {missing}"


def test_architecture_links_the_benches_history():
    """The benches' history lives in docs/performance.md, which architecture.md and
    the README's bench command point to; architecture.md keeps the design, not the passes."""
    assert "docs/performance.md" in DOC.read_text()
    assert "docs/performance.md" in (ROOT / "README.md").read_text()
    assert not re.search(r"^#+ (First pass|Second pass|Third look)", DOC.read_text(), re.M)
    assert re.search(r"^### First pass", PERF.read_text(), re.M)


def test_named_event_kinds_are_written():
    """A kind the page names is a ``Kind`` (controller/core/records.py, the one place kinds are
    spelt) and is used somewhere else: as ``Kind.<NAME>`` or its value."""
    from controller.core.records import Kind

    records = Path(sys.modules[Kind.__module__].__file__ or "")  # wherever the package puts it
    source = "\n".join(p.read_text() for p in SOURCES if p != records)
    kind = r"(wager|tilt|meter|game|round|count|device)\.[a-z_]+"
    kinds = [n for d in DOCS for n in _names(d) if re.fullmatch(kind, n)]
    assert len(kinds) >= 5
    by_value = {k.value: k for k in Kind}
    for kind in kinds:
        assert kind in by_value, f"docs/architecture.md names ledger event {kind!r}, which is not a Kind"
        assert f"Kind.{by_value[kind].name}" in source or f'"{kind}"' in source, (
            f"docs/architecture.md names ledger event {kind!r}, which nothing writes"
        )


def test_named_states_are_machine_states():
    import tomllib

    from controller.gamedefs import games
    from controller.games import procedure_for
    from controller.play.machine import TAIL
    from controller.settings.config import parse_profile

    states = set(TAIL) | {"self_test", "open_for_wagers", "no_more_bets"}
    for game in games():
        profile = parse_profile(tomllib.loads((ROOT / "config" / "tables" / f"{game}.toml").read_text()), game)
        states |= {p.state for p in procedure_for(game, profile).phases}
    text = _prose()
    para = text[text.index("## A game at the table") : text.index("## Threading model")]
    named = set(re.findall(r"`([a-z_]+)`", para)) - {"lock_out", "dice_wagers", "advance"}
    assert named and named <= states, f"not states: {sorted(named - states)}"


# --------------------------------------------------------------------------- rules readings
READINGS = ROOT / "docs" / "rules-readings"
#: chapter file -> the game whose table profile (config/tables/<game>.toml) its options belong to
CHAPTER_GAME = {
    "670a": "six-card-fortune",
    "659a": "fortune-asia",
    "688a": "face-up",
    "687a": "dj-wild",
    "686a": "over-under",
    "621a": "pai-gow-tiles",
}
NOT_OPTIONS = {"net"}  # `net = -wager` describes a WagerResult, not a profile option
#: values a reading says the profile check refuses (621a #35: dice wagers with the RNG start)
REFUSED = {("621a", "start_method")}


def _reading_options() -> list[tuple[str, str, str]]:
    out = []
    for chapter in CHAPTER_GAME:
        text = (READINGS / f"{chapter}.md").read_text()
        for m in re.finditer(r"`([a-z_]+) = ([^`]+)`", text):
            if m.group(1) not in NOT_OPTIONS:
                out.append((chapter, m.group(1), m.group(2)))
    return out


def test_readings_name_profile_options_the_code_accepts():
    """Every ``key = value`` a reading names (docs/rules-readings/<chapter>.md) is an
    option of that game's table profile, and the profile loads with that value: a reading
    that names a removed option or value (e.g. ``envy_receivers = "any-qualifying"``) fails."""
    import copy
    import tomllib

    from controller.games import procedure_for
    from controller.settings.config import parse_profile

    found = _reading_options()
    assert len(found) >= 5
    for chapter, key, value in found:
        game = CHAPTER_GAME[chapter]
        doc = tomllib.loads((ROOT / "config" / "tables" / f"{game}.toml").read_text())
        v = tomllib.loads(f"x = {value}")["x"]
        d = copy.deepcopy(doc)
        if key in ("start_method", "seats", "positions", "sensed"):
            d["game"][key] = v
        elif key in d.get("progressive", {}):
            d["progressive"][key] = v
        else:
            d["game"].setdefault("options", {})[key] = v
        try:
            proc = procedure_for(game, parse_profile(d, f"{game}.toml"))
        except ValueError as e:
            if (chapter, key) in REFUSED:
                continue
            proc_cls = type(procedure_for(game, parse_profile(doc, f"{game}.toml")))
            if hasattr(proc_cls, key):  # a fixed property of the game's procedure (621a's `burn_limit = 0`)
                assert getattr(proc_cls, key) == v, f"rules-readings/{chapter}.md: {proc_cls.__name__}.{key} != {v!r}"
                continue
            raise AssertionError(f"rules-readings/{chapter}.md names `{key} = {value}`: {e}") from None
        if hasattr(proc, key) and not callable(getattr(proc, key)):
            assert getattr(proc, key) == v, f"rules-readings/{chapter}.md: `{key} = {value}` did not take effect"
        assert (chapter, key) not in REFUSED, f"rules-readings/{chapter}.md says `{key} = {value}` is refused"


def test_readings_cite_tests_that_exist():
    """Every ``test_...`` a reading names as holding it is defined under tests/ (
    readings checked against the code)."""
    texts = [p.read_text() for p in READINGS.glob("*.md")] + [(ROOT / "docs" / "rules-readings.md").read_text()]
    cited = {n for t in texts for n in re.findall(r"`(test_[a-z0-9_]+)`", t)}
    assert len(cited) > 20
    defined = {
        m for p in (ROOT / "tests").rglob("test_*.py") for m in re.findall(r"^def (test_\w+)", p.read_text(), re.M)
    }
    assert not cited - defined, f"readings cite tests that do not exist: {sorted(cited - defined)}"


# --------------------------------------------------------------------------- the package layout


def _layout() -> dict[str, set[str]]:
    """The controller's part of the "Layers" drawing: package (``""`` for controller/ itself) ->
    the module files it lists.  A package is a line ``  name/`` (two spaces), its modules the
    ``*.py`` names that open a line of four spaces below it (several may share a line)."""
    text = DOC.read_text()
    start = text.index("## Layers")
    block = text[text.index("```\n", start) + 4 : text.index("```", text.index("```\n", start) + 4)]
    lines = block[: block.index("\ndrivers/")].splitlines()
    out: dict[str, set[str]] = {"": set()}
    pkg = ""
    for line in lines[1:]:
        if m := re.match(r"^  (\w+)/\s", line + " "):
            pkg = m.group(1)
            out[pkg] = set()
        elif re.match(r"^  \S", line):
            pkg = ""
            out[""] |= _leading_files(line)
        elif re.match(r"^    \S", line):
            out[pkg] |= _leading_files(line)
    return out


def _leading_files(line: str) -> set[str]:
    files = set()
    for word in line.split():
        if not word.endswith(".py"):
            break
        files.add(word)
    return files


def test_the_layers_drawing_lists_every_package_and_module():
    """docs/architecture.md "Layers" draws the tree as it is: each package of controller/ and
    every module in it, nothing that is not there (tests/controller/test_layers.py keeps their order)."""
    drawn = _layout()
    ctl = ROOT / "controller"
    real = {"": {p.name for p in ctl.glob("*.py")}}
    for d in sorted(p.parent for p in ctl.glob("*/__init__.py")):
        real[d.name] = {p.name for p in d.glob("*.py")} - {"__init__.py"}
    assert sorted(drawn) == sorted(real), f"packages drawn {sorted(drawn)}, on disk {sorted(real)}"
    for pkg, files in real.items():
        where = f"controller/{pkg}/" if pkg else "controller/"
        extra, missing = sorted(drawn[pkg] - files), sorted(files - drawn[pkg])
        assert not extra and not missing, f"{where}: drawn but not there {extra}, there but not drawn {missing}"
