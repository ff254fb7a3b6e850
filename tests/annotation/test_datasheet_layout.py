"""The datasheet's layout field: a survey's layout seed is stated, in every format and in the methods
paragraph, only once the survey is closed (with the data it tells where the checks are), and the
seed it states lays a copy of the data out exactly as the study was."""

import json

import pytest
from django.urls import reverse

from annotation import services
from annotation.services.datasheet import datasheet
from annotation.services.datasheet_render import RENDERERS
from tests.annotation.studies_helpers import dataset_records, make_survey
from tests.annotation.test_layout_seed import layout
from tests.factories import load_dataset_records, load_rating_records

pytestmark = pytest.mark.django_db

SEED = "paper-2027-secret"
SETTINGS = {"contexts_per_hit": 3, "attention_checks_per_hit": 1, "overlap_contexts": 1}


def _exports(survey):
    sheet = datasheet(survey)
    return sheet, {name: render(sheet) for name, render in RENDERERS.items()}


def _layout_field(sheet):
    return next(f for s in sheet["sections"] for f in s["fields"] if f["id"] == "design.layout")


def test_a_running_surveys_seed_is_withheld_from_every_format_and_the_download(researcher, researcher_client):
    survey = make_survey(researcher, name="live", layout_seed=SEED, **SETTINGS)
    assert survey.status == "live"
    sheet, exports = _exports(survey)
    assert sheet["figures"]["layout"] == {"imported": False, "seeded": True, "seed": None, "withheld": True}
    assert "withheld until the survey is closed" in _layout_field(sheet)["value"]
    for name, text in exports.items():
        assert SEED not in text, f"the {name} datasheet of a live survey gives its seed away"
    download = researcher_client.get(reverse("annotation:survey_datasheet", args=[survey.pk, "json"]))
    assert download.status_code == 200 and SEED.encode() not in download.content
    page = researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk]))
    assert b"The datasheet states it once the survey is closed." in page.content

    survey = services.survey_pause(survey=survey)
    assert survey.status == "paused"
    assert all(SEED not in text for text in _exports(survey)[1].values()), "paused is not closed"


def test_a_closed_surveys_seed_is_stated_and_lays_a_copy_of_the_data_out_alike(researcher, researcher_client):
    study = make_survey(researcher, name="study", layout_seed=SEED, **SETTINGS)
    study = services.survey_close(survey=study)
    assert study.status == "closed"
    sheet, exports = _exports(study)
    assert sheet["figures"]["layout"]["seed"] == SEED and not sheet["figures"]["layout"]["withheld"]
    assert f"from the seed “{SEED}”" in _layout_field(sheet)["value"]
    methods = json.loads(exports["json"])["methods"]
    assert f"Tasks were laid out from the seed “{SEED}”" in methods
    assert f"(design.layout): laid out by RateLab from the seed “{SEED}”" in exports["md"]
    assert f"from the seed “{SEED}”" in exports["latex"]
    page = researcher_client.get(reverse("annotation:survey_detail", args=[study.pk]))
    assert b"The datasheet states it." in page.content
    assert b"No annotators: the survey was closed before anyone took a HIT." in page.content
    assert b"Share the annotator link above" not in page.content  # a closed survey's link takes no one

    # What a replication does: read the seed off the published datasheet, lay a copy of the data out.
    published = json.loads(exports["json"])["figures"]["layout"]["seed"]
    replication = make_survey(researcher, name="replication", layout_seed=published, **SETTINGS)
    assert replication.dataset != study.dataset
    assert layout(replication) == layout(study) != []
    assert any(item[2] == "instructed" for item in layout(study)), "the checks' places are part of what repeats"

    # Reopened (a local survey may be), it runs again: the seed is withheld again.
    study = services.survey_reopen(survey=study)
    assert study.status == "paused"
    assert all(SEED not in text for text in _exports(study)[1].values())


def test_an_unseeded_survey_says_it_was_laid_out_at_random_and_states_no_seed(researcher):
    survey = make_survey(researcher, name="unseeded", **SETTINGS)
    survey = services.survey_close(survey=survey)
    sheet, exports = _exports(survey)
    assert sheet["figures"]["layout"] == {"imported": False, "seeded": False, "seed": None, "withheld": False}
    assert "at random (no seed was set)" in _layout_field(sheet)["value"]
    assert "Tasks were laid out from the seed" not in json.loads(exports["json"])["methods"]
    assert survey.token not in exports["json"], "the survey's own secret is not a seed to publish"


def test_an_imported_surveys_datasheet_says_ratelab_laid_out_no_tasks(researcher):
    dataset = load_dataset_records(records=dataset_records(3), name="imp", owner=researcher)
    records = [{"context_id": "c000", "system": "hred", "worker": w, "score": 3} for w in ("w1", "w2")]
    survey = load_rating_records(records=records, dataset=dataset, survey_name="from-a-file", owner=researcher)
    sheet, _ = _exports(survey)
    assert sheet["figures"]["layout"] == {"imported": True, "seeded": False, "seed": None, "withheld": False}
    assert _layout_field(sheet)["value"] == "the judgements were imported; RateLab laid out no tasks"
