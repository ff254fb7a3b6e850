"""How long one task takes a careful annotator: the one model behind every time RateLab states.

The researcher's estimate (HIT minutes, annotator hours, the "HIT would expire" warning, the time
beside Prolific's estimate) and the annotator's start page ("about N minutes") both use it, so the
two never disagree; once a survey has finished tasks, the start page shows their measured median.
Pure: no Django.
"""

SECONDS_PER_ANSWER = 15  # a rating or a pairwise choice: read the reply (or two), choose
SECONDS_PER_WRITTEN = 90  # a written reply: read the conversation, write the next turn
SECONDS_TO_READ_INSTRUCTIONS = 60
# A conversation turn read (about 20 words at 250 words a minute, and a glance back), and a yes/no
# flag considered on a bot turn: what a conversation task costs before its answers.
SECONDS_PER_TURN_READ = 5
SECONDS_PER_FLAG = 2


def task_seconds(*, answers=0, written=0, turns_read=0, flags=0):
    """One task of `answers` ratings or choices and `written` replies, with `turns_read` conversation
    turns to read and `flags` yes/no flags to consider, the instructions included."""
    return (
        SECONDS_TO_READ_INSTRUCTIONS
        + answers * SECONDS_PER_ANSWER
        + written * SECONDS_PER_WRITTEN
        + turns_read * SECONDS_PER_TURN_READ
        + flags * SECONDS_PER_FLAG
    )
