"""The dataset page's survey list counts each survey's own answers: a conversation survey's ratings and a
writing survey's replies said "0 ratings" (the count read response ratings only)."""

import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import ConversationRating, WrittenResponse
from annotation.services.demo_data.simulation import ratings_simulate
from tests.annotation.conversation_study_helpers import make_conversation_survey
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def _counted(client, survey):
    page = client.get(reverse("annotation:dataset_detail", args=[survey.dataset.pk])).content.decode()
    row = page.split(f">{survey.name}</a>", 1)[1].split("</tr>", 1)[0]
    return re.search(r'data-label="Ratings or judgements">([^<]*)</td>', row).group(1)


def test_a_conversation_survey_counts_its_conversation_ratings(client, researcher):
    survey = make_conversation_survey(researcher)
    call_command("simulate_ratings", survey.name, "--annotators", "2", stdout=io.StringIO())
    stored = ConversationRating.objects.filter(survey=survey).count()
    assert stored > 0
    client.force_login(researcher)
    assert _counted(client, survey) == f"{stored} ratings and flags"


def test_a_writing_survey_counts_its_written_replies(client, researcher):
    survey = make_survey(researcher, n_contexts=4, name="counted-writing", task_type="write",
                         write_system_name="crowd", contexts_per_hit=2, assignments_per_hit=1)  # fmt: skip
    ratings_simulate(survey=survey, n_annotators=2, seed=0)
    stored = WrittenResponse.objects.filter(assignment__hit__survey=survey).count()
    assert stored == 4
    client.force_login(researcher)
    assert _counted(client, survey) == "4 written replies"


def test_a_dataset_of_conversations_only_lists_its_systems_under_conversations_not_as_zero_responses(
    client, researcher
):
    survey = make_conversation_survey(researcher)
    client.force_login(researcher)
    page = client.get(reverse("annotation:dataset_detail", args=[survey.dataset.pk])).content.decode()
    assert "<h2>Systems</h2>" not in page and ">Responses</th>" not in page
    assert '<h2 id="conversations">Conversations</h2>' in page
