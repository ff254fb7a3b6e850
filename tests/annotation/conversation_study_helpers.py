"""Builders for the conversation-survey tests: a dataset of conversations of two systems, a survey
of them, and answers as the page sends them."""

from annotation import services
from annotation.kinds.conversation.questions import split_aspects, turn_key
from annotation.models import ConversationTurn, HITItem
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.services.conversations import conversations_import
from tests.annotation.conversation_files import conversation, jsonl

SYSTEMS = ("meena", "blender")


def conversation_records(n=6, systems=SYSTEMS, turns=6):
    """`n` conversations per system, each of `turns` turns (user first), every text distinct."""
    records = []
    for s, system in enumerate(systems):
        for i in range(n):
            texts = [
                f"{'user' if t % 2 == 0 else 'bot'} line {t} of chat {s}-{i} about topic {i}" for t in range(turns)
            ]
            records.append(conversation(f"{system}-{i}", system, texts, seed=f"topic-{i}"))
    return records


def make_conversation_survey(owner, *, name="chats", n=6, turns=6, launch=True, **settings):
    dataset = conversations_import(file=jsonl(conversation_records(n=n, turns=turns)), name=f"ds-{name}", owner=owner)
    settings.setdefault("task_type", "conversation")
    settings.setdefault("contexts_per_hit", 3)
    settings.setdefault("assignments_per_hit", 2)
    survey = services.survey_create(dataset=dataset, name=name, owner=owner, **settings)
    if launch:
        survey = services.survey_launch(survey=survey)
    return survey


def conversation_answers(assignment, *, score=4, flag_plants=True, seconds=30.0, leave_out=()):
    """Answers to every item of `assignment`: `score` on every scale, a planted turn flagged
    repetitive (when `flag_plants`), no other flag; items in `leave_out` get no overall score."""
    items = services.assignment_items(assignment=assignment)
    whole, turn_scales, flags = split_aspects(list(assignment.hit.survey.aspects.all()))
    answers = {}
    for item in items:
        scores = {a.key: str(score) for a in whole}
        bot = ConversationTurn.objects.filter(conversation_id=item.conversation_id, speaker=SYSTEM_SPEAKER)
        for index in bot.values_list("index", flat=True):
            for a in turn_scales:
                scores[turn_key(index, a.key)] = str(score)
        if flag_plants and item.kind == HITItem.Kind.CONV_GOLD and flags:
            scores[turn_key(item.planted_turn, "repetitive")] = "on"
        if item.pk in leave_out:
            scores.pop("overall", None)
        answers[item.pk] = {"scores": scores, "seconds": seconds}
    return answers


def claimed(survey, worker_id="w1"):
    return services.assignment_claim(survey=survey, worker_id=worker_id)


def acute_answers(assignment, *, choose="a", reason="", seconds=60.0, leave_out=()):
    """Answers to every pair: `choose` on real pairs, the real side on check pairs (they pass)."""
    survey = assignment.hit.survey
    keys = list(survey.aspects.values_list("key", flat=True))
    answers = {}
    for item in services.assignment_items(assignment=assignment):
        side = choose
        if item.kind == HITItem.Kind.CONV_PAIR_GOLD:
            side = "a" if item.instructed_score == 0 else "b"
        scores = {key: side for key in keys if not (item.pk in leave_out and key == "overall")}
        answers[item.pk] = {"scores": scores, "seconds": seconds, "reason": reason}
    return answers
