"""Three dice with an optional red die: the Pai Gow shaker's roll.

Pure: no I/O.  Shared by the dice wagers (§ 621a.5(e)(2)-(4), § 621a.6(b)) and
the starting position (§ 621a.6(c)).

A player-activated shaker offering the Beat It Wager holds one red and two blue
dice (§ 621a.2(f)(1)); :attr:`Dice.red` is the index (0..2) of the red die in
:attr:`Dice.values`, or ``None`` when the dice are not told apart.

Text form: three values 1..6 separated by spaces or commas, the red die marked
with an ``R`` (``"3 5 R6"``, ``"r6,3,5"``); blue dice may be marked ``B``
(``"B3 B5 R6"``).  Structured form: ``Dice((3, 5, 6), red=2)`` or
``Dice.of(red=6, blue=(3, 5))``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import product


class DiceError(ValueError):
    """A roll that is not three dice 1..6 with at most one red die."""

    def __init__(self, message: str, token: str | None = None):
        super().__init__(message)
        self.token = token


@dataclass(frozen=True)
class Dice:
    values: tuple[int, int, int]
    red: int | None = None

    def __post_init__(self) -> None:
        v = tuple(self.values)
        if len(v) != 3:
            raise DiceError(f"a Pai Gow roll is three dice (§ 621a.2(d)), got {len(v)}")
        for x in v:
            if not isinstance(x, int) or isinstance(x, bool) or not 1 <= x <= 6:
                raise DiceError(f"{x!r} is not a die value (1..6)", str(x))
        if self.red is not None and self.red not in (0, 1, 2):
            raise DiceError(f"red die index {self.red!r} is not 0, 1 or 2")
        object.__setattr__(self, "values", v)

    @classmethod
    def of(cls, red: int, blue: Sequence[int]) -> Dice:
        b = tuple(blue)
        if len(b) != 2:
            raise DiceError(f"two blue dice expected (§ 621a.2(f)(1)), got {len(b)}")
        return cls((red, b[0], b[1]), red=0)

    @property
    def total(self) -> int:
        return sum(self.values)

    @property
    def red_value(self) -> int:
        if self.red is None:
            raise DiceError("this roll has no red die (needed for the Beat It Wager, § 621a.2(f)(1))")
        return self.values[self.red]

    @property
    def blue_values(self) -> tuple[int, int]:
        if self.red is None:
            raise DiceError("this roll has no red die (needed for the Beat It Wager, § 621a.2(f)(1))")
        b = [x for i, x in enumerate(self.values) if i != self.red]
        return (b[0], b[1])

    @property
    def most_common(self) -> int:
        """How many dice show the most frequent value (1, 2 or 3)."""
        return Counter(self.values).most_common(1)[0][1]

    def count(self, value: int) -> int:
        return self.values.count(value)

    @property
    def is_series(self) -> bool:
        """Three consecutive values, e.g. 1-2-3 or 3-4-5 (§ 621a.5(e)(2)(iv))."""
        s = sorted(self.values)
        return s[1] == s[0] + 1 and s[2] == s[1] + 1

    def __str__(self) -> str:
        return " ".join(("R" if i == self.red else "") + str(x) for i, x in enumerate(self.values))


def parse_dice(text: str | Sequence[str | int]) -> Dice:
    """Parse ``"3 5 R6"`` (R marks the red die, B optionally a blue one)."""
    tokens = text.replace(",", " ").split() if isinstance(text, str) else [str(x) for x in text]
    if len(tokens) != 3:
        raise DiceError(f"a Pai Gow roll is three dice (§ 621a.2(d)), got {len(tokens)}: {text!r}")
    vals: list[int] = []
    red: int | None = None
    for i, tok in enumerate(tokens):
        colour, value = _parse_die(tok)
        if colour == "R":
            if red is not None:
                raise DiceError(f"{tok!r}: only one die is red (§ 621a.2(f)(1))", tok)
            red = i
        vals.append(value)
    return Dice((vals[0], vals[1], vals[2]), red=red)


def _parse_die(tok: str) -> tuple[str, int]:
    """One die, ``"6"``, ``"R6"`` or ``"B6"``: (its colour mark, "R", "B" or "", its value 1..6)."""
    t = tok.strip()
    colour = ""
    if t[:1].upper() in ("R", "B"):
        colour, t = t[0].upper(), t[1:]
    if len(t) != 1 or not t.isdigit() or not 1 <= int(t) <= 6:
        raise DiceError(f"{tok!r} is not a die (a value 1..6, optionally marked R for red or B for blue)", tok)
    return colour, int(t)


def all_rolls(with_red: bool = True) -> Iterator[Dice]:
    """The 216 equally likely ordered rolls; the first die is the red one when ``with_red``."""
    for a, b, c in product(range(1, 7), repeat=3):
        yield Dice((a, b, c), red=0 if with_red else None)
