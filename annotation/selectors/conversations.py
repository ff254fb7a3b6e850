"""Reads of a dataset's conversations that the pages share."""

from django.db.models import Count, Q

from annotation.models import Conversation, ConversationRating, ConversationTurn
from annotation.models.conversations import SYSTEM_SPEAKER


def conversations_per_system(*, dataset):
    """`[{"system", "conversations", "turns", "system_turns"}]` by system name; empty when the dataset has none."""
    rows = (
        ConversationTurn.objects.filter(conversation__dataset=dataset)
        .values("conversation__system__name")
        .annotate(
            turns=Count("pk"),
            system_turns=Count("pk", filter=Q(speaker=SYSTEM_SPEAKER)),
            conversations=Count("conversation", distinct=True),
        )
        .order_by("conversation__system__name")
    )
    return [
        {
            "system": row["conversation__system__name"],
            "conversations": row["conversations"],
            "turns": row["turns"],
            "system_turns": row["system_turns"],
        }
        for row in rows
    ]


def conversations_listed(*, dataset, system=""):
    """The dataset's conversations in file order with their system's name and turn counts (`n_turns`, `n_system`)."""
    conversations = Conversation.objects.filter(dataset=dataset)
    if system:
        conversations = conversations.filter(system__name=system)
    return (
        conversations.select_related("system")
        .annotate(n_turns=Count("turns"), n_system=Count("turns", filter=Q(turns__speaker=SYSTEM_SPEAKER)))
        .order_by("position")
    )


def conversation_ratings_summary(*, conversation):
    """`(whole, per_turn)`: the whole conversation's `[(aspect, mean, n)]` and `{turn index: [(aspect, mean, n)]}`."""
    whole, per_turn = {}, {}
    for index, aspect, score in ConversationRating.objects.filter(conversation=conversation).values_list(
        "turn__index", "aspect", "score"
    ):
        target = whole if index is None else per_turn.setdefault(index, {})
        target.setdefault(aspect, []).append(score)

    def means(scores_by_aspect):
        return [(aspect, sum(s) / len(s), len(s)) for aspect, s in sorted(scores_by_aspect.items())]

    return means(whole), {index: means(aspects) for index, aspects in per_turn.items()}
