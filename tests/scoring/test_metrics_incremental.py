"""Compute metrics without --force computes only the metrics that are missing or out of date.

A dataset fully scored for the engine's metrics, then one new ADEM model, judge or metric version:
the run names that metric alone, writes only its rows and leaves every other row as it was.
"""

from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

import scoring.metrics as engine
from annotation.models import Response
from config.celery import app as celery_app
from scoring.models import MetricRun, MetricScore
from scoring.selectors.pipeline import metric_state
from scoring.selectors.scores import metric_scores
from scoring.services.adem.training import adem_train
from scoring.services.metrics import scores as services_metric_scores
from tests.factories import load_dataset_records
from tests.scoring.judge_helpers import RECORDS, make_judge, scoring_server

ENGINE = [metric.name for metric in engine.all_metrics()]
FAST = ["bleu1", "bleu4", "rouge_l", "cider", "response_len"]
LONG_AGO = timezone.now() - timedelta(days=30)


@pytest.fixture(autouse=True)
def eager(monkeypatch, settings, tmp_path):
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    settings.RATELAB_DATA_DIR = tmp_path  # where a trained ADEM model's checkpoint goes
    settings.JUDGE_MAX_RETRIES = 1


@pytest.fixture
def dataset(researcher):
    return load_dataset_records(records=RECORDS, name="toy", owner=researcher)


def scored_by_an_earlier_run(dataset, names=ENGINE):
    """Every response of the dataset holds a current-version row of each metric, computed a month
    ago by a finished run (values made up: nothing here may recompute or overwrite them)."""
    ids = sorted(Response.objects.filter(context__dataset=dataset).values_list("pk", flat=True))
    versions = {name: engine.get(name).version for name in names}
    values = {name: [0.25 + k / 100 for k in range(len(ids))] for name in names}
    services_metric_scores.scores_upsert(response_ids=ids, scores=values, versions=versions)
    MetricScore.objects.filter(response_id__in=ids).update(computed_at=LONG_AGO)
    MetricRun.objects.create(dataset=dataset, metrics=names, versions=versions, status=MetricRun.Status.DONE)
    return rows_of(dataset, names)


def rows_of(dataset, names):
    """`{(response id, metric): (value, version, computed_at)}` of the named metrics' rows."""
    rows = MetricScore.objects.filter(response__context__dataset=dataset, metric__in=names)
    columns = rows.values_list("response_id", "metric", "value", "version", "computed_at")
    return {(rid, metric): rest for rid, metric, *rest in columns}


@pytest.mark.shared_data
@pytest.mark.slow
def test_a_new_adem_model_is_computed_alone_when_no_metric_is_ticked(
    usr, researcher_client, django_capture_on_commit_callbacks
):
    before = scored_by_an_earlier_run(usr)
    model = adem_train(dataset=usr, name="m", encoder="glove", config={"max_epochs": 2, "patience": 2})
    url = reverse("scoring:dataset_metrics", args=[usr.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(url)  # nothing ticked: every metric, the owner's ADEM model included
    run = MetricRun.objects.order_by("-pk").first()
    n = Response.objects.filter(context__dataset=usr).count()
    assert run.status == MetricRun.Status.DONE
    assert run.metrics == ["adem:m"] and list(run.versions) == ["adem:m"] and list(run.signatures) == ["adem:m"]
    assert run.total_responses == n
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        f"Computing 1 metric for {n} responses: adem:m (the other {len(ENGINE)} are up to date)."
    ]
    assert MetricScore.objects.filter(metric="adem:m", version=model.checkpoint_sha256[:12]).count() == n
    assert rows_of(usr, ENGINE) == before  # not one engine row written again
    assert metric_state(usr).text == f"{len(ENGINE) + 1} metrics, up to date"


def test_a_named_judge_is_computed_alone_beside_up_to_date_metrics(compute, dataset, researcher, chat_server):
    before = scored_by_an_earlier_run(dataset)
    chat_server.answer = scoring_server
    make_judge(researcher, chat_server, name="rater")
    run = compute(dataset=dataset, metrics=[*ENGINE, "judge:rater"])
    run.refresh_from_db()
    n = Response.objects.filter(context__dataset=dataset).count()
    assert (run.status, run.metrics, run.total_responses) == (MetricRun.Status.DONE, ["judge:rater"], n)
    assert list(run.versions) == ["judge:rater"] and list(run.signatures) == ["judge:rater"]
    assert MetricScore.objects.filter(metric="judge:rater").count() == run.total_responses
    assert rows_of(dataset, ENGINE) == before
    assert len(chat_server.requests) == run.total_responses  # one prompt per response, once


def test_a_metric_whose_version_changed_is_recomputed_alone(compute, dataset):
    compute(dataset=dataset, metrics=FAST)
    before = rows_of(dataset, FAST)
    MetricScore.objects.filter(metric="rouge_l").update(version="0", value=-1.0)
    run = compute(dataset=dataset, metrics=FAST)
    run.refresh_from_db()
    assert (run.metrics, run.versions, run.total_responses) == (["rouge_l"], {"rouge_l": "1"}, 12)
    after = rows_of(dataset, FAST)
    unchanged = {key: row for key, row in before.items() if key[1] != "rouge_l"}
    assert {key: row for key, row in after.items() if key[1] != "rouge_l"} == unchanged
    # the recomputed values are the ones the run with every metric stored, in the current version
    assert {key: row[:2] for key, row in after.items() if key[1] == "rouge_l"} == {
        key: row[:2] for key, row in before.items() if key[1] == "rouge_l"
    }


def test_a_run_holds_only_the_responses_that_lack_one_of_its_metrics(compute, dataset):
    compute(dataset=dataset, metrics=["bleu4", "rouge_l"])
    first, second = Response.objects.filter(context__dataset=dataset).order_by("pk")[:2]
    MetricScore.objects.filter(metric="bleu4", response=first).delete()
    MetricScore.objects.filter(metric="rouge_l", response=second).update(version="0")
    run = compute(dataset=dataset, metrics=["bleu4", "rouge_l"])
    assert run.metrics == ["bleu4", "rouge_l"]
    assert [chunk.response_ids for chunk in run.chunks.all()] == [[first.pk, second.pk]]


@pytest.mark.parametrize("name", FAST)
def test_each_metric_computed_alone_stores_what_it_stored_beside_the_others(compute, dataset, name):
    # CIDEr's document frequencies come from the whole dataset, whichever metrics the run computes
    compute(dataset=dataset, metrics=FAST, chunk_size=5)
    together = metric_scores(dataset=dataset)
    others = rows_of(dataset, [other for other in FAST if other != name])
    MetricScore.objects.filter(metric=name).update(version="0", value=None)
    run = compute(dataset=dataset, metrics=FAST, chunk_size=5)
    assert run.metrics == [name]
    assert metric_scores(dataset=dataset)[name] == together[name]  # exactly, not approximately
    assert rows_of(dataset, [other for other in FAST if other != name]) == others


def test_force_still_recomputes_every_named_metric_of_every_response(dataset, capsys):
    before = scored_by_an_earlier_run(dataset, ["bleu4", "rouge_l"])
    call_command("compute_metrics", "--dataset", "toy", "--metric", "bleu4", "--metric", "rouge_l", "--force")
    run = MetricRun.objects.order_by("-pk").first()
    assert (run.metrics, run.total_responses) == (["bleu4", "rouge_l"], 12)
    after = rows_of(dataset, ["bleu4", "rouge_l"])
    assert after.keys() == before.keys() and all(row[2] > LONG_AGO for row in after.values())
    assert "1/1 chunks" in capsys.readouterr().out


def test_the_command_says_which_metrics_it_computed_and_which_were_up_to_date(dataset, capsys):
    scored_by_an_earlier_run(dataset, ["bleu4"])
    call_command("compute_metrics", "--dataset", "toy", "--metric", "bleu4", "--metric", "rouge_l", "--no-progress")
    out = capsys.readouterr().out
    assert "Computed rouge_l; the other 1 metric was already up to date." in out
    assert MetricRun.objects.order_by("-pk").first().metrics == ["rouge_l"]


def test_the_page_counts_only_the_metrics_the_run_computes(
    researcher_client, dataset, django_capture_on_commit_callbacks
):
    scored_by_an_earlier_run(dataset, ["bleu4"])
    url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(url, {"metric": ["bleu4", "rouge_l", "bleu1"]})
    page = researcher_client.get(url).content.decode()
    assert "Computing 2 metrics for 12 responses: rouge_l, bleu1 (the other 1 is up to date)." in page
    assert "done: 1/1 chunks," in page and "12 responses, 2 metrics</span>" in page


def test_the_runs_signatures_name_only_what_it_computed(compute, dataset):
    compute(dataset=dataset, metrics=["bleu4"])
    run = compute(dataset=dataset, metrics=["bleu4", "rouge_l"])
    assert run.metrics == ["rouge_l"] and list(run.signatures) == ["rouge_l"]
    # nothing left to compute: an empty run, which names nothing
    idle = compute(dataset=dataset, metrics=["bleu4", "rouge_l"])
    assert (idle.metrics, idle.versions, idle.signatures, idle.total_chunks) == ([], {}, {}, 0)


def test_the_command_with_nothing_to_compute_says_so_and_creates_no_run(dataset, capsys):
    # an empty run would name no metric, and a nightly command would fill the newest runs the
    # pipeline bar reads (scoring.selectors.pipeline.RUNS_CONSIDERED) with them
    scored_by_an_earlier_run(dataset, ["bleu4", "rouge_l"])
    call_command("compute_metrics", "--dataset", "toy", "--metric", "bleu4", "--metric", "rouge_l", "--no-progress")
    assert "All 2 metrics were already up to date." in capsys.readouterr().out
    assert MetricRun.objects.count() == 1  # the earlier run alone


def test_the_pipeline_bar_finds_a_metric_computed_before_many_runs_of_other_metrics(dataset):
    """Runs name only what they computed: a full run followed by more runs of one metric than the
    bar reads at once (RUNS_CONSIDERED) still leaves every metric computed and up to date."""
    from scoring.selectors.pipeline import RUNS_CONSIDERED, metric_states

    current = {metric.name: metric.version for metric in engine.all_metrics()}
    MetricRun.objects.create(dataset=dataset, metrics=list(current), versions=current, status=MetricRun.Status.DONE)
    for _ in range(RUNS_CONSIDERED + 3):
        MetricRun.objects.create(
            dataset=dataset, metrics=["bleu4"], versions={"bleu4": current["bleu4"]}, status=MetricRun.Status.DONE
        )
    expected = f"{len(current)} metrics, up to date"
    assert metric_state(dataset).text == expected
    assert metric_states([dataset])[dataset.pk].text == expected
