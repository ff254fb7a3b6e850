"""The admin's links to researcher pages open what the row describes (F26): a judge's page only for
its owner (others get no link to a 404), a filtered report's row opens that filtered report."""

import pytest
from django.urls import reverse

from analysis.models import Report
from analysis.report.report_keys import params_hash, report_params
from scoring.models import Judge
from tests.annotation.files import SMALL_DATASET
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


def judge_of(owner, name):
    return Judge.objects.create(owner=owner, name=name, base_url="http://127.0.0.1:9/v1", model="tiny")


def test_a_superuser_gets_a_link_to_their_own_judges_page_only(client, admin_user, researcher):
    mine, alices = judge_of(admin_user, "root-judge"), judge_of(researcher, "alice-judge")
    client.force_login(admin_user)
    listing = client.get(reverse("admin:scoring_judge_changelist")).content.decode()
    assert reverse("scoring:judge_detail", args=[mine.pk]) in listing
    assert reverse("scoring:judge_detail", args=[alices.pk]) not in listing
    assert "only alice opens it" in listing
    # every link offered opens: the owner's page is a 200, another's a 404 (its owner's alone)
    assert client.get(reverse("scoring:judge_detail", args=[mine.pk])).status_code == 200
    assert client.get(reverse("scoring:judge_detail", args=[alices.pk])).status_code == 404
    # the change page's "View on site" follows the same rule
    change = client.get(reverse("admin:scoring_judge_change", args=[alices.pk])).content.decode()
    assert reverse("scoring:judge_detail", args=[alices.pk]) not in change
    change = client.get(reverse("admin:scoring_judge_change", args=[mine.pk])).content.decode()
    assert reverse("scoring:judge_detail", args=[mine.pk]) in change


def test_a_filtered_reports_row_opens_the_report_with_its_filters(client, admin_user, researcher):
    dataset = load_dataset_records(records=SMALL_DATASET, name="demo", owner=researcher)
    plain = report_params()
    filtered = report_params(systems=["human", "hred"], apply_exclusions=False, aspect="topicality")
    for params in (plain, filtered):
        Report.objects.create(dataset=dataset, params=params, params_hash=params_hash(params), status="done")
    client.force_login(admin_user)
    listing = client.get(reverse("admin:analysis_report_changelist")).content.decode()
    base = reverse("analysis:dataset_report", args=[dataset.pk])
    assert f'href="{base}?aspect=topicality&amp;systems=hred&amp;systems=human&amp;exclusions=0"' in listing
    assert f'href="{base}"' in listing  # the unfiltered report's row
