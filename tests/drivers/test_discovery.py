"""drivers/discovery.py: the one discovery loop the games and the devices share."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from drivers.discovery import discover, resolve


@dataclass(frozen=True)
class Decl:
    name: str


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pkg: str, modules: dict[str, str]) -> list[str]:
    root = tmp_path / pkg
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("")
    for mod, body in modules.items():
        (root / f"{mod}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    for mod in [m for m in sys.modules if m == pkg or m.startswith(pkg + ".")]:
        monkeypatch.delitem(sys.modules, mod)
    return [str(root)]


DECL = "from tests.drivers.test_discovery import Decl\nTHING = Decl({!r})\n"


def test_found_in_module_order_private_modules_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _package(
        tmp_path, monkeypatch, "zzdecls1", {"b": DECL.format("bee"), "a": DECL.format("ay"), "_x": "THING = 1\n"}
    )
    found = discover("zzdecls1", path, "THING", Decl, lambda d: d.name)
    assert list(found) == ["ay", "bee"]
    assert found["bee"] == Decl("bee")


def test_a_wrong_type_or_a_name_twice_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _package(tmp_path, monkeypatch, "zzdecls2", {"a": "THING = 3\n"})
    with pytest.raises(TypeError, match=r"zzdecls2\.a\.THING is not a Decl"):
        discover("zzdecls2", path, "THING", Decl, lambda d: d.name)
    path = _package(tmp_path / "t", monkeypatch, "zzdecls3", {"a": DECL.format("x"), "b": DECL.format("x")})
    with pytest.raises(RuntimeError, match=r"'x' declared twice \(b\)"):
        discover("zzdecls3", path, "THING", Decl, lambda d: d.name)


def test_resolve_names_the_object() -> None:
    assert resolve("drivers.discovery:discover") is discover
