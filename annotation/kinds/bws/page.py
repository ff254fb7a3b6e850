"""What a best-worst task's page asks of each tuple: which reply is the best, which the worst.

Two questions, each a row of buttons numbered as the replies above them are (1 to the tuple's
size); a phone shows them under the replies without sideways scrolling. The page's script
disables, in the other question, the reply picked in one (best and worst are two replies), and
the server refuses a request that picks one reply for both (`answers.picks`).
"""

BEST_QUESTION = "Which reply is the best next turn?"
WORST_QUESTION = "Which reply is the worst next turn?"


def tuple_questions(survey):
    """The two questions, with as many choices as a tuple shows replies."""
    choices = [{"value": str(n), "label": f"Reply {n}", "key": str(n)} for n in range(1, survey.tuple_size + 1)]
    return [
        {"key": "best", "question": BEST_QUESTION, "choices": choices, "low": "", "high": "", "bws": True},
        {"key": "worst", "question": WORST_QUESTION, "choices": choices, "low": "", "high": "", "bws": True},
    ]
