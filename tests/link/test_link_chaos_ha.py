"""bench/_ha_faults.py without a cluster: which kinds a database plays, and the HA kinds added to a
registry of fault kinds (one ``kind(name, **options)`` decorator, as the bench's registry has)."""

from __future__ import annotations

from typing import Any

from bench import _ha_faults


def test_the_ha_kinds_need_patroni_and_the_hand_made_failover_is_left_out_there() -> None:
    assert _ha_faults.wants_patroni("cut, kill-primary") and not _ha_faults.wants_patroni("cut,failover")
    kinds = ["cut", "failover", "kill-primary", "node-loss"]
    assert _ha_faults.usable(kinds, None) == ["cut", "failover"]
    assert not _ha_faults.handles("restart-pg", None) and _ha_faults.handles("node-loss", None)


def test_register_adds_each_ha_kind_once_on_the_database_resource() -> None:
    got: dict[str, tuple[dict[str, Any], Any]] = {}

    def kind(name: str, **kw: Any) -> Any:
        def add(fn: Any) -> Any:
            assert name not in got
            got[name] = (kw, fn)
            return fn

        return add

    _ha_faults.register(kind)
    assert sorted(got) == ["kill-primary", "node-loss"]
    assert all(kw == {"needs_pair": True, "resource": "db"} for kw, _fn in got.values())
