"""Quality-control pages: a survey's agreement report and a page per annotator.

Nothing is computed in the request: the pages render the cached report and, when it is stale
or missing, queue a recompute (debounced) and say so.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.kinds.registry import kind_for
from annotation.models import Annotator, HITItem, PairwiseJudgement, Rating, Survey
from annotation.models.ratings import AttentionAnswer
from annotation.quality import agreement, data
from annotation.quality.selectors import cached_report, recomputes_queued, unconfirmed_platform_work
from annotation.quality.services import QualityError, exclusion_override, exclusion_reset, quality_queue_recompute
from annotation.services.consent import summary as consent_summary
from annotation.views.integrity_display import integrity_display

# Beyond this many annotators the pairwise matrix is unreadable; the page lists pairs instead.
MATRIX_MAX_ANNOTATORS = 30
LIST_MAX_ROWS = 500


class OverrideForm(forms.Form):
    action = forms.ChoiceField(
        label="Decision",
        widget=forms.RadioSelect,
        choices=[
            ("exclude", "Exclude this annotator"),
            ("accept", "Accept this annotator"),
            ("reset", "Follow the automatic rules again"),
        ],
    )
    note = forms.CharField(label="Reason", widget=forms.Textarea(attrs={"rows": 3}), max_length=2000)


def _survey_for(request, survey_id, *, change=False):
    surveys = selectors.surveys_changeable_by if change else selectors.surveys_visible_to
    return get_object_or_404(surveys(user=request.user), pk=survey_id)


def _report_or_queue(survey):
    content, fresh = cached_report(survey=survey)
    if not fresh:
        quality_queue_recompute(survey=survey)
        # Without a broker the task ran eagerly just now (development only); show its result.
        content, fresh = cached_report(survey=survey)
    return content, fresh


def _pending(survey, fresh):
    """What the stale note says: whether a recompute is queued and when (see recomputes_queued)."""
    queued = {} if fresh else recomputes_queued(survey_ids=[survey.pk])
    return {"recompute_queued": survey.pk in queued, "queued_at": queued.get(survey.pk)}


def _kind_label(kind):
    return HITItem.Kind(kind).label if kind in HITItem.Kind.values else kind


def _kappa_band(value):
    if value is None:
        return "none"
    if value < 0.2:
        return "bad"
    return "warn" if value < 0.4 else "ok"


def _matrix(content):
    weighting_key = agreement.WEIGHTINGS[content["settings"]["kappa_weighting"]]
    workers = [a["worker"] for a in content["annotators"]]
    if not 2 <= len(workers) <= MATRIX_MAX_ANNOTATORS:
        return None
    cells = {}
    for pair in content["pairs"]:
        cell = {
            "kappa": pair[weighting_key],
            "n": pair["n"],
            "used": pair["used"],
            "band": _kappa_band(pair[weighting_key]),
        }
        cells[(pair["a"], pair["b"])] = cells[(pair["b"], pair["a"])] = cell
    return {
        "workers": workers,
        "rows": [
            {"worker": w, "cells": [cells.get((w, other)) if w != other else "self" for other in workers]}
            for w in workers
        ],
    }


def _histogram(content):
    bins = content.get("kappa_histogram") or []
    top = max((b["count"] for b in bins), default=0) or 1
    bar_width, gap, height = 48, 8, 120
    bars = []
    for index, b in enumerate(bins):
        bar_height = round(height * b["count"] / top)
        bars.append(
            {
                "x": index * (bar_width + gap),
                "y": height - bar_height,
                "height": bar_height,
                "width": bar_width,
                "label_x": index * (bar_width + gap) + bar_width / 2,
                "low": b["low"],
                "high": b["high"],
                "count": b["count"],
            }
        )
    return {"bars": bars, "width": len(bins) * (bar_width + gap), "height": height}


@login_required
def quality_index(request):
    # ?dataset=: one dataset's surveys (the pipeline bar's Quality step on a dataset with several);
    # a dataset the user may not read shows nothing, as one that does not exist.
    surveys = selectors.surveys_visible_to(user=request.user).select_related("quality_report")
    dataset = _dataset_filter(request)
    if dataset is not None:
        surveys = surveys.filter(dataset=dataset)
    surveys = list(surveys)
    # A survey whose recompute is queued shows its old figures until it runs: the row says so.
    queued = recomputes_queued(survey_ids=[survey.pk for survey in surveys])
    for survey in surveys:
        survey.recompute_queued = survey.pk in queued
        survey.queued_at = queued.get(survey.pk)
    context = {"surveys": surveys, "any_queued": bool(queued), "dataset": dataset}
    return render(request, "annotation/quality/index.html", context)


def _dataset_filter(request):
    value = request.GET.get("dataset", "")
    if not (value.isascii() and value.isdigit()):
        return None
    return get_object_or_404(selectors.datasets_visible_to(user=request.user), pk=int(value))


@login_required
def survey_quality(request, survey_id):
    survey = _survey_for(request, survey_id)
    content, fresh = _report_or_queue(survey)
    # Workers named as this reader may see them (a copy: the cached report stays as it is).
    content = selectors.worker_names(user=request.user, study=survey).scrub(content)
    context = {"survey": survey, "report": content, "fresh": fresh, **_pending(survey, fresh)}
    # Consent and questionnaires as counts only: no one's own answers, whoever reads the page.
    context["consent_summary"] = consent_summary(survey)
    if content:
        annotators = content["annotators"]
        # Crowd-platform work its platform has not confirmed counts in no analysis: say whose it is.
        unconfirmed = set(
            Rating.objects.filter(survey=survey)
            .filter(unconfirmed_platform_work())
            .values_list("annotator_id", flat=True)
        )
        for entry in annotators:
            # Coloured by what the rule judged (reports cached before it existed have only the plain mean).
            entry["band"] = _kappa_band(entry.get("kappa_judged", entry["kappa"]))
            entry["unconfirmed"] = entry["annotator_id"] in unconfirmed
        context.update(
            matrix=_matrix(content),
            histogram=_histogram(content),
            annotators=annotators[:LIST_MAX_ROWS],
            more_annotators=max(0, len(annotators) - LIST_MAX_ROWS),
            excluded=[a for a in annotators if a["excluded"]],
            flagged=[a for a in annotators if a["flags"] and not a["excluded"]],
            pairs=content["pairs"][:LIST_MAX_ROWS],
            weighting_key=agreement.WEIGHTINGS[content["settings"]["kappa_weighting"]],
            weighting_label=Survey.KappaWeighting(content["settings"]["kappa_weighting"]).label.lower(),
            # The report keys the checks by item kind ("pair_gold"): the page names them as the annotator page does.
            attention=[(_kind_label(kind), row) for kind, row in (content.get("attention") or {}).items()],
            integrity=integrity_display(content.get("integrity"), max_rows=LIST_MAX_ROWS),
        )
    return render(request, "annotation/quality/survey.html", context)


def _annotator_in(survey, annotator_id):
    """The annotator, who did work in the survey (an assignment, a rating or a judgement), else 404:
    any other annotator is no business of this survey's pages, whoever asks."""
    annotator = get_object_or_404(Annotator, pk=annotator_id)
    # Imported work has no assignment: an imported pairwise annotator has only judgements.
    did_work = (
        Rating.objects.filter(survey=survey, annotator=annotator).exists()
        or PairwiseJudgement.objects.filter(survey=survey, annotator=annotator).exists()
        or annotator.assignments.filter(hit__survey=survey).exists()
    )
    if not did_work:
        raise Http404("This annotator did no work in this survey.")
    return annotator


@login_required
def annotator_quality(request, survey_id, annotator_id):
    survey = _survey_for(request, survey_id)
    annotator = _annotator_in(survey, annotator_id)
    content, fresh = _report_or_queue(survey)
    names = selectors.worker_names(user=request.user, study=survey)
    content = names.scrub(content)  # its labels, and the notes naming workers, as this reader may see them
    entry = None
    pairs = []
    if content:
        entry = next((a for a in content["annotators"] if a["annotator_id"] == annotator.pk), None)
        if entry:
            pairs = [
                {**p, "other": p["b"] if p["a"] == entry["worker"] else p["a"]}
                for p in content["pairs"]
                if entry["worker"] in (p["a"], p["b"])
            ]
    answers = (
        AttentionAnswer.objects.filter(assignment__hit__survey=survey, assignment__annotator=annotator)
        .select_related("item", "assignment__hit")
        .order_by("assignment__hit__position", "item__position")
    )
    distribution, n_answers = kind_for(survey).answer_distribution(
        survey=survey, annotator=annotator, scale=(content or {}).get("scale", data.DEFAULT_SCALE)
    )
    context = {
        "survey": survey,
        "annotator": annotator,
        "report": content,
        "fresh": fresh,
        **_pending(survey, fresh),
        "entry": entry,
        "pairs": pairs,
        "answers": answers,
        "distribution": distribution,
        "n_answers": n_answers,
        "assignments": annotator.assignments.filter(hit__survey=survey).select_related("hit"),
        "history": names.scrub(data.decision_history(survey=survey, annotator=annotator)),
        "worker_names": names,
        # No choice is pre-selected: a decision about a person is made on purpose, not by pressing Enter.
        "form": OverrideForm(),
    }
    return render(request, "annotation/quality/annotator.html", context)


@login_required
@require_POST
def annotator_override(request, survey_id, annotator_id):
    survey = _survey_for(request, survey_id, change=True)
    annotator = _annotator_in(survey, annotator_id)
    form = OverrideForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a decision and give a reason.")
        return redirect("annotation:quality_annotator", survey_id=survey.pk, annotator_id=annotator.pk)
    action, note = form.cleaned_data["action"], form.cleaned_data["note"]
    try:
        if action == "reset":
            exclusion_reset(survey=survey, annotator=annotator, note=note, user=request.user)
        else:
            exclusion_override(
                survey=survey, annotator=annotator, excluded=action == "exclude", note=note, user=request.user
            )
    except QualityError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Decision recorded; the quality report is being recomputed.")
    return redirect("annotation:quality_annotator", survey_id=survey.pk, annotator_id=annotator.pk)
