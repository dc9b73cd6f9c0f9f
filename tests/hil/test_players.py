"""The simulated players of each game (hil/players/): a game's players only play its own
procedure (the tiles players read the bank's rotation), and a chip on a bet
sensor is a wager of the spot's fixed amount."""

from __future__ import annotations

import dataclasses
import random

import pytest

from controller.games import procedure_for
from controller.games.base import Procedure
from controller.settings.config import load_profile, profile_names
from hil.players import strategy_for


def _proc(profile: str) -> Procedure:
    p = load_profile(profile)
    return procedure_for(p.game, p)


@pytest.mark.parametrize("profile", profile_names())
def test_every_games_players_take_its_own_procedure(profile: str) -> None:
    proc = _proc(profile)
    players = strategy_for(proc.game)(proc, random.Random(1), play_probability=1.0)
    assert players.proc is proc
    assert players.bets()  # every seat plays: the game's players bet on its own wagers


def test_tiles_players_refuse_a_card_games_procedure() -> None:
    """The tiles players read ``rotation`` and ``opts`` (who may bank), which only
    Pai Gow (tiles) has: given another game they fail at once, naming both, not mid-round."""
    cards = _proc("six-card-fortune-progressive")
    with pytest.raises(TypeError, match=r"TilesPlayers plays PaiGowTiles, not six-card-fortune"):
        strategy_for("pai-gow-tiles")(cards, random.Random(1))


def test_tiles_players_bet_from_the_rotation() -> None:
    tiles = _proc("pai-gow-tiles")
    players = strategy_for("pai-gow-tiles")(tiles, random.Random(7), play_probability=1.0)
    bets = players.bets()
    assert {b.seat for b in bets if b.wager == "base"} == set(range(1, tiles.seats + 1))
    assert all(isinstance(b.cents, int) and b.cents > 0 for b in bets)


def test_a_sensed_progressive_is_its_fixed_amount() -> None:
    proc = _proc("six-card-fortune-progressive")
    players = strategy_for(proc.game)(proc, random.Random(1), play_probability=1.0)
    fixed = proc.wagers["progressive"].fixed_cents
    assert isinstance(fixed, int) and fixed > 0
    sensed = [b for b in players.bets() if b.sensed]
    assert sensed and all(b.wager == "progressive" and b.cents == fixed for b in sensed)


def test_a_sensed_wager_without_a_fixed_amount_is_a_clear_error() -> None:
    """Before, such a chip became a wager of ``None`` cents in the balance's books."""
    proc = _proc("six-card-fortune-progressive")
    proc.wagers = {**proc.wagers, "progressive": dataclasses.replace(proc.wagers["progressive"], fixed_cents=None)}
    players = strategy_for(proc.game)(proc, random.Random(1))
    with pytest.raises(ValueError, match="wager 'progressive' is not sensed at a fixed amount"):
        players.sensed(1, "progressive")
