"""What the report's Conversations section computes from: a dataset's conversations, their ratings
(whole or per turn), their side-by-side judgements and their stored metric scores, within the
report's systems filter.

Exclusions: quality control excludes annotators per survey. Imported conversation ratings and
judgements belong to no survey, so no exclusion can apply to them; the rows are read here, in one
place, so that once the conversation task kinds record their survey, this is where the excluded
annotators' answers are left out (`EXCLUSIONS_NOTE` says which holds today).
"""

from dataclasses import dataclass, field

from annotation.models import Conversation, ConversationAspect, ConversationJudgement, ConversationRating
from scoring.selectors.scores import conversation_metric_scores

EXCLUSIONS_NOTE = (
    "The conversation ratings and comparisons were imported and belong to no survey, so no quality "
    "exclusion applies to them"
)


@dataclass
class ConversationInputs:
    system_of: dict  # conversation id -> system name (the conversations the filter keeps)
    scales: dict  # aspect -> (min, max)
    whole: list  # (annotator id, conversation id, aspect, score)
    turns: list  # (annotator id, conversation id, turn id, aspect, score)
    judgements: list  # (annotator id, conversation a, conversation b, winner, question)
    metrics: dict = field(default_factory=dict)  # metric -> {conversation id: value}


def conversation_inputs(*, dataset, systems=None):
    """The section's rows, or None when the dataset holds no conversations (the section then does
    not apply). `systems` (names): only those systems' conversations, and comparisons of two of them."""
    conversations = Conversation.objects.filter(dataset=dataset)
    if not conversations.exists():
        return None
    if systems:
        conversations = conversations.filter(system__name__in=list(systems))
    system_of = dict(conversations.values_list("pk", "system__name"))
    scales = {
        key: (low, high)
        for key, low, high in ConversationAspect.objects.filter(dataset=dataset).values_list(
            "key", "scale_min", "scale_max"
        )
    }
    whole, turns = [], []
    ratings = ConversationRating.objects.filter(conversation__dataset=dataset).values_list(
        "annotator_id", "conversation_id", "turn_id", "aspect", "score"
    )
    for annotator, conversation, turn, aspect, score in ratings.iterator(chunk_size=10_000):
        if conversation not in system_of:
            continue
        if turn is None:
            whole.append((annotator, conversation, aspect, score))
        else:
            turns.append((annotator, conversation, turn, aspect, score))
    judgements = [
        row
        for row in ConversationJudgement.objects.filter(conversation_a__dataset=dataset).values_list(
            "annotator_id", "conversation_a_id", "conversation_b_id", "winner", "question"
        )
        if row[1] in system_of and row[2] in system_of
    ]
    metrics = {
        name: {pk: value for pk, value in values.items() if pk in system_of}
        for name, values in conversation_metric_scores(dataset=dataset).items()
    }
    return ConversationInputs(system_of=system_of, scales=scales, whole=whole, turns=turns, judgements=judgements,
                              metrics=metrics)  # fmt: skip
