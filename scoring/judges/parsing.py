"""Turn a judge's reply into a score, or None when it cannot be read: never a guess.

Accepted: a line "Score: N" (also "rating", "=", JSON {"score": N}) with N on the asked scale
(1-5 for a response; a conversation aspect's own scale, as FED's 0-2), or a reply that is nothing
but the number (optionally "N/<top of the scale>"). A reply naming two different scores, a number out of range, or prose
without a score is unparseable.
"""

import re

_LABELLED_SCORE = re.compile(r"""["']?(?:score|rating)["']?\s*[:=]\s*["']?([0-9]+(?:\.[0-9]+)?)""", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^\s*\**\s*([0-9]+(?:\.[0-9]+)?)\s*(?:/\s*([0-9]+))?\s*\**\s*\.?\s*$")
_LABELLED_WINNER = re.compile(
    r"""["']?(?:winner|answer|better)["']?\s*[:=]\s*["']?(?:response\s+)?([AB])\b""", re.IGNORECASE
)
_BARE_LETTER = re.compile(r"^\s*\**\s*(?:response\s+)?([AB])\s*\**\s*\.?\s*$", re.IGNORECASE)

LOW, HIGH = 1, 5


def parse_rating(reply):
    """The 1-5 score a reply gives, or None."""
    return parse_score(reply, LOW, HIGH)


def parse_score(reply, low, high):
    """The score from `low` to `high` a reply gives, or None (out of the scale, two scores, prose,
    or a bare "N/M" whose M is not the top of the scale: a score on another scale is no guess)."""
    if not reply:
        return None
    labelled = {float(value) for value in _LABELLED_SCORE.findall(reply)}
    if len(labelled) > 1:
        return None
    if labelled:
        value = labelled.pop()
    else:
        bare = _BARE_NUMBER.match(reply)
        if bare is None or (bare.group(2) is not None and int(bare.group(2)) != high):
            return None
        value = float(bare.group(1))
    return value if low <= value <= high else None


def parse_preference(reply):
    """ "A" or "B" as the reply picks, or None."""
    if not reply:
        return None
    labelled = {value.upper() for value in _LABELLED_WINNER.findall(reply)}
    if len(labelled) == 1:
        return labelled.pop()
    if labelled:
        return None
    bare = _BARE_LETTER.match(reply)
    return bare.group(1).upper() if bare else None
