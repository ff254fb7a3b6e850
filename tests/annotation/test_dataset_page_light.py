"""The dataset page stays light (issue 35, F28): a page of contexts, headline scores inline, every
score on the context's own page, and a fixed number of queries whatever the number of surveys."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import services
from annotation.services.extensions import points as extensions
from tests.annotation.studies_helpers import dataset_records, good_answers, make_survey
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db

METRICS = {f"metric_{i:02d}": i / 7 for i in range(29)} | {"bleu4": 0.25, "meteor": 0.5, "rouge_l": 0.75}


@pytest.fixture
def scored(monkeypatch):
    monkeypatch.setattr(extensions, "_response_extras", [])
    extensions.register_response_extras(lambda dataset, ids: {pk: {"metrics": METRICS} for pk in ids})


def _queries(client, url):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    return response, [q["sql"] for q in captured if not re.match(r"^(BEGIN|COMMIT|SAVEPOINT|RELEASE)", q["sql"])]


def test_a_page_holds_ten_contexts_with_headline_scores_and_links_to_all_scores(client, researcher, scored):
    dataset = load_dataset_records(records=dataset_records(n_contexts=25), name="light", owner=researcher)
    client.force_login(researcher)
    url = reverse("annotation:dataset_detail", args=[dataset.pk])
    html = client.get(url).content.decode()
    contexts = list(dataset.contexts.order_by("position"))
    assert html.count('<section class="context"') == 10
    assert "Page 1 of 3" in html and 'href="?page=2#contexts">2</a>' in html
    assert "BLEU-4" in html and "metric 00" not in html.lower().replace("_", " ")
    scores_url = reverse("annotation:context_scores", args=[dataset.pk, contexts[0].pk])
    assert f'href="{scores_url}">All 32 scores</a>' in html
    second = client.get(url + "?page=2").content.decode()
    assert contexts[10].external_id in second and contexts[9].external_id not in second
    # the context's own page: every score of every reply, systems side by side
    page = client.get(scores_url).content.decode()
    assert page.count('<tr><th scope="row">') == 32
    assert all(system.name in page for system in dataset.systems.all())


def test_the_context_scores_page_is_the_owners_only(client, researcher, django_user_model, scored):
    dataset = load_dataset_records(records=dataset_records(n_contexts=2), name="mine", owner=researcher)
    other = django_user_model.objects.create_user("other", password="pw-other-12345")
    client.force_login(other)
    context = dataset.contexts.first()
    assert client.get(reverse("annotation:context_scores", args=[dataset.pk, context.pk])).status_code == 404


def test_the_dataset_page_takes_the_same_queries_with_one_survey_or_four(client, researcher):
    survey = make_survey(researcher, name="first")
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
    client.force_login(researcher)
    url = reverse("annotation:dataset_detail", args=[survey.dataset.pk])
    client.get(url)
    one, one_sql = _queries(client, url)
    for n in range(3):
        services.survey_create(dataset=survey.dataset, name=f"more-{n}", owner=researcher)
    four, four_sql = _queries(client, url)
    assert one.status_code == four.status_code == 200
    assert f"{survey.ratings.count()} ratings" in four.content.decode()
    assert len(four_sql) == len(one_sql), four_sql
