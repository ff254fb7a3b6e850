"""Surface features of a response and of how it relates to its context (no model, no ratings).

Words are lower-cased runs of letters, digits and apostrophes, so punctuation does not count as
vocabulary; the question marks are read from the raw text.
"""

import math
import re

WORD = re.compile(r"[a-z0-9']+")


def words(text):
    return WORD.findall(text.lower())


def _ngrams(tokens, n):
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def distinct(tokens, n):
    """Share of the response's n-grams that are distinct (1.0 for a response too short to repeat)."""
    grams = _ngrams(tokens, n)
    return len(set(grams)) / len(grams) if grams else 1.0


def overlap(tokens, turns, n):
    """Share of the response's n-grams that already occur in a turn of `turns` (lists of words):
    copying, not answering. An n-gram never spans two turns."""
    grams = _ngrams(tokens, n)
    if not grams:
        return 0.0
    seen = {g for turn in turns for g in _ngrams(turn, n)}
    return sum(g in seen for g in grams) / len(grams)


def surface_features(context, response):
    tokens = words(response)
    last = context[-1] if context else ""
    turns = [words(turn) for turn in context]
    return {
        "rf:log_words": math.log1p(len(tokens)),
        "rf:distinct_1": distinct(tokens, 1),
        "rf:distinct_2": distinct(tokens, 2),
        "rf:last_overlap_1": overlap(tokens, turns[-1:], 1),
        "rf:context_overlap_2": overlap(tokens, turns, 2),
        "rf:asks_question": float("?" in response),
        "rf:answers_question": float("?" in last),
        "rf:empty": float(not tokens),
    }
