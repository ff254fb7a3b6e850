"""The thank-you page after a task offers another task only when there is one for this annotator;
the study's start page, opened again, says so too instead of offering Start."""

import io
import re

import pytest
from django.core.management import call_command

from tests.annotation.link_helpers import start_task
from tests.annotation.studies_helpers import make_survey


def answer_all(client, url):
    html = client.get(url).content.decode()
    data = dict.fromkeys(set(re.findall(r'name="(score-\d+-[\w-]+)"', html)), "3")
    data.update({f"seconds-{item}": "2.5" for item in re.findall(r'name="seconds-(\d+)"', html)})
    return client.post(url, data, follow=True).content.decode()


@pytest.mark.parametrize(("cap", "offered"), [(1, False), (2, True)])
def test_another_task_is_offered_only_below_the_surveys_cap_per_annotator(client, researcher, cap, offered):
    survey = make_survey(researcher, n_contexts=6, contexts_per_hit=3, max_hits_per_annotator=cap)
    done = answer_all(client, start_task(client, survey, "w1"))
    assert "Your answers to this task are saved." in done
    assert ("Do another task" in done) is offered


@pytest.mark.parametrize(("n_contexts", "offered"), [(3, False), (6, True)])
def test_another_task_is_offered_only_while_a_hit_this_annotator_has_not_held_has_a_free_slot(
    client, researcher, n_contexts, offered
):
    # Three contexts a HIT: one HIT (which w1 has just done) or two (the second still open to w1).
    survey = make_survey(researcher, n_contexts=n_contexts, contexts_per_hit=3, max_hits_per_annotator=10)
    done = answer_all(client, start_task(client, survey, "w1"))
    assert "Your answers to this task are saved." in done
    assert ("Do another task" in done) is offered
    assert ("There is no other task for you in this study right now: you can close this page." in done) is not offered


@pytest.mark.parametrize(
    ("cap", "n_contexts", "said"), [(1, 6, "maximum of 1 task"), (10, 3, "no more work"), (2, 6, "")]
)
def test_the_start_page_says_there_is_no_more_work_instead_of_offering_start(client, researcher, cap, n_contexts, said):
    """Coming back to the study's link after the last task they may do, an annotator reads why
    there is none, not a "Start a task" button that leads to the same news one press later."""
    survey = make_survey(researcher, n_contexts=n_contexts, contexts_per_hit=3, max_hits_per_annotator=cap)
    answer_all(client, start_task(client, survey, "w1"))
    start = client.get(f"/s/{survey.token}/").content.decode()
    if said:
        assert said in start and "Start a task" not in start
    else:
        assert "Start a task" in start and "no more" not in start


def test_a_personal_invitation_opened_in_a_browser_at_its_cap_still_offers_start(client, researcher):
    survey = make_survey(researcher, n_contexts=6, contexts_per_hit=3, max_hits_per_annotator=1)
    answer_all(client, start_task(client, survey, "w1"))  # this browser's own identity is done
    out = io.StringIO()
    call_command("survey_invites", survey=survey.name, labels="ana", base_url="https://lab.example", stdout=out)
    invitation = out.getvalue().split("\t")[1].strip().removeprefix("https://lab.example")
    start = client.get(invitation).content.decode()
    assert "you take part as <strong>ana</strong>" in start and "Start a task" in start
