"""How the report page writes a number: rounded, never in scientific notation, intervals as one cell."""

from dataclasses import dataclass

from annotation.services.text.numbers import p_value, small_number  # noqa: F401 (the one p-value format; report modules import it from here)


@dataclass(frozen=True)
class Estimate:
    """A value with its interval, shown on two lines ("0.217" over "[0.165, 0.276]") to keep columns narrow."""

    value: str
    interval: str

    def __str__(self):
        return f"{self.value} {self.interval}"


def number(value, digits=3):
    """A rounded number; "–" for a missing value; never scientific notation (-0.000 -> 0.000)."""
    if value is None or value == "":
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    text = f"{float(value):.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def interval(low, high, digits=3):
    if low is None or high is None:
        return "–"
    return f"[{number(low, digits)}, {number(high, digits)}]"


def count(value):
    return "–" if value is None else f"{int(value):,}"


def plural(n, word, words=None):
    return f"{n:,} {word if n == 1 else (words or word + 's')}"
