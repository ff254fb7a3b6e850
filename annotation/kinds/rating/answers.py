"""A rating survey's submissions: every question of every shown reply on its scale, and the checks
(gold replies, instructions) judged by their main answer."""

from annotation.kinds.base import SubmissionRefused
from annotation.models import Aspect, AttentionAnswer, HITItem, Rating
from annotation.services.text.answer_seconds import seconds_or_none


def int_score(value, aspect, number):
    """The score given to reply `number` (as the page numbers it; never its row id) on `aspect`."""
    try:
        score = int(str(value).strip())
    except (TypeError, ValueError):
        raise SubmissionRefused(f"Reply {number}: {value!r} is not a score.") from None
    if not aspect.scale_min <= score <= aspect.scale_max:
        raise SubmissionRefused(f"Reply {number}: {score} is outside the scale {aspect.scale_min}-{aspect.scale_max}.")
    return score


def score_distribution(*, survey, annotator, scale):
    """`(distribution, n)`: how often the annotator gave each score of `scale` (and any other)."""
    ratings = Rating.objects.filter(survey=survey, annotator=annotator)
    scores = dict.fromkeys(scale, 0)
    for score in ratings.values_list("score", flat=True):
        scores[score] = scores.get(score, 0) + 1
    return sorted(scores.items()), ratings.count()


def rating_rows(*, assignment, annotator, survey, items, answers, aspects):
    """`(ratings, checks, [])` of one submission whose items are all answered (checked before)."""
    overall = aspects[Aspect.OVERALL]
    by_id = {item.pk: item for item in items}
    ratings, checks, written = [], [], []
    for number, (item_id, item) in enumerate(by_id.items(), start=1):
        answer = answers[item_id]
        seconds = seconds_or_none(answer.get("seconds"))
        scores = answer.get("scores") or {}
        wanted = {Aspect.OVERALL: overall} if item.asks_main_only else aspects
        extra = sorted(set(scores) - set(wanted))
        if extra:
            raise SubmissionRefused(f"Reply {number}: unknown question(s) {', '.join(extra)}.")
        if set(scores) != set(wanted):
            raise SubmissionRefused(f"Please answer every question for reply {number}.")
        if item.kind in HITItem.FILLERS:
            # A filler beside a gold reply or an instruction (annotation/kinds/rating/checks.py):
            # answered and checked like a real reply, so the check's block looks and behaves like
            # one, but never stored.
            # It was rated under the check's conversation, not its own, and its response has its
            # own ratings on its own HIT: stored, it would skew the analyses and counts.
            for key, aspect in wanted.items():
                int_score(scores[key], aspect, number)
            continue
        if item.kind == HITItem.Kind.RESPONSE:
            for key, aspect in wanted.items():
                ratings.append(
                    Rating(
                        survey=survey,
                        annotator=annotator,
                        response_id=item.response_id,
                        aspect=key,
                        score=int_score(scores[key], aspect, number),
                        seconds=seconds,
                        assignment=assignment,
                    )
                )
        else:
            for key, aspect in wanted.items():  # a gold item's other answers are checked, not kept
                int_score(scores[key], aspect, number)
            score = int_score(scores[Aspect.OVERALL], overall, number)
            if item.kind == HITItem.Kind.GOLD:
                passed = score in item.attention_check.accepted_scores
            else:
                # Only the main answer decides, as for a gold reply, though the instruction asks
                # for the number on every question of its block (its other answers are checked).
                passed = score == item.instructed_score
            checks.append(
                AttentionAnswer(assignment=assignment, item=item, score=score, passed=passed, seconds=seconds)
            )
    return ratings, checks, written
