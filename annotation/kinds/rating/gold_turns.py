"""A gold check's turns written with their speakers ("A: Is fire cold?"), read as the dataset
shows its conversations: the speaker apart from the text.

The survey form takes a check's turns as plain texts and the page adds the dataset's speakers
(task_page.items._gold_turns); a researcher who wrote them in as the dataset shows them got
"A: A: Is fire cold?", which no other conversation looks like: the check stood out. A leading
"<name>:" is read as the speaker only when the name is one of the dataset's own speakers.
"""

import re

# Conversations of a dataset read to learn how it names its speakers.
SPEAKER_SAMPLE = 200

# "<name>:" at the start of a turn: a name of at most 40 characters, without a colon or line break.
_PREFIX = re.compile(r"^\s*([^:\n]{1,40}?)\s*:\s*(.*)$", re.S)


def speaker_names(sequences):
    """The dataset's speaker names from its conversations' speaker sequences, by lower-case name."""
    return {name.casefold(): name for sequence in sequences for name in sequence if name}


def split_speaker(text, names):
    """`(speaker, text)`: the dataset's spelling of a known speaker the text starts with ("A: ..."),
    and the rest; `("", text)` when it names none of `names` (from `speaker_names`)."""
    match = _PREFIX.match(str(text))
    if match and match.group(2).strip():
        speaker = names.get(match.group(1).strip().casefold())
        if speaker:
            return speaker, match.group(2).strip()
    return "", text


def turn_text(turn):
    return turn.get("text", "") if isinstance(turn, dict) else str(turn)
