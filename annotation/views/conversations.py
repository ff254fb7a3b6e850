"""Researcher pages for a dataset's conversations: the list, one conversation with its turns, downloads.

Reached from the dataset page; visible to whoever may read the dataset (its owner, and staff), a 404
for anyone else, so another researcher's study is not even confirmed.
"""

import io

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_safe

from annotation import selectors
from annotation.models.live_chat import live_summary
from annotation.selectors.conversations import conversation_ratings_summary, conversations_listed
from annotation.services.exporting import download_filename
from annotation.services.exporting.conversations import conversations_export
from annotation.views.datasets import page_links

CONVERSATIONS_PER_PAGE = 25


def _visible_dataset(request, pk):
    return get_object_or_404(selectors.datasets_visible_to(user=request.user), pk=pk)


@login_required
@require_safe
def conversation_list(request, pk):
    dataset = _visible_dataset(request, pk)
    system = request.GET.get("system", "").strip()[:100]
    conversations = conversations_listed(dataset=dataset, system=system)
    page = Paginator(conversations, CONVERSATIONS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "dataset": dataset,
        "page": page,
        "page_links": page_links(page),
        "system": system,
        "systems": list(dataset.systems.filter(conversations__isnull=False).distinct().values_list("name", flat=True)),
        # the button that computes the conversation metrics (a write: the owner's)
        "may_change": selectors.may_change_study(user=request.user, study=dataset),
    }
    return render(request, "annotation/conversations/list.html", context)


@login_required
@require_safe
def conversation_detail(request, pk, conversation_pk):
    dataset = _visible_dataset(request, pk)
    conversation = get_object_or_404(dataset.conversations.select_related("system"), pk=conversation_pk)
    whole, per_turn = conversation_ratings_summary(conversation=conversation)
    turns = list(conversation.turns.order_by("index"))
    for turn in turns:
        turn.rating_means = per_turn.get(turn.index, [])
    context = {"dataset": dataset, "conversation": conversation, "turns": turns, "whole": whole}
    context["live"] = live_summary(conversation)  # a live chat's state and requests (issue 38), else None
    return render(request, "annotation/conversations/detail.html", context)


@login_required
@require_safe
def conversations_download(request, pk, fmt):
    """The dataset's conversations in the import format (JSONL or CSV), as a file."""
    dataset = _visible_dataset(request, pk)
    stream = io.StringIO()
    conversations_export(dataset=dataset, stream=stream, fmt=fmt)
    content_type = "text/csv" if fmt == "csv" else "application/jsonl"
    response = HttpResponse(stream.getvalue(), content_type=f"{content_type}; charset=utf-8")
    filename = download_filename(dataset.name, f"conversations.{fmt}")
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
