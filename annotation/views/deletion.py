"""Deleting a dataset or a survey from its page: GET asks (listing what goes, with counts, or why it
cannot go now); POST deletes. The owner's alone: anyone else, staff included, meets a 404, as for a
row that does not exist."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.models import Dataset, Survey
from annotation.services.deletion import DeletionRefused, dataset_delete, deletion_plan, survey_delete

TEMPLATE = "annotation/deletion/confirm.html"


def _confirm(request, target, *, what, back_url, action_url, status=200, refused=None):
    plan = deletion_plan(target=target)
    if refused and not plan.refusals:
        plan.refusals = [refused]
    context = {"plan": plan, "what": what, "target": target, "back_url": back_url, "action_url": action_url}
    return render(request, TEMPLATE, context, status=409 if plan.refusals and request.method == "POST" else status)


@login_required
@require_http_methods(["GET", "POST"])
def dataset_delete_view(request, pk):
    dataset = get_object_or_404(Dataset.objects.filter(owner=request.user), pk=pk)
    back, action = reverse("annotation:dataset_detail", args=[dataset.pk]), request.path
    if request.method == "POST":
        try:
            plan = dataset_delete(dataset=dataset)
        except DeletionRefused as refusal:
            return _confirm(request, dataset, what="dataset", back_url=back, action_url=action, refused=str(refusal))
        messages.success(request, f"Dataset {dataset.name} deleted, with {plan.total - 1} rows that went with it.")
        return redirect("annotation:dataset_list")
    return _confirm(request, dataset, what="dataset", back_url=back, action_url=action)


@login_required
@require_http_methods(["GET", "POST"])
def survey_delete_view(request, pk):
    survey = get_object_or_404(Survey.objects.filter(owner=request.user).select_related("dataset"), pk=pk)
    back, action = reverse("annotation:survey_detail", args=[survey.pk]), request.path
    if request.method == "POST":
        try:
            plan = survey_delete(survey=survey)
        except DeletionRefused as refusal:
            return _confirm(request, survey, what="survey", back_url=back, action_url=action, refused=str(refusal))
        messages.success(request, f"Survey {survey.name} deleted, with {plan.total - 1} rows that went with it.")
        return redirect("annotation:survey_list")
    return _confirm(request, survey, what="survey", back_url=back, action_url=action)
