"""The thank-you page after a task offers another task only when there is one for this annotator."""

import re

import pytest

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
