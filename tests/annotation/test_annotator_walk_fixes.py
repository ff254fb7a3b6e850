"""Annotator-side findings of the browser walk of 2026-11-29 (F08-F13): what the pages say."""

import re

import pytest
from django.test import Client

from annotation.models import Survey
from tests.annotation.link_helpers import start_task
from tests.annotation.pairwise_helpers import make_pairwise_survey
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def _text(html):
    """The page's visible words, tags dropped and spaces joined."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


# --- F10: a pair's sides are not lettered like the speakers above them ---------------------------


def test_pair_sides_are_numbered_while_speakers_keep_their_letters(researcher):
    # The dataset's second turn is spoken by "B" (studies_helpers.dataset_records).
    survey = make_pairwise_survey(researcher, n_contexts=6, assignments_per_hit=1)
    client = Client()
    page = client.get(start_task(client, survey, "w1")).content.decode()
    assert "<bdi>B</bdi>:</span>" in page, "the speakers are shown as the dataset names them"
    text = _text(page)
    assert "Reply 1:" in text and "Reply 2:" in text
    assert "Reply A" not in text and "Reply B" not in text and "reply A" not in text
    # The choices read as the sides do; the values sent stay a / b.
    assert re.search(r'value="a" data-key="1"[^>]*>\s*<span class="value">Reply 1</span>', page)
    assert re.search(r'value="b" data-key="2"[^>]*>\s*<span class="value">Reply 2</span>', page)
    assert "reply 1 and reply 2" in text, "the default instructions name the sides as the page does"


def test_old_default_pairwise_instructions_read_with_the_new_side_names(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=6, assignments_per_hit=1)
    old = "You will read short conversations, each followed by two possible next turns, reply A and reply B. Go."
    Survey.objects.filter(pk=survey.pk).update(instructions=old)
    text = _text(Client().get(f"/s/{survey.token}/").content.decode())
    assert "two possible next turns, reply 1 and reply 2. Go." in text and "reply A" not in text


def test_rating_pages_are_unchanged_by_the_pair_side_names(researcher):
    survey = make_survey(researcher, n_contexts=6, assignments_per_hit=1)
    client = Client()
    text = _text(client.get(start_task(client, survey, "w1")).content.decode())
    assert "Reply 1:" in text and "Pair 1" not in text
