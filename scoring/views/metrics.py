from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

import scoring.metrics as engine
from annotation.selectors import datasets_visible_to, may_change_study
from scoring import selectors
from scoring.models import MetricRun
from scoring.services import metrics as services
from scoring.services.adem import adem_metric_names
from scoring.services.judges import judge_metric_names
from scoring.services.signatures import dataset_signatures


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
            count = len(run.metrics)
            messages.success(
                request, f"Computing {count} metric{'s' if count != 1 else ''} for {run.total_responses} responses."
            )
        return redirect("scoring:dataset_metrics", dataset_id=dataset.pk)
    context = {
        "dataset": dataset,
        "run": selectors.latest_run(dataset=dataset),
        "metrics": engine.all_metrics(),
        "metrics_signed": _signed(dataset, engine.all_metrics()),
        "summary": selectors.metric_summary_by_metric(selectors.metric_summary(dataset=dataset)),
        "corpus_bleu": selectors.corpus_bleu_by_system(dataset=dataset),
        "may_compute": _may_compute(request.user, dataset),
        # the dataset owner's trained ADEM models: computed with "all", and tickable on their own
        "adem_metrics": adem_metric_names(owner=dataset.owner_id),
        # the owner's judges, ticked by the owner only: a judge is its researcher's alone
        "judge_metrics": judge_metric_names(owner=request.user) if dataset.owner_id == request.user.pk else [],
    }
    return render(request, "scoring/dataset_metrics.html", context)


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
            "progress": run.progress,
            "error": run.error,
        }
    )
