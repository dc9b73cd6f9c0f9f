"""``tablectl eval`` (poker hands from stdin as JSON lines) and ``tablectl analyze --deck``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

from controller.cli import main


def run_eval(capsys, monkeypatch, text: str | bytes, *args: str) -> tuple[int, list[dict[str, Any]]]:
    data = text.encode() if isinstance(text, str) else text
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    rc = main(["eval", *args])
    out = capsys.readouterr().out
    return rc, [json.loads(line) for line in out.splitlines()]


def test_eval_bug_ranks_each_line(capsys, monkeypatch):
    rc, res = run_eval(capsys, monkeypatch, "As Kd Qh Jc Ts 9d Jk\nAh Ad Ac As Jk\nKh Kd Jk 7c 5s\n", "--rules", "bug")
    assert rc == 0
    assert [r["rank"] for r in res] == ["straight", "five-aces", "pair"]  # § 670a.6(b)
    assert res[0]["best"] == "As Kd Qh Jc Ts"
    assert res[2]["best"] == "Kh Kd Jk 7c 5s" and res[2]["natural"] is True  # joker = ace kicker


def test_eval_djwild_reports_natural_and_wild_only_categories(capsys, monkeypatch):
    text = "2c 2d 2h 2s Jk\nKc Kd 2h 2s Jk\nAs Ks Qs Js Ts\nAs Ks Qs Js 2d\n"
    rc, res = run_eval(capsys, monkeypatch, text, "--rules", "dj-wild")
    assert rc == 0
    assert [(r["rank"], r["natural"]) for r in res] == [
        ("five-wilds", False),
        ("five-of-a-kind", False),
        ("royal-flush", True),
        ("royal-flush", False),
    ]


def test_eval_bad_lines_name_the_token_and_processing_continues(capsys, monkeypatch):
    text = "As Kd Qh Jc Zz\n\n   \nAs As Kd Qh Jc\nAs Kd Qh\nAs Kd Qh Jc Ts 9d 8d 7d\nAs Kd Qh Jc Ts\n"
    rc, res = run_eval(capsys, monkeypatch, text)
    assert rc == 1  # every line answered, and the exit status says some were bad
    assert len(res) == 5  # blank lines skipped
    assert "Zz" in res[0]["error"] and res[0]["token"] == "Zz" and res[0]["line"] == 1
    assert "duplicate" in res[1]["error"] and res[1]["token"] == "As"
    assert "wrong number of cards" in res[2]["error"]
    assert "wrong number of cards" in res[3]["error"]
    assert res[4]["rank"] == "straight"


def test_eval_undecodable_line_is_an_error_line(capsys, monkeypatch):
    rc, res = run_eval(capsys, monkeypatch, b"\xff\xfe As\nAs Kd Qh Jc Ts\n")
    assert rc == 1
    assert "error" in res[0] and res[1]["rank"] == "straight"


def test_eval_natural_rules_refuse_the_joker(capsys, monkeypatch):
    rc, res = run_eval(capsys, monkeypatch, "As Kd Qh Jc Jk\n", "--rules", "natural")
    assert rc == 1 and res[0]["token"] == "Jk"


def test_eval_through_a_real_pipe():
    p = subprocess.run(
        [sys.executable, "-m", "controller", "eval", "--rules", "dj-wild"],
        input="3c 4d 5h 7s 2c\nnot a hand at all\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1 and "1 of 2 lines" in p.stderr, p.stderr
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert lines[0]["rank"] == "straight" and lines[0]["natural"] is False
    assert "error" in lines[1]


def test_analyze_deck_53_five_cards(capsys):
    rc = main(["analyze", "--deck", "53", "--cards", "5"])
    out = capsys.readouterr().out
    assert rc == 0
    rows = {
        ln.split()[0]: int(ln.split()[1])
        for ln in out.splitlines()
        if ln and ln.split()[0] in {"five-aces", "royal-flush", "straight-flush", "pair", "high-card"}
    }
    assert rows == {"five-aces": 1, "royal-flush": 24, "straight-flush": 180, "pair": 1215024, "high-card": 1418964}
    assert "total: 2869685" in out
    assert "payback:" not in out and "house_edge:" not in out  # a frequency table, no wager


def test_analyze_deck_rejects_bad_card_counts(capsys):
    assert main(["analyze", "--deck", "53", "--cards", "8"]) == 2
    assert main(["analyze", "--deck", "53", "--cards", "5", "-o", "method=guess"]) == 2
    assert main(["analyze", "--deck", "54", "--cards", "5"]) == 2


def test_eval_all_good_lines_exit_0(capsys, monkeypatch):
    rc, res = run_eval(capsys, monkeypatch, "As Kd Qh Jc Ts\n\nAh Ad Ac As Jk\n")
    assert rc == 0 and len(res) == 2
