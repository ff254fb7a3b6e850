"""The planning panel analysis adds to the survey page (through annotation's extension registry)."""

import pytest
from django.urls import reverse

from analysis.report.report_keys import report_params
from analysis.sections.planning import _extend_options
from analysis.services.build import report_get_or_create, report_refresh
from annotation.models import Survey

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data]


def test_the_survey_page_shows_planning_from_the_survey_report_with_a_button_to_extend(researcher_client, usr_study):
    _, survey, _, _ = usr_study
    url = reverse("annotation:survey_detail", args=[survey.pk])
    body = researcher_client.get(url).content.decode()
    assert "Planning: how many more ratings?" in body and "has not been computed yet" in body
    report = report_get_or_create(dataset=survey.dataset, survey=survey, params=report_params())
    report_refresh(report=report)
    planning = report.data["planning"]
    # Imported (and closed): no crowd to extend. As a live survey on the built-in crowd it has one.
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LOCAL, status=Survey.Status.LIVE)
    body = researcher_client.get(url).content.decode()
    assert f"For {planning['metric']} (r = " in body
    assert "Responses for CI width 0.1" in body
    # On the built-in crowd the panel offers the one-click extension, one button per option.
    assert 'action="{}"'.format(reverse("annotation:survey_extend", args=[survey.pk])) in body
    assert 'name="csrfmiddlewaretoken"' in body.split('id="extend-study"')[1]


def test_the_panel_says_imported_judgements_cannot_extend_and_offers_mturk_the_button(researcher_client, usr_study):
    _, survey, _, _ = usr_study
    report_refresh(report=report_get_or_create(dataset=survey.dataset, survey=survey, params=report_params()))
    url = reverse("annotation:survey_detail", args=[survey.pk])
    assert "Imported judgements have no crowd to extend" in researcher_client.get(url).content.decode()
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.MTURK, status=Survey.Status.LIVE)
    body = researcher_client.get(url).content.decode()
    assert "cannot add work" not in body and 'id="extend-study"' in body


def test_mturk_is_offered_no_option_that_would_take_its_hits_across_ten_assignments():
    planning = {"ratings_per_response": 3, "options": [{"ratings_per_response": m} for m in (5, 9, 10, 12)]}
    on_mturk = _extend_options(planning, Survey(provider=Survey.Provider.MTURK, assignments_per_hit=3))
    assert [choice["after"] for choice in on_mturk] == [5, 9]
    local = _extend_options(planning, Survey(provider=Survey.Provider.LOCAL, assignments_per_hit=3))
    assert [choice["after"] for choice in local] == [5, 9, 10, 12]


def test_no_option_asks_for_more_ratings_than_one_extension_accepts():
    # survey_extend adds at most MAX_EXTRA_PER_HIT (20) per response: a button for 27 would always be refused.
    planning = {"ratings_per_response": 3, "options": [{"ratings_per_response": m} for m in (5, 23, 30)]}
    local = _extend_options(planning, Survey(provider=Survey.Provider.LOCAL, assignments_per_hit=3))
    assert [choice["per_hit"] for choice in local] == [2, 20]


def test_a_closed_survey_is_offered_no_extension_that_would_be_refused(researcher_client, usr_study):
    # survey_extend refuses a closed survey ("reopen it before adding work"): its buttons were offered anyway.
    _, survey, _, _ = usr_study
    report_refresh(report=report_get_or_create(dataset=survey.dataset, survey=survey, params=report_params()))
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LOCAL, status=Survey.Status.CLOSED)
    body = researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk])).content.decode()
    assert 'id="extend-closed"' in body and 'id="extend-study"' not in body
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.PAUSED)
    body = researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk])).content.decode()
    assert 'id="extend-closed"' not in body and 'id="extend-study"' in body
