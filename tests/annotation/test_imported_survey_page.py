"""The page of a survey of imported judgements: a file's finished work, with no HITs, assignments or settings."""

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import services
from annotation.kinds.pairwise.imports import pairwise_import
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


def _imported(dataset, researcher, name, n_workers):
    records = [
        {"context_id": f"c00{c}", "system": "hred", "worker": f"w{w}", "score": 3}
        for w in range(n_workers)
        for c in range(2)
    ]
    return load_rating_records(records=records, dataset=dataset, survey_name=name, owner=researcher)


def test_the_survey_list_shows_imported_surveys_with_their_counts_in_constant_queries(researcher_client, researcher):
    dataset = load_dataset_records(records=dataset_records(3, systems=("hred", "human")), name="imp", owner=researcher)
    _imported(dataset, researcher, "first-file", 3)
    services.survey_create(dataset=dataset, name="in-the-app", owner=researcher)
    pairs = [
        {"context_id": "c000", "system_a": "hred", "system_b": "human", "worker": "p1", "winner": "b"},
        {"context_id": "c001", "system_a": "human", "system_b": "hred", "worker": "p1", "winner": "tie"},
    ]
    pairwise_import(
        file="".join(json.dumps(r) + "\n" for r in pairs).encode(),
        dataset=dataset,
        fmt="jsonl",
        survey_name="pairs-file",
    )
    url = reverse("annotation:survey_list")
    with CaptureQueriesContext(connection) as few:
        page = researcher_client.get(url).content.decode()
    # Before: the list left imported surveys out; a researcher found them only on the dataset page.
    row = re.search(r"<tr><td class=\"name\"><a href=\"/surveys/\d+/\">first-file</a>.*?</tr>", page, re.S)
    assert row, "the imported survey is not listed"
    assert ">Imported<" in row.group(0) and "6 ratings by 3 raters, from a file" in row.group(0)
    assert "<progress" not in row.group(0) and "assignments" not in row.group(0)
    assert re.search(r"0 of \d+ assignments \(0%\)", page)  # the collected survey keeps its HIT progress
    assert "2 judgements by 1 rater, from a file" in page  # an imported pairwise survey
    for index in range(3):
        _imported(dataset, researcher, f"more-{index}", 1)
    with CaptureQueriesContext(connection) as many:
        page = researcher_client.get(url).content.decode()
    assert "2 ratings by 1 rater, from a file" in page
    assert len(many) == len(few), f"{len(few)} queries for two imported surveys, {len(many)} for five"
