"""The conversations page's "Compute conversation metrics" button: the simple reference-free
metrics of every conversation, computed at once (seconds for thousands of conversations)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation.selectors import datasets_visible_to, may_change_study
from scoring.services.metrics import conversations as services


@login_required
@require_POST
def conversation_metrics_compute(request, dataset_id):
    dataset = get_object_or_404(datasets_visible_to(user=request.user), pk=dataset_id)
    if not may_change_study(user=request.user, study=dataset):
        raise Http404("No such dataset.")  # as for every write on a study one may only read
    if not dataset.conversations.exists():
        raise Http404("This dataset holds no conversations.")
    result = services.conversation_metrics_compute(dataset=dataset)
    messages.success(
        request,
        f"Computed {', '.join(result['metrics'])} for {result['conversations']:,} conversations: the report's "
        "Conversations section correlates them with the ratings.",
    )
    return redirect("annotation:conversation_list", pk=dataset.pk)
