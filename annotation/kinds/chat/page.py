"""What a chat survey's page holds: the chat's frame (its turns are fetched and sent by the page's
script, annotation/kinds/chat/chat.js, through `views.chat_api`), the flags and per-turn scales
each bot message offers, and the whole-conversation questions shown once the conversation has ended.

The block is the same for every annotator of the survey (the stored, cached page): it names no
system, no conversation and no token; the script finds its chat by the task's own address.
"""

from annotation.kinds.conversation.page import conversation_scales
from annotation.kinds.conversation.questions import split_aspects
from annotation.services.text.answer_seconds import seconds_or_none

BLOCK_TEMPLATE = "annotation/kinds/chat/_block.html"
RADIOS_TEMPLATE = "annotation/kinds/conversation/_radios.html"


def chat_blocks(*, survey, items, scales, previous, missing):
    whole, turn_scales, flags = split_aspects(scales)
    settings = survey.chat_settings
    blocks = []
    for number, item in enumerate(items, start=1):
        before = previous.get(item.pk, {})
        scores = {key: str(value) for key, value in (before.get("scores") or {}).items()}
        prefix = f"score-{item.pk}-"
        fields = [
            {**s, "answer_key": s["key"], "name": prefix + s["key"], "selected": scores.get(s["key"], ""), "label": ""}
            for s in whole
        ]
        seconds = seconds_or_none(before.get("seconds"))
        blocks.append(
            {
                "template": BLOCK_TEMPLATE,
                "id": str(item.pk),
                "number": str(number),
                "seed": settings.seed_text,
                "min_turns": settings.min_turns,
                "max_turns": settings.max_turns,
                "flags": [{"key": f["key"], "question": f["question"]} for f in flags],
                "turn_scales": [
                    {
                        "key": t["key"],
                        "question": t["question"],
                        "min": t["min"],
                        "max": t["max"],
                        "low": t["low"],
                        "high": t["high"],
                    }
                    for t in turn_scales
                ],
                "whole": fields,
                "seconds": "" if seconds is None else f"{seconds:.2f}",
                "missing": item.pk in set(missing),
                # Read by task_page.items.fields_count: one answer per whole-conversation question.
                "items": [{"fields": [None] * len(fields)}],
            }
        )
    return blocks


def chat_scales(survey):
    return conversation_scales(survey)
