"""A survey's layout seed: by default its id and random token (each survey lays out differently and
no one can work the layout out); given one, the same data is laid out the same way in any database,
so the demo's simulated study, and every figure computed from it, repeats from build to build."""

from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.kinds.base import layout_seed
from annotation.models import HITItem, Rating, Survey
from annotation.services.demo_data.simulation import ratings_simulate
from tests.annotation.studies_helpers import make_survey, survey_form_fields

pytestmark = pytest.mark.django_db


def _side(response):
    return None if response is None else (response.context.external_id, response.system.name)


def layout(survey):
    """Every HIT item as data, not ids: (HIT, position, kind, context, response side(s), check text,
    planted text, instructed score, overlap). Equal for two surveys over two copies of one dataset
    only if both laid the data out the same way."""
    items = HITItem.objects.filter(hit__survey=survey).select_related(
        "hit", "context", "response__context", "response__system", "response_b__context", "response_b__system",
        "attention_check",
    )  # fmt: skip
    return [
        (
            item.hit.position,
            item.position,
            item.kind,
            item.context.external_id if item.context else None,
            _side(item.response),
            _side(item.response_b),
            item.attention_check.response_text if item.attention_check else None,
            item.broken_text,
            item.instructed_score,
            item.is_overlap,
        )
        for item in items.order_by("hit__position", "position")
    ]


def simulated_ratings(survey):
    ratings = Rating.objects.filter(assignment__hit__survey=survey).select_related(
        "annotator", "assignment__hit", "response__context", "response__system"
    )
    return sorted(
        (r.annotator.worker_id, r.assignment.hit.position, _side(r.response), r.aspect, r.score, r.seconds)
        for r in ratings
    )


SETTINGS = {
    "n_contexts": 20,
    "contexts_per_hit": 5,
    "assignments_per_hit": 2,
    "attention_checks_per_hit": 1,
    "overlap_contexts": 2,
}


def test_two_surveys_with_one_seed_lay_two_copies_of_the_data_out_alike_and_their_simulations_repeat(researcher):
    first = make_survey(researcher, name="first", layout_seed="lab-study-1", **SETTINGS)
    second = make_survey(researcher, name="second", layout_seed="lab-study-1", **SETTINGS)
    assert first.dataset != second.dataset and first.token != second.token
    kinds = Counter((item[2], item[9]) for item in layout(first))
    # 18 contexts' 4 replies once each, the 2 overlap contexts' on each of the 4 HITs, and on each
    # HIT an instructed check among 3 filler replies
    assert kinds == {
        ("response", False): 72,
        ("response", True): 32,
        ("instructed", False): 4,
        ("instr_filler", False): 12,
    }
    assert layout(first) == layout(second)
    for survey in (first, second):
        ratings_simulate(survey=survey, n_annotators=4, seed=3, careless_fraction=0.25)
    assert simulated_ratings(first) == simulated_ratings(second) != []
    # another seed, another layout
    other = make_survey(researcher, name="other", layout_seed="lab-study-2", **SETTINGS)
    assert layout(other) != layout(first)


def test_without_a_seed_each_survey_lays_out_from_its_id_and_token_as_before(researcher):
    first = make_survey(researcher, name="first", **SETTINGS)
    second = make_survey(researcher, name="second", **SETTINGS)
    assert first.layout_seed == second.layout_seed == ""
    # the seed surveys made before the setting existed had, so their layouts regenerate unchanged
    assert layout_seed(first, "hit0") == f"{first.pk}:{first.token}:hit0"
    assert layout(first) != layout(second)


def test_a_pairwise_surveys_pairs_and_sides_follow_the_seed_too(researcher):
    pairwise = {**SETTINGS, "task_type": "pairwise", "pair_budget": 2}
    pairwise.update(attention_checks_per_hit=0, overlap_contexts=0)
    first = make_survey(researcher, name="first", layout_seed="ab", **pairwise)
    second = make_survey(researcher, name="second", layout_seed="ab", **pairwise)
    other = make_survey(researcher, name="other", layout_seed="ba", **pairwise)
    assert layout(first) == layout(second) != layout(other)
    assert all(item[4] and item[5] for item in layout(first))  # every item a pair


def test_create_survey_takes_a_layout_seed_and_refuses_one_too_long_creating_nothing(researcher):
    make_survey(researcher, name="source", launch=False, n_contexts=10)
    run = {"dataset": "ds-source", "owner": researcher.username, "stdout": StringIO(), "stderr": StringIO()}
    call_command("create_survey", name="seeded", layout_seed="demo:7", **run)
    assert Survey.objects.get(name="seeded").layout_seed == "demo:7"
    with pytest.raises(CommandError, match=r"layout_seed: .*at most 64 characters"):
        call_command("create_survey", name="too-long", layout_seed="x" * 65, **run)
    assert not Survey.objects.filter(name="too-long").exists()


FORM_LAYOUT = {"contexts_per_hit": 3, "attention_checks_per_hit": 1, "overlap_contexts": 1}


def test_the_survey_form_takes_a_seed_and_lays_out_as_the_service_does_with_it(researcher, researcher_client):
    source = make_survey(researcher, name="by-service", launch=False, layout_seed="paper-2027", **FORM_LAYOUT)
    other_copy = make_survey(researcher, name="other-copy", launch=False, **FORM_LAYOUT)  # a second copy of the data
    form = researcher_client.get(reverse("annotation:survey_new")).content.decode()
    assert 'name="layout_seed"' in form and "keep a live study" in form
    fields = survey_form_fields(
        other_copy.dataset, name="by-form", provider="local", layout_seed="paper-2027", **FORM_LAYOUT
    )
    response = researcher_client.post(reverse("annotation:survey_new"), fields)
    assert response.status_code == 302, response.content.decode()[:2000]
    made = Survey.objects.get(name="by-form")
    assert made.layout_seed == "paper-2027"
    assert layout(made) == layout(source) != []
    # its page says what it was laid out from; an unseeded survey's says nothing of a seed
    page = researcher_client.get(reverse("annotation:survey_detail", args=[made.pk])).content.decode()
    assert 'id="layout-seed"' in page and "<code>paper-2027</code>" in page
    page = researcher_client.get(reverse("annotation:survey_detail", args=[other_copy.pk])).content.decode()
    assert 'id="layout-seed"' not in page


def test_a_seed_too_long_on_the_form_says_where_and_creates_nothing(researcher, researcher_client):
    dataset = make_survey(researcher, name="source", launch=False).dataset
    fields = survey_form_fields(dataset, name="too-long", provider="local", layout_seed="x" * 65)
    response = researcher_client.post(reverse("annotation:survey_new"), fields)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'href="#id_layout_seed">Layout seed (optional)</a>' in html
    assert "Ensure this value has at most 64 characters (it has 65)." in html
    assert not Survey.objects.filter(name="too-long").exists()


def test_editing_a_drafts_seed_lays_it_out_again_from_the_new_seed(researcher, researcher_client):
    draft = make_survey(researcher, name="draft", launch=False, layout_seed="one", **FORM_LAYOUT)
    from_two = make_survey(researcher, name="from-two", launch=False, layout_seed="two", **FORM_LAYOUT)
    unseeded = make_survey(researcher, name="unseeded", launch=False, **FORM_LAYOUT)
    url = reverse("annotation:survey_edit", args=[draft.pk])
    assert 'name="layout_seed" value="one"' in researcher_client.get(url).content.decode()
    assert layout(draft) != layout(from_two)
    fields = survey_form_fields(draft.dataset, name="draft", provider="local", layout_seed="two", **FORM_LAYOUT)
    response = researcher_client.post(url, fields)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Survey.objects.get(pk=draft.pk).layout_seed == "two"
    assert layout(draft) == layout(from_two)
    # emptied, the draft lays out from its own id and token again, like any unseeded survey
    response = researcher_client.post(url, {**fields, "layout_seed": ""})
    assert response.status_code == 302 and Survey.objects.get(pk=draft.pk).layout_seed == ""
    assert layout(draft) not in (layout(from_two), layout(unseeded))
