"""How long one task takes a careful annotator: the one model behind every time RateLab states.

The researcher's estimate (HIT minutes, annotator hours, the "HIT would expire" warning, the time
beside Prolific's estimate) and the annotator's start page ("about N minutes") both use it, so the
two never disagree; once a survey has finished tasks, the start page shows their measured median.
Pure: no Django.
"""

SECONDS_PER_ANSWER = 15  # a rating or a pairwise choice: read the reply (or two), choose
SECONDS_PER_WRITTEN = 90  # a written reply: read the conversation, write the next turn
SECONDS_TO_READ_INSTRUCTIONS = 60


def task_seconds(*, answers=0, written=0):
    """One task of `answers` ratings or choices and `written` replies, the instructions included."""
    return SECONDS_TO_READ_INSTRUCTIONS + answers * SECONDS_PER_ANSWER + written * SECONDS_PER_WRITTEN
