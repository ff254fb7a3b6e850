"""Shared behaviour of encoders that see a context as one flat text."""

import re

TOKEN = re.compile(r"\w+|[^\w\s]")
CONTEXT_TURNS = 3


def tokenize(text):
    return TOKEN.findall(text.lower())


def flatten_context(turns, n_turns=CONTEXT_TURNS):
    """The last `n_turns` turns as one text (the most recent turns decide what fits next)."""
    return " ".join(t.strip() for t in turns[-n_turns:])
