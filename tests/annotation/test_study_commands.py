import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation import services
from annotation.kinds.simulated import latent_quality
from annotation.models import Assignment, PairwiseJudgement, Rating, Response, Survey, WrittenResponse
from annotation.services.tasks.assignments import expire_assignments
from tests.annotation.studies_helpers import dataset_records, make_survey
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


def _run(*args):
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_create_survey_prints_the_link_and_status_reports_progress(researcher):
    load_dataset_records(records=dataset_records(10), name="demo", owner=researcher)
    out = _run(
        "create_survey",
        "--dataset",
        "demo",
        "--name",
        "s1",
        "--contexts-per-hit",
        "5",
        "--assignments",
        "2",
        "--systems",
        "hred,human",
        "--overlap",
        "0",
    )
    survey = Survey.objects.get(name="s1")
    assert out.strip().endswith(f"/s/{survey.token}/") and survey.status == "live" and survey.owner == researcher
    assert survey.hits.count() == 2
    summary = json.loads(_run("simulate_ratings", "s1", "--annotators", "3", "--seed", "1"))
    assert summary["assignments"] == 4 and summary["ratings"] == Rating.objects.count() == 2 * 10 * 2
    status = json.loads(_run("survey_status", "s1", "--json"))
    assert status["hits_done"] == 2 and status["ratings"] == 40 and status["annotators"] == 3
    assert "HITs complete:  2 / 2" in _run("survey_status", "s1")


def test_create_survey_sets_the_kappa_rule_and_recompute_quality_names_its_weighting(researcher):
    load_dataset_records(records=dataset_records(10), name="demo", owner=researcher)
    _run("create_survey", "--dataset", "demo", "--name", "weighted", "--kappa-weighting", "linear",
         "--kappa-threshold", "0.3", "--overlap", "5", "--assignments", "2")  # fmt: skip
    survey = Survey.objects.get(name="weighted")
    assert (survey.kappa_weighting, survey.kappa_threshold) == ("linear", 0.3)
    _run("simulate_ratings", "weighted", "--annotators", "3", "--seed", "1")
    text = _run("recompute_quality", "weighted")
    assert "mean linear-weighted Cohen's kappa" in text and "needs at least 0.3" in text
    with pytest.raises(CommandError):
        _run("create_survey", "--dataset", "demo", "--name", "bad", "--kappa-weighting", "cubic")
    assert not Survey.objects.filter(name="bad").exists()


def test_a_pairwise_survey_is_simulated_and_reported_in_judgements(researcher):
    load_dataset_records(records=dataset_records(6), name="demo", owner=researcher)
    _run("create_survey", "--dataset", "demo", "--name", "ab", "--task-type", "pairwise", "--assignments", "1")
    summary = json.loads(_run("simulate_ratings", "ab", "--annotators", "2", "--seed", "1"))
    assert "ratings" not in summary and summary["judgements"] == PairwiseJudgement.objects.count() > 0
    text = _run("survey_status", "ab")
    assert f"Judgements:     {summary['judgements']}" in text and "Ratings:" not in text


def test_a_write_survey_is_simulated_and_reported_in_written_replies(researcher):
    survey = make_survey(researcher, n_contexts=4, contexts_per_hit=2, task_type="write", write_system_name="crowd")
    summary = json.loads(_run("simulate_ratings", survey.name, "--annotators", "2", "--max-hits", "1"))
    assert "ratings" not in summary and summary["written"] == WrittenResponse.objects.count() == 4
    assert f"Written replies: {summary['written']}" in _run("survey_status", survey.name)


def test_create_survey_refuses_unknown_dataset():
    with pytest.raises(CommandError, match=r"[Nn]o dataset named"):
        _run("create_survey", "--dataset", "nope", "--name", "x")


def test_simulated_diligent_raters_track_latent_quality_and_careless_ones_fail_checks(researcher):
    load_dataset_records(records=dataset_records(40), name="demo", owner=researcher)
    _run(
        "create_survey",
        "--dataset",
        "demo",
        "--name",
        "s1",
        "--contexts-per-hit",
        "5",
        "--assignments",
        "3",
        "--attention-checks",
        "2",
        "--overlap",
        "2",
        "--max-hits",
        "4",
    )
    summary = json.loads(_run("simulate_ratings", "s1", "--annotators", "20", "--careless", "0.2", "--seed", "3"))
    assert summary["careless"] == 4 and summary["checks_failed"] > 0
    flagged_workers = set(Assignment.objects.filter(flagged=True).values_list("annotator__worker_id", flat=True))
    # Seed 3 makes annotators 4, 7, 17 and 18 careless. Where the checks fall is seeded by the survey's
    # random token, so a careless rater sometimes meets few checks and guesses them right: over 40
    # layouts all four were flagged in 29, three in 10 and two in 1 (CI met that one); over 20 more, a
    # diligent rater never was. Hence: nobody but the careless, and at least half of them.
    careless = {f"sim-3-{i:03d}" for i in (4, 7, 17, 18)}
    assert flagged_workers <= careless and len(flagged_workers) >= 2, flagged_workers
    means = {}
    for response in Response.objects.all():
        scores = list(
            Rating.objects.filter(response=response)
            .exclude(annotator__worker_id__in=flagged_workers)
            .values_list("score", flat=True)
        )
        if scores:
            means[response.pk] = (latent_quality(response), np.mean(scores))
    latent, mean = np.array(list(means.values())).T
    assert np.corrcoef(latent, mean)[0, 1] > 0.8


def test_expire_assignments_command_returns_abandoned_slots(researcher):
    load_dataset_records(records=dataset_records(6), name="demo", owner=researcher)
    _run("create_survey", "--dataset", "demo", "--name", "s1", "--contexts-per-hit", "3")
    survey = Survey.objects.get(name="s1")
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=assignment.assigned_at)
    assert "Returned 1 expired" in _run("expire_assignments")
    assert Assignment.objects.filter(status="active").count() == 0


def test_expire_task_runs_the_service(researcher):
    load_dataset_records(records=dataset_records(6), name="demo", owner=researcher)
    _run("create_survey", "--dataset", "demo", "--name", "s1", "--contexts-per-hit", "3")
    assignment = services.assignment_claim(survey=Survey.objects.get(name="s1"), worker_id="w1")
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=assignment.assigned_at)
    assert expire_assignments.delay().get() == 1


def test_create_survey_reads_gold_checks_from_jsonl(researcher, tmp_path):
    load_dataset_records(records=dataset_records(6), name="demo", owner=researcher)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps({"context": ["Is ice hot?"], "response": "Yes, boiling.", "accepted_scores": [1]}) + "\n"
    )
    _run("create_survey", "--dataset", "demo", "--name", "s1", "--contexts-per-hit", "3", "--gold", str(gold))
    survey = Survey.objects.get(name="s1")
    assert survey.attention_checks.get().response_text == "Yes, boiling."
    assert survey.hits.first().items.filter(kind="gold").count() == 1
