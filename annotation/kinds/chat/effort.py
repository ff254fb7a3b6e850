"""Effort in a chat survey (issue 38, quality): each chat's figures and the effort rule's verdict
(effort_rule.py), read by the quality report (`ChatKind.quality_extras`, shown on the quality page)
and by analysis, which leaves the chats the rule judges out (`low_effort_conversation_ids`).

Only handed-in chats are judged: running and abandoned ones are out of analysis anyway."""

from annotation.kinds.chat.effort_rule import EffortRules, chat_effort, effort_reasons
from annotation.models import Assignment, ChatAttempt, ChatSurveySettings, LiveChat
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.quality.data import annotator_labels


def rules_of(settings):
    return EffortRules(
        max_short_share=settings.effort_max_short_share,
        max_pasted_share=settings.effort_max_pasted_share,
        max_idle_seconds=settings.effort_max_idle_seconds,
    )


def _judged(chats, rules):
    """`[(chat, figures, reasons)]` over handed-in `chats` (turns read in one query)."""
    chats = chats.filter(assignment__status__in=Assignment.FINISHED).prefetch_related("conversation__turns", "attempts")
    out = []
    for chat in chats:
        if chat.assignment.annotator_id != chat.annotator_id:
            continue  # the slot went to someone else: this chat was abandoned
        # The page's measures travel with each message's first attempt (the one carrying its key).
        measured = {a.user_turn: a.telemetry for a in chat.attempts.all() if a.client_key and a.telemetry}
        messages = [
            (turn.text, measured.get(turn.index))
            for turn in sorted(chat.conversation.turns.all(), key=lambda t: t.index)
            if turn.speaker != SYSTEM_SPEAKER
        ]
        figures = chat_effort(messages)
        out.append((chat, figures, effort_reasons(figures, rules)))
    return out


def effort_summary(survey):
    """The quality report's `chat_effort`: the rules, each handed-in chat's figures and verdict."""
    settings = ChatSurveySettings.objects.filter(survey=survey).first()
    rules = rules_of(settings) if settings else EffortRules()
    chats = LiveChat.objects.filter(assignment__hit__survey=survey).select_related("assignment")
    judged = _judged(chats.order_by("pk"), rules)
    labels = annotator_labels({chat.annotator_id for chat, _, _ in judged})
    rows = [
        {
            "conversation_id": chat.conversation_id,
            "annotator_id": chat.annotator_id,
            "worker": labels[chat.annotator_id],
            **figures,
            "excluded": bool(reasons),
            "reasons": reasons,
        }
        for chat, figures, reasons in judged
    ]
    failed = ChatAttempt.objects.filter(live_chat__assignment__hit__survey=survey, status="failed").count()
    return {
        "dataset_id": survey.dataset_id,
        "rules": {
            "max_short_share": rules.max_short_share,
            "max_pasted_share": rules.max_pasted_share,
            "max_idle_seconds": rules.max_idle_seconds,
            "on": rules.on,
        },
        "chats": rows,
        "n_excluded": sum(row["excluded"] for row in rows),
        "failed_attempts": failed,
    }


def low_effort_conversation_ids(dataset):
    """Ids of the dataset's live conversations the effort rule of their survey leaves out."""
    ids = set()
    for settings in ChatSurveySettings.objects.filter(survey__dataset=dataset):
        rules = rules_of(settings)
        if not rules.on:
            continue
        chats = LiveChat.objects.filter(assignment__hit__survey_id=settings.survey_id).select_related("assignment")
        ids |= {chat.conversation_id for chat, _, reasons in _judged(chats, rules) if reasons}
    return ids
