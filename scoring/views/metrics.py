from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

import scoring.metrics as engine
from annotation.selectors import datasets_visible_to, may_change_study
from scoring.models import MetricRun
from scoring.selectors import scores as selectors
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.scoring import ADEM_METRIC_PREFIX, LEARNED_METRIC_PREFIX, adem_metric_names
from scoring.services.judges.judging import JUDGE_METRIC_PREFIX, judge_metric_names
from scoring.services.judges.registry import JudgeRefusal
from scoring.services.metrics import compute as services
from scoring.services.metrics import progress as metric_progress
from scoring.services.metrics.signatures import dataset_signatures


def _may_compute(user, dataset):
    return may_change_study(user=user, study=dataset)


@login_required
@require_http_methods(["GET", "POST"])
def dataset_metrics(request, dataset_id):
    dataset = get_object_or_404(datasets_visible_to(user=request.user), pk=dataset_id)
    if request.method == "POST":
        if not _may_compute(request.user, dataset):
            raise Http404("No such dataset.")  # as for every write on a study one may only read
        names = request.POST.getlist("metric")
        try:
            run = services.metrics_compute(
                dataset=dataset, metrics=names, user=request.user, refuse_if_up_to_date=True, refuse_if_running=True
            )
        except KeyError as exc:
            messages.error(request, exc.args[0])
        except (services.MetricsUpToDate, services.MetricsRunning) as nothing_started:
            messages.info(request, str(nothing_started))
        else:
            # what was asked for (every metric when none is ticked), of which the run computes a part
            requested = services.metric_names(names, owner=dataset.owner_id)
            messages.success(request, _computing_message(run, requested=len(requested)))
        return redirect("scoring:dataset_metrics", dataset_id=dataset.pk)
    run = selectors.latest_run(dataset=dataset)
    context = {
        "dataset": dataset,
        "run": run,
        # what the run does inside its chunk (the family, a model it loads first) and for how long
        "run_phase": metric_progress.phase_line(run) if run else "",
        "run_percent": round(100 * run.progress, 1) if run else 0,
        "metrics": engine.all_metrics(),
        "summary": selectors.metric_summary_by_metric(selectors.metric_summary(dataset=dataset)),
        "corpus_bleu": selectors.corpus_bleu_by_system(dataset=dataset),
        "may_compute": _may_compute(request.user, dataset),
        # the dataset owner's trained ADEM models: computed with "all", and tickable on their own
        "adem_metrics": adem_metric_names(owner=dataset.owner_id),
        # the owner's judges, ticked by the owner only: a judge is its researcher's alone
        "judge_metrics": judge_metric_names(owner=request.user) if dataset.owner_id == request.user.pk else [],
    }
    # Every metric the page lists is defined below it, the owner's ADEM models and judges included.
    defined = engine.all_metrics() + _learned_definitions(dataset, context["adem_metrics"] + context["judge_metrics"])
    context["metrics_signed"] = _signed(dataset, defined)
    return render(request, "scoring/dataset_metrics.html", context)


NAMED_AT_MOST = 4  # metrics a message names; more are only counted


def _computing_message(run, *, requested):
    """What a press of Compute started, e.g. `Computing 1 metric for 40 responses: adem:m (the other
    28 are up to date).` A run computes only the metrics that are missing or out of date
    (`services.metrics_compute`): the message says which, so a press with nothing ticked does not
    read as all of them again."""
    count = len(run.metrics)
    text = f"Computing {count} metric{'s' if count != 1 else ''} for {run.total_responses} responses"
    if count >= requested:
        return text + "."
    named = ", ".join(run.metrics[:NAMED_AT_MOST]) + (", …" if count > NAMED_AT_MOST else "")
    others = requested - count
    return f"{text}: {named} (the other {others} {'are' if others != 1 else 'is'} up to date)."


@dataclass(frozen=True)
class LearnedMetric:
    """An ADEM model or an LLM judge as the definitions list shows a metric."""

    name: str
    version: str
    description: str


LEARNED_DESCRIPTIONS = {
    ADEM_METRIC_PREFIX: "ADEM model {name} (a learned evaluator, Lowe et al. 2017): the score it predicts for a "
    "response from its context and reference, on the scale of the ratings it learnt from.",
    LEARNED_METRIC_PREFIX: "Learned evaluator {name} (a cross-encoder or a stacked combination of metrics, "
    "trained on a study's ratings): the score it predicts, on the scale of the ratings it learnt from.",
    JUDGE_METRIC_PREFIX: "LLM judge {name}: the score its language model gives each response, the mean of its "
    "readable samples.",
}


def _learned_definitions(dataset, names):
    definitions = []
    for name in names:
        prefix = next(prefix for prefix in LEARNED_DESCRIPTIONS if name.startswith(prefix))
        try:
            version = services.metric_version(name, owner=dataset.owner_id)
        except (KeyError, AdemRefusal, JudgeRefusal):  # removed since the names were read
            continue
        description = LEARNED_DESCRIPTIONS[prefix].format(name=name.removeprefix(prefix))
        definitions.append(LearnedMetric(name=name, version=version, description=description))
    return definitions


def _signed(dataset, metrics):
    signatures = dataset_signatures(dataset=dataset, metrics=[metric.name for metric in metrics])
    return [(metric, signatures.get(metric.name)) for metric in metrics]


@login_required
@require_GET
def run_progress(request, run_id):
    visible = datasets_visible_to(user=request.user).values("pk")
    run = get_object_or_404(MetricRun.objects.filter(dataset__in=visible), pk=run_id)
    return JsonResponse(
        {
            "status": run.status,
            "done_chunks": run.done_chunks,
            "total_chunks": run.total_chunks,
            # the done chunks plus the share of its metrics the latest chunk has scored
            "progress": run.progress,
            "phase": run.phase,
            "phase_text": metric_progress.phase_line(run),
            "elapsed_s": metric_progress.elapsed_seconds(run),
            "error": run.error,
        }
    )
