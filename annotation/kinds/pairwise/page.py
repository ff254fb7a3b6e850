"""What a pairwise task's page asks of each pair: which reply is better, question by question."""

from annotation.models import Aspect

# The overall question of a pairwise survey (made here or imported) when the researcher gives none.
PAIRWISE_QUESTION = "Which reply is the better next turn in this conversation?"


def pair_questions(survey):
    """A pairwise survey's questions: each aspect asks which reply, 1 or 2 (or a tie if allowed).

    The sides are numbered, not lettered: a dataset's speakers are often "A" and "B", and their
    turns sit directly above the replies. The values sent stay "a" and "b" (left and right)."""
    choices = [{"value": "a", "label": "Reply 1", "key": "1"}, {"value": "b", "label": "Reply 2", "key": "2"}]
    if survey.allow_tie:
        choices.append({"value": "tie", "label": "About the same", "key": "3"})
    questions = [
        {"key": aspect.key, "question": aspect.question, "choices": choices, "low": "", "high": "", "pair": True}
        for aspect in survey.aspects.order_by("position")
    ]
    questions.sort(key=lambda a: a["key"] != Aspect.OVERALL)
    return questions
