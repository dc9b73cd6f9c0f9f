"""Names as people read them (controller/reports/words.py, controller/lap/signinfo.py): hands, games by
their chapter's name, time zones, the sign's pay table of each game's progressive wager."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from controller.lap.signinfo import product
from controller.reports.words import game_title, hand_name, progressive_of, zone_name


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("five-aces", "Five Aces"),
        ("four-of-a-kind", "Four of a Kind"),
        ("royal_flush", "Royal Flush"),
        ("seven-card-straight-flush", "Seven Card Straight Flush"),
        ("Royal Flush", "Royal Flush"),  # already words: as written
        ("", ""),
        (None, ""),
        ("<b>x</b>", "<b>x</b>"),  # a table's text is shown as text (the pages and PDFs escape it)
    ],
)
def test_hands_as_players_say_them(code, said):
    assert hand_name(code) == said


def test_games_by_their_chapters_names():
    assert game_title("six-card-fortune") == "Six-Card Fortune Pai Gow Poker"  # 58 Pa. Code 670a
    assert game_title("six-card-fortune-progressive") == "Six-Card Fortune Pai Gow Poker"  # the profile's game
    assert game_title("fortune-asia") == "Fortune Asia Poker"
    assert game_title("face-up") == "Face Up Pai Gow Poker"
    assert game_title("dj-wild") == "DJ Wild Stud Poker"
    assert game_title("over-under") == "Over/Under"
    assert game_title("no-such-game") == "no-such-game"
    assert game_title("../../etc/passwd") == "../../etc/passwd"  # a name, never a path read
    assert progressive_of("/etc/tablectl/table.toml") is None


def test_the_zone_with_its_offset_on_the_day():
    ny = ZoneInfo("America/New_York")
    assert zone_name(ny, datetime(2026, 7, 4, 12, tzinfo=UTC)) == "America/New_York (EDT, UTC-04:00)"
    assert zone_name(ny, datetime(2026, 12, 4, 12, tzinfo=UTC)) == "America/New_York (EST, UTC-05:00)"
    assert zone_name(ZoneInfo("UTC"), datetime(2026, 7, 4, tzinfo=UTC)).startswith("UTC (")


def test_the_signs_pay_table_of_every_game_with_a_progressive():
    six = product(("six-card-fortune",))
    assert six["title"] == "Six-Card Fortune Pai Gow Poker" and six["wager_cents"] == 100
    assert [p["hand"] for p in six["pays"]][:2] == ["Five Aces", "Royal Flush"]
    for game in ("fortune-asia", "face-up", "dj-wild"):
        got = product((game,))
        assert got["title"] == game_title(game) and progressive_of(game) is not None, game
        assert got["pays"] and all(p["hand"] and (p["share"] or p["cents"] or p["text"]) for p in got["pays"]), got
    mixed = product(("six-card-fortune", "face-up", "six-card-fortune"))
    assert mixed["title"] == "Six-Card Fortune Pai Gow Poker · Face Up Pai Gow Poker" and mixed["pays"] == six["pays"]
    assert product(("no-such-game",)) == {"title": "no-such-game", "games": ["no-such-game"], "wager_cents": None,
                                          "paytable": None, "section": None, "pays": []}  # fmt: skip
