"""The review of a writing survey's replies: accept or reject each, and read one whole."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models.functions import Length, Substr
from django.shortcuts import get_object_or_404, redirect, render

from annotation import selectors, services
from annotation.models import WrittenResponse
from annotation.quality.integrity_report import FLAG_WORDS, survey_reply_flags, written_rows
from annotation.quality.selectors import cached_report
from annotation.views.integrity_display import flag_display, telemetry_rows
from annotation.views.surveys import posted_pk, survey_or_404

WRITTEN_EXCERPT_CHARS = 600  # the most of a written reply the review page shows
WHOLE_REPLY_BLOCK_CHARS = 100_000  # see _text_blocks


@login_required
def survey_written(request, pk):
    survey = survey_or_404(request, pk, change=request.method == "POST")
    if request.method == "POST":
        written_pk = posted_pk(request, "written")
        if written_pk is None:
            messages.error(request, "Choose a reply from the list: the form named none.")
            return redirect("annotation:survey_written", pk=pk)
        written = get_object_or_404(WrittenResponse, pk=written_pk, assignment__hit__survey=survey)
        try:
            services.written_response_review(
                written=written,
                accept=request.POST.get("action") == "accept",
                actor=request.user,
                reason=request.POST.get("reason", ""),
            )
        except services.ReviewError as error:
            messages.error(request, str(error))
        return redirect("annotation:survey_written", pk=pk)
    # Only each reply's start is read and shown: one written before replies were bounded (or put in
    # another way) may be megabytes long, which would swamp the page; the whole is one link away.
    written = list(
        WrittenResponse.objects.filter(assignment__hit__survey=survey)
        .select_related("context", "assignment__annotator")
        .defer("text")
        .annotate(excerpt=Substr("text", 1, WRITTEN_EXCERPT_CHARS), length=Length("text"))
        .order_by("status", "pk")
    )
    unconfirmed = set(
        services.written_unconfirmed().filter(assignment__hit__survey=survey).values_list("pk", flat=True)
    )
    # The flags as the last quality recompute found them (read, never computed here: a page of
    # megabyte replies would compare them all); each reply's own page measures them afresh.
    report, _ = cached_report(survey=survey)
    flagged = {r["written"]: [f["words"] for f in r["flags"]]
               for r in ((report or {}).get("integrity") or {}).get("flagged_replies", [])}
    for row in written:
        row.unconfirmed = row.pk in unconfirmed
        row.integrity_flags = flagged.get(row.pk, [])
    context = {
        "survey": survey,
        "written": written,
        "excerpt_chars": WRITTEN_EXCERPT_CHARS,
        "worker_names": selectors.worker_names(user=request.user, study=survey),
    }
    return render(request, "annotation/surveys/written.html", context)


@login_required
def survey_written_reply(request, pk, written_pk):
    """One written reply whole, on a page of its own (the review page shows only its start)."""
    survey = survey_or_404(request, pk)
    written = get_object_or_404(
        WrittenResponse.objects.select_related("context", "assignment__annotator"),
        pk=written_pk,
        assignment__hit__survey=survey,
    )
    names = selectors.worker_names(user=request.user, study=survey)
    context = {
        "survey": survey,
        "w": written,
        "blocks": _text_blocks(written.text, WHOLE_REPLY_BLOCK_CHARS),
        "worker_names": names,
        "telemetry": telemetry_rows(written.telemetry),
        "flags": _reply_flags(survey, written, names),
    }
    return render(request, "annotation/surveys/written_reply.html", context)


def _reply_flags(survey, written, names):
    """Every flag measured on this reply (raised first), with its evidence, as the page shows it.

    Computed from the stored rows now, not read from the cached quality report: the reply page is
    opened one at a time, and a near-duplicate needs the survey's other replies, which this reads."""
    rows = written_rows(survey)
    if not any(row["pk"] == written.pk for row in rows):
        return []  # a reply of a rejected assignment counts in no analysis: nothing to flag
    found = survey_reply_flags(survey, rows)[written.pk]
    other_pk = found["near_duplicate"].evidence.get("other_answer") if "near_duplicate" in found else None
    other = WrittenResponse.objects.select_related("assignment__annotator").filter(pk=other_pk).first()
    shown = []
    for flag in sorted(found.values(), key=lambda f: not f.raised):
        entry = flag_display({"name": flag.name, "rule": flag.rule, "evidence": flag.evidence,
                              "raised": flag.raised, "words": FLAG_WORDS.get(flag.name, flag.name)})
        if flag.evidence.get("other_answer") and other is not None:
            entry["other"] = {"pk": other.pk, "worker": names.of(other.assignment.annotator)}
        shown.append(entry)
    return shown


def _text_blocks(text, size):
    """`text` cut into blocks of at most `size` characters, after a space where there is one.

    Chromium stops wrapping a single run of text of some megabytes, which then widens the page far
    past the window; blocks of this size each wrap."""
    blocks = []
    while len(text) > size:
        cut = text.rfind(" ", size // 2, size) + 1 or size
        blocks.append(text[:cut])
        text = text[cut:]
    return [*blocks, text]
