"""LLM judges pages: the researcher's judges (add, remove) and one judge's runs and unreadable replies."""

import os

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Avg, Count
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.selectors import datasets_changeable_by
from scoring.forms.judges import JudgeForm
from scoring.judges import prompts
from scoring.models import MetricRun
from scoring.selectors.judges import judges_changeable_by, judges_visible_to
from scoring.services.judges.conversations import conversation_judging_queue
from scoring.services.judges.pairwise import judge_pairs_queue
from scoring.services.judges.registry import JudgeRefusal, api_key_env_problem, judge_create
from scoring.services.judges.remove import JudgeBusy, judge_busy, judge_delete, judge_score_count, judge_usage_totals


@login_required
@require_http_methods(["GET", "POST"])
def judge_list(request):
    form = JudgeForm(request.POST or None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        data = {key: value for key, value in form.cleaned_data.items() if key not in ("name", "base_url", "model")}
        judge = judge_create(
            owner=request.user,
            name=form.cleaned_data["name"],
            base_url=form.cleaned_data["base_url"],
            model=form.cleaned_data["model"],
            **data,
        )
        if judge.template == prompts.PAIRWISE:  # not a metric: it judges a pairwise study's pairs
            messages.success(request, "Judge added: judge a pairwise study's pairs with it below.")
        else:
            messages.success(
                request, f"Judge added: compute its metric {judge.metric_name} on a dataset's Metrics page."
            )
        return redirect("scoring:judge_detail", judge_id=judge.pk)
    judges = list(judges_visible_to(user=request.user))
    for judge in judges:
        judge.key_state = _key_state(judge)
    return render(request, "scoring/judges/judge_list.html", {"judges": judges, "form": form})


@login_required
@require_GET
def judge_detail(request, judge_id):
    judge = get_object_or_404(judges_visible_to(user=request.user), pk=judge_id)
    usage = _usage_rows(judge)
    cache = judge.cache_entries.aggregate(n=Count("id"), spread=Avg("spread"), mean=Avg("mean"))
    example = next((u.unparseable_example for u in usage if u.unparseable_example), "")
    pairwise = judge.template == prompts.PAIRWISE
    context = {
        "judge": judge,
        "pairwise": pairwise,
        "answer_word": "winner (A or B)" if pairwise else "score",
        "key_state": _key_state(judge),
        "usage": usage,
        "cache": cache,
        "unparseable": sum(u.unparseable for u in usage),
        # "every reply gave a score" only once some reply came
        "replies": sum(u.requests for u in usage),
        "example": example,
        "failures": [u for u in usage if u.state == "failed"],
        "active": any(u.active for u in usage),
        "pair_datasets": _pairwise_datasets(request.user) if pairwise else [],
        "conversation_datasets": [] if pairwise else _conversation_datasets(request.user),
    }
    return render(request, "scoring/judges/judge_detail.html", context)


@login_required
@require_GET
def judge_progress(request, judge_id):
    """The judge's runs as its page's poller reads them: whether one is queued or running, and
    each row's state and counts (the page reloads when a run ends)."""
    judge = get_object_or_404(judges_visible_to(user=request.user), pk=judge_id)
    rows = _usage_rows(judge)
    return JsonResponse(
        {
            "active": any(row.active for row in rows),
            "rows": [
                {
                    "id": row.pk,
                    "state": row.state,
                    "prompts": row.prompts,
                    "cached": row.cached,
                    "requests": row.requests,
                    "reason": row.reason,
                }
                for row in rows
            ],
        }
    )


def _usage_rows(judge):
    """The judge's latest usage rows, each with `state` (queued, running, done, failed, not
    finished), `reason` (why it failed, as the run or the judging recorded it) and `active`."""
    rows = list(judge.usage.select_related("run__dataset", "judge")[:50])
    for row in rows:
        row.state, row.reason = _row_state(row)
        row.active = row.state in ("queued", "running", "queued or running")
    return rows


def _row_state(row):
    if row.run is not None:
        if row.run.status == MetricRun.Status.FAILED:
            return "failed", row.run.error or "the run failed"
        return row.run.status, ""
    figures = row.figures or {}
    if row.queued_at:
        return "queued or running", ""
    if figures.get("error"):
        return "failed", figures["error"]
    if "n_pairs" in figures or "scores" in figures:  # pairs judged; conversations or turns judged
        return "done", ""
    return "not finished", "a request failed: judging again asks only for what is missing"


@login_required
@require_http_methods(["GET", "POST"])
def judge_remove(request, judge_id):
    """GET: what removing the judge removes, and a button; POST: remove. The owner's alone (anyone
    else, staff included, meets a 404, as for a judge that is not); refused (409) while a job uses it."""
    judge = get_object_or_404(judges_changeable_by(user=request.user), pk=judge_id)
    context = {
        "judge": judge,
        "pairwise": judge.template == prompts.PAIRWISE,
        "busy": judge_busy(judge=judge),
        "n_scores": judge_score_count(judge=judge),
        "n_cache": judge.cache_entries.count(),
        "usage": judge_usage_totals(judge=judge),
    }
    if request.method == "POST":
        try:
            scores = judge_delete(judge=judge)
        except JudgeBusy as busy:
            context["busy"] = str(busy)
            return render(request, "scoring/judges/judge_remove.html", context, status=409)
        what = (
            "its cached verdicts"
            if context["pairwise"]
            else f"its cached replies and its {scores} {judge.metric_name} score{'s' if scores != 1 else ''}"
        )
        messages.success(request, f"Judge {judge.name} removed, with {what}.")
        return redirect("scoring:judges")
    return render(request, "scoring/judges/judge_remove.html", context)


@login_required
@require_POST
def judge_dataset_pairs(request, judge_id):
    """Queue the judging of a dataset's human-judged pairs (both orders) with the owner's judge."""
    judge = get_object_or_404(judges_changeable_by(user=request.user), pk=judge_id)
    dataset = get_object_or_404(datasets_changeable_by(user=request.user), pk=_number(request.POST.get("dataset")))
    try:
        judge_pairs_queue(judge=judge, dataset=dataset)
    except JudgeRefusal as refusal:
        messages.error(request, f"Not judged: {refusal}")
        return redirect("scoring:judge_detail", judge_id=judge.pk)
    messages.success(
        request,
        f"Judging the pairs of {dataset.name} in both orders. The runs below count the requests; refresh "
        "the dataset's report to see the judge in its pairwise section.",
    )
    return redirect("scoring:judge_detail", judge_id=judge.pk)


@login_required
@require_POST
def judge_dataset_conversations(request, judge_id):
    """Queue the judging of a dataset's conversations (turns, whole conversations or both)."""
    judge = get_object_or_404(judges_changeable_by(user=request.user), pk=judge_id)
    dataset = get_object_or_404(datasets_changeable_by(user=request.user), pk=_number(request.POST.get("dataset")))
    level = request.POST.get("level", "")
    try:
        conversation_judging_queue(judge=judge, dataset=dataset, level=level)
    except JudgeRefusal as refusal:
        messages.error(request, f"Not judged: {refusal}")
        return redirect("scoring:judge_detail", judge_id=judge.pk)
    what = {"conversation": "each whole conversation on each rated aspect", "turn": "each system turn",
            "both": "each system turn and each whole conversation on each rated aspect"}[level]  # fmt: skip
    messages.success(
        request,
        f"Judging {what} of {dataset.name}. The runs below count the requests; the dataset's report "
        "correlates the scores with the ratings in its Conversations section.",
    )
    return redirect("scoring:judge_detail", judge_id=judge.pk)


def _conversation_datasets(user):
    """The researcher's datasets that hold conversations, for the judge's 'judge conversations' form."""
    return list(
        datasets_changeable_by(user=user)
        .filter(conversations__isnull=False)
        .distinct()
        .order_by("name")
        .values("pk", "name")
    )


def _number(text):
    return int(text) if text and text.isdigit() else 0


def _pairwise_datasets(user):
    """The researcher's datasets that have pairwise judgements, for the judge's 'judge pairs' form."""
    return list(
        datasets_changeable_by(user=user)
        .filter(surveys__pairwise_judgements__isnull=False)
        .distinct()
        .order_by("name")
        .values("pk", "name")
    )


def _key_state(judge):
    """For the judge's owner (the only one who sees it): whether a key variable assigned to them is
    set where the web server runs. A variable not assigned to them is never read, so the page tells
    nothing about the server's other variables."""
    if not judge.api_key_env:
        return "no key needed"
    problem = api_key_env_problem(judge.api_key_env, owner=judge.owner)
    if problem:
        return f"${judge.api_key_env} is refused: {problem} Its runs are refused before any request."
    return f"${judge.api_key_env} is set" if os.environ.get(judge.api_key_env) else f"${judge.api_key_env} is NOT set"
