"""The page of a survey of imported judgements: a file's finished work, with no HITs, assignments or settings."""

import re

import pytest
from django.urls import reverse

from annotation import services
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records, load_rating_records

pytestmark = pytest.mark.django_db


def test_an_imported_survey_page_counts_its_workers_and_shows_no_hit_layout(researcher_client, researcher):
    dataset = load_dataset_records(records=dataset_records(3), name="imp", owner=researcher)
    records = [
        {"context_id": "c000", "system": "hred", "worker": "w1", "score": 2},
        {"context_id": "c000", "system": "hred", "worker": "w2", "score": 3},
        {"context_id": "c001", "system": "hred", "worker": "w2", "score": 4},
        {"context_id": "c001", "system": "hred", "worker": "w3", "score": 5},
    ]
    survey = load_rating_records(records=records, dataset=dataset, survey_name="from-a-file", owner=researcher)
    page = researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk])).content.decode()
    # Before: "Annotators 0", "No annotators yet.", a Preview button that led back here, and a
    # layout nobody used ("HITs 1 …, Assignments 3, Cost $1.50 in rewards") under "Settings and estimate".
    assert "4 ratings by 3 workers, imported from a file" in page
    assert reverse("annotation:quality_survey", args=[survey.pk]) in page
    assert reverse("annotation:survey_preview", args=[survey.pk]) not in page
    assert "Settings and estimate" not in page and "No annotators yet" not in page
    assert not re.search(r"Cost\b.*in rewards", page, re.S)
    # a survey collected in the app keeps its page
    collected = services.survey_create(dataset=dataset, name="in-the-app", owner=researcher)
    page = researcher_client.get(reverse("annotation:survey_detail", args=[collected.pk])).content.decode()
    assert "Settings and estimate" in page and reverse("annotation:survey_preview", args=[collected.pk]) in page
