"""What a conversation survey's page shows: each conversation whole, with questions under each
system turn (flags as checkboxes, scales as radio buttons) and the whole-conversation questions
after its last turn.

Only turn texts and HITItem ids reach the page: the system's turns are "Bot", every other speaker
"Partner" (never a system name, a conversation id or a seed). A gold conversation shows its planted
turn's text where the original turn stood, and is otherwise laid out like any other.
"""

from annotation.kinds.conversation.questions import split_aspects, turn_key
from annotation.models import Aspect, ConversationTurn
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.services.text.answer_seconds import seconds_or_none
from annotation.services.text.aspect_details import scale_ends

BLOCK_TEMPLATE = "annotation/kinds/conversation/_block.html"
SYSTEM_LABEL, PARTNER_LABEL = "Bot", "Partner"


def conversation_scales(survey):
    """Every question of the survey as the page asks it, in order (overall first)."""
    scales = []
    for aspect in survey.aspects.order_by("position"):
        extra = aspect.key != Aspect.OVERALL
        labels = scale_ends(aspect.scale_labels, aspect.scale_min, aspect.scale_max, default=extra)
        scales.append(
            {
                "key": aspect.key,
                "question": aspect.question,
                "definition": aspect.definition,
                "per_turn": aspect.per_turn,
                "min": aspect.scale_min,
                "max": aspect.scale_max,
                "choices": [{"value": str(v), "label": labels.get(str(v), "")} for v in aspect.values],
                "low": labels.get(str(aspect.scale_min), ""),
                "high": labels.get(str(aspect.scale_max), ""),
            }
        )
    scales.sort(key=lambda s: s["key"] != Aspect.OVERALL)
    return scales


def turns_by_conversation(conversation_ids):
    """`{conversation id: [(index, speaker, text), ...]}`, read in one query."""
    turns = {}
    rows = ConversationTurn.objects.filter(conversation_id__in=conversation_ids).order_by("conversation_id", "index")
    for conversation_id, index, speaker, text in rows.values_list("conversation_id", "index", "speaker", "text"):
        turns.setdefault(conversation_id, []).append((index, speaker, text))
    return turns


def _field(scale, key, name, selected, label):
    return {**scale, "answer_key": key, "name": name, "selected": selected, "label": label}


def _block(item, number, *, turns, scales, before, invalid):
    whole, turn_scales, flags = split_aspects(scales)
    scores = {key: str(value) for key, value in (before.get("scores") or {}).items()}
    prefix = f"score-{item.pk}-"
    shown, system_number = [], 0
    for index, speaker, said in turns:
        is_system = speaker == SYSTEM_SPEAKER
        text = item.broken_text if is_system and index == item.planted_turn else said
        turn = {"index": str(index), "system": is_system, "text": text, "side": "left" if is_system else "right"}
        turn["speaker"] = SYSTEM_LABEL if is_system else PARTNER_LABEL
        if is_system:
            system_number += 1
            turn["number"] = str(system_number)
            keys = {a["key"]: turn_key(index, a["key"]) for a in [*flags, *turn_scales]}
            turn["flags"] = [
                {**flag, "name": prefix + keys[flag["key"]], "checked": scores.get(keys[flag["key"]]) in ("on", "1")}
                for flag in flags
            ]
            label = f"Bot turn {system_number}"
            turn["fields"] = [
                _field(s, keys[s["key"]], prefix + keys[s["key"]], scores.get(keys[s["key"]], ""), label)
                for s in turn_scales
            ]
        shown.append(turn)
    seconds = seconds_or_none(before.get("seconds"))
    return {
        "template": BLOCK_TEMPLATE,
        "id": str(item.pk),
        "number": str(number),
        "turns": shown,
        "whole": [_field(s, s["key"], prefix + s["key"], scores.get(s["key"], ""), "") for s in whole],
        "seconds": "" if seconds is None else f"{seconds:.2f}",
        "missing": invalid,
        # Read by task_page.items.fields_count: one answer per required question.
        "items": [{"fields": [None] * (len(whole) + system_number * len(turn_scales))}],
    }


def conversation_blocks(*, items, scales, previous, missing):
    """One block per conversation item, numbered 1, 2, 3 (a gold conversation like any other)."""
    turns = turns_by_conversation({item.conversation_id for item in items})
    missing = set(missing)
    return [
        _block(
            item,
            number,
            turns=turns.get(item.conversation_id, []),
            scales=scales,
            before=previous.get(item.pk, {}),
            invalid=item.pk in missing,
        )
        for number, item in enumerate(items, start=1)
    ]
