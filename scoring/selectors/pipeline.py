"""scoring's steps of the pipeline bar (Metrics, ADEM/judges) and the metric state the index page shows.

Read from the dataset's metric runs, not from the score rows: a run records the version of
every metric it computed, so "up to date" is a comparison of a few dozen small rows, cheap
enough for every dataset page even when the dataset holds millions of scores.
"""

from dataclasses import dataclass

from django.db.models import F, IntegerField, Q, Value, Window
from django.db.models.functions import RowNumber
from django.urls import reverse

import scoring.metrics as engine
from annotation.services.extensions.pipeline import plural
from annotation.services.extensions.points import PipelineStep
from scoring.models import AdemModel, ConversationMetricScore, Judge, MetricRun
from scoring.models.adem import metric_name_of

RUNS_CONSIDERED = 50  # the newest runs of a dataset that tell which version each metric has


@dataclass(frozen=True)
class MetricState:
    text: str  # "28 metrics, up to date"
    computed: int  # metrics with scores from a finished run
    up_to_date: bool
    running: bool


def metric_state(dataset, *, learned=None):
    """How far the dataset's automatic metrics are: computed, up to date, computing, failed.

    `learned`: its owner's ADEM metrics and their versions when the caller has read them already.
    """
    if learned is None:
        learned = _adem_versions([dataset.owner_id]).get(dataset.owner_id, {})
    return _state_of_runs(_runs_telling_versions(dataset, learned), learned)


def metric_states(datasets):
    """`{dataset id: MetricState}` for many datasets in one query, for the Metrics index.

    The newest RUNS_CONSIDERED runs of each, as `metric_state` reads them: a window numbers each
    dataset's runs newest first, so a dataset with thousands of runs sends only those.
    """
    newest_first = [F("created_at").desc(), F("id").desc()]
    runs = (
        MetricRun.objects.filter(dataset__in=[dataset.pk for dataset in datasets])
        .annotate(rank=Window(RowNumber(), partition_by=[F("dataset_id")], order_by=newest_first))
        .filter(rank__lte=RUNS_CONSIDERED)
        .order_by(*newest_first)
    )
    by_dataset = {dataset.pk: [] for dataset in datasets}
    for run in runs:
        by_dataset[run.dataset_id].append(run)
    learned = _adem_versions({dataset.owner_id for dataset in datasets})
    states = {}
    for dataset in datasets:
        owner_learned = learned.get(dataset.owner_id, {})
        runs = _runs_telling_versions(dataset, owner_learned, newest=by_dataset[dataset.pk])
        states[dataset.pk] = _state_of_runs(runs, owner_learned)
    return states


def _runs_telling_versions(dataset, learned, newest=None):
    """The dataset's runs, newest first: the newest RUNS_CONSIDERED (`newest` when the caller has
    read them) and, only where those leave a current metric unseen while older runs exist, older
    ones a page of as many at a time until every metric is seen or none is left.

    A run names only the metrics it computed (it computes only the missing or out-of-date ones), so
    fifty runs of one judge or model each would otherwise hide the run that computed the rest, and
    the bar would call those "not computed". Most datasets have fewer runs: one query, as before.
    """
    runs = list(MetricRun.objects.filter(dataset=dataset)[:RUNS_CONSIDERED]) if newest is None else list(newest)
    wanted = set(_current_versions(learned))
    while len(runs) % RUNS_CONSIDERED == 0 and runs and not wanted <= _computed_metrics(runs):
        older = list(MetricRun.objects.filter(dataset=dataset)[len(runs) : len(runs) + RUNS_CONSIDERED])
        if not older:
            break
        runs += older
    return runs


def _computed_metrics(runs):
    return {metric for run in runs if run.status == MetricRun.Status.DONE for metric in (run.versions or {})}


def _current_versions(learned):
    """`{metric: version}` of every metric a dataset is scored with now: the engine's and the owner's ADEM models."""
    return {metric.name: metric.version for metric in engine.all_metrics()} | learned


def _adem_versions(owner_ids):
    """`{owner id: {"adem:NAME": version}}`: the ready ADEM models each owner's datasets are scored with.

    Compute metrics with none ticked scores them as well (`adem:NAME` on a dataset is its owner's
    model), so a model trained after the last run is a metric not computed yet, and a model retrained
    under its name (a new checkpoint, so a new version) makes its scores out of date.
    """
    owner_ids = [pk for pk in owner_ids if pk is not None]
    models = AdemModel.objects.filter(owner_id__in=owner_ids, status=AdemModel.Status.READY)
    versions = {}
    for owner_id, kind, name, sha256 in models.values_list("owner_id", "kind", "name", "checkpoint_sha256"):
        versions.setdefault(owner_id, {})[metric_name_of(kind, name)] = sha256[:12]
    return versions


def _state_of_runs(runs, learned):
    """The state told by a dataset's runs, newest first; `learned`: its owner's ADEM metrics and versions."""
    latest = runs[0] if runs else None
    if latest is not None and latest.status in (MetricRun.Status.QUEUED, MetricRun.Status.RUNNING):
        return MetricState(f"computing, {round(100 * latest.progress)}% done", 0, False, True)
    versions = {}
    for run in runs:
        if run.status == MetricRun.Status.DONE:
            for metric, version in (run.versions or {}).items():
                versions.setdefault(metric, version)
    if not versions:
        text = "last run failed" if latest is not None else "not computed yet"
        return MetricState(text, 0, False, False)
    current = _current_versions(learned)
    stale = [name for name, version in versions.items() if name in current and current[name] != version]
    missing = [name for name in current if name not in versions]
    computed = plural(len(versions), "metric")
    if latest.status == MetricRun.Status.FAILED:
        return MetricState(f"{computed}, last run failed", len(versions), False, False)
    if stale:
        return MetricState(f"{computed}, {len(stale)} out of date", len(versions), False, False)
    if missing:
        return MetricState(f"{computed}, {len(missing)} not computed", len(versions), False, False)
    return MetricState(f"{computed}, up to date", len(versions), True, False)


def adem_state(dataset, user):
    """Ready ADEM models trained on this dataset that the user may see, and the user's LLM judges.

    Returns (text, done, learned): `learned` is what `_adem_versions` tells for the dataset's owner,
    read by the same query, so the pipeline bar's Metrics step costs no query of its own for it.
    """
    # the dataset's ready models (the ADEM step) and its owner's (metrics adem:NAME on any of their datasets)
    models = AdemModel.objects.filter(
        Q(dataset=dataset) | Q(owner_id=dataset.owner_id), status=AdemModel.Status.READY
    ).order_by()
    # and the viewer's own judges (a judge is its researcher's alone; it judges any of their
    # datasets), in the same query: the pipeline bar is on every dataset page
    judges = Judge.objects.filter(owner=user if user.is_authenticated else None).order_by()
    # row_kind: a model or a judge; evaluator: the model's kind (adem, stacked...), its metric prefix
    columns = ("row_kind", "evaluator", "owner_id", "dataset_id", "name", "checkpoint_sha256")
    rows = (
        models.annotate(row_kind=Value("model"), evaluator=F("kind"))
        .values_list(*columns)
        .union(
            judges.annotate(
                row_kind=Value("judge"),
                evaluator=Value(""),
                dataset_id=Value(None, output_field=IntegerField()),
                checkpoint_sha256=Value(""),
            ).values_list(*columns),
            all=True,
        )
    )
    n_ready = n_judges = 0
    learned = {}
    for kind, evaluator, owner_id, dataset_id, name, sha256 in rows:
        if kind == "judge":
            n_judges += 1
            continue
        if dataset_id == dataset.pk and (user.is_staff or owner_id == user.pk):
            n_ready += 1
        if owner_id is not None and owner_id == dataset.owner_id:
            learned[metric_name_of(evaluator, name)] = sha256[:12]
    models_text = plural(n_ready, "model") + " ready" if n_ready else "no model yet"
    judges_text = f", {plural(n_judges, 'judge')}" if n_judges else ""
    return models_text + judges_text, bool(n_ready or n_judges), learned


def conversation_metric_state(dataset):
    """A dataset of conversations only: how many conversation-level metrics its conversations have
    (the turn-level ones are computed with them). Its responses' metric runs would say "not computed
    yet" for ever, since there are no responses to run on."""
    names = (
        ConversationMetricScore.objects.filter(conversation__dataset=dataset).values("metric").distinct().count()
    )
    text = f"{plural(names, 'conversation metric')} computed" if names else "not computed yet"
    return MetricState(text, names, False, False)


def _metrics_step(dataset, learned):
    if not dataset.contexts.exists() and dataset.conversations.exists():
        state = conversation_metric_state(dataset)
        url = reverse("annotation:conversation_list", args=[dataset.pk])
    else:
        state = metric_state(dataset, learned=learned)
        url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    return PipelineStep(key="metrics", label="Metrics", url=url, state=state.text, done=state.computed > 0, order=40)


def scoring_steps(dataset, user):
    """Pipeline-step provider for Metrics and ADEM (registered in ScoringConfig.ready)."""
    adem_text, adem_done, learned = adem_state(dataset, user)
    return [
        _metrics_step(dataset, learned),
        PipelineStep(
            key="adem",
            label="ADEM/judges",
            url=reverse("scoring:adem_models") + f"?dataset={dataset.pk}",  # this dataset's models, not all
            state=adem_text,
            done=adem_done,
            order=50,
        ),
    ]
