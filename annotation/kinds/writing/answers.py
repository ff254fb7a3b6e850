"""A writing survey's submissions: one written reply per conversation, stored as written."""

from annotation.kinds.base import SubmissionRefused
from annotation.kinds.writing.telemetry import telemetry_of
from annotation.models import WrittenResponse
from annotation.services.text.answer_seconds import seconds_or_none

MAX_WRITTEN_CHARS = 2000


def written_text(value, number):
    """A written reply as it is stored, or SubmissionRefused naming the reply by its number on the page.

    Line breaks arrive as CRLF (HTML form encoding) but the page's `maxlength` counted each as one
    character: they are stored as LF and counted so, or a reply the page let through was refused
    as too long. A NUL character cannot be typed, and PostgreSQL cannot store it in text: refused.
    """
    text = str(value or "").replace("\r\n", "\n").strip()
    if not text:
        raise SubmissionRefused("Please write a reply for every conversation.")
    if "\x00" in text:
        raise SubmissionRefused(f"Reply {number} holds a NUL character, which cannot be stored: remove it.")
    if len(text) > MAX_WRITTEN_CHARS:
        raise SubmissionRefused(
            f"Reply {number} has {len(text)} characters: a reply may have at most {MAX_WRITTEN_CHARS}."
        )
    return text


def written_rows(*, assignment, items, answers):
    """`([], [], written)` of one submission whose items are all answered (checked before)."""
    written = []
    for number, item in enumerate(items, start=1):
        answer = answers[item.pk]
        seconds = seconds_or_none(answer.get("seconds"))
        text = written_text(answer.get("text"), number)
        telemetry = telemetry_of(answer.get("telemetry"), number)
        if telemetry is not None:
            # The length of the text as stored (line breaks as one, spaces around trimmed), not the page's count.
            telemetry["final_length"] = len(text)
        written.append(
            WrittenResponse(
                assignment=assignment,
                item=item,
                context_id=item.context_id,
                text=text,
                seconds=seconds,
                telemetry=telemetry,
            )
        )
    return [], [], written
