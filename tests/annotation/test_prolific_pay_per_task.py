"""The Prolific page's Pay and cost says what a participant earns per task and per hour when they do
every task the survey allows them (F30): the reward pays a whole submission."""

import re
from pathlib import Path

import pytest
from django.conf import settings

from annotation.models import Survey
from annotation.services import estimates
from tests.annotation.prolific_helpers import make_prolific_survey

pytestmark = pytest.mark.django_db


def pay_cell(client, survey):
    text = client.get(f"/surveys/{survey.pk}/prolific/").content.decode()
    return re.search(r'id="pay-at-most">(.*?)</td>', text, re.S).group(1)


@pytest.mark.parametrize(
    ("reward", "tasks"), [(150, 10), (900, 3), (100, 1)], ids=["ten-tasks", "three-tasks", "one-task"]
)
def test_pay_per_task_and_per_hour_at_the_most_a_participant_can_do(researcher_client, researcher, reward, tasks):
    survey = make_prolific_survey(researcher, reward_cents=reward, minutes=10)
    Survey.objects.filter(pk=survey.pk).update(max_hits_per_annotator=tasks)
    survey.refresh_from_db()
    minutes_per_task = estimates.survey_estimate_for(survey=survey)["minutes_per_hit"]
    most = tasks * minutes_per_task  # the most time one participant can spend
    cell = pay_cell(researcher_client, survey)
    assert f"£{reward / 100:.2f} for 1 task" in cell
    if tasks > 1:
        assert f"£{reward / tasks / 100:.2f} a task for one who does all {tasks} (about {round(most)} minutes)" in cell
    assert f"£{reward * 60 / most / 100:.2f} an hour at the most time" in cell
    under = reward * 60 / most < 600  # Prolific's floor: £6.00 an hour
    assert ("under Prolific&#x27;s floor of £6.00 an hour" in cell) is under


def test_the_reward_form_keeps_each_label_beside_its_field():
    # The phone's layout (a screenshot checked by hand); here the rule that holds it: no wrapping
    # inside a label of the reward form.
    css = (Path(settings.BASE_DIR) / "static" / "annotation" / "prolific.css").read_text()
    assert re.search(r"\.pay-settings label \{[^}]*white-space: nowrap", css)
