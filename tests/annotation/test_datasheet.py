"""The HEDS datasheet of the demo study: every field RateLab can know is filled, the rest marked
for the researcher, and every figure equals an independent computation from the rows."""

import json
import statistics
from collections import defaultdict
from datetime import timedelta
from io import StringIO

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import (
    Annotator,
    Assignment,
    AttentionAnswer,
    ConsentResponse,
    QuestionnaireResponse,
    Rating,
    Survey,
)
from annotation.services import consent as consent_service
from annotation.services.questionnaire_spec import parse_questions
from annotation.services.reviews import annotators_excluded

pytestmark = pytest.mark.django_db

RESEARCHER_FIELDS = {
    "system.descriptions",
    "system.language",
    "sample.selection",
    "sample.power",
    "evaluators.expertise",
    "ethics.approval",
    "ethics.risks",
}


def _run(*args):
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def demo_survey(db):
    _run("load_demo", "--contexts", "12")
    _run(
        "create_survey",
        "--dataset",
        "demo",
        "--name",
        "demo-rate",
        "--contexts-per-hit",
        "4",
        "--assignments",
        "3",
        "--attention-checks",
        "1",
        "--overlap",
        "2",
        "--policy",
        "exclude",
        "--owner",
        "demo",
    )
    survey = Survey.objects.get(name="demo-rate")
    consent_service.consent_setup_save(
        survey=survey,
        consent_text="Information sheet.",
        consent_version="1.0",
        pre_questions=parse_questions("single | english | Is English your first language? | yes; no"),
        post_questions=parse_questions("scale | effort | How hard was it?"),
    )
    _run("simulate_ratings", "demo-rate", "--annotators", "6", "--careless", "0.34", "--seed", "3", "--owner", "demo")
    # consent answers as the pages record them (the simulation works through the claim path only)
    annotators = list(Annotator.objects.filter(assignments__hit__survey=survey).distinct())
    for annotator in annotators:
        consent_service.consent_record(survey=survey, annotator=annotator, accepted=True)
        consent_service.questionnaire_record(
            survey=survey, annotator=annotator, phase="pre", answers={"english": "yes"}
        )
    declined = Annotator.objects.create(provider="local", worker_id="decliner")
    consent_service.consent_record(survey=survey, annotator=declined, accepted=False)
    return survey


def test_the_demo_datasheet_fills_every_field_ratelab_can_know(demo_survey):
    sheet = json.loads(_run("export_datasheet", "--survey", "demo-rate", "--owner", "demo", "--format", "json"))
    assert [s["section"] for s in sheet["sections"]] == [
        "system",
        "sample",
        "evaluators",
        "design",
        "quality_criteria",
        "ethics",
    ]
    fields = {f["id"]: f for s in sheet["sections"] for f in s["fields"]}
    empty = {key for key, field in fields.items() if field["value"] is None}
    assert empty == RESEARCHER_FIELDS, "exactly the fields RateLab cannot know are left to the researcher"
    assert all(fields[key]["source"] == "researcher" for key in RESEARCHER_FIELDS)
    markdown = _run("export_datasheet", "--survey", "demo-rate", "--owner", "demo")
    assert markdown.count("TO FILL IN (RateLab cannot know this)") == len(RESEARCHER_FIELDS) + 0
    latex = _run("export_datasheet", "--survey", "demo-rate", "--owner", "demo", "--format", "latex")
    assert r"\paragraph{Human evaluation.}" in latex and r"$\alpha$" in latex


def test_the_datasheet_figures_equal_independent_computations(demo_survey):
    survey = demo_survey
    f = json.loads(_run("export_datasheet", "--survey", "demo-rate", "--owner", "demo", "--format", "json"))["figures"]
    ratings = list(
        Rating.objects.filter(survey=survey, aspect="overall").values_list("annotator_id", "response_id", "score")
    )
    raters = defaultdict(set)
    for annotator, response, _ in ratings:
        raters[response].add(annotator)
    counts = [len(people) for people in raters.values()]
    assert f["items"] == len(raters) and f["judgements"] == len(ratings)
    assert f["raters_per_item"]["mean"] == pytest.approx(np.mean(counts))
    assert (f["raters_per_item"]["min"], f["raters_per_item"]["max"]) == (min(counts), max(counts))
    assert f["evaluators"] == len({a for a, _, _ in ratings})
    excluded = set(annotators_excluded(survey=survey))
    assert f["excluded"] == len(excluded) > 0, "the careless simulated annotators are excluded"
    kept = [(a, r, s) for a, r, s in ratings if a not in {getattr(x, "pk", x) for x in excluded}]
    assert f["judgements_accepted"] == len(kept)
    people = sorted({a for a, _, _ in kept})
    items = sorted({r for _, r, _ in kept})
    matrix = np.full((len(people), len(items)), np.nan)
    for a, r, s in kept:
        matrix[people.index(a), items.index(r)] = s
    alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert f["alpha"] == pytest.approx(alpha, abs=1e-9)
    answers = AttentionAnswer.objects.filter(assignment__hit__survey=survey)
    assert (f["checks_answered"], f["checks_failed"]) == (answers.count(), answers.filter(passed=False).count())
    finished = Assignment.objects.filter(hit__survey=survey, status__in=["submitted", "approved", "rejected"])
    seconds = [(a.submitted_at - a.assigned_at).total_seconds() for a in finished]
    assert f["tasks_finished"] == len(seconds) and f["median_task_seconds"] == pytest.approx(statistics.median(seconds))
    item_seconds = list(Rating.objects.filter(survey=survey, aspect="overall").values_list("seconds", flat=True))
    assert f["median_item_seconds"] == pytest.approx(statistics.median(item_seconds))
    assert f["pay"]["reward"] == survey.reward_cents / 100
    # The simulated tasks are handed in at once: a median task shorter than one item's median time
    # gives no hourly rate. With tasks of realistic length, the rate is the reward over the median.
    assert statistics.median(seconds) < statistics.median(item_seconds) and f["pay"]["hourly"] is None
    assert "no hourly rate" in f["pay"]["median_source"]
    for assignment in finished:
        Assignment.objects.filter(pk=assignment.pk).update(
            submitted_at=assignment.assigned_at + timedelta(seconds=600 + assignment.pk % 7 * 60)
        )
    seconds = [(a.submitted_at - a.assigned_at).total_seconds() for a in Assignment.objects.filter(pk__in=finished)]
    again = json.loads(_run("export_datasheet", "--survey", "demo-rate", "--owner", "demo", "--format", "json"))
    assert again["figures"]["pay"]["hourly"] == pytest.approx(
        survey.reward_cents / 100 * 3600 / statistics.median(seconds)
    )
    assert f["consent"] == {"asked": True, "version": "1.0", "accepted": len(people) + len(excluded), "declined": 1}
    assert f["consent"]["accepted"] == ConsentResponse.objects.filter(survey=survey, accepted=True).count()
    assert f["questionnaires"]["pre_answered"] == QuestionnaireResponse.objects.filter(survey=survey).count()
    # the methods paragraph states the same figures
    methods = json.loads(_run("export_datasheet", "--survey", "demo-rate", "--owner", "demo", "--format", "json"))[
        "methods"
    ]
    assert f"{len(people) + len(excluded)} evaluators gave {len(ratings)} judgements" in methods
    assert f"alpha = {alpha:.3f}" in methods and f"{f['excluded']} evaluators were excluded" in methods


def test_the_survey_page_offers_the_datasheet_to_its_owner(client, demo_survey):
    client.force_login(demo_survey.owner)
    page = client.get(reverse("annotation:survey_detail", args=[demo_survey.pk]))
    assert b'id="datasheet-md"' in page.content and b'id="questionnaires-csv"' in page.content
    download = client.get(reverse("annotation:survey_datasheet", args=[demo_survey.pk, "md"]))
    assert download.status_code == 200 and download.content.startswith(b"# Human Evaluation Datasheet")
    quality = client.get(reverse("annotation:quality_survey", args=[demo_survey.pk]))
    assert b'id="consent-counts"' in quality.content and b"decliner" not in quality.content
