"""Researcher pages for datasets: list, detail, upload of datasets and ratings, download."""

import io

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, Prefetch, Q, Subquery, TextField
from django.db.models.functions import Cast, Coalesce
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.html import escape
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods, require_safe

from annotation import selectors
from annotation.forms.datasets import DatasetSearchForm, DatasetUploadForm, RatingsUploadForm
from annotation.importing import DataImportError, detect_format
from annotation.importing.conversations import holds_conversations
from annotation.kinds.rating.exporting import ratings_export
from annotation.models import (
    BWSJudgement,
    ConversationJudgement,
    ConversationRating,
    PairwiseJudgement,
    Rating,
    Response,
    WrittenResponse,
)
from annotation.selectors.conversations import conversations_per_system
from annotation.services import dataset_import, ratings_import
from annotation.services.conversations import conversations_import
from annotation.services.exporting import REAL_IDS_HEADER, REAL_IDS_SUFFIX, dataset_export, download_filename
from annotation.services.extensions.points import response_extras
from annotation.services.extensions.score_display import score_display
from annotation.services.runtime.uploads import upload_max_bytes

# Ten contexts a page, each reply with its headline scores; every score of a context is one click
# away on its own page (context_scores). Twenty contexts with all 29 scores of every reply made a
# 284 KB page (issue 35, F28).
CONTEXTS_PER_PAGE = 10


def _own_dataset(request, pk, *, change=False):
    """The dataset if the user may see (or change) it; 404 otherwise, so others' studies are not even confirmed."""
    datasets = selectors.datasets_changeable_by if change else selectors.datasets_visible_to
    return get_object_or_404(datasets(user=request.user), pk=pk)


@login_required
def dataset_list(request):
    # The owner column: in the same query, not one per row.
    datasets = selectors.datasets_visible_to(user=request.user).select_related("owner")
    return render(request, "annotation/dataset_list.html", {"datasets": datasets})


@login_required
def dataset_detail(request, pk):
    dataset = _own_dataset(request, pk)
    search = DatasetSearchForm(request.GET)
    query = search.data.get("q", "").strip()[:200]
    contexts = dataset.contexts.order_by("position")
    if query:
        # Turns are JSON; searching their text form finds words in any turn.
        contexts = (
            contexts.annotate(turns_text=Cast("turns", TextField()))
            .filter(
                Q(external_id__icontains=query)
                | Q(turns_text__icontains=query)
                | Q(responses__text__icontains=query)
                | Q(references__text__icontains=query)
            )
            .distinct()
        )
    page = Paginator(contexts, CONTEXTS_PER_PAGE).get_page(request.GET.get("page"))
    contexts_on_page = list(
        page.object_list.prefetch_related(
            "references", Prefetch("responses", queryset=Response.objects.select_related("system").order_by("system"))
        )
    )
    response_ids = [r.pk for c in contexts_on_page for r in c.responses.all()]
    extras = response_extras(dataset, response_ids)
    for context in contexts_on_page:
        for response in context.responses.all():
            response.scores = score_display(extras.get(response.pk, {}))
    context = {
        "dataset": dataset,
        "page": page,
        "page_links": page_links(page),
        "contexts": contexts_on_page,
        "search": search,
        "query": query,
        "systems": selectors.dataset_systems(dataset=dataset),
        "surveys": _with_answer_counts(selectors.surveys_visible_to(user=request.user).filter(dataset=dataset)),
        "real_ids_allowed": selectors.may_see_real_worker_ids(user=request.user, study=dataset),
        "conversation_systems": conversations_per_system(dataset=dataset),
    }
    return render(request, "annotation/dataset_detail.html", context)


def _with_answer_counts(surveys):
    """Each survey with the count of every kind of answer (`TaskKind.dataset_count` names the one its
    kind shows), counted in the same query, not one per row."""

    def count(model, survey_field="survey"):
        rows = (
            model.objects.filter(**{survey_field: OuterRef("pk")})
            .order_by()
            .values(survey_field)
            .annotate(n=Count("pk"))
        )
        return Coalesce(Subquery(rows.values("n")), 0)

    return surveys.annotate(
        n_ratings=count(Rating),
        n_judgements=count(PairwiseJudgement),
        n_conversation_ratings=count(ConversationRating),
        n_conversation_judgements=count(ConversationJudgement),
        n_bws_judgements=count(BWSJudgement),
        n_written=count(WrittenResponse, "assignment__hit__survey"),
    )


def page_links(page, around=2):
    """The page numbers to link: the first, the last and `around` on each side of this one; None for a gap."""
    last = page.paginator.num_pages
    wanted = {1, last, *range(page.number - around, page.number + around + 1)}
    numbers = sorted(n for n in wanted if 1 <= n <= last)
    links = []
    for number in numbers:
        if links and number - links[-1] > 1:
            links.append(None)
        links.append(number)
    return links


@login_required
@require_safe
def context_scores(request, pk, context_pk):
    """Every score of every reply to one context, side by side (the dataset page shows the headline ones)."""
    dataset = _own_dataset(request, pk)
    context = get_object_or_404(dataset.contexts, pk=context_pk)
    responses = list(context.responses.select_related("system").order_by("system"))
    extras = response_extras(dataset, [r.pk for r in responses])
    columns = [score_display(extras.get(r.pk, {}))["all"] for r in responses]
    labels = sorted({label for column in columns for label, _ in column}, key=str.lower)
    by_label = [dict(column) for column in columns]
    rows = [(label, [values.get(label, "–") for values in by_label]) for label in labels]
    page = {"dataset": dataset, "context": context, "responses": responses, "rows": rows}
    return render(request, "annotation/context_scores.html", page)


@login_required
@require_http_methods(["GET", "POST"])
def dataset_upload(request):
    form = DatasetUploadForm(request.POST or None, request.FILES or None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        # A conversations file (issue 37) goes to its own import; both list every problem the same way.
        fmt = form.cleaned_data["format"] or detect_format(None, form.cleaned_data["file"])
        importer = conversations_import if holds_conversations(form.cleaned_data["file"], fmt) else dataset_import
        try:
            dataset = importer(
                file=form.cleaned_data["file"],
                name=form.cleaned_data["name"],
                owner=request.user,
                fmt=form.cleaned_data["format"] or None,
                description=form.cleaned_data["description"],
                max_bytes=upload_max_bytes(),
            )
        except DataImportError as exc:
            # One list item per line of the command's message: every problem found, up to a cap.
            form.add_error("file", exc.report_lines())
        else:
            messages.success(request, f"Imported dataset {dataset.name}.")
            return redirect("annotation:dataset_detail", pk=dataset.pk)
    return render(request, "annotation/dataset_upload.html", {"form": form})


@login_required
@require_http_methods(["GET", "POST"])
def ratings_upload(request, pk):
    dataset = _own_dataset(request, pk, change=True)
    form = RatingsUploadForm(request.POST or None, request.FILES or None, owner=request.user)
    # The default name is known here: show it (help texts are not escaped by Django, names are).
    default_name = f"{dataset.name}-imported"
    form.fields["survey_name"].help_text = f"Name of the new survey (default: {escape(default_name)})."
    form.fields["survey_name"].widget.attrs["placeholder"] = default_name
    if request.method == "POST" and form.is_valid():
        try:
            survey = ratings_import(
                file=form.cleaned_data["file"],
                dataset=dataset,
                survey_name=form.cleaned_data["survey_name"] or None,
                owner=request.user,
                fmt=form.cleaned_data["format"] or None,
                scale_min=form.cleaned_data["scale_min"],
                scale_max=form.cleaned_data["scale_max"],
                max_bytes=upload_max_bytes(),
            )
        except DataImportError as exc:
            form.add_error("file", exc.report_lines())
        else:
            messages.success(request, f"Imported {survey.ratings.count()} ratings as survey {survey.name}.")
            return redirect("annotation:dataset_detail", pk=dataset.pk)
    return render(request, "annotation/ratings_upload.html", {"form": form, "dataset": dataset})


@login_required
def dataset_download(request, pk, what, fmt):
    """The dataset or its ratings in the import format, as a file download.

    Ratings name their workers by dataset pseudonym (A1, A2, ...); `?ids=real` gives the real
    worker ids to the dataset's owner only, in a file marked so (name and header)."""
    dataset = _own_dataset(request, pk)
    real_ids = what == "ratings" and request.GET.get("ids") == "real"
    if real_ids and not selectors.may_see_real_worker_ids(user=request.user, study=dataset):
        raise Http404("Real worker ids are for the dataset's owner only.")
    stream = io.StringIO()
    if what == "ratings":
        ratings_export(dataset=dataset, stream=stream, fmt=fmt, real_ids=real_ids)
    else:
        dataset_export(dataset=dataset, stream=stream, fmt=fmt)
    content_type = "text/csv" if fmt == "csv" else "application/jsonl"
    response = HttpResponse(stream.getvalue(), content_type=f"{content_type}; charset=utf-8")
    stem = f"{what}-{REAL_IDS_SUFFIX}" if real_ids else what
    filename = download_filename(dataset.name, f"{stem}.{fmt}")
    response["Content-Disposition"] = content_disposition_header(True, filename)
    if what == "ratings":
        response[REAL_IDS_HEADER] = "real" if real_ids else "pseudonymised"
    return response
