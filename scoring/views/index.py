"""The Metrics place of the top bar: the researcher's datasets and how far their metrics are."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.selectors import datasets_visible_to
from scoring.selectors.pipeline import conversation_metric_state, metric_states


@login_required
@require_GET
def metrics_index(request):
    datasets = datasets_visible_to(user=request.user).select_related("owner").order_by("name")
    datasets = list(datasets)
    states = metric_states(datasets)
    rows = []
    for dataset in datasets:
        # A dataset of conversations only is scored per conversation, from its conversations page.
        conversations_only = not dataset.n_contexts and dataset.n_conversations
        state = conversation_metric_state(dataset) if conversations_only else states[dataset.pk]
        rows.append({"dataset": dataset, "state": state, "conversations_only": conversations_only})
    return render(request, "scoring/metrics_index.html", {"rows": rows})
