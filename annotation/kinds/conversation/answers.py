"""A conversation survey's submissions: every required question answered, stored per survey as
ConversationRating rows (whole conversation: `turn` empty; each bot turn: its flags as 0/1 and its
scales), and the gold conversations judged by their planted turn.

A flag is a checkbox: ticked sends "on" (a client may send "1"), unticked sends nothing and is
stored as 0 for every bot turn, so flag rates have their denominator.
"""

from annotation.kinds.base import SubmissionRefused
from annotation.kinds.conversation.layout import system_turns
from annotation.kinds.conversation.questions import PLANTED_FLAGS, split_aspects, turn_key
from annotation.kinds.conversation.storing import RatingRow
from annotation.models import AttentionAnswer, ConversationTurn, HITItem
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.services.text.answer_seconds import seconds_or_none

EVERYTHING_FROM = 4


def _wanted(item, turns, aspects):
    """The answer keys item must hold: whole questions and each bot turn's scales (flags optional)."""
    whole, turn_scales, _ = split_aspects(list(aspects.values()))
    keys = {a.key for a in whole}
    keys |= {turn_key(index, a.key) for index, _ in turns.get(item.conversation_id, []) for a in turn_scales}
    return keys


def conversation_unanswered(*, items, answers, aspects):
    """Ids of the conversations with a required question left out."""
    turns = system_turns({item.conversation_id for item in items})
    missing = []
    for item in items:
        answer = answers.get(item.pk)
        given = {key for key, value in ((answer or {}).get("scores") or {}).items() if str(value).strip()}
        if answer is None or not _wanted(item, turns, aspects) <= given:
            missing.append(item.pk)
    return missing


def _score(value, aspect, number):
    try:
        score = int(str(value).strip())
    except (TypeError, ValueError):
        raise SubmissionRefused(f"Conversation {number}: {value!r} is not an answer.") from None
    if not aspect.scale_min <= score <= aspect.scale_max:
        raise SubmissionRefused(
            f"Conversation {number}: {score} is outside the scale {aspect.scale_min}-{aspect.scale_max}."
        )
    return score


def _flag(value, number):
    """A flag's answer: 1 ticked ("on", or "1"), 0 unticked (nothing, or "0")."""
    if value in ("", "0"):
        return 0
    if value in ("on", "1"):
        return 1
    raise SubmissionRefused(f"Conversation {number}: {value!r} is not a yes/no answer.")


def _turn_answers(item, number, scores, turn_ids, aspects):
    """`{(turn index, aspect key): score}` of every bot turn and per-turn question (flags 0 unticked)."""
    _, turn_scales, flags = split_aspects(list(aspects.values()))
    given = {}
    for index in turn_ids:
        for aspect in flags:
            value = str(scores.get(turn_key(index, aspect.key)) or "").strip()
            given[(index, aspect.key)] = _flag(value, number)
        for aspect in turn_scales:
            given[(index, aspect.key)] = _score(scores[turn_key(index, aspect.key)], aspect, number)
    return given


def gold_passed(item, turn_answers, aspects):
    """Whether a gold conversation's planted repetition was caught: flagged (as repetitive or a
    contradiction where the survey asks those, else by any flag) or scored in the lower half of a
    per-turn scale, while the annotator did not flag every bot turn alike (ticking everything
    catches every plant and says nothing; judged from EVERYTHING_FROM bot turns on: in a shorter
    conversation a careful annotator may find each turn at fault)."""
    _, turn_scales, flags = split_aspects(list(aspects.values()))
    planted = item.planted_turn
    wanted = [a.key for a in flags if a.key in PLANTED_FLAGS] or [a.key for a in flags]
    caught = any(turn_answers.get((planted, key)) == 1 for key in wanted)
    for aspect in turn_scales:
        score = turn_answers.get((planted, aspect.key))
        caught |= score is not None and score <= (aspect.scale_min + aspect.scale_max) / 2 - 0.5
    indices = {index for index, _ in turn_answers}
    flagged = {index for (index, key), value in turn_answers.items() if key in wanted and value == 1}
    return caught and not (len(indices) >= EVERYTHING_FROM and flagged == indices)


def conversation_rows(*, assignment, annotator, survey, items, answers, aspects):
    """`(ratings, checks, [])` of one submission whose required questions are all answered; the
    ratings as `storing.RatingRow` tuples (the kind's `store_answers` inserts them)."""
    turn_pks = {}
    for pk, conversation_id, index in ConversationTurn.objects.filter(
        conversation_id__in={item.conversation_id for item in items}, speaker=SYSTEM_SPEAKER
    ).values_list("pk", "conversation_id", "index"):
        turn_pks.setdefault(conversation_id, {})[index] = pk
    whole, _, _ = split_aspects(list(aspects.values()))
    ratings, checks = [], []
    for number, item in enumerate(items, start=1):
        answer = answers[item.pk]
        scores = answer.get("scores") or {}
        seconds = seconds_or_none(answer.get("seconds"))
        turn_ids = turn_pks.get(item.conversation_id, {})
        known = {a.key for a in whole} | {turn_key(i, a.key) for i in turn_ids for a in aspects.values() if a.per_turn}
        unknown = sorted(set(scores) - known)
        if unknown:
            raise SubmissionRefused(f"Conversation {number}: unknown question(s) {', '.join(unknown[:5])}.")
        whole_scores = {a.key: _score(scores[a.key], a, number) for a in whole}
        turn_answers = _turn_answers(item, number, scores, turn_ids, aspects)
        if item.kind == HITItem.Kind.CONV_GOLD:
            passed = gold_passed(item, turn_answers, aspects)
            checks.append(
                AttentionAnswer(assignment=assignment, item=item, score=int(passed), passed=passed, seconds=seconds)
            )
            continue
        # Plain tuples, stored by storing.ratings_insert (why: its doc); the turns carry no seconds.
        common = (survey.pk, annotator.pk, assignment.pk, item.conversation_id)
        ratings += [RatingRow(*common, None, key, score, seconds) for key, score in whole_scores.items()]
        ratings += [
            RatingRow(*common, turn_ids[index], key, score, None) for (index, key), score in turn_answers.items()
        ]
    return ratings, checks, []
