"""What an ACUTE-Eval page shows: each pair's two conversations (side by side on a wide screen,
one after the other on a phone: task.css), named only "Conversation 1" and "Conversation 2", then
each question (choose one: ACUTE asks for no tie) and an optional one-line reason.

Blind: speakers are "Bot" and "Partner"; no system name, conversation id or seed reaches the page.
A check pair's broken side is the real conversation with each bot turn replaced by its stock text.
"""

from annotation.kinds.conversation.page import PARTNER_LABEL, SYSTEM_LABEL, turns_by_conversation
from annotation.models import Aspect, HITItem
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.services.text.answer_seconds import seconds_or_none

BLOCK_TEMPLATE = "annotation/kinds/acute/_block.html"


def acute_questions(survey):
    questions = [
        {"key": aspect.key, "question": aspect.question, "definition": aspect.definition}
        for aspect in survey.aspects.order_by("position")
    ]
    questions.sort(key=lambda q: q["key"] != Aspect.OVERALL)
    return questions


def _shown(turns, broken_text=None):
    shown = []
    for _, speaker, text in turns:
        bot = speaker == SYSTEM_SPEAKER
        shown.append(
            {
                "speaker": SYSTEM_LABEL if bot else PARTNER_LABEL,
                "text": broken_text if bot and broken_text is not None else text,
                "side": "left" if bot else "right",
            }
        )
    return shown


def sides(item, turns):
    """The two conversations' turns as shown, left then right."""
    if item.kind == HITItem.Kind.CONV_PAIR_GOLD:
        real = _shown(turns.get(item.conversation_id, []))
        broken = _shown(turns.get(item.conversation_id, []), item.broken_text)
        return (real, broken) if item.instructed_score == 0 else (broken, real)
    return _shown(turns.get(item.conversation_id, [])), _shown(turns.get(item.conversation_b_id, []))


def acute_blocks(*, items, scales, previous, missing):
    turns = turns_by_conversation({pk for item in items for pk in (item.conversation_id, item.conversation_b_id) if pk})
    blocks = []
    for number, item in enumerate(items, start=1):
        before = previous.get(item.pk, {})
        scores = {key: str(value) for key, value in (before.get("scores") or {}).items()}
        left, right = sides(item, turns)
        seconds = seconds_or_none(before.get("seconds"))
        blocks.append(
            {
                "template": BLOCK_TEMPLATE,
                "id": str(item.pk),
                "number": str(number),
                "left": left,
                "right": right,
                "questions": [
                    {**q, "name": f"score-{item.pk}-{q['key']}", "selected": scores.get(q["key"], "")} for q in scales
                ],
                "reason": before.get("reason") or "",
                "seconds": "" if seconds is None else f"{seconds:.2f}",
                "missing": item.pk in missing,
                "items": [{"fields": scales}],  # task_page.items.fields_count: one answer per question
            }
        )
    return blocks
