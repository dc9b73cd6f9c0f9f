"""bench/_ha_faults.py without a cluster: which kinds a database plays, and the HA kinds found in
the chaos bench's registry of fault kinds (bench/_faults.py) with nothing else edited."""

from __future__ import annotations

from bench import _faults, _ha_faults


def test_the_ha_kinds_need_patroni_and_the_hand_made_failover_is_left_out_there() -> None:
    assert _ha_faults.wants_patroni("cut, kill-primary") and not _ha_faults.wants_patroni("cut,failover")
    kinds = ["cut", "failover", "kill-primary", "node-loss"]
    assert _ha_faults.usable(kinds, None) == ["cut", "failover"]


def test_the_ha_kinds_are_in_the_registry_once_on_the_database_resource() -> None:
    for name in ("kill-primary", "node-loss"):
        k = _faults.KINDS[name]
        assert k.needs_pair and k.resource == "db" and k.aim == "pit"
    # without the bench's own cluster (--db) they are left out, as the hand-made failover is
    assert _faults.known(["kill-primary", "node-loss", "cut"], have_pair=False) == ["cut"]
    assert _faults.known(["kill-primary"], have_pair=False) == ["cut"]


def test_the_default_kinds_keep_the_database_they_were_given() -> None:
    import argparse

    from bench.link_chaos import FAULTS, add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    default = p.parse_args([]).kinds.split(",")
    assert set(default) == set(FAULTS) - set(_ha_faults.KINDS) and not _ha_faults.wants_patroni(",".join(default))
