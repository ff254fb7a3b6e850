"""A chat survey's submission: the whole-conversation questions from the form, the flags as the
annotator ticked them during the chat (kept by the server, `LiveChat.flags`), stored as the
conversation kind stores its ratings (ConversationRating: whole conversation with `turn` empty, each
bot turn's flags as 0/1, so flag rates have their denominator, and each bot turn's per-turn ratings as
given under it, `LiveChat.turn_scores`). Refused, storing nothing, while the
conversation has not been ended."""

from annotation.kinds.base import SubmissionRefused
from annotation.kinds.conversation.questions import split_aspects
from annotation.models import ConversationRating, ConversationTurn, LiveChat
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.services.text.answer_seconds import seconds_or_none


def chat_unanswered(*, items, answers, aspects):
    whole, _, _ = split_aspects(list(aspects.values()))
    wanted = {a.key for a in whole}
    missing = []
    for item in items:
        scores = (answers.get(item.pk) or {}).get("scores") or {}
        given = {key for key, value in scores.items() if str(value).strip()}
        if not wanted <= given:
            missing.append(item.pk)
    return missing


def _score(value, aspect):
    try:
        score = int(str(value).strip())
    except (TypeError, ValueError):
        raise SubmissionRefused(f"{value!r} is not an answer to “{aspect.question}”.") from None
    if not aspect.scale_min <= score <= aspect.scale_max:
        raise SubmissionRefused(f"{score} is outside the scale {aspect.scale_min}-{aspect.scale_max}.")
    return score


def chat_rows(*, assignment, annotator, survey, items, answers, aspects):
    chat = LiveChat.objects.filter(assignment=assignment, annotator=annotator).first()
    if chat is None or chat.ended_at is None:
        raise SubmissionRefused("End the conversation first (the button under the chat), then answer the questions.")
    whole, turn_scales, flags = split_aspects(list(aspects.values()))
    ratings = []
    for item in items:
        answer = answers[item.pk]
        scores = answer.get("scores") or {}
        unknown = sorted(set(scores) - {a.key for a in whole})
        if unknown:
            raise SubmissionRefused(f"Unknown question(s) {', '.join(unknown[:5])}.")
        common = {
            "survey": survey,
            "annotator": annotator,
            "assignment": assignment,
            "conversation_id": chat.conversation_id,
        }
        seconds = seconds_or_none(answer.get("seconds"))
        ratings += [
            ConversationRating(**common, aspect=a.key, score=_score(scores[a.key], a), seconds=seconds) for a in whole
        ]
        bot_turns = ConversationTurn.objects.filter(conversation_id=chat.conversation_id, speaker=SYSTEM_SPEAKER)
        for turn_pk, index in bot_turns.order_by("index").values_list("pk", "index"):
            ticked = set(chat.flags.get(str(index), []))
            ratings += [
                ConversationRating(**common, turn_id=turn_pk, aspect=a.key, score=int(a.key in ticked)) for a in flags
            ]
            # The per-turn ratings as given under the reply (the chat ends only once every reply has them).
            given = chat.turn_scores.get(str(index), {})
            ratings += [
                ConversationRating(**common, turn_id=turn_pk, aspect=a.key, score=given[a.key])
                for a in turn_scales
                if a.key in given
            ]
    return ratings, [], []
