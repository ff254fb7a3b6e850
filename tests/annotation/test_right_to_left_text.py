"""Right-to-left and mixed-direction texts keep their own direction on every page that shows them.

Laid out in the page's left-to-right order, the Hebrew reply "3 ימים (בערך)." reads
"3 (בערך) ימים." and a question mark lands at the wrong end: an annotator would rate a garbled
reply. Each turn, reply and reference now sits in its own `dir="auto"` element (an isolate), which
also keeps a stray direction override inside its own text.
"""

import html
import re

import pytest
from django.urls import reverse

from annotation import services
from tests.factories import load_dataset_records

TURN = "שלום, מה שלומך היום?"
REPLIES = {"a": "3 ימים (בערך).", "b": "مرحبا، كيف حالك؟ ok", "c": "abc \u202egnp.exe def"}
SPEAKER = "דני"


def _dataset(owner):
    records = [
        {
            "context_id": f"c{i}",
            "context": [{"speaker": SPEAKER, "text": TURN}, "hello"],
            "references": ["תשובה (ref)."],
            "responses": [{"system": system, "text": text} for system, text in REPLIES.items()],
        }
        for i in range(2)
    ]
    return load_dataset_records(records=records, name="rtl", owner=owner)


def _isolated(page, text):
    """Whether `text` is the whole content of an element with dir="auto"."""
    escaped = re.escape(html.escape(text))
    return re.search(rf'<(span|td)[^>]*\bdir="auto"[^>]*>{escaped}</\1>', page) is not None


@pytest.mark.parametrize("task_type", ["rate", "pairwise"])
def test_annotator_page_isolates_every_turn_and_reply(researcher_client, researcher, task_type):
    dataset = _dataset(researcher)
    survey = services.survey_create(
        dataset=dataset, name=f"rtl-{task_type}", owner=researcher, task_type=task_type, contexts_per_hit=2
    )
    page = researcher_client.get(reverse("annotation:survey_preview", args=[survey.pk])).content.decode()
    assert _isolated(page, TURN) and _isolated(page, "hello")
    assert f"<bdi>{html.escape(SPEAKER)}</bdi>:" in page
    for text in REPLIES.values():
        assert _isolated(page, text), text


def test_dataset_page_isolates_turns_references_and_responses(researcher_client, researcher):
    dataset = _dataset(researcher)
    page = researcher_client.get(reverse("annotation:dataset_detail", args=[dataset.pk])).content.decode()
    assert _isolated(page, TURN) and _isolated(page, "תשובה (ref).")
    for text in REPLIES.values():
        assert _isolated(page, text), text


def test_written_replies_page_isolates_the_conversation_and_the_written_reply(researcher_client, researcher):
    dataset = _dataset(researcher)
    survey = services.survey_create(
        dataset=dataset, name="rtl-write", owner=researcher, task_type="write", write_system_name="people"
    )
    survey = services.survey_launch(survey=survey)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    items = services.assignment_items(assignment=assignment)
    answers = {item.pk: {"scores": {}, "seconds": 4.0, "text": "תשובה שלי (בערך)."} for item in items}
    services.assignment_submit(assignment=assignment, answers=answers)
    page = researcher_client.get(reverse("annotation:survey_written", args=[survey.pk])).content.decode()
    assert _isolated(page, "תשובה שלי (בערך).")
    assert re.search(rf'<div class="turn" dir="auto">{re.escape(html.escape(TURN))}</div>', page)
