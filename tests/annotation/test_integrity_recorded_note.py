"""What the writing page records is said before anything is recorded: on the start page and on the task
page (whose script records), and not for a kind that records nothing but its answers."""

import pytest
from django.test import Client

from tests.annotation.link_helpers import task_page
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db

SENTENCE = "this page records how each reply is entered"


def test_a_writing_survey_says_what_it_records_on_the_start_page_and_the_task_page(researcher):
    survey = make_survey(researcher, n_contexts=2, name="writers", task_type="write", write_system_name="people")
    start = Client().get(f"/s/{survey.token}/").content.decode()
    assert SENTENCE in start and "nothing is recorded before your task begins" in start
    assert "telemetry.js" not in start, "the start page records nothing"
    page = task_page(Client(), survey, "w1").content.decode()
    assert SENTENCE in page
    assert 'src="/static/annotation/kinds/writing/telemetry.js"' in page
    assert 'class="telemetry"' in page


def test_a_rating_survey_says_nothing_of_the_kind_and_loads_no_telemetry_script(researcher):
    survey = make_survey(researcher, n_contexts=2, name="raters")
    assert SENTENCE not in Client().get(f"/s/{survey.token}/").content.decode()
    page = task_page(Client(), survey, "w1").content.decode()
    assert "telemetry" not in page
