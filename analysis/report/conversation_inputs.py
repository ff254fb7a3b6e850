"""What the report's Conversations section computes from: a dataset's conversations, their ratings
(whole or per turn), their side-by-side judgements and their stored metric scores (conversation
and turn level), within the report's filters.

Filters: `systems` keeps those systems' conversations (and comparisons of two of them); `surveys`
keeps the answers those surveys collected (none imported); `aspect` keeps one aspect: a
whole-conversation aspect's ratings, or a per-turn aspect's, whichever it names. The report's
default aspect (`overall`, the headline) keeps every aspect here, as the section's tables are the
per-aspect overview of a conversation study; `aspect_scope` says which held.
Exclusions: quality control excludes annotators per survey; with exclusions applied, an excluded
annotator's answers in that survey, and answers of rejected assignments, are left out. Imported
ratings and comparisons belong to no survey, so no exclusion applies to them. Live chats that their
survey's effort rule judges (annotation/kinds/chat/effort_rule.py) are left out with their ratings.
"""

from dataclasses import dataclass, field

from annotation.kinds.chat.effort import low_effort_conversation_ids
from annotation.models import (
    Assignment,
    AttentionAnswer,
    Conversation,
    ConversationAspect,
    ConversationJudgement,
    ConversationRating,
    HITItem,
)
from annotation.models.live_chat import unfinished_live_conversations
from annotation.quality import data as quality_data
from scoring.selectors.scores import conversation_metric_scores, turn_metric_scores

EXCLUSIONS_NOTE = (
    "The conversation ratings and comparisons were imported and belong to no survey, so no quality "
    "exclusion applies to them"
)
DEFAULT_ASPECT = "overall"


@dataclass
class ConversationInputs:
    system_of: dict  # conversation id -> system name (the conversations the filter keeps)
    scales: dict  # aspect -> (min, max)
    whole: list  # (annotator id, conversation id, aspect, score)
    turns: list  # (annotator id, conversation id, turn id, aspect, score)
    judgements: list  # (annotator id, conversation a, conversation b, winner, question)
    metrics: dict = field(default_factory=dict)  # metric -> {conversation id: value}
    turn_metrics: dict = field(default_factory=dict)  # metric -> {turn id: value}
    aspect_scope: str = ""  # which aspects the figures describe, in words
    exclusions: dict = field(default_factory=dict)  # {"excluded_annotators", "left_out", "note"}
    repeats: list = field(default_factory=list)  # (annotator id, consistent) of ACUTE's swapped repeat pairs


def conversation_inputs(*, dataset, systems=None, aspect=None, surveys=None, apply_exclusions=True):
    """The section's rows, or None when the dataset holds no conversations (the section then does
    not apply). `systems` (names): only those systems' conversations, and comparisons of two of them;
    `aspect`: see the module doc; `surveys`: only the answers these surveys collected."""
    conversations = Conversation.objects.filter(dataset=dataset)
    if not conversations.exists():
        return None
    if systems:
        conversations = conversations.filter(system__name__in=list(systems))
    # Live chats not handed in (running or abandoned) are kept but not analysed.
    conversations = conversations.exclude(pk__in=unfinished_live_conversations().filter(dataset=dataset))
    # Live chats their survey's effort rule leaves out (too short, pasted, idle): kept, not analysed.
    low_effort = low_effort_conversation_ids(dataset) if apply_exclusions else set()
    conversations = conversations.exclude(pk__in=low_effort)
    system_of = dict(conversations.values_list("pk", "system__name"))
    scales = {
        key: (low, high)
        for key, low, high in ConversationAspect.objects.filter(dataset=dataset).values_list(
            "key", "scale_min", "scale_max"
        )
    }
    ratings = ConversationRating.objects.filter(conversation__dataset=dataset)
    judgements = ConversationJudgement.objects.filter(conversation_a__dataset=dataset)
    if surveys is not None:
        ratings = ratings.filter(survey__in=surveys)
        judgements = judgements.filter(survey__in=surveys)
    excluded, left_out = {}, 0
    if apply_exclusions:
        survey_ids = set(ratings.exclude(survey=None).values_list("survey_id", flat=True).distinct())
        survey_ids |= set(judgements.exclude(survey=None).values_list("survey_id", flat=True).distinct())
        excluded = quality_data.excluded_annotators(surveys=list(dataset.surveys.filter(pk__in=survey_ids)))
        rejected = Assignment.Status.REJECTED
        ratings = ratings.exclude(assignment__status=rejected)
        judgements = judgements.exclude(assignment__status=rejected)

    def kept(survey_id, annotator_id):
        return annotator_id not in excluded.get(survey_id, ())

    whole, turns = [], []
    rows = ratings.values_list("survey_id", "annotator_id", "conversation_id", "turn_id", "aspect", "score")
    for survey_id, annotator, conversation, turn, asked, score in rows.iterator(chunk_size=10_000):
        if conversation not in system_of:
            continue
        if not kept(survey_id, annotator):
            left_out += 1
            continue
        if turn is None:
            whole.append((annotator, conversation, asked, score))
        else:
            turns.append((annotator, conversation, turn, asked, score))
    compared = []
    rows = judgements.values_list(
        "survey_id", "annotator_id", "conversation_a_id", "conversation_b_id", "winner", "question"
    )
    for survey_id, *row in rows:
        if row[1] in system_of and row[2] in system_of:
            if kept(survey_id, row[0]):
                compared.append(tuple(row))
            else:
                left_out += 1
    repeats = AttentionAnswer.objects.filter(
        item__kind=HITItem.Kind.CONV_PAIR_REPEAT, assignment__hit__survey__dataset=dataset
    )
    if surveys is not None:
        repeats = repeats.filter(assignment__hit__survey__in=surveys)
    if apply_exclusions:
        repeats = repeats.exclude(assignment__status=Assignment.Status.REJECTED)
    repeated = [
        (annotator, passed)
        for survey_id, annotator, passed, left, right in repeats.values_list(
            "assignment__hit__survey_id", "assignment__annotator_id", "passed", "item__conversation_id",
            "item__conversation_b_id",
        )
        if kept(survey_id, annotator) and left in system_of and right in system_of
    ]  # fmt: skip
    whole, turns, scope = _aspect_filter(whole, turns, aspect)
    metrics = {
        name: {pk: value for pk, value in values.items() if pk in system_of}
        for name, values in conversation_metric_scores(dataset=dataset).items()
    }
    turn_ids = {row[2] for row in turns}
    turn_metrics = {
        name: {pk: value for pk, value in values.items() if pk in turn_ids}
        for name, values in turn_metric_scores(dataset=dataset).items()
    }
    n_excluded = sum(len(ids) for ids in excluded.values())
    effort_note = (
        f"; {len(low_effort)} live chat(s) are left out by their survey's effort rule, with their ratings"
        if low_effort
        else ""
    )
    if not apply_exclusions:
        note = "Exclusions are switched off: every annotator's answers count"
    elif n_excluded or left_out:
        note = (
            f"Quality control excluded {n_excluded} annotator(s) of the surveys: their {left_out} answer(s) "
            "are left out, as are answers of rejected assignments; imported answers belong to no survey"
        )
    else:
        note = (
            "No annotator of the surveys is excluded; imported ratings and comparisons belong to no survey, so "
            "no exclusion applies to them"
        )
    return ConversationInputs(
        system_of=system_of,
        scales=scales,
        whole=whole,
        turns=turns,
        judgements=compared,
        metrics=metrics,
        turn_metrics=turn_metrics,
        repeats=repeated,
        aspect_scope=scope,
        exclusions={
            "excluded_annotators": n_excluded,
            "left_out": left_out,
            "low_effort_chats": len(low_effort),
            "note": note + effort_note,
        },
    )


def _aspect_filter(whole, turns, aspect):
    """`(whole, turns, scope)`: the rows of the aspect filter (module doc) and what they hold, in words."""
    if not aspect or aspect == DEFAULT_ASPECT:
        return whole, turns, "every aspect (the report's default aspect, overall, keeps them all here)"
    whole = [row for row in whole if row[2] == aspect]
    turns = [row for row in turns if row[3] == aspect]
    return whole, turns, f"aspect {aspect} only (whole-conversation or per-turn, as it is rated)"
