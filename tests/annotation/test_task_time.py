"""One time model: the annotator's start page and the researcher's estimate state the same minutes."""

import math
import re

import pytest
from django.test import Client

from annotation.kinds.timing import task_seconds
from annotation.services.estimates import survey_estimate_for
from tests.annotation.studies_helpers import make_survey

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def test_a_task_is_its_instructions_then_each_answer_or_written_reply():
    assert task_seconds() == 60
    assert task_seconds(answers=7) == 60 + 7 * 15
    assert task_seconds(written=3) == 60 + 3 * 90


@pytest.mark.parametrize("task_type", ["rate", "write"])
def test_the_start_page_tells_annotators_the_minutes_the_researchers_estimate_gives(researcher, task_type):
    extra = {"write_system_name": "crowd"} if task_type == "write" else {}
    survey = make_survey(researcher, task_type=task_type, contexts_per_hit=3, **extra)
    estimate = survey_estimate_for(survey=survey)
    page = Client().get(f"/s/{survey.token}/").content.decode()
    told = int(re.search(r"about <strong>(\d+) minutes?</strong> \(an estimate\)", page).group(1))
    assert told == max(1, math.ceil(estimate["minutes_per_hit"]))
